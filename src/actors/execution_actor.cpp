#include "actors/execution_actor.h"

#include <algorithm>
#include <chrono>
#include <new>
#include <string>
#include <utility>

#include "actors/fenced_execution.h"
#include "actors/request_binding.h"
#include "common/clock.h"
#include "common/vlog.h"
#include "hal/validation.h"

namespace nnhal::actors {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

ExecutionActor::ExecutionActor(std::shared_ptr<Runtime> runtime,
                               std::shared_ptr<const backend::CompiledModel> compiled,
                               std::unique_ptr<backend::ExecutionMemory> memory,
                               std::shared_ptr<BufferTable> buffers, RunAs runAs,
                               std::shared_ptr<CancelRegistry> deviceFenceWaits)
    : runtime_(std::move(runtime)),
      compiled_(std::move(compiled)),
      buffers_(std::move(buffers)),
      bufferModelId_(buffers_ ? buffers_->newModelId() : 0),
      runAs_(runAs),
      outputBytes_(compiled_->outputBytes()),
      memory_(std::move(memory)),
      deviceFenceWaits_(deviceFenceWaits ? std::move(deviceFenceWaits)
                                         : std::make_shared<CancelRegistry>()) {}

Result<ExecutionActor::BurstResources> ExecutionActor::burstResources() const {
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<backend::ExecutionMemory> memory,
                         compiled_->createMemory(&runtime_->arenaBudget(), runAs_.application));
  return BurstResources{std::move(memory)};
}

ExecutionActor::~ExecutionActor() { stop(); }

Result<void> ExecutionActor::validate(const Request& request, const ExecuteOptions& options) const {
  if (options.measure != MeasureTiming::NO && options.measure != MeasureTiming::YES) {
    return invalidArgument("measure: invalid MeasureTiming " +
                           std::to_string(static_cast<int32_t>(options.measure)));
  }
  if (options.loopTimeout.count() < 0) {
    return invalidArgument("loopTimeoutDuration: must not be negative");
  }
  NNHAL_TRY(hal::validateRequest(request, compiled_->model()));
  if (usesDeviceBuffers(request)) {
    if (!buffers_)
      return invalidArgument("request.pools: this model takes no memory domain tokens");
    NNHAL_TRY(BoundRequest::check(request, bufferModelId_, *buffers_));
  }
  return {};
}

bool ExecutionActor::runsQuickly() const {
  constexpr uint32_t kQuickRunsNeeded = 4;
  // Also nothing queued or more urgent on the scheduler: the run would neither wait for a
  // slot nor pause, so it stays short on the caller's (nnhald's io) thread.
  return compiled_->dataIndependent() &&
         quickRuns_.load(std::memory_order_relaxed) >= kQuickRunsNeeded &&
         runtime_->scheduler().idleFor(runAs_.application, runAs_.priority);
}

Result<ExecutionActor::FencedHold> ExecutionActor::FencedHold::acquire(
    ExecutionActor& actor, CancelRegistry::Cancel cancel) {
  if (!actor.gate_.enter()) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the prepared model is shutting down");
  }
  const std::optional<uint64_t> actorHook = actor.fenceWaits_.add(cancel);
  const std::optional<uint64_t> runtimeHook = actor.deviceFenceWaits_->add(cancel);
  if (!actorHook || !runtimeHook) {
    if (actorHook) actor.fenceWaits_.remove(*actorHook);
    if (runtimeHook) actor.deviceFenceWaits_->remove(*runtimeHook);
    actor.gate_.leave();
    return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                runtimeHook ? "the prepared model is shutting down" : "the device was released");
  }
  return FencedHold(&actor, *actorHook, *runtimeHook);
}

ExecutionActor::FencedHold::FencedHold(FencedHold&& other) noexcept
    : actor_(std::exchange(other.actor_, nullptr)),
      actorHook_(other.actorHook_),
      runtimeHook_(other.runtimeHook_) {}

void ExecutionActor::FencedHold::release() {
  ExecutionActor* actor = std::exchange(actor_, nullptr);
  if (actor == nullptr) return;
  actor->fenceWaits_.remove(actorHook_);
  actor->deviceFenceWaits_->remove(runtimeHook_);
  actor->gate_.leave();  // last: the actor may be destroyed from here on
}

Result<ExecutionResult> ExecutionActor::runAdmitted(const Request& request,
                                                    const ExecuteOptions& options,
                                                    Clock::time_point start,
                                                    const std::atomic<bool>* cancelled,
                                                    Lease& lease, BurstResources* burst) {
  if (!usesDeviceBuffers(request)) {
    return runCompiled(request, options, start, cancelled, lease, burst);
  }
  if (!buffers_) return invalidArgument("request.pools: this model takes no memory domain tokens");
  NNHAL_ASSIGN_OR_RETURN(BoundRequest bound,
                         BoundRequest::bind(request, bufferModelId_, *buffers_, outputBytes_));
  auto result = runCompiled(bound.request(), options, start, cancelled, lease, burst);
  if (!result && result.error().status == ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) {
    const Result<bool> grew = bound.growForRetry(result.error().outputShapes);
    if (!grew) {
      result = std::unexpected(grew.error());
    } else if (*grew) {
      // An output buffer of unknown shape got too little memory: run again with room for it.
      result = runCompiled(bound.request(), options, start, cancelled, lease, burst);
    }
  }
  if (!result) {
    (void)bound.finish(false, {});
    return result;
  }
  NNHAL_TRY(bound.finish(true, result->outputShapes));
  return result;
}

Result<ExecutionResult> ExecutionActor::runCompiled(const Request& request,
                                                    const ExecuteOptions& options,
                                                    Clock::time_point start,
                                                    const std::atomic<bool>* cancelled,
                                                    Lease& lease, BurstResources* burst) {
  if (options.deadline && Clock::now() > *options.deadline) {
    return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the execution deadline has passed");
  }
  const int64_t fastest = fastestRunNs_.load(std::memory_order_relaxed);
  if (options.deadline && fastest != INT64_MAX) {
    const auto left =
        std::chrono::duration_cast<std::chrono::nanoseconds>(*options.deadline - Clock::now());
    if (left.count() < fastest) {
      // Even an idle driver could not finish in time: say so without running.
      return fail(ErrorStatus::MISSED_DEADLINE_PERSISTENT,
                  "the deadline leaves " + std::to_string(left.count() / 1000) +
                      " us, and the fastest run of this model took " +
                      std::to_string(fastest / 1000) + " us");
    }
  }
  TraceRecorder* const trace = runtime_->trace();
  // Tracing records each operation as a span: through the profile the caller asked for, or
  // one of its own.
  ExecutionProfile traceProfile;
  ExecutionProfile* const profile =
      options.profile != nullptr ? options.profile : (trace != nullptr ? &traceProfile : nullptr);
  const auto deviceStart = Clock::now();
  NNHAL_VLOG(Execution, "execution starts: {} inputs, {} outputs, {} pools{}{}{}",
             request.inputs.size(), request.outputs.size(), request.pools.size(),
             options.deadline ? ", with a deadline" : "", burst ? ", in a burst" : "",
             cancelled ? ", cancellable" : "");
  Result<std::vector<OutputShape>> shapes;
  std::chrono::nanoseconds measuredOnDevice{-1};  // stays negative unless the backend measures
  try {
    shapes =
        compiled_->execute(request, burst ? *burst->memory : *memory_,
                           backend::RunOptions{options.deadline, options.loopTimeout, cancelled,
                                               runtime_->maxExecutionBytes(), &lease, profile,
                                               runAs_.preference, &measuredOnDevice});
  } catch (const std::bad_alloc&) {
    shapes = fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "out of memory during the execution");
  } catch (const std::exception& e) {
    shapes = fail(ErrorStatus::GENERAL_FAILURE, std::string("execution failed: ") + e.what());
  }
  const auto deviceEnd = Clock::now();
  if (trace != nullptr) {
    trace->record("execution", "execute", deviceStart, deviceEnd - deviceStart);
    for (const OperationTiming& op : profile->operations) {
      trace->record("execution", compiled_->operationName(op.type),
                    deviceStart + std::chrono::nanoseconds(op.startNs),
                    std::chrono::nanoseconds(op.durationNs));
    }
  }
  if (shapes) {
    NNHAL_VLOG(Execution, "execution done in {} us ({} us in the driver)",
               microsecondsBetween(deviceStart, deviceEnd), microsecondsBetween(start, deviceEnd));
  } else {
    NNHAL_VLOG(Execution, "execution failed after {} us: {} ({})",
               microsecondsBetween(deviceStart, deviceEnd), shapes.error().message,
               toString(shapes.error().status));
  }
  if (deviceEnd - deviceStart < kQuickRun) {
    if (quickRuns_.load(std::memory_order_relaxed) < 1000) {
      quickRuns_.fetch_add(1, std::memory_order_relaxed);
    }
  } else {
    quickRuns_.store(0, std::memory_order_relaxed);
  }
  if (!shapes) return std::unexpected(std::move(shapes).error());
  const int64_t ran =
      std::chrono::duration_cast<std::chrono::nanoseconds>(deviceEnd - deviceStart).count();
  for (int64_t seen = fastestRunNs_.load(std::memory_order_relaxed);
       ran < seen && !fastestRunNs_.compare_exchange_weak(seen, ran, std::memory_order_relaxed);) {
  }
  ExecutionResult result;
  result.outputShapes = std::move(*shapes);
  if (options.measure == MeasureTiming::YES) {
    // The device's own clock where the backend has one (never more than execute() took).
    result.timing.timeOnDevice =
        measuredOnDevice.count() < 0
            ? microsecondsBetween(deviceStart, deviceEnd)
            : std::min(microsecondsBetween(deviceStart, deviceEnd),
                       static_cast<uint64_t>(measuredOnDevice.count() / 1000));
    result.timing.timeInDriver = microsecondsSince(start);
  }
  return result;
}

Result<ExecutionResult> ExecutionActor::run(const Request& request, const ExecuteOptions& options) {
  NNHAL_TRY(validate(request, options));
  return runValidated(request, options);
}

Result<ExecutionResult> ExecutionActor::runValidated(const Request& request,
                                                     const ExecuteOptions& options) {
  const auto start = Clock::now();
  if (!gate_.enter()) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the prepared model is shutting down");
  }
  Lease lease = runtime_->scheduler().enter(runAs_.application, runAs_.priority);
  auto result = runAdmitted(request, options, start, nullptr, lease);
  lease = Lease();
  gate_.leave();
  return result;
}

Result<ExecutionResult> ExecutionActor::runInBurst(const Request& request,
                                                   const ExecuteOptions& options,
                                                   BurstResources& resources) {
  const auto start = Clock::now();
  NNHAL_TRY(validate(request, options));
  if (!gate_.enter()) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the prepared model is shutting down");
  }
  Lease lease = runtime_->scheduler().enter(runAs_.application, runAs_.priority);
  auto result = runAdmitted(request, options, start, nullptr, lease, &resources);
  lease = Lease();
  gate_.leave();
  return result;
}

ErrorStatus ExecutionActor::post(Execute message) {
  if (auto valid = validate(message.request, message.options); !valid) {
    const ErrorStatus status = valid.error().status;
    message.reply(std::unexpected(std::move(valid).error()));
    return status;
  }
  return postValidated(std::move(message));
}

ErrorStatus ExecutionActor::postValidated(Execute message) {
  const auto start = Clock::now();
  const uint32_t limit = runtime_->maxQueuedExecutions();
  if (queued_.fetch_add(1, std::memory_order_relaxed) >= limit) {
    queued_.fetch_sub(1, std::memory_order_relaxed);
    message.reply(fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                       "this prepared model already has " + std::to_string(limit) +
                           " executions waiting; try again later"));
    return ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT;
  }
  if (!gate_.enter()) {
    queued_.fetch_sub(1, std::memory_order_relaxed);
    message.reply(fail(ErrorStatus::DEVICE_UNAVAILABLE, "the prepared model is shutting down"));
    return ErrorStatus::DEVICE_UNAVAILABLE;
  }
  // Held until submit() returns: the job may run at once and release the last other
  // reference to the runtime (a callback dropping the model) while submit still posts.
  const std::shared_ptr<Runtime> runtime = runtime_;
  runtime->scheduler().submit(runAs_.application, runAs_.priority, Work::kExecution,
                              [this, start, m = std::move(message)](Lease lease) mutable {
                                queued_.fetch_sub(1, std::memory_order_relaxed);
                                auto result = runAdmitted(m.request, m.options, start,
                                                          m.cancelled.get(), lease);
                                lease = Lease();  // the next job may start while this one replies
                                gate_.leave();
                                m.reply(std::move(result));
                              });
  return ErrorStatus::NONE;
}

Result<FencedExecutionResult> ExecutionActor::executeFenced(const Request& request,
                                                            const std::vector<SyncFence>& waitFor,
                                                            const ExecuteOptions& options,
                                                            OptionalDuration timeoutAfterFence) {
  NNHAL_TRY(validate(request, options));
  return FencedExecution::launch(*this, request, waitFor, options, timeoutAfterFence, nullptr,
                                 nullptr);
}

Result<FencedExecutionResult> ExecutionActor::executeFencedValidated(
    const Request& request, const std::vector<SyncFence>& waitFor, const ExecuteOptions& options,
    OptionalDuration timeoutAfterFence, hal::FencedAdmission admission,
    std::shared_ptr<const std::atomic<bool>> cancelled) {
  return FencedExecution::launch(*this, request, waitFor, options, timeoutAfterFence,
                                 std::move(admission), std::move(cancelled));
}

void ExecutionActor::stop() {
  // First the waits that may never end, so that the drain below is bounded.
  fenceWaits_.closeAndCancelAll(
      {ErrorStatus::DEVICE_UNAVAILABLE, "the prepared model was released", {}});
  gate_.closeAndDrain();
}

}  // namespace nnhal::actors
