#include "tools/common/run_times.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace nnhal::tools {
namespace {

/// Nearest-rank percentile of sorted `v` (not empty).
double percentile(const std::vector<double>& v, double p) {
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

}  // namespace

RunTimes summarizeTimes(std::vector<double> timesMs, double firstMs, unsigned warmupRuns) {
  RunTimes t;
  t.firstMs = firstMs;
  t.warmupRuns = warmupRuns;
  t.runs = timesMs.size();
  if (timesMs.empty()) return t;
  std::sort(timesMs.begin(), timesMs.end());
  t.minMs = timesMs.front();
  t.maxMs = timesMs.back();
  t.meanMs = std::accumulate(timesMs.begin(), timesMs.end(), 0.0) / static_cast<double>(t.runs);
  t.medianMs =
      t.runs % 2 == 1 ? timesMs[t.runs / 2] : (timesMs[t.runs / 2 - 1] + timesMs[t.runs / 2]) / 2.0;
  t.p90Ms = percentile(timesMs, 90);
  t.p99Ms = percentile(timesMs, 99);
  return t;
}

std::string formatRunTimes(const RunTimes& t) {
  char line[320];
  std::snprintf(line, sizeof(line),
                "execution: first %.3f ms; %zu runs after %u warm-up: min %.3f mean %.3f "
                "median %.3f p90 %.3f p99 %.3f max %.3f ms",
                t.firstMs, t.runs, t.warmupRuns, t.minMs, t.meanMs, t.medianMs, t.p90Ms, t.p99Ms,
                t.maxMs);
  return line;
}

nlohmann::json runTimesJson(const RunTimes& t) {
  return {{"first", t.firstMs}, {"warmup_runs", t.warmupRuns}, {"runs", t.runs}, {"min", t.minMs},
          {"mean", t.meanMs},   {"median", t.medianMs},        {"p90", t.p90Ms}, {"p99", t.p99Ms},
          {"max", t.maxMs}};
}

}  // namespace nnhal::tools
