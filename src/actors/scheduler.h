// actors/scheduler.h — the device's run queue: which preparation or execution takes one of
// the driver's threads next.
//
// Work of every prepared model, compilation and (through nnhald) client goes through one
// Scheduler per device, so priority holds across all of them (IDevice::prepareModel_1_3's
// Priority; an execution has the priority its model was prepared with):
//  - At most `slots` jobs hold a slot at once (the runtime's threads). Queued jobs start
//    HIGH before MEDIUM before LOW, in arrival order within a priority.
//  - While a job of higher priority runs, lower-priority jobs do not start, and running ones
//    pause at their next yield point (between two operations, engine/yield_point.h) until
//    it is done: a HIGH execution gets the CPU's kernel threads to itself within one step.
//  - Starvation bound: a queued or paused job runs once kStarvationBound jobs started after
//    it was queued, whatever their priority. So a LOW request runs after at most 8 newer
//    HIGH ones.
//  - Synchronous executions and bursts run on their caller's thread: enter() returns at once
//    when nothing is queued (the fast path costs one uncontended lock), else the caller waits
//    for its turn like a queued job.
//
// Not an actor: a monitor. Its state is a few counters and three queues under one mutex,
// held for a few instructions, because a pausing run must learn synchronously when it may go
// on. Jobs run on the runtime's pool, outside the lock.
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <array>
#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/yield_point.h"
#include "nnhal/types.h"

namespace nnhal::actors {

class Scheduler;

/// A job's right to run: released (and the next job started) when destroyed. A Lease is also
/// the job's yield point.
class Lease final : public engine::YieldPoint {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  ~Lease() override;

  /// Pauses while work of higher priority waits or runs (bounded by kStarvationBound).
  void yield() override;
  Priority priority() const { return priority_; }
  bool valid() const { return scheduler_ != nullptr; }

 private:
  friend class Scheduler;
  Lease(Scheduler* scheduler, Priority priority, bool slot)
      : scheduler_(scheduler), priority_(priority), slot_(slot) {}
  void release();

  Scheduler* scheduler_ = nullptr;
  Priority priority_ = Priority::MEDIUM;
  bool slot_ = false;  ///< holds one of the slots (else: runs inline on its caller's thread)
};

class Scheduler : public std::enable_shared_from_this<Scheduler> {
 public:
  /// Jobs that may start ahead of a queued or paused one before it runs regardless.
  static constexpr uint64_t kStarvationBound = 8;

  using Job = std::move_only_function<void(Lease)>;

  /// `slots`: jobs holding a slot at once. Paused jobs keep their pool thread, so the pool
  /// needs `2 * slots` threads.
  using Pool = boost::asio::thread_pool::executor_type;
  Scheduler(Pool pool, uint32_t slots);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Queues `job`; it runs on a pool thread with its Lease once it may.
  void submit(Priority priority, Job job);
  /// For work on the caller's thread: returns the Lease once it may run (at once when
  /// nothing is queued).
  Lease enter(Priority priority);
  /// Jobs queued or paused, not running.
  uint64_t queued() const;
  /// True when enter(priority) would return at once and its run would not pause: nothing is
  /// queued and no higher-priority work is active (a hint: the state may change right after).
  bool idleFor(Priority priority) const;

 private:
  friend class Lease;
  struct Waiter {
    std::mutex mutex;
    std::condition_variable cv;
    bool granted = false;
  };
  struct Entry {
    uint64_t startedAt = 0;          ///< starts_ when queued
    Job job;                         ///< a job to post, or
    std::shared_ptr<Waiter> waiter;  ///< a thread waiting for its grant
    bool paused = false;             ///< the waiter paused while holding a slot
  };
  /// Starts what may start; returns the jobs to post and the waiters to wake (done unlocked).
  void dispatchLocked(std::vector<std::pair<Job, Priority>>& posts,
                      std::vector<std::shared_ptr<Waiter>>& wakes);
  void launch(std::vector<std::pair<Job, Priority>>& posts,
              std::vector<std::shared_ptr<Waiter>>& wakes);
  void leave(Priority priority, bool slot);
  /// Blocks until `waiter` is granted.
  static void wait(Waiter& waiter);
  bool higherActive(Priority priority) const;
  void pause(Lease& lease);

  Pool pool_;
  const uint32_t slots_;
  mutable std::mutex mutex_;
  std::array<std::deque<Entry>, 3> queues_;  ///< by Priority
  uint32_t running_ = 0;                     ///< slots in use
  uint32_t paused_ = 0;                      ///< slot holders paused on their thread
  uint64_t starts_ = 0;
  uint64_t queuedCount_ = 0;
  std::array<uint32_t, 3> runningBy_{};  ///< runs (slot or inline) by priority
  /// Runs, queued and paused jobs by priority: what yield() reads without the lock.
  std::array<std::atomic<uint32_t>, 3> active_{};
};

}  // namespace nnhal::actors
