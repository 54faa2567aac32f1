// tools/common/run_times.h — execution times as TFLite's benchmark_model reports them.
//
// The first execution (cold: pages faulted in, caches empty) is reported apart; the timed
// runs that follow the warm-up give min / mean / median / p90 / p99 / max. Percentiles are
// nearest-rank: p90 of 10 runs is the 9th fastest.
//
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace nnhal::tools {

struct RunTimes {
  double firstMs = 0;       ///< the first execution of all, warm-up or not
  unsigned warmupRuns = 0;  ///< executions before the timed ones
  size_t runs = 0;          ///< timed executions
  double minMs = 0, meanMs = 0, medianMs = 0, p90Ms = 0, p99Ms = 0, maxMs = 0;
};

/// Statistics of the timed runs `timesMs` (milliseconds, any order).
RunTimes summarizeTimes(std::vector<double> timesMs, double firstMs, unsigned warmupRuns);

/// One line: "execution: first 5.10 ms; 10 runs after 1 warm-up: min ... max ... ms".
std::string formatRunTimes(const RunTimes& t);

/// {"first", "warmup_runs", "runs", "min", "mean", "median", "p90", "p99", "max"} in ms.
nlohmann::json runTimesJson(const RunTimes& t);

}  // namespace nnhal::tools
