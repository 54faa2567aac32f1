#include "actors/scheduler.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>
#include <vector>

#include "hal/thread_priority.h"

namespace nnhal::actors {

Lease::Lease(Lease&& other) noexcept
    : scheduler_(std::exchange(other.scheduler_, nullptr)),
      level_(other.level_),
      slot_(other.slot_) {}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    release();
    scheduler_ = std::exchange(other.scheduler_, nullptr);
    level_ = other.level_;
    slot_ = other.slot_;
  }
  return *this;
}

Lease::~Lease() { release(); }

void Lease::release() {
  if (scheduler_ != nullptr) std::exchange(scheduler_, nullptr)->leave(level_, slot_);
}

void Lease::yield() {
  if (scheduler_ != nullptr && scheduler_->higherActive(level_)) scheduler_->pause(*this);
}

Scheduler::Scheduler(Pool pool, uint32_t slots)
    : Scheduler(pool, pool, slots, slots, PreparationPolicy::kNormal) {}

Scheduler::Scheduler(Pool foreground, Pool background, uint32_t slots, uint32_t preparationSlots,
                     PreparationPolicy backgroundPolicy)
    : pool_(foreground),
      background_(background),
      slots_(slots != 0 ? slots : 1),
      preparationSlots_(std::clamp<uint32_t>(preparationSlots, 1, slots_)),
      backgroundPolicy_(backgroundPolicy) {}

uint32_t Scheduler::runningPreparations() const {
  uint32_t running = 0;
  for (size_t q = 0; q < kLevels; q += 2) running += runningBy_[q];
  return running;
}

bool Scheduler::startable(size_t level) const {
  if (queues_[level].empty()) return false;
  const bool preparation = level % 2 == static_cast<size_t>(Work::kPreparation);
  return !preparation || runningPreparations() < preparationSlots_;
}

uint64_t Scheduler::queued() const {
  std::lock_guard lock(mutex_);
  return queuedCount_;
}

size_t Scheduler::levelOf(Priority priority, Work work) {
  const auto p = static_cast<int32_t>(priority);
  return 2 * static_cast<size_t>(p < 0 ? 0 : p > 2 ? 2 : p) + static_cast<size_t>(work);
}

bool Scheduler::idleFor(Priority priority, Work work) const {
  const size_t level = levelOf(priority, work);
  {
    std::lock_guard lock(mutex_);
    if (queuedAtOrAbove(level)) return false;
  }
  return !higherActive(level);
}

bool Scheduler::queuedAtOrAbove(size_t level) const {
  for (size_t q = level; q < queues_.size(); ++q) {
    if (!queues_[q].empty()) return true;
  }
  return false;
}

bool Scheduler::higherActive(size_t level) const {
  for (size_t q = level + 1; q < active_.size(); ++q) {
    if (active_[q].load(std::memory_order_relaxed) > 0) return true;
  }
  return false;
}

void Scheduler::dispatchLocked(std::vector<std::pair<Job, size_t>>& posts,
                               std::vector<std::shared_ptr<Waiter>>& wakes) {
  while (running_ < slots_ && queuedCount_ > 0) {
    // A job that kStarvationBound others overtook goes first, the lowest priority first.
    // Preparations beyond preparationSlots_ wait, whatever their level.
    int chosen = -1;
    for (size_t q = 0; q < queues_.size() && chosen < 0; ++q) {
      if (startable(q) && starts_ - queues_[q].front().startedAt >= kStarvationBound) {
        chosen = static_cast<int>(q);
      }
    }
    if (chosen < 0) {
      for (int q = static_cast<int>(queues_.size()) - 1; q >= 0 && chosen < 0; --q) {
        if (startable(static_cast<size_t>(q))) chosen = q;
      }
      if (chosen < 0) return;
      // Nothing of lower priority starts while higher-priority work runs.
      for (size_t q = static_cast<size_t>(chosen) + 1; q < runningBy_.size(); ++q) {
        if (runningBy_[q] > 0) return;
      }
    }
    const auto q = static_cast<size_t>(chosen);
    Entry entry = std::move(queues_[q].front());
    queues_[q].pop_front();
    --queuedCount_;
    ++running_;
    ++starts_;
    ++runningBy_[q];
    if (entry.waiter) {
      if (entry.paused) --paused_;
      wakes.push_back(std::move(entry.waiter));
    } else {
      posts.emplace_back(std::move(entry.job), q);
    }
  }
}

void Scheduler::launch(std::vector<std::pair<Job, size_t>>& posts,
                       std::vector<std::shared_ptr<Waiter>>& wakes) {
  for (const std::shared_ptr<Waiter>& waiter : wakes) {
    std::lock_guard lock(waiter->mutex);
    waiter->granted = true;
    waiter->cv.notify_one();
  }
  for (auto& [job, level] : posts) {
    // The job keeps the scheduler alive: its Lease is released after the job's own actor may
    // have gone.
    const bool preparation = level % 2 == static_cast<size_t>(Work::kPreparation);
    boost::asio::post(
        preparation ? background_ : pool_,
        [self = shared_from_this(), job = std::move(job), level, preparation]() mutable {
          if (preparation) hal::applyPreparationPolicy(self->backgroundPolicy_);
          job(Lease(self.get(), level, true));
        });
  }
}

void Scheduler::wait(Waiter& waiter) {
  std::unique_lock lock(waiter.mutex);
  waiter.cv.wait(lock, [&] { return waiter.granted; });
}

void Scheduler::submit(Priority priority, Work work, Job job) {
  const size_t q = levelOf(priority, work);
  std::vector<std::pair<Job, size_t>> posts;
  std::vector<std::shared_ptr<Waiter>> wakes;
  {
    std::lock_guard lock(mutex_);
    active_[q].fetch_add(1, std::memory_order_relaxed);
    queues_[q].push_back(Entry{starts_, std::move(job), nullptr, false});
    ++queuedCount_;
    dispatchLocked(posts, wakes);
  }
  launch(posts, wakes);
}

Lease Scheduler::enter(Priority priority, Work work) {
  const size_t q = levelOf(priority, work);
  auto waiter = std::make_shared<Waiter>();
  std::vector<std::pair<Job, size_t>> posts;
  std::vector<std::shared_ptr<Waiter>> wakes;
  {
    std::lock_guard lock(mutex_);
    active_[q].fetch_add(1, std::memory_order_relaxed);
    // The fast path: nothing of this level or above waits (queued lower-level work is held
    // back while this runs, and running lower-level work pauses), so run inline, outside the
    // slots.
    if (!queuedAtOrAbove(q)) {
      ++runningBy_[q];
      return Lease(this, q, false);
    }
    queues_[q].push_back(Entry{starts_, nullptr, waiter, false});
    ++queuedCount_;
    dispatchLocked(posts, wakes);
  }
  launch(posts, wakes);
  wait(*waiter);
  return Lease(this, q, true);
}

void Scheduler::pause(Lease& lease) {
  const size_t q = lease.level_;
  auto waiter = std::make_shared<Waiter>();
  std::vector<std::pair<Job, size_t>> posts;
  std::vector<std::shared_ptr<Waiter>> wakes;
  {
    std::lock_guard lock(mutex_);
    // A paused slot holder keeps its pool thread: at most `slots` may pause at once.
    if (lease.slot_ && paused_ >= slots_) return;
    // Resumes ahead of its priority's queue: it was running.
    queues_[q].push_front(Entry{starts_, nullptr, waiter, lease.slot_});
    ++queuedCount_;
    if (lease.slot_) {
      --running_;
      ++paused_;
    }
    --runningBy_[q];
    dispatchLocked(posts, wakes);
  }
  launch(posts, wakes);
  wait(*waiter);
  lease.slot_ = true;  // resumed in a slot
}

void Scheduler::leave(size_t level, bool slot) {
  const size_t q = level;
  std::vector<std::pair<Job, size_t>> posts;
  std::vector<std::shared_ptr<Waiter>> wakes;
  {
    std::lock_guard lock(mutex_);
    active_[q].fetch_sub(1, std::memory_order_relaxed);
    --runningBy_[q];
    if (slot) --running_;
    dispatchLocked(posts, wakes);
  }
  launch(posts, wakes);
}

}  // namespace nnhal::actors
