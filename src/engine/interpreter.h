// engine/interpreter.h — the general execution path: dynamic shapes and control flow.
//
// Used when the main subgraph is not fully static (executor.cpp picks). Every operand gets
// a Value during one subgraph invocation: its bytes and actual dimensions. Static steps
// run their compile-time Kernel on arena memory; dynamic steps are prepared on the spot
// from the actual shapes and values and write to memory allocated for them; IF runs one
// of two subgraphs; WHILE runs its condition and body subgraphs until the condition is
// false or the loop timeout expires (MISSED_DEADLINE_TRANSIENT).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/execution_plan.h"
#include "engine/memory_budget.h"
#include "engine/parallel.h"
#include "engine/yield_point.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine {

/// An operand's bytes and actual shape during one subgraph invocation.
struct Value {
  uint8_t* data = nullptr;
  std::vector<uint32_t> dimensions;
  size_t bytes = 0;
  size_t capacity = 0;                 ///< bytes available at `data`
  std::shared_ptr<uint8_t[]> storage;  ///< set when the interpreter allocated `data`
  bool noValue = false;
};

struct InterpreterOptions {
  OptionalTimePoint deadline;
  std::chrono::nanoseconds loopTimeout{2'000'000'000};
  /// When set and true (checked between steps and loop iterations), the run ends with
  /// DEVICE_UNAVAILABLE: whoever asked for it is gone.
  const std::atomic<bool>* cancelled = nullptr;
  /// What the run may allocate at once (null: no limit).
  std::shared_ptr<MemoryBudget> budget;
  /// Called between steps (may be null): engine/yield_point.h.
  YieldPoint* yield = nullptr;
  /// ExecuteOptions' preference of the prepared model: how many kernel threads a step takes.
  ExecutionPreference preference = ExecutionPreference::FAST_SINGLE_ANSWER;
};

/// The kernel threads the next step of a run takes: its share of `parallel` among the runs
/// sharing it now (YieldPoint::runsSharingKernels), for `preference`.
inline unsigned stepWidth(const Parallel& parallel, const YieldPoint* yield,
                          ExecutionPreference preference) {
  return parallel.shareFor(yield != nullptr ? yield->runsSharingKernels() : 1, preference);
}

/// The error of a cancelled run (DEVICE_UNAVAILABLE), or none.
inline Result<void> checkCancelled(const std::atomic<bool>* cancelled) {
  if (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the execution was cancelled");
  }
  return {};
}

/// Runs subgraph `index` of `plan`. `inputs` are bound to its inputs in order. On return,
/// `outputs` holds one Value per subgraph output. For the main subgraph the caller may
/// pre-bind outputs (data + capacity) to request buffers; an output larger than its
/// capacity is written to allocated memory instead and reported by the caller as
/// insufficient. Errors: GENERAL_FAILURE (kernel or shape failure), INVALID_ARGUMENT
/// (an input that does not match its operand), MISSED_DEADLINE_TRANSIENT (deadline or
/// loop timeout), RESOURCE_EXHAUSTED_TRANSIENT (allocation).
Result<void> runSubgraph(const ExecutionPlan& plan, size_t index, const std::vector<Value>& inputs,
                         std::vector<Value>& outputs, const Parallel& parallel,
                         const InterpreterOptions& options);

}  // namespace nnhal::engine
