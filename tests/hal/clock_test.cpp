// common/clock.h: durations in whole microseconds, truncated, never negative (a reversed pair
// is 0, not a wrapped uint64).
#include "common/clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace nnhal {
namespace {

using namespace std::chrono_literals;
using TimePoint = std::chrono::steady_clock::time_point;

TEST(Clock, MicrosecondsBetweenTruncatesToWholeMicroseconds) {
  const TimePoint start{1'000'000ns};
  EXPECT_EQ(microsecondsBetween(start, start), 0u);
  EXPECT_EQ(microsecondsBetween(start, start + 999ns), 0u);
  EXPECT_EQ(microsecondsBetween(start, start + 1us), 1u);
  EXPECT_EQ(microsecondsBetween(start, start + 2'999ns), 2u);
  EXPECT_EQ(microsecondsBetween(start, start + 15s), 15'000'000u);
}

TEST(Clock, AReversedPairIsZeroNotAWrappedValue) {
  const TimePoint start{5s};
  EXPECT_EQ(microsecondsBetween(start, start - 1us), 0u);
  EXPECT_EQ(microsecondsBetween(start, TimePoint{}), 0u);
}

TEST(Clock, MicrosecondsSinceCountsFromThePastToNow) {
  const TimePoint anHourAgo = std::chrono::steady_clock::now() - 1h;
  const uint64_t elapsed = microsecondsSince(anHourAgo);
  EXPECT_GE(elapsed, 3'600'000'000u);
  EXPECT_LT(elapsed, 3'700'000'000u);
  EXPECT_EQ(microsecondsSince(std::chrono::steady_clock::now() + 1h), 0u);
}

}  // namespace
}  // namespace nnhal
