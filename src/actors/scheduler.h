// actors/scheduler.h — the device's run queue: which preparation or execution takes one of
// the driver's slots next.
//
// Every preparation and execution of a device, on every path (queued jobs, synchronous
// executions and bursts on their caller's thread), holds one of `slots` while it runs. Two
// rules decide who gets a free slot (docs/QOS.md):
//
//  - Between applications (hal/application.h): fair share. Each application has a weight
//    (1 by default) and a virtual service time, the real time its runs held slots divided by
//    its weight (runs still going count up to now). The next slot goes to the application
//    with work that can start and the least virtual service; an application that had nothing
//    to do re-enters one kMinRunSlice behind the least virtual service of the busy ones, so
//    its first job does not wait a slice for a slot, and idling banks no more credit than that.
//    A running job pauses at its next yield point (after at least kMinRunSlice) when an
//    application with work waiting for a slot has received kMinRunSlice less weighted
//    service, and resumes when its turn comes again. Priorities of one application never
//    affect another (IDevice::prepareModel_1_3: priority is "relative to other prepared
//    models owned by the client").
//  - Within one application: priority. A job's level orders it: by priority first, and
//    within a priority executions above preparations (compiling is background work next to
//    an inference someone waits for): HIGH execution > HIGH preparation > MEDIUM execution >
//    ... > LOW preparation. While work of a higher level of the same application waits or
//    runs, its lower-level jobs do not start, and running ones pause at their next yield
//    point (between two operations of an execution or a compilation, engine/yield_point.h).
//    Starvation bound: a queued or paused job goes first within its application once
//    kStarvationBound jobs of that application started after it was queued, whatever their
//    level: so a LOW request runs after at most 8 newer HIGH ones. Every start counts,
//    inline ones included.
//
// Of the slots, at most `preparationSlots` hold preparations at once, so compiling never
// takes every core. Preparations run on background pools: a preparation of an application
// whose own executions are active, or while no other application has work, runs on threads
// that give way to every other thread (PreparationPolicy, common/thread_priority.h), so it never
// slows an execution of its own application; otherwise it is that application's share of the
// machine and runs on threads of normal priority, so another application's executions
// cannot starve it. Executions run on the foreground pool, or inline on their caller's thread
// (enter(): at once when a slot is free and nothing of the application's same or higher level
// waits; else the caller waits for its turn like a queued job).
//
// Not an actor: a monitor. Its state is a few counters and per-application queues under one
// mutex, held for a few instructions, because a pausing run must learn synchronously when it
// may go on. Jobs run outside the lock. yield() takes the lock only when a pause may be due
// (atomics tell it).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "actors/give_way_watch.h"
#include "engine/yield_point.h"
#include "hal/application.h"
#include "nnhal/device.h"
#include "nnhal/types.h"

namespace nnhal::actors {

class Scheduler;
struct ApplicationQueue;  // scheduler.cpp

/// What a job is: its level within its priority.
enum class Work : uint8_t { kPreparation = 0, kExecution = 1 };

/// Whom work runs for: its application, and its priority within that application (a
/// preparation's PrepareOptions::priority; an execution has its prepared model's).
struct RunAs {
  hal::ApplicationId application = hal::kEmbeddedApplication;
  Priority priority = Priority::MEDIUM;
  /// PrepareOptions::preference: how many kernel threads its executions take
  /// (engine::Parallel::shareFor).
  ExecutionPreference preference = ExecutionPreference::FAST_SINGLE_ANSWER;
};

/// A job's right to run: its slot is released (and the next job started) when destroyed. A
/// Lease is also the job's yield point.
class Lease final : public engine::YieldPoint {
 public:
  Lease() = default;
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  ~Lease() override;

  /// Pauses while higher-level work of the same application waits or runs (bounded by
  /// kStarvationBound), or while its application is over its fair share and another one
  /// waits for a slot.
  void yield() override;
  /// How many ways the kernel threads are split for this run now: the applications with
  /// executions holding slots share them equally, and an application's share is split
  /// equally between its executions (applications x this application's executions; at
  /// least 1).
  unsigned runsSharingKernels() const override;
  bool valid() const { return scheduler_ != nullptr; }

 private:
  friend class Scheduler;
  void release();

  Scheduler* scheduler_ = nullptr;
  ApplicationQueue* app_ = nullptr;
  size_t level_ = 0;
  bool pooled_ = false;     ///< runs on a pool thread (a submitted job), not its caller's
  int64_t runStartNs_ = 0;  ///< when this run (or its resumption) got its slot
  int64_t lastFairCheckNs_ = 0;
};

/// What the scheduler did for one application (for statistics and tests).
struct ApplicationStats {
  hal::ApplicationId application = 0;
  uint32_t weight = 1;
  uint64_t starts = 0;     ///< jobs started (queued and inline), resumptions not counted
  uint64_t pauses = 0;     ///< runs paused at a yield point, for priority or fair share
  uint64_t serviceNs = 0;  ///< real time its runs held slots
  uint32_t running = 0;    ///< slots held now
  uint32_t queued = 0;     ///< jobs waiting now (paused ones included)
};

class Scheduler : public std::enable_shared_from_this<Scheduler> {
 public:
  /// Jobs of an application that may start ahead of its queued or paused one before it runs
  /// regardless.
  static constexpr uint64_t kStarvationBound = 8;
  /// A run pauses for another application's fair share only after holding its slot this long
  /// (and a waiting application must be this far behind in weighted service).
  static constexpr std::chrono::microseconds kMinRunSlice{1000};

  using Job = std::move_only_function<void(Lease)>;
  using Pool = boost::asio::thread_pool::executor_type;

  /// Everything on one pool (2 * slots threads: the running jobs and the paused ones).
  Scheduler(Pool pool, uint32_t slots);
  /// Executions run on `foreground` (2 * slots threads); preparations on `giveWay` when they
  /// must not slow an execution of their own application, else on `fair` (each slots +
  /// preparationSlots threads: the preparations that run and those paused), of which at most
  /// `preparationSlots` (1..slots) hold a slot at once. The threads of `giveWay` take
  /// `policy` for each job they run (common/thread_priority.h); those of `fair` keep the
  /// process's. `fair` may be `giveWay` (then every preparation gives way). A preparation
  /// kept off the cores while giving way gets the process's priority back (give_way_watch.h)
  /// where the OS allows that; where it does not, kIdle is applied as kNice, which the OS
  /// itself keeps from starving (an info line says so).
  Scheduler(Pool foreground, Pool giveWay, Pool fair, uint32_t slots, uint32_t preparationSlots,
            PreparationPolicy policy);
  /// As above with one background pool for every preparation.
  Scheduler(Pool foreground, Pool background, uint32_t slots, uint32_t preparationSlots,
            PreparationPolicy policy)
      : Scheduler(foreground, background, background, slots, preparationSlots, policy) {}
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// The application's share relative to the others (1 = the default; 0 counts as 1).
  void setWeight(hal::ApplicationId application, uint32_t weight);

  /// Queues `job`; it runs on a pool thread with its Lease once it may.
  void submit(hal::ApplicationId application, Priority priority, Work work, Job job);
  void submit(Priority priority, Work work, Job job) {
    submit(hal::kEmbeddedApplication, priority, work, std::move(job));
  }
  /// For work on the caller's thread: returns the Lease once it may run (at once when a slot
  /// is free and nothing of the application's same or a higher level is queued).
  Lease enter(hal::ApplicationId application, Priority priority, Work work = Work::kExecution);
  Lease enter(Priority priority, Work work = Work::kExecution) {
    return enter(hal::kEmbeddedApplication, priority, work);
  }
  /// Jobs queued or paused, not running.
  uint64_t queued() const;
  /// True when enter() would return at once and the run would not pause: a slot is free,
  /// nothing of the application's same or a higher level is queued or active, and no other
  /// application waits (a hint: the state may change right after).
  bool idleFor(hal::ApplicationId application, Priority priority,
               Work work = Work::kExecution) const;
  /// Per application seen so far.
  std::vector<ApplicationStats> applications() const;
  /// The policy preparations that give way run with (the one asked for, or kNice for kIdle
  /// where a starved preparation could not get its priority back).
  PreparationPolicy preparationPolicy() const { return policy_; }
  /// Preparations that stopped giving way because other threads kept them off the cores.
  uint64_t preparationsPromoted() const { return watch_ ? watch_->promotions() : 0; }

 private:
  friend class Lease;
  struct Grants;

  static size_t levelOf(Priority priority, Work work);
  static bool isPreparation(size_t level) { return level % 2 == 0; }
  ApplicationQueue& applicationLocked(hal::ApplicationId id);
  /// `app` gets work after having none: it re-enters at the least virtual service of the
  /// busy applications (mutex_ held).
  void activateLocked(ApplicationQueue& app, int64_t now);
  int64_t effectiveServiceLocked(const ApplicationQueue& app, int64_t now) const;
  /// The level of `app` that may start a job now, or -1 (mutex_ held).
  int pickLevelLocked(const ApplicationQueue& app) const;
  bool startableLocked(const ApplicationQueue& app, size_t level) const;
  /// Starts what may start (mutex_ held); the jobs to post and the waiters to wake are run
  /// by launch() after unlocking.
  void dispatchLocked(Grants& grants, int64_t now);
  void startLocked(ApplicationQueue& app, size_t level, int64_t now, Grants& grants);
  void launch(Grants& grants);
  /// Charges `app` for a run that held a slot since `runStart` (mutex_ held).
  void chargeLocked(ApplicationQueue& app, int64_t runStart, int64_t now);
  /// Counts an entry just queued in `app` (mutex_ held).
  void countQueuedLocked(ApplicationQueue& app);
  /// A run of `app` at `level` takes / gives back a slot (mutex_ held); giving back charges
  /// the time it held it since `runStart`.
  void takeSlotLocked(ApplicationQueue& app, size_t level, int64_t now);
  void releaseSlotLocked(ApplicationQueue& app, size_t level, int64_t runStart, int64_t now);
  void leave(Lease& lease);
  void pause(Lease& lease, bool forFairShare);
  /// True when another application with work that can start is behind `app` by more than
  /// kMinRunSlice of weighted service (mutex_ held).
  bool overShareLocked(const ApplicationQueue& app, int64_t now) const;
  void fairnessCheck(Lease& lease, int64_t now);

  Pool pool_;
  Pool giveWay_;
  Pool fair_;
  const uint32_t slots_;
  const uint32_t preparationSlots_;
  const bool canRestore_;  ///< a thread that gave way can get the process's priority back
  const PreparationPolicy policy_;
  mutable std::mutex mutex_;
  std::unordered_map<hal::ApplicationId, std::unique_ptr<ApplicationQueue>> apps_;
  std::vector<ApplicationQueue*> backlogged_;  ///< applications with queued entries
  uint32_t running_ = 0;                       ///< slots in use
  uint32_t runningPreparations_ = 0;           ///< of them, preparations
  uint32_t pausedPooled_ = 0;                  ///< paused jobs keeping a pool thread
  uint64_t picks_ = 0;
  /// Entries queued (paused ones included); yield() reads it without the lock.
  std::atomic<uint64_t> queuedCount_{0};
  /// Applications with executions holding slots (runsSharingKernels reads it without the
  /// lock).
  std::atomic<uint32_t> applicationsExecuting_{0};
  /// Last: its thread (which locks mutex_) stops before the state above goes.
  std::unique_ptr<GiveWayWatch> watch_;
};

}  // namespace nnhal::actors
