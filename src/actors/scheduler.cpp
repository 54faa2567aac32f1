#include "actors/scheduler.h"

#include <algorithm>
#include <array>
#include <boost/asio/post.hpp>
#include <deque>
#include <limits>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/thread_priority.h"

namespace nnhal::actors {
namespace {

constexpr size_t kLevels = 6;  // 3 priorities x {preparation, execution}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

constexpr int64_t kMinRunSliceNs =
    std::chrono::duration_cast<std::chrono::nanoseconds>(Scheduler::kMinRunSlice).count();
/// How often a running job looks at the fair share while other applications wait.
constexpr int64_t kFairCheckIntervalNs = kMinRunSliceNs / 4;

/// A thread waiting for its grant: a caller of enter() or a paused run.
struct Waiter {
  std::mutex mutex;
  std::condition_variable cv;
  bool granted = false;
  int64_t grantedAtNs = 0;
};

struct Entry {
  uint64_t startedAt = 0;          ///< the application's starts when queued
  Scheduler::Job job;              ///< a job to post, or
  std::shared_ptr<Waiter> waiter;  ///< a thread waiting for its grant
  bool paused = false;             ///< the waiter paused while holding a slot
  bool pooled = false;             ///< ... on a pool thread
};

}  // namespace

/// One application's queues and accounting (all under Scheduler::mutex_ but `active`).
struct ApplicationQueue {
  explicit ApplicationQueue(hal::ApplicationId application) : id(application) {}
  const hal::ApplicationId id;
  uint32_t weight = 1;
  std::array<std::deque<Entry>, kLevels> queues;
  std::array<uint32_t, kLevels> runningBy{};  ///< slot holders by level
  /// Runs, queued and paused jobs by level: what yield() reads without the lock.
  std::array<std::atomic<uint32_t>, kLevels> active{};
  uint32_t queued = 0;
  uint32_t running = 0;
  uint64_t starts = 0;
  uint64_t pauses = 0;
  int64_t virtualServiceNs = 0;  ///< service / weight, of finished run segments
  int64_t runStartSumNs = 0;     ///< sum of the start times of the runs holding slots now
  uint64_t realServiceNs = 0;
  uint64_t lastPicked = 0;
  int64_t lastExecutionEndNs = 0;  ///< when an execution last gave its slot back

  bool queuedAtOrAbove(size_t level) const {
    for (size_t q = level; q < kLevels; ++q) {
      if (!queues[q].empty()) return true;
    }
    return false;
  }
  bool runningAbove(size_t level) const {
    for (size_t q = level + 1; q < kLevels; ++q) {
      if (runningBy[q] > 0) return true;
    }
    return false;
  }
  bool higherActive(size_t level) const {
    for (size_t q = level + 1; q < kLevels; ++q) {
      if (active[q].load(std::memory_order_relaxed) > 0) return true;
    }
    return false;
  }
  bool executionsActive() const {
    for (size_t q = 1; q < kLevels; q += 2) {
      if (active[q].load(std::memory_order_relaxed) > 0) return true;
    }
    return false;
  }
  bool busy() const { return queued > 0 || running > 0; }
  /// Executions holding slots (runsSharingKernels reads it without the lock).
  std::atomic<uint32_t> runningExecutions{0};
};

struct Scheduler::Grants {
  struct Post {
    Job job;
    ApplicationQueue* app;
    size_t level;
    int64_t runStart;
    bool giveWay;
  };
  std::vector<Post> posts;
  std::vector<std::shared_ptr<Waiter>> wakes;
};

// --- Lease ---------------------------------------------------------------------------------

Lease::Lease(Lease&& other) noexcept
    : scheduler_(std::exchange(other.scheduler_, nullptr)),
      app_(other.app_),
      level_(other.level_),
      pooled_(other.pooled_),
      runStartNs_(other.runStartNs_),
      lastFairCheckNs_(other.lastFairCheckNs_) {}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    scheduler_ = std::exchange(other.scheduler_, nullptr);
    app_ = other.app_;
    level_ = other.level_;
    pooled_ = other.pooled_;
    runStartNs_ = other.runStartNs_;
    lastFairCheckNs_ = other.lastFairCheckNs_;
  }
  return *this;
}

Lease::~Lease() { release(); }

void Lease::release() {
  if (scheduler_ != nullptr) {
    Scheduler* scheduler = std::exchange(scheduler_, nullptr);
    scheduler->leave(*this);
  }
}

unsigned Lease::runsSharingKernels() const {
  if (scheduler_ == nullptr) return 1;
  const uint32_t applications =
      std::max(1u, scheduler_->applicationsExecuting_.load(std::memory_order_relaxed));
  const uint32_t mine = std::max(1u, app_->runningExecutions.load(std::memory_order_relaxed));
  return applications * mine;
}

void Lease::yield() {
  if (scheduler_ == nullptr) return;
  if (app_->higherActive(level_)) {
    scheduler_->pause(*this, false);
    return;
  }
  // Fair share: only while something waits for a slot, and only now and then.
  if (scheduler_->queuedCount_.load(std::memory_order_relaxed) == 0) return;
  const int64_t now = nowNs();
  if (now - runStartNs_ < kMinRunSliceNs || now - lastFairCheckNs_ < kFairCheckIntervalNs) return;
  lastFairCheckNs_ = now;
  scheduler_->fairnessCheck(*this, now);
}

// --- Scheduler -----------------------------------------------------------------------------

Scheduler::Scheduler(Pool pool, uint32_t slots)
    : Scheduler(pool, pool, pool, slots, slots, PreparationPolicy::kNormal) {}

Scheduler::Scheduler(Pool foreground, Pool giveWay, Pool fair, uint32_t slots,
                     uint32_t preparationSlots, PreparationPolicy policy)
    : pool_(foreground),
      giveWay_(giveWay),
      fair_(fair),
      slots_(slots != 0 ? slots : 1),
      preparationSlots_(std::clamp<uint32_t>(preparationSlots, 1, slots_)),
      canRestore_(policy != PreparationPolicy::kNormal &&
                  common::canRestoreProcessPriority(policy)),
      policy_(policy == PreparationPolicy::kIdle && !canRestore_ ? PreparationPolicy::kNice
                                                                 : policy) {
  if (canRestore_) {
    watch_ = std::make_unique<GiveWayWatch>([this](hal::ApplicationId id, int64_t sinceNs) {
      std::lock_guard lock(mutex_);
      auto found = apps_.find(id);
      return found != apps_.end() &&
             (found->second->executionsActive() || found->second->lastExecutionEndNs >= sinceNs);
    });
  } else if (policy == PreparationPolicy::kIdle) {
    // Info, not a warning: an unprivileged embedded driver (every `nnhal` command) is fine
    // with nice 10; nnhald logs it at its default level.
    spdlog::info(
        "preparations give way with nice 10, not SCHED_IDLE: this process cannot give a thread "
        "its priority back (RLIMIT_NICE under 20, no CAP_SYS_NICE), and SCHED_IDLE would let "
        "other programs keep a preparation off the cores without end (systemd: LimitNICE=20)");
  }
}

Scheduler::~Scheduler() = default;

size_t Scheduler::levelOf(Priority priority, Work work) {
  const auto p = static_cast<int32_t>(priority);
  return 2 * static_cast<size_t>(p < 0 ? 0 : p > 2 ? 2 : p) + static_cast<size_t>(work);
}

ApplicationQueue& Scheduler::applicationLocked(hal::ApplicationId id) {
  auto& slot = apps_[id];
  if (!slot) slot = std::make_unique<ApplicationQueue>(id);
  return *slot;
}

void Scheduler::setWeight(hal::ApplicationId application, uint32_t weight) {
  std::lock_guard lock(mutex_);
  ApplicationQueue& app = applicationLocked(application);
  const int64_t now = nowNs();
  // Settle what its running jobs received so far at the old weight.
  app.virtualServiceNs += (static_cast<int64_t>(app.running) * now - app.runStartSumNs) /
                          static_cast<int64_t>(app.weight);
  app.runStartSumNs = static_cast<int64_t>(app.running) * now;
  app.weight = std::max<uint32_t>(weight, 1);
}

int64_t Scheduler::effectiveServiceLocked(const ApplicationQueue& app, int64_t now) const {
  return app.virtualServiceNs + (static_cast<int64_t>(app.running) * now - app.runStartSumNs) /
                                    static_cast<int64_t>(app.weight);
}

void Scheduler::activateLocked(ApplicationQueue& app, int64_t now) {
  if (app.busy()) return;
  bool any = false;
  int64_t least = std::numeric_limits<int64_t>::max();
  for (const auto& [id, other] : apps_) {
    if (other.get() == &app || !other->busy()) continue;
    any = true;
    least = std::min(least, effectiveServiceLocked(*other, now));
  }
  // One slice of credit at most (as CFS places a waking task half a latency behind its
  // queue's minimum): a run of the busy applications pauses for it at the next yield point
  // instead of first running a slice longer, and idling still banks nothing beyond it.
  if (any) app.virtualServiceNs = std::max(app.virtualServiceNs, least - kMinRunSliceNs);
}

bool Scheduler::startableLocked(const ApplicationQueue& app, size_t level) const {
  if (app.queues[level].empty()) return false;
  return !isPreparation(level) || runningPreparations_ < preparationSlots_;
}

int Scheduler::pickLevelLocked(const ApplicationQueue& app) const {
  // A job that kStarvationBound others of its application overtook goes first, the lowest
  // level first.
  for (size_t q = 0; q < kLevels; ++q) {
    if (startableLocked(app, q) &&
        app.starts - app.queues[q].front().startedAt >= kStarvationBound) {
      return static_cast<int>(q);
    }
  }
  for (int q = static_cast<int>(kLevels) - 1; q >= 0; --q) {
    if (!startableLocked(app, static_cast<size_t>(q))) continue;
    // Nothing of lower priority starts while higher-priority work of its application runs.
    return app.runningAbove(static_cast<size_t>(q)) ? -1 : q;
  }
  return -1;
}

void Scheduler::countQueuedLocked(ApplicationQueue& app) {
  if (app.queued++ == 0) backlogged_.push_back(&app);
  queuedCount_.fetch_add(1, std::memory_order_relaxed);
}

void Scheduler::takeSlotLocked(ApplicationQueue& app, size_t level, int64_t now) {
  ++running_;
  ++app.running;
  ++app.runningBy[level];
  app.lastPicked = ++picks_;
  app.runStartSumNs += now;
  if (isPreparation(level)) {
    ++runningPreparations_;
  } else if (app.runningExecutions.fetch_add(1, std::memory_order_relaxed) == 0) {
    applicationsExecuting_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Scheduler::releaseSlotLocked(ApplicationQueue& app, size_t level, int64_t runStart,
                                  int64_t now) {
  chargeLocked(app, runStart, now);
  --running_;
  --app.running;
  --app.runningBy[level];
  if (isPreparation(level)) {
    --runningPreparations_;
    return;
  }
  app.lastExecutionEndNs = now;
  if (app.runningExecutions.fetch_sub(1, std::memory_order_relaxed) == 1) {
    applicationsExecuting_.fetch_sub(1, std::memory_order_relaxed);
  }
}

void Scheduler::startLocked(ApplicationQueue& app, size_t level, int64_t now, Grants& grants) {
  Entry entry = std::move(app.queues[level].front());
  app.queues[level].pop_front();
  --app.queued;
  queuedCount_.fetch_sub(1, std::memory_order_relaxed);
  if (app.queued == 0) std::erase(backlogged_, &app);
  takeSlotLocked(app, level, now);
  if (!entry.paused) ++app.starts;
  if (entry.waiter) {
    if (entry.paused && entry.pooled) --pausedPooled_;
    entry.waiter->grantedAtNs = now;
    grants.wakes.push_back(std::move(entry.waiter));
    return;
  }
  bool giveWay = true;
  if (isPreparation(level) && !app.executionsActive()) {
    // Without executions of its own, a preparation gives way only while no other
    // application has work: otherwise it is this application's share of the machine.
    giveWay = std::none_of(apps_.begin(), apps_.end(), [&](const auto& other) {
      return other.second.get() != &app && other.second->busy();
    });
  }
  grants.posts.push_back({std::move(entry.job), &app, level, now, giveWay});
}

void Scheduler::dispatchLocked(Grants& grants, int64_t now) {
  while (running_ < slots_ && !backlogged_.empty()) {
    ApplicationQueue* best = nullptr;
    int bestLevel = -1;
    int64_t bestService = 0;
    for (ApplicationQueue* app : backlogged_) {
      const int level = pickLevelLocked(*app);
      if (level < 0) continue;
      const int64_t service = effectiveServiceLocked(*app, now);
      if (best == nullptr || service < bestService ||
          (service == bestService && app->lastPicked < best->lastPicked)) {
        best = app;
        bestLevel = level;
        bestService = service;
      }
    }
    if (best == nullptr) return;
    startLocked(*best, static_cast<size_t>(bestLevel), now, grants);
  }
}

void Scheduler::launch(Grants& grants) {
  for (const std::shared_ptr<Waiter>& waiter : grants.wakes) {
    std::lock_guard lock(waiter->mutex);
    waiter->granted = true;
    waiter->cv.notify_one();
  }
  for (Grants::Post& post : grants.posts) {
    const bool preparation = isPreparation(post.level);
    const bool giveWay = preparation && post.giveWay;
    // The job keeps the scheduler alive: its Lease is released after the job's own actor may
    // have gone.
    boost::asio::post(preparation ? (giveWay ? giveWay_ : fair_) : pool_,
                      [self = shared_from_this(), job = std::move(post.job), app = post.app,
                       level = post.level, runStart = post.runStart, giveWay]() mutable {
                        GiveWayWatch::Registration watched;
                        if (giveWay) {
                          common::applyPreparationPolicy(self->policy_);
                          if (self->watch_) watched = self->watch_->enter(app->id);
                        }
                        Lease lease;
                        lease.scheduler_ = self.get();
                        lease.app_ = app;
                        lease.level_ = level;
                        lease.pooled_ = true;
                        lease.runStartNs_ = runStart;
                        job(std::move(lease));
                      });
  }
}

void Scheduler::submit(hal::ApplicationId application, Priority priority, Work work, Job job) {
  const size_t q = levelOf(priority, work);
  Grants grants;
  {
    std::lock_guard lock(mutex_);
    const int64_t now = nowNs();
    ApplicationQueue& app = applicationLocked(application);
    activateLocked(app, now);
    app.active[q].fetch_add(1, std::memory_order_relaxed);
    app.queues[q].push_back(Entry{app.starts, std::move(job), nullptr, false, false});
    countQueuedLocked(app);
    dispatchLocked(grants, now);
  }
  launch(grants);
}

Lease Scheduler::enter(hal::ApplicationId application, Priority priority, Work work) {
  const size_t q = levelOf(priority, work);
  Lease lease;
  lease.scheduler_ = this;
  lease.level_ = q;
  lease.pooled_ = false;
  std::shared_ptr<Waiter> waiter;
  Grants grants;
  {
    std::lock_guard lock(mutex_);
    const int64_t now = nowNs();
    ApplicationQueue& app = applicationLocked(application);
    lease.app_ = &app;
    activateLocked(app, now);
    app.active[q].fetch_add(1, std::memory_order_relaxed);
    // The fast path: a slot is free (so every job that could start has started) and nothing
    // of this application's level or above waits or runs: run inline, in a slot.
    if (running_ < slots_ && !app.queuedAtOrAbove(q) && !app.runningAbove(q) &&
        (!isPreparation(q) || runningPreparations_ < preparationSlots_)) {
      takeSlotLocked(app, q, now);
      ++app.starts;
      lease.runStartNs_ = now;
      return lease;
    }
    waiter = std::make_shared<Waiter>();
    app.queues[q].push_back(Entry{app.starts, nullptr, waiter, false, false});
    countQueuedLocked(app);
    dispatchLocked(grants, now);
  }
  launch(grants);
  std::unique_lock lock(waiter->mutex);
  waiter->cv.wait(lock, [&] { return waiter->granted; });
  lease.runStartNs_ = waiter->grantedAtNs;
  return lease;
}

void Scheduler::chargeLocked(ApplicationQueue& app, int64_t runStart, int64_t now) {
  const int64_t ran = std::max<int64_t>(now - runStart, 0);
  app.virtualServiceNs += ran / static_cast<int64_t>(app.weight);
  app.runStartSumNs -= runStart;
  app.realServiceNs += static_cast<uint64_t>(ran);
}

void Scheduler::leave(Lease& lease) {
  ApplicationQueue& app = *lease.app_;
  const size_t q = lease.level_;
  Grants grants;
  {
    std::lock_guard lock(mutex_);
    const int64_t now = nowNs();
    releaseSlotLocked(app, q, lease.runStartNs_, now);
    app.active[q].fetch_sub(1, std::memory_order_relaxed);
    dispatchLocked(grants, now);
  }
  launch(grants);
}

bool Scheduler::overShareLocked(const ApplicationQueue& app, int64_t now) const {
  const int64_t mine = effectiveServiceLocked(app, now);
  for (const ApplicationQueue* other : backlogged_) {
    if (other == &app || pickLevelLocked(*other) < 0) continue;
    if (effectiveServiceLocked(*other, now) + kMinRunSliceNs < mine) return true;
  }
  return false;
}

void Scheduler::fairnessCheck(Lease& lease, int64_t now) {
  {
    std::lock_guard lock(mutex_);
    // Only when no slot is free: otherwise the waiting work starts without anyone pausing.
    if (running_ < slots_ || !overShareLocked(*lease.app_, now)) return;
  }
  pause(lease, true);
}

void Scheduler::pause(Lease& lease, bool forFairShare) {
  ApplicationQueue& app = *lease.app_;
  const size_t q = lease.level_;
  auto waiter = std::make_shared<Waiter>();
  Grants grants;
  {
    std::lock_guard lock(mutex_);
    // A paused job keeps its thread: at most `slots` pool threads may pause at once (the
    // pools have twice as many threads as slots).
    if (lease.pooled_ && pausedPooled_ >= slots_) return;
    const int64_t now = nowNs();
    if (forFairShare && (running_ < slots_ || !overShareLocked(app, now))) return;
    releaseSlotLocked(app, q, lease.runStartNs_, now);
    // Resumes ahead of its level's queue: it was running.
    app.queues[q].push_front(Entry{app.starts, nullptr, waiter, true, lease.pooled_});
    countQueuedLocked(app);
    ++app.pauses;
    if (lease.pooled_) ++pausedPooled_;
    dispatchLocked(grants, now);
  }
  launch(grants);
  std::unique_lock lock(waiter->mutex);
  waiter->cv.wait(lock, [&] { return waiter->granted; });
  lease.runStartNs_ = waiter->grantedAtNs;
}

uint64_t Scheduler::queued() const { return queuedCount_.load(std::memory_order_relaxed); }

bool Scheduler::idleFor(hal::ApplicationId application, Priority priority, Work work) const {
  const size_t q = levelOf(priority, work);
  std::lock_guard lock(mutex_);
  if (running_ >= slots_) return false;
  for (const ApplicationQueue* app : backlogged_) {
    if (app->id != application) return false;  // another application waits
  }
  auto found = apps_.find(application);
  if (found == apps_.end()) return true;
  const ApplicationQueue& app = *found->second;
  return !app.queuedAtOrAbove(q) && !app.higherActive(q);
}

std::vector<ApplicationStats> Scheduler::applications() const {
  std::lock_guard lock(mutex_);
  const int64_t now = nowNs();
  std::vector<ApplicationStats> stats;
  for (const auto& [id, app] : apps_) {
    ApplicationStats s;
    s.application = id;
    s.weight = app->weight;
    s.starts = app->starts;
    s.pauses = app->pauses;
    s.serviceNs =
        app->realServiceNs + static_cast<uint64_t>(std::max<int64_t>(
                                 static_cast<int64_t>(app->running) * now - app->runStartSumNs, 0));
    s.running = app->running;
    s.queued = app->queued;
    stats.push_back(s);
  }
  std::sort(stats.begin(), stats.end(), [](const ApplicationStats& a, const ApplicationStats& b) {
    return a.application < b.application;
  });
  return stats;
}

}  // namespace nnhal::actors
