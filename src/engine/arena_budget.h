// engine/arena_budget.h — the memory every execution arena of a device may hold together.
//
// Each prepared model (and each burst) keeps the arenas its executions used, so that later
// executions allocate nothing (engine/executor.h, ArenaPool). Unbounded, a client that
// prepares many large models and runs each once would keep gigabytes while idle. An
// ArenaBudget bounds the arenas of all pools of a device:
//  - an arena is charged when allocated and given back when freed, to the device and to the
//    application of its pool (hal/application.h), which `held` reports;
//  - a pool's free arenas that have not been used for `idleRelease` are freed by trimIdle()
//    (the driver's runtime calls it periodically: the idle watchdog);
//  - when an allocation would exceed `limit`, the free arenas of every pool are freed first,
//    those of the application holding the most first; if that is not enough, the allocation
//    fails (RESOURCE_EXHAUSTED_TRANSIENT), and arenas in use are never taken;
//  - the budget is shared fairly: with pools of n applications, one application may hold at
//    most limit / min(n, 4) (its share; all of it when it is alone). Past its share, its own
//    free arenas are freed first; if that is not enough, its allocation fails
//    (RESOURCE_EXHAUSTED_TRANSIENT, naming its share), so one application keeping many
//    executions in flight cannot take the memory the others' executions need. A share that
//    shrinks as applications arrive takes nothing in use: it bounds new allocations.
//
// A pool is any BudgetedPool: the CPU engine's ArenaPool (engine/executor.h) and every other
// backend's memory kept between executions (a GPU backend's buffers) are bounded together.
//
// Thread safety: every method may be called from any thread. A pool registers itself while
// it lives; the budget must outlive its pools.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "hal/application.h"
#include "nnhal/status.h"

namespace nnhal::engine {

class ArenaBudget;

/// Memory of one application kept between executions and charged to an ArenaBudget: the
/// budget frees what it keeps unused through trim(). A derived pool calls leaveBudget() first
/// in its destructor, before it frees anything, so that the budget no longer trims it.
class BudgetedPool {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  /// Enrolls the pool in `budget` (none when null).
  BudgetedPool(ArenaBudget* budget, hal::ApplicationId application);
  BudgetedPool(const BudgetedPool&) = delete;
  BudgetedPool& operator=(const BudgetedPool&) = delete;

  hal::ApplicationId application() const { return application_; }
  ArenaBudget* budget() const { return budget_; }

 protected:
  /// Leaves the budget (idempotent; budget() stays as it was): derived destructors call it
  /// before they free memory.
  void leaveBudget();
  ~BudgetedPool();

 private:
  friend class ArenaBudget;
  /// Frees the memory not used since `before` that the pool keeps (none in use); returns the
  /// bytes freed, which the budget (the caller, its mutex held) accounts for. Must not call
  /// the budget.
  virtual uint64_t trim(TimePoint before) = 0;

  ArenaBudget* const budget_;
  const hal::ApplicationId application_;
  bool enrolled_ = false;
};

class ArenaBudget {
 public:
  /// `limit` bytes of arenas in all (0 = no limit); free arenas unused for `idleRelease` are
  /// freed by trimIdle (0 = never).
  ArenaBudget(uint64_t limit, std::chrono::milliseconds idleRelease)
      : limit_(limit), idleRelease_(idleRelease) {}
  ArenaBudget(const ArenaBudget&) = delete;
  ArenaBudget& operator=(const ArenaBudget&) = delete;

  /// Charges `bytes` of a new arena (of a pool of `application`), freeing idle arenas of any
  /// pool when the limit would be passed. Errors: RESOURCE_EXHAUSTED_TRANSIENT.
  Result<void> charge(hal::ApplicationId application, uint64_t bytes);
  void give(hal::ApplicationId application, uint64_t bytes);
  /// Frees the free arenas not used for idleRelease (all of them with `everything`).
  /// Returns the bytes freed.
  uint64_t trimIdle(bool everything = false);

  uint64_t held() const;
  uint64_t held(hal::ApplicationId application) const;
  std::chrono::milliseconds idleRelease() const { return idleRelease_; }

 private:
  friend class BudgetedPool;
  void enroll(BudgetedPool* pool);
  void leave(BudgetedPool* pool);
  /// The most arenas per application share at most this many ways.
  static constexpr size_t kMostSharers = 4;
  /// One application's share of limit_ now (0 = no limit) (mutex_ held).
  uint64_t shareLocked() const;
  /// Frees every free arena of `application`'s pools (mutex_ not held); returns the bytes.
  uint64_t trimApplication(hal::ApplicationId application);
  /// Frees free arenas, of the heaviest applications first, until `needed` bytes were freed
  /// or none is left (mutex_ not held). Returns the bytes freed.
  uint64_t reclaim(uint64_t needed);
  /// Frees `pool`'s free arenas last used before `before` and accounts for them (mutex_
  /// held). Returns the bytes freed.
  uint64_t trimLocked(BudgetedPool& pool, std::chrono::steady_clock::time_point before);

  const uint64_t limit_;
  const std::chrono::milliseconds idleRelease_;
  mutable std::mutex mutex_;
  uint64_t held_ = 0;
  std::unordered_map<hal::ApplicationId, uint64_t> byApplication_;
  std::vector<BudgetedPool*> pools_;
};

}  // namespace nnhal::engine
