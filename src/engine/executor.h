// engine/executor.h — run an ExecutionPlan on one Request.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/arena_budget.h"
#include "engine/execution_plan.h"
#include "engine/parallel.h"
#include "engine/request_staging.h"
#include "engine/yield_point.h"
#include "hal/application.h"
#include "nnhal/prepared_model.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine {

/// Reusable arenas for the executions of one plan. Each concurrent execution takes one;
/// after the first executions, no execution allocates. With a budget (engine/arena_budget.h),
/// every arena is charged to it for the pool's application, and free arenas unused for a
/// while are freed by the budget's idle watchdog or when memory runs short.
class ArenaPool final : public BudgetedPool {
 public:
  explicit ArenaPool(size_t bytes, ArenaBudget* budget = nullptr,
                     hal::ApplicationId application = hal::kEmbeddedApplication);

  struct Release {
    ArenaPool* pool;
    void operator()(uint8_t* arena) const { pool->release(arena); }
  };
  using Lease = std::unique_ptr<uint8_t, Release>;

  /// An arena of the pool's size, 64-byte aligned (null Lease for a 0-byte plan).
  /// Errors: RESOURCE_EXHAUSTED_TRANSIENT when memory runs out or the budget is spent.
  Result<Lease> acquire();
  /// Allocates one arena now and touches its pages, so that the first execution does not
  /// fault them in (best effort: nothing happens when the budget or memory refuses, or when
  /// the pool already keeps an arena).
  void warm();
  ~ArenaPool();

  /// Arenas kept for later executions (not in use) now.
  size_t freeArenas() const;

 private:
  struct FreeArena {
    uint8_t* arena;
    TimePoint lastUsed;
  };
  void release(uint8_t* arena);
  uint64_t trim(TimePoint before) override;
  size_t bytes_;
  size_t rounded_;  ///< bytes_ rounded up to kArenaAlignment: what one arena takes
  mutable std::mutex mutex_;
  std::vector<FreeArena> free_;
};

struct RunOptions {
  OptionalTimePoint deadline;
  /// Longest time one WHILE loop may run; clamped to kMaxLoopTimeout.
  std::chrono::nanoseconds loopTimeout = kDefaultLoopTimeout;
  /// When set and true, the run stops before its next step (DEVICE_UNAVAILABLE).
  const std::atomic<bool>* cancelled = nullptr;
  /// Bytes the execution may allocate at once besides the plan's arena (staged request
  /// memory, the interpreter's operands); 0 = no limit. Beyond it: RESOURCE_EXHAUSTED_TRANSIENT.
  uint64_t maxBytes = 0;
  /// Lends the memory that stages shared request arguments (request_staging.h); may be null.
  StagingPool* staging = nullptr;
  /// Called between steps: where the run lets more urgent work go first (may be null).
  YieldPoint* yield = nullptr;
  /// When not null, the static fast path records each step's time here (ExecuteOptions::
  /// profile); the interpreter leaves it empty.
  ExecutionProfile* profile = nullptr;
  /// The prepared model's preference: how many kernel threads each step takes
  /// (Parallel::shareFor).
  ExecutionPreference preference = ExecutionPreference::FAST_SINGLE_ANSWER;
};

/// Executes `plan` with the buffers of `request` (already checked by hal::validateRequest
/// against plan.model). Returns one OutputShape per output. A fully static plan runs on the
/// fast path (one pooled arena, shapes known in advance); any other on the interpreter
/// (interpreter.h), which resolves shapes as it goes.
/// Errors: OUTPUT_INSUFFICIENT_SIZE (with Error::outputShapes) when an output buffer is
/// smaller than the output; INVALID_ARGUMENT for pools the engine cannot map;
/// MISSED_DEADLINE_TRANSIENT when the deadline passes between steps; GENERAL_FAILURE
/// from a kernel.
Result<std::vector<OutputShape>> execute(const ExecutionPlan& plan, const Request& request,
                                         ArenaPool& arenas, const Parallel& parallel,
                                         const RunOptions& options);

}  // namespace nnhal::engine
