// nnhal-soak/leak_analysis.h — deciding whether a resource of the daemon leaks.
//
// The rule (docs/TESTING.md, "How a leak is decided"): a resource (RSS, open descriptors,
// memory mappings, threads) sampled over the run leaks when its trend over the run exceeds
// its noise:
//  1. The warm-up is not judged: the first 20% of the samples, and at least those of the first
//     `warmUpSeconds` (60 s in nnhal-soak: the daemon's RSS climbs for about 100 s while
//     pools get mapped and caches and thread pools fill). At least 8 samples must remain,
//     else there is no verdict.
//  2. A least-squares line through the rest gives the slope; growth = slope x the span of
//     time it covers.
//  3. The noise is the spread of the samples around that line: 1.4826 x their median absolute
//     deviation (the standard deviation, were it normal, but blind to a few outliers).
//  4. It leaks when the growth exceeds both 4 x the noise and the resource's floor (what a
//     healthy daemon may grow by, such as one more pool mapped), and the median of the last
//     fifth of the samples is above the median of the first fifth by at least half of that.
// So clients coming and going (a saw-tooth) raise the noise, not the verdict, while a leak of
// one mapping per execution grows far past both within seconds.
#pragma once

#include <span>
#include <string>

namespace nnhal::soak {

struct TrendVerdict {
  std::string resource;
  bool enoughData = false;  ///< 8 samples or more after the warm-up
  double firstMedian = 0;   ///< median of the first fifth of the judged samples
  double lastMedian = 0;    ///< median of the last fifth
  double slopePerHour = 0;  ///< resource units per hour
  double intercept = 0;     ///< of the fitted line, at 0 s
  double judgedFrom = 0;    ///< seconds of the first judged sample
  double growth = 0;        ///< slope x judged span
  double noise = 0;         ///< 1.4826 x MAD of the residuals
  double threshold = 0;     ///< max(floor, 4 x noise)
  bool leaking = false;
};

/// Judges `values` sampled at `seconds` (same length, increasing, from the start of the run)
/// with `floor` (resource units) and a warm-up of at least `warmUpSeconds`. Pure.
TrendVerdict analyzeTrend(std::string resource, std::span<const double> seconds,
                          std::span<const double> values, double floor, double warmUpSeconds = 0);

}  // namespace nnhal::soak
