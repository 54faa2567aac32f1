#include "nnhal-soak/leak_analysis.h"

#include <algorithm>
#include <boost/math/statistics/linear_regression.hpp>
#include <boost/math/statistics/univariate_statistics.hpp>
#include <vector>

namespace nnhal::soak {
namespace {

constexpr double kWarmUpShare = 0.2;
constexpr size_t kMinimumSamples = 8;
constexpr double kNoiseFactor = 4;
constexpr double kMadToSigma = 1.4826;

double medianOf(std::vector<double> v) { return boost::math::statistics::median(v); }

}  // namespace

TrendVerdict analyzeTrend(std::string resource, std::span<const double> seconds,
                          std::span<const double> values, double floor, double warmUpSeconds) {
  TrendVerdict verdict;
  verdict.resource = std::move(resource);
  const size_t n = std::min(seconds.size(), values.size());
  auto skip = static_cast<size_t>(static_cast<double>(n) * kWarmUpShare);
  while (skip < n && seconds[skip] < warmUpSeconds) ++skip;
  if (n < skip + kMinimumSamples) return verdict;
  verdict.enoughData = true;
  const std::vector<double> t(seconds.begin() + static_cast<ptrdiff_t>(skip),
                              seconds.begin() + static_cast<ptrdiff_t>(n));
  const std::vector<double> y(values.begin() + static_cast<ptrdiff_t>(skip),
                              values.begin() + static_cast<ptrdiff_t>(n));
  double slope = 0, intercept = y.front();
  if (t.back() > t.front()) {
    std::tie(intercept, slope) = boost::math::statistics::simple_ordinary_least_squares(t, y);
  }
  std::vector<double> residuals(y.size());
  for (size_t i = 0; i < y.size(); ++i) residuals[i] = y[i] - (intercept + slope * t[i]);
  verdict.noise = kMadToSigma * boost::math::statistics::median_absolute_deviation(residuals);
  verdict.slopePerHour = slope * 3600;
  verdict.intercept = intercept;
  verdict.judgedFrom = t.front();
  verdict.growth = slope * (t.back() - t.front());
  const size_t fifth = std::max<size_t>(1, y.size() / 5);
  verdict.firstMedian = medianOf({y.begin(), y.begin() + static_cast<ptrdiff_t>(fifth)});
  verdict.lastMedian = medianOf({y.end() - static_cast<ptrdiff_t>(fifth), y.end()});
  verdict.threshold = std::max(floor, kNoiseFactor * verdict.noise);
  verdict.leaking = verdict.growth > verdict.threshold &&
                    verdict.lastMedian - verdict.firstMedian > verdict.threshold / 2;
  return verdict;
}

}  // namespace nnhal::soak
