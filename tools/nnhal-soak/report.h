// nnhal-soak/report.h — the soak's report: samples.json and a self-contained report.html.
//
// The HTML has no external reference (no script, font or image from the network): the plots
// are SVG drawn by gnuplot and written into the page. At the top, the verdict and why; then
// the run's figures, the leak analysis of each resource, latency per model and path, and the
// plots (latency over time, latency histograms, throughput, RSS / descriptors / mappings /
// threads over time with the fitted trend).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "nnhal-soak/leak_analysis.h"
#include "nnhal-soak/samples.h"
#include "nnhal/status.h"

namespace nnhal::soak {

struct RunSummary {
  std::string verdict;               ///< PASS, LEAK, HANG, CRASH, ERRORS
  std::vector<std::string> reasons;  ///< one line each
  std::string daemon;                ///< what was soaked ("nnhald pid 123 on /run/...")
  /// Whether the clients used compilation caching: "used", or "not used: " and the reason
  /// the daemon gave (it reports no cache files).
  std::string caching;
  std::string started;  ///< wall-clock time of the start (ISO 8601)
  double seconds = 0;
  double intervalSeconds = 0;
  unsigned clients = 0;
  std::vector<std::string> models;
  uint64_t executions = 0;
  uint64_t compilations = 0;
  std::map<std::string, uint64_t> errorsByKind;
  std::vector<std::string> firstErrors;
  std::vector<TrendVerdict> trends;
  std::vector<Sample> samples;
  std::map<std::string, std::vector<uint64_t>> histograms;  ///< histogramEdges buckets
};

/// Writes `directory`/samples.json and `directory`/report.html (creating the directory).
/// When gnuplot cannot run, the report says so in place of the plots. Errors:
/// GENERAL_FAILURE when a file cannot be written.
Result<void> writeReport(const RunSummary& run, const std::filesystem::path& directory);

/// The page alone (for tests): `plots` are (name, SVG text) in page order.
std::string renderHtml(const RunSummary& run,
                       const std::vector<std::pair<std::string, std::string>>& plots);

/// Whole-run quantile `q` (0..1) of a histogram over histogramEdges, in ms (the upper edge of
/// the bucket holding it); 0 when empty.
double histogramQuantile(const std::vector<uint64_t>& histogram, double q);

}  // namespace nnhal::soak
