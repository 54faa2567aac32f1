// actors/scheduler.h — the device's run queue: which preparation or execution takes one of
// the driver's threads next.
//
// Work of every prepared model, compilation and (through nnhald) client goes through one
// Scheduler per device, so priority holds across all of them (IDevice::prepareModel_1_3's
// Priority; an execution has the priority its model was prepared with). A job's level orders
// it: by priority first, and within a priority executions above preparations (compiling is
// background work next to an inference someone waits for), so HIGH execution > HIGH
// preparation > MEDIUM execution > ... > LOW preparation.
//  - At most `slots` jobs hold a slot at once (the runtime's threads), and of them at most
//    `preparationSlots` preparations: compiling never takes every core, so an execution
//    finds one free. Queued jobs start by level, in arrival order within a level.
//  - Preparations run on the background pool, whose threads have a lower OS priority
//    (hal/thread_priority.h); executions on the foreground pool.
//  - While a job of a higher level runs, lower-level jobs do not start, and running ones
//    pause at their next yield point (between two operations of an execution or of a
//    compilation, engine/yield_point.h) until it is done: a HIGH execution gets the CPU's
//    kernel threads to itself within one step.
//  - Starvation bound: a queued or paused job runs once kStarvationBound jobs started after
//    it was queued, whatever their level. So a LOW request runs after at most 8 newer
//    HIGH ones.
//  - Synchronous executions and bursts run on their caller's thread: enter() returns at once
//    when nothing of their level or above is queued (the fast path costs one uncontended
//    lock), else the caller waits for its turn like a queued job.
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
#include "nnhal/device.h"
#include "nnhal/types.h"

namespace nnhal::actors {

class Scheduler;

/// What a job is: its level within its priority.
enum class Work : uint8_t { kPreparation = 0, kExecution = 1 };

/// A job's right to run: released (and the next job started) when destroyed. A Lease is also
/// the job's yield point.
class Lease final : public engine::YieldPoint {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  ~Lease() override;

  /// Pauses while work of a higher level waits or runs (bounded by kStarvationBound).
  void yield() override;
  bool valid() const { return scheduler_ != nullptr; }

 private:
  friend class Scheduler;
  Lease(Scheduler* scheduler, size_t level, bool slot)
      : scheduler_(scheduler), level_(level), slot_(slot) {}
  void release();

  Scheduler* scheduler_ = nullptr;
  size_t level_ = 0;
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
  /// Executions run on `foreground` (2 * slots threads), preparations on `background`
  /// (slots + preparationSlots threads: the preparations that run and those paused), of which
  /// at most `preparationSlots` (1..slots) hold a slot at once. The background threads take
  /// `backgroundPolicy` when they run their first job (hal/thread_priority.h).
  Scheduler(Pool foreground, Pool background, uint32_t slots, uint32_t preparationSlots,
            PreparationPolicy backgroundPolicy);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Queues `job`; it runs on a pool thread with its Lease once it may.
  void submit(Priority priority, Work work, Job job);
  /// For work on the caller's thread: returns the Lease once it may run (at once when nothing
  /// of the same or a higher level is queued).
  Lease enter(Priority priority, Work work = Work::kExecution);
  /// Jobs queued or paused, not running.
  uint64_t queued() const;
  /// True when enter() would return at once and the run would not pause: nothing of the same
  /// or a higher level is queued and no higher-level work is active (a hint: the state may
  /// change right after).
  bool idleFor(Priority priority, Work work = Work::kExecution) const;

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
  static constexpr size_t kLevels = 6;
  static size_t levelOf(Priority priority, Work work);
  void dispatchLocked(std::vector<std::pair<Job, size_t>>& posts,
                      std::vector<std::shared_ptr<Waiter>>& wakes);
  void launch(std::vector<std::pair<Job, size_t>>& posts,
              std::vector<std::shared_ptr<Waiter>>& wakes);
  void leave(size_t level, bool slot);
  /// Blocks until `waiter` is granted.
  static void wait(Waiter& waiter);
  bool higherActive(size_t level) const;
  bool queuedAtOrAbove(size_t level) const;  ///< mutex_ held
  void pause(Lease& lease);

  bool startable(size_t level) const;    ///< mutex_ held
  uint32_t runningPreparations() const;  ///< mutex_ held

  Pool pool_;
  Pool background_;
  const uint32_t slots_;
  const uint32_t preparationSlots_;
  const PreparationPolicy backgroundPolicy_;
  mutable std::mutex mutex_;
  std::array<std::deque<Entry>, kLevels> queues_;  ///< by level
  uint32_t running_ = 0;                           ///< slots in use
  uint32_t paused_ = 0;                            ///< slot holders paused on their thread
  uint64_t starts_ = 0;
  uint64_t queuedCount_ = 0;
  std::array<uint32_t, kLevels> runningBy_{};  ///< runs (slot or inline) by level
  /// Runs, queued and paused jobs by level: what yield() reads without the lock.
  std::array<std::atomic<uint32_t>, kLevels> active_{};
};

}  // namespace nnhal::actors
