// StoppableParallel (engine/parallel.h): with a deadline active, a kernel's range is handed out
// in chunks sized by time, so a long kernel stops soon after the deadline even when the
// kernel asked for a coarse grain.
#include "engine/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <vector>

namespace nnhal::engine {
namespace {

using std::chrono::steady_clock;

/// Busy for `d` of wall time (a kernel's work).
void spin(std::chrono::microseconds d) {
  const auto until = steady_clock::now() + d;
  while (steady_clock::now() < until) {
  }
}

TEST(StoppableParallel, ALongRangeWithACoarseGrainStopsSoonAfterTheDeadline) {
  Parallel parallel(2);
  constexpr size_t kItems = 2000;  // 200 ms of work at 100 µs an item
  const auto start = steady_clock::now();
  ExecutionStop stop(start + std::chrono::milliseconds(20), nullptr);
  StoppableParallel stoppable(parallel, &stop);
  std::atomic<size_t> done{0};
  // Grain: half the range (two pieces), as a kernel asking for few, large tasks would.
  stoppable.forRange(kItems, kItems / 2, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      spin(std::chrono::microseconds(100));
      ++done;
    }
  });
  EXPECT_TRUE(stop.stopped());
  // Halves of 1,000 items would both have run to their end.
  EXPECT_LT(done.load(), kItems / 2) << "items done after the deadline passed";
  EXPECT_GT(done.load(), 0u);
}

TEST(StoppableParallel, EveryItemRunsOnceWhenNothingStops) {
  Parallel parallel(2);
  ExecutionStop stop(steady_clock::now() + std::chrono::hours(1), nullptr);
  StoppableParallel stoppable(parallel, &stop);
  for (size_t n : {1u, 7u, 256u, 257u, 10000u}) {
    for (size_t grain : {1u, 3u, 5000u}) {
      std::vector<std::atomic<int>> seen(n);
      stoppable.forRange(n, grain, [&](size_t begin, size_t end) {
        ASSERT_LE(begin, end);
        ASSERT_LE(end, n);
        for (size_t i = begin; i < end; ++i) ++seen[i];
      });
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "n " << n << " item " << i;
    }
  }
  EXPECT_FALSE(stop.stopped());
}

TEST(StoppableParallel, ACancelledExecutionRunsNothing) {
  Parallel parallel(2);
  std::atomic<bool> cancelled{true};
  ExecutionStop stop({}, &cancelled);
  StoppableParallel stoppable(parallel, &stop);
  size_t calls = 0;
  stoppable.forRange(100, 1, [&](size_t, size_t) { ++calls; });
  EXPECT_EQ(calls, 0u);
  EXPECT_TRUE(stop.stopped());
  EXPECT_EQ(stop.error("during X").status, ErrorStatus::DEVICE_UNAVAILABLE);
}

}  // namespace
}  // namespace nnhal::engine
