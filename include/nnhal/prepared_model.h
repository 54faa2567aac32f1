// nnhal/prepared_model.h — a compiled model that executes requests
// (NN HAL 1.3 IPreparedModel).
//
// A PreparedModel is created by Device::prepareModel. All heavy work (validation, shape
// propagation, memory planning, weight packing) happened there; executing does no
// model-sized allocation.
//
// Thread safety: every method may be called from any thread, concurrently; many
// executions may be in flight on one PreparedModel at once. Destroying the last
// reference waits for in-flight executions to finish.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/sync_fence.h"
#include "nnhal/types.h"

namespace nnhal {

class Burst;  // nnhal/burst.h

/// Options of one execution (the non-Request arguments of IPreparedModel::execute_1_3).
/// The time one operation took in an execution (ExecuteOptions::profile).
struct OperationTiming {
  uint32_t step = 0;  ///< position in execution order (0: the first operation run)
  OperationType type = OperationType::ADD;
  uint64_t startNs = 0;     ///< start, ns after the start of the first operation
  uint64_t durationNs = 0;  ///< ns, including the operation's own parallel fan-out
};

/// The per-operation times of one execution, in execution order.
struct ExecutionProfile {
  std::vector<OperationTiming> operations;
};

struct ExecuteOptions {
  MeasureTiming measure = MeasureTiming::NO;
  /// Steady-clock time by which the execution must be done, or none. A missed deadline
  /// ends the execution with MISSED_DEADLINE_TRANSIENT.
  OptionalTimePoint deadline;
  /// Longest time one WHILE loop may run (types.hal LoopTimeoutDurationNs); values above
  /// kMaxLoopTimeout are clamped to it.
  std::chrono::nanoseconds loopTimeout = kDefaultLoopTimeout;
  /// When not null, the embedded driver clears *profile and records the time of each
  /// operation of the main model into it (like TFLite's op profiling; `nnhal run --profile`).
  /// Recorded for models whose shapes are all known at preparation and that have no
  /// control flow (they run on the static fast path); left empty otherwise, and through
  /// nnhald, which does not report per-operation times. Not part of the NN HAL. The caller
  /// keeps it alive, and does not read it, until the execution has completed.
  ExecutionProfile* profile = nullptr;
};

/// What a successful execution returns: one OutputShape per Request output, and Timing
/// (kNoTiming fields unless ExecuteOptions::measure was YES).
struct ExecutionResult {
  std::vector<OutputShape> outputShapes;
  Timing timing;
};

/// Completion of an asynchronous execution (IExecutionCallback::notify_1_3). Called
/// exactly once, on a driver thread; it must not block for long.
using ExecutionCallback = std::move_only_function<void(Result<ExecutionResult>)>;

/// What IFencedExecutionCallback::getExecutionInfo reports about a fenced execution.
struct FencedExecutionInfo {
  ErrorStatus status = ErrorStatus::NONE;  ///< outcome of the execution
  /// From the executeFenced call to the signal of the returned fence, µs. timeOnDevice is
  /// the computation alone. kNoTiming unless measured (MeasureTiming::YES) and status NONE.
  Timing timingLaunched;
  /// From the moment every waitFor fence had signalled to the signal of the returned
  /// fence, µs; same rules.
  Timing timingFenced;
};

/// IFencedExecutionCallback: the outcome of one fenced execution.
class FencedExecutionCallback {
 public:
  virtual ~FencedExecutionCallback() = default;
  /// Blocks until the execution finished (its fence signalled), then returns its info.
  /// The execution's own failures are in FencedExecutionInfo::status; an Error is a failure
  /// of this query itself (e.g. DEVICE_UNAVAILABLE for a remote driver that died).
  virtual Result<FencedExecutionInfo> getExecutionInfo() = 0;
};

/// What executeFenced returns when the execution was launched.
struct FencedExecutionResult {
  SyncFence syncFence;  ///< signalled when the execution finished (empty = already done)
  std::shared_ptr<FencedExecutionCallback> callback;
};

class PreparedModel {
 public:
  virtual ~PreparedModel() = default;

  /// Runs `request` and returns when the outputs are written (executeSynchronously_1_3).
  /// Errors: INVALID_ARGUMENT for a Request that does not match the model (the message
  /// names the argument); OUTPUT_INSUFFICIENT_SIZE with Error::outputShapes when an output
  /// buffer is too small; MISSED_DEADLINE_TRANSIENT past the deadline; GENERAL_FAILURE
  /// for failures inside the computation; DEVICE_UNAVAILABLE once the driver is shutting
  /// down.
  virtual Result<ExecutionResult> executeSynchronously(const Request& request,
                                                       const ExecuteOptions& options) = 0;

  /// Starts `request` and returns at once (execute_1_3). The returned status reports only
  /// argument validation (INVALID_ARGUMENT, DEVICE_UNAVAILABLE); when it is NONE, the
  /// callback is called exactly once with the outcome. When the returned status is an
  /// error the callback is also called once, with that error, before this returns.
  virtual ErrorStatus execute(Request request, const ExecuteOptions& options,
                              ExecutionCallback callback) = 0;

  /// Starts `request` once every fence of `waitFor` signalled (IPreparedModel::
  /// executeFenced, HAL 1.3) and returns at once; no thread blocks while the fences are
  /// pending. Empty fences count as signalled. The returned fence signals when the
  /// execution finished (successfully or not); after that, no output is written any more.
  /// The callback then gives the outcome and timing.
  ///
  /// Time limits: `options.deadline` applies from the call on (also while waiting for the
  /// fences); `timeoutAfterFence` (must not be negative) limits the execution once the
  /// fences signalled. Either one missed ends the execution with MISSED_DEADLINE_TRANSIENT
  /// (from getExecutionInfo; the fence is signalled). `options.loopTimeout` as for execute.
  ///
  /// Errors returned directly (nothing is launched): INVALID_ARGUMENT for a Request that does
  /// not match the model, an output of unspecified dimensions (not allowed in fenced
  /// executions), a fence in error state, or a bad option; DEVICE_UNAVAILABLE when the
  /// prepared model or its device is shutting down; RESOURCE_EXHAUSTED_TRANSIENT when no
  /// fence can be created. Failures of the execution (GENERAL_FAILURE, OUTPUT_INSUFFICIENT_SIZE,
  /// MISSED_DEADLINE_TRANSIENT, DEVICE_UNAVAILABLE when the driver stops while the fences are
  /// still pending, GENERAL_FAILURE for a waitFor fence that falls into error state) come from
  /// getExecutionInfo().status.
  virtual Result<FencedExecutionResult> executeFenced(const Request& request,
                                                      const std::vector<SyncFence>& waitFor,
                                                      const ExecuteOptions& options,
                                                      OptionalDuration timeoutAfterFence = {}) = 0;

  /// Opens a burst for a stream of executions of this model (IPreparedModel::
  /// configureExecutionBurst, HAL 1.2; nnhal/burst.h). The burst keeps this model alive.
  /// Errors: DEVICE_UNAVAILABLE when the prepared model or its driver is shutting down;
  /// RESOURCE_EXHAUSTED_TRANSIENT when nnhald refuses another burst to this client (its
  /// quota) or the message queues cannot be created; GENERAL_FAILURE otherwise.
  virtual Result<std::shared_ptr<Burst>> configureExecutionBurst() = 0;

  /// Convenience: executeSynchronously with default options.
  Result<ExecutionResult> executeSynchronously(const Request& request) {
    return executeSynchronously(request, ExecuteOptions{});
  }
};

}  // namespace nnhal
