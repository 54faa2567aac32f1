// engine/parallel.h — the one place kernels get parallelism from.
//
// Parallel wraps oneTBB task_arenas over a fixed number of threads. Kernels are pure
// functions over a sub-range [begin, end) of their work; the engine's Kernel adapters
// call forRange to split that range. With one thread, or work smaller than the grain, the
// function runs inline on the calling thread (no thread hop).
//
// Parallelism adapts to the load: a call may ask for fewer threads (`width`), and runs in an
// arena of its own of at most that many (widths 2, 4, 8, ... below the total, and the total;
// width 1 runs inline). The executor gives each step of an execution its share
// (YieldPoint::runsSharingKernels): the threads are split equally between the applications
// executing at that moment, and an application's part between its executions. So one
// execution alone uses them all (latency), many in flight each use a few, without per-layer
// barriers across every core (throughput), an application with many executions takes no more
// threads than one with a single execution, and all of them together never more than the
// total.
//
// An execution with a deadline or a cancel flag sees Parallel through a StoppableParallel:
// its forRange times a small first share of the work (1/kProbeShare) on the calling thread,
// hands the rest out in chunks of at most kStopInterval each and at least kMinStopChunks, and
// stops handing them out once the execution's ExecutionStop says so. A long kernel thus ends
// within about kStopInterval of the deadline, however large its work, unless one item alone
// (one output line, say) takes longer. The kernel's outputs are then incomplete; the
// executor sees ExecutionStop::stopped() and fails the execution.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>

#include "nnhal/types.h"

namespace nnhal::engine {

class Parallel {
 public:
  /// `threads` = 0 uses every hardware thread.
  explicit Parallel(unsigned threads = 0);
  ~Parallel();
  Parallel(const Parallel&) = delete;
  Parallel& operator=(const Parallel&) = delete;

  unsigned threads() const { return threads_; }

  /// Starts the kernel threads and the full-width arena now, so that the first execution does
  /// not pay for them (oneTBB creates its workers on first demand). Waits at most about 2 ms
  /// for every thread to join; a no-op with one thread.
  void warmUp() const;

  /// Calls fn(begin, end) over disjoint chunks covering [0, n), each at least `grain`
  /// items (except possibly the last), possibly concurrently, on at most `width` threads
  /// (0 = all). Returns when all are done.
  void forRange(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn,
                unsigned width = 0) const;
  /// Calls fn over chunks of exactly `chunk` items (the last may be shorter), possibly
  /// concurrently on at most `width` threads (0 = all), in no particular order.
  void forChunks(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn,
                 unsigned width = 0) const;

  /// The threads one of `sharing` concurrent runs gets (at least 1), for `preference`:
  /// FAST_SINGLE_ANSWER and SUSTAINED_SPEED an equal share, LOW_POWER half of it.
  unsigned shareFor(unsigned sharing, ExecutionPreference preference) const;

 private:
  struct Arenas;
  unsigned threads_;
  std::unique_ptr<Arenas> arenas_;
};

/// When one execution must stop: its deadline passed or it was cancelled. Once check()
/// returned true it stays true. Thread safe: the kernels' chunks call check() concurrently.
class ExecutionStop {
 public:
  ExecutionStop(OptionalTimePoint deadline, const std::atomic<bool>* cancelled)
      : deadline_(deadline), cancelled_(cancelled) {}
  /// Whether there is anything to check at all.
  bool active() const { return deadline_.has_value() || cancelled_ != nullptr; }
  /// Looks at the clock and the flag; true when the execution must stop.
  bool check() const;
  /// True when a check() found that the execution must stop.
  bool stopped() const { return stopped_.load(std::memory_order_relaxed); }
  /// The status of a stopped execution: DEVICE_UNAVAILABLE when cancelled, else
  /// MISSED_DEADLINE_TRANSIENT; `what` names where it stopped.
  Error error(const std::string& what) const;

 private:
  OptionalTimePoint deadline_;
  const std::atomic<bool>* cancelled_;
  mutable std::atomic<bool> stopped_{false};
};

/// Parallel as one execution's kernels see it (see the top of this file).
class StoppableParallel {
 public:
  /// Work between two looks at the stop condition, when one is active.
  static constexpr std::chrono::microseconds kStopInterval{2000};
  /// The share of a range timed first to size the chunks.
  static constexpr size_t kProbeShare = 256;
  /// Chunks the rest of a range is cut into at least (shorter kernels stop within 1/64).
  static constexpr size_t kMinStopChunks = 64;

  /// `width`: the threads this execution's step may use (0 = all).
  StoppableParallel(const Parallel& parallel, const ExecutionStop* stop = nullptr,  // NOLINT
                    unsigned width = 0)
      : parallel_(parallel), stop_(stop), width_(width) {}
  /// The threads a kernel's forRange may use.
  unsigned threads() const {
    return width_ == 0 ? parallel_.threads() : std::min(width_, parallel_.threads());
  }
  void forRange(size_t n, size_t grain, const std::function<void(size_t, size_t)>& fn) const;

 private:
  const Parallel& parallel_;
  const ExecutionStop* stop_;
  unsigned width_;
};

}  // namespace nnhal::engine
