#include "engine/arena_budget.h"

#include <algorithm>
#include <string>

namespace nnhal::engine {

BudgetedPool::BudgetedPool(ArenaBudget* budget, hal::ApplicationId application)
    : budget_(budget), application_(application) {
  if (budget_ != nullptr) budget_->enroll(this);
  enrolled_ = budget_ != nullptr;
}

void BudgetedPool::leaveBudget() {
  if (budget_ != nullptr && enrolled_) budget_->leave(this);
  enrolled_ = false;
}

BudgetedPool::~BudgetedPool() { leaveBudget(); }

void ArenaBudget::enroll(BudgetedPool* pool) {
  std::lock_guard lock(mutex_);
  pools_.push_back(pool);
}

void ArenaBudget::leave(BudgetedPool* pool) {
  std::lock_guard lock(mutex_);
  std::erase(pools_, pool);
}

void ArenaBudget::give(hal::ApplicationId application, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  held_ -= std::min(held_, bytes);
  auto found = byApplication_.find(application);
  if (found == byApplication_.end()) return;
  found->second -= std::min(found->second, bytes);
  if (found->second == 0) byApplication_.erase(found);
}

uint64_t ArenaBudget::reclaim(uint64_t needed) {
  std::lock_guard lock(mutex_);
  // The free arenas of the applications holding the most go first.
  std::vector<BudgetedPool*> order = pools_;
  std::stable_sort(order.begin(), order.end(), [&](BudgetedPool* a, BudgetedPool* b) {
    return byApplication_[a->application()] > byApplication_[b->application()];
  });
  uint64_t freed = 0;
  for (BudgetedPool* pool : order) {
    if (freed >= needed) break;
    freed += trimLocked(*pool, std::chrono::steady_clock::time_point::max());
  }
  std::erase_if(byApplication_, [](const auto& entry) { return entry.second == 0; });
  return freed;
}

uint64_t ArenaBudget::trimLocked(BudgetedPool& pool, std::chrono::steady_clock::time_point before) {
  const uint64_t bytes = pool.trim(before);
  held_ -= std::min(held_, bytes);
  uint64_t& mine = byApplication_[pool.application()];
  mine -= std::min(mine, bytes);
  return bytes;
}

uint64_t ArenaBudget::shareLocked() const {
  if (limit_ == 0) return 0;
  std::vector<hal::ApplicationId> applications;
  for (const BudgetedPool* pool : pools_) {
    if (std::ranges::find(applications, pool->application()) == applications.end()) {
      applications.push_back(pool->application());
      if (applications.size() == kMostSharers) break;
    }
  }
  return limit_ / std::max<size_t>(1, applications.size());
}

uint64_t ArenaBudget::trimApplication(hal::ApplicationId application) {
  std::lock_guard lock(mutex_);
  uint64_t freed = 0;
  for (BudgetedPool* pool : pools_) {
    if (pool->application() == application) {
      freed += trimLocked(*pool, std::chrono::steady_clock::time_point::max());
    }
  }
  return freed;
}

Result<void> ArenaBudget::charge(hal::ApplicationId application, uint64_t bytes) {
  uint64_t share = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    bool overShare = false;
    {
      std::lock_guard lock(mutex_);
      share = shareLocked();
      auto found = byApplication_.find(application);
      const uint64_t mine = found == byApplication_.end() ? 0 : found->second;
      overShare = share != 0 && (bytes > share || mine > share - bytes);
      const bool fits = limit_ == 0 || (bytes <= limit_ && held_ <= limit_ - bytes);
      if (fits && !overShare) {
        held_ += bytes;
        byApplication_[application] += bytes;
        return {};
      }
      if (attempt == 1) break;
    }
    // Free the arenas nobody uses now (the application's own when it is past its share),
    // then try once more.
    if (overShare) {
      trimApplication(application);
    } else {
      reclaim(bytes);
    }
  }
  if (share != 0 && share < limit_) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                "your application's executions use their share of the driver's execution "
                "memory (" +
                    std::to_string(share) + " of " + std::to_string(limit_) +
                    " bytes of arenas, shared by the applications that prepared models); an "
                    "arena of " +
                    std::to_string(bytes) + " bytes does not fit now, try again later");
  }
  return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
              "the driver's execution memory (" + std::to_string(limit_) +
                  " bytes of arenas for every prepared model) is in use; an arena of " +
                  std::to_string(bytes) + " bytes does not fit now, try again later");
}

uint64_t ArenaBudget::trimIdle(bool everything) {
  if (!everything && idleRelease_.count() == 0) return 0;
  const auto before = everything ? std::chrono::steady_clock::time_point::max()
                                 : std::chrono::steady_clock::now() - idleRelease_;
  std::lock_guard lock(mutex_);
  uint64_t freed = 0;
  for (BudgetedPool* pool : pools_) freed += trimLocked(*pool, before);
  std::erase_if(byApplication_, [](const auto& entry) { return entry.second == 0; });
  return freed;
}

uint64_t ArenaBudget::held() const {
  std::lock_guard lock(mutex_);
  return held_;
}

uint64_t ArenaBudget::held(hal::ApplicationId application) const {
  std::lock_guard lock(mutex_);
  auto found = byApplication_.find(application);
  return found == byApplication_.end() ? 0 : found->second;
}

}  // namespace nnhal::engine
