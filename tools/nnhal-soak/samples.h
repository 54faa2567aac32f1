// nnhal-soak/samples.h — what the soak measures every --interval: the daemon's resources
// (from /proc) and the load's latencies, throughput and errors.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace nnhal::soak {

/// A process's resources as /proc shows them.
struct ProcessResources {
  double rssMiB = 0;     ///< VmRSS of /proc/PID/status, MiB
  uint64_t fds = 0;      ///< entries of /proc/PID/fd
  uint64_t maps = 0;     ///< lines of /proc/PID/maps (memory mappings)
  uint64_t threads = 0;  ///< Threads of /proc/PID/status
};

/// Reads them for `pid`; nullopt when the process is gone (or /proc denies it).
std::optional<ProcessResources> readProcess(pid_t pid);

/// Latency quantiles of one series in one interval, in ms.
struct LatencySummary {
  uint64_t count = 0;
  double p50 = 0, p90 = 0, p99 = 0, max = 0;
};

/// One sampling tick.
struct Sample {
  double seconds = 0;  ///< since the start of the run
  ProcessResources daemon;
  uint64_t executions = 0;    ///< finished in the interval (successful)
  uint64_t compilations = 0;  ///< finished in the interval (successful; from cache or not)
  uint64_t errors = 0;        ///< failed calls and wrong outputs in the interval
  std::map<std::string, LatencySummary> latency;  ///< by series ("model sync", ...)
};

nlohmann::json toJson(const Sample& sample);

/// Edges of the whole-run latency histograms, in ms: 120 buckets, logarithmic from 10 µs to
/// 10 s (each 12% wider than the one before; the last one also holds everything slower).
const std::vector<double>& histogramEdges();

/// Collects latencies and errors from every load thread; the sampler takes them per tick.
/// Thread-safe.
class Recorder {
 public:
  /// A successful call of `series` that took `ms`. `compilation`: a preparation, else an
  /// execution.
  void success(const std::string& series, double ms, bool compilation);
  /// A failed call (or a wrong output): `what` is the status name or "WRONG_OUTPUT".
  void failure(const std::string& what, const std::string& detail);

  /// The interval since the last take (latencies, counts); resets it.
  Sample take(double seconds);
  /// Whole run: errors by kind, histograms by series (counts per histogramEdges bucket),
  /// totals, and the first few error messages.
  std::map<std::string, uint64_t> errorsByKind() const;
  std::map<std::string, std::vector<uint64_t>> histograms() const;
  std::vector<std::string> firstErrors() const;
  uint64_t totalExecutions() const;
  uint64_t totalCompilations() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<double>> interval_;
  uint64_t executions_ = 0, compilations_ = 0, errors_ = 0;
  uint64_t totalExecutions_ = 0, totalCompilations_ = 0;
  std::map<std::string, uint64_t> errorsByKind_;
  std::map<std::string, std::vector<uint64_t>> histograms_;
  std::vector<std::string> firstErrors_;
};

}  // namespace nnhal::soak
