// actors/execution_actor.h — executes requests on one prepared model.
//
// Messages:
//   Execute{request, options, reply}: run the request on the pool, reply once with the
//   output shapes and timing or an error.
// run() is the synchronous path: the caller's thread runs the plan itself (no thread hop),
// which is what keeps a tiny executeSynchronously in the microseconds.
// executeFenced() is the fenced path (actors/fenced_execution.h): it waits for fences
// without blocking a thread, then runs like Execute.
// Any number of executions may run at once; each takes what it needs from the compiled
// model's ExecutionMemory (backend/backend.h: the CPU backend's pool of arenas), so none
// allocates model-sized memory after the first few.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

#include "actors/cancel_registry.h"
#include "actors/device_buffer.h"
#include "actors/drain_gate.h"
#include "actors/runtime.h"
#include "actors/scheduler.h"
#include "backend/backend.h"
#include "hal/driver_control.h"
#include "nnhal/prepared_model.h"

namespace nnhal::actors {

class ExecutionActor {
 public:
  struct Execute {
    Request request;
    ExecuteOptions options;
    ExecutionCallback reply;
    /// When set and true, the execution stops before its next step (DEVICE_UNAVAILABLE).
    std::shared_ptr<const std::atomic<bool>> cancelled;
  };

  /// Executions that took less than this count as quick (runsQuickly).
  static constexpr std::chrono::microseconds kQuickRun{200};

  /// `buffers`: the device's driver-managed buffers, which requests may name by token (null:
  /// none; a token is then INVALID_ARGUMENT).
  /// `runAs`: the model's application and priority (PrepareOptions::priority); its
  /// executions run as them on the scheduler.
  /// `memory`: the compiled model's ExecutionMemory for this prepared model's executions.
  /// `deviceFenceWaits`: the device's fenced executions still waiting for fences, cancelled
  /// when the device is released (null: a registry of this model's own).
  ExecutionActor(std::shared_ptr<Runtime> runtime,
                 std::shared_ptr<const backend::CompiledModel> compiled,
                 std::unique_ptr<backend::ExecutionMemory> memory,
                 std::shared_ptr<BufferTable> buffers = nullptr, RunAs runAs = {},
                 std::shared_ptr<CancelRegistry> deviceFenceWaits = nullptr);
  ~ExecutionActor();

  /// The model requests are validated against.
  const Model& model() const { return compiled_->model(); }

  /// Validates the request and queues it on the device's scheduler. Returns the validation
  /// status, or RESOURCE_EXHAUSTED_TRANSIENT when Runtime::maxQueuedExecutions executions of
  /// this model already wait; on an error the reply has already been called with it.
  ErrorStatus post(Execute message);
  /// post() for a request and options that already passed validate() (not checked again).
  ErrorStatus postValidated(Execute message);
  /// Validates and runs the request on the calling thread (after queued work of the same or
  /// higher priority, when the scheduler has any).
  Result<ExecutionResult> run(const Request& request, const ExecuteOptions& options);
  /// run() for a request and options that already passed validate().
  Result<ExecutionResult> runValidated(const Request& request, const ExecuteOptions& options);

  /// What a burst keeps between its executions: ExecutionMemory of its own, so that after
  /// its first execution it allocates nothing and shares no pool with other executions.
  struct BurstResources {
    std::unique_ptr<backend::ExecutionMemory> memory;
  };
  /// A burst's resources, charged to this model's application on the device's arena budget.
  /// Errors: RESOURCE_EXHAUSTED_TRANSIENT.
  Result<BurstResources> burstResources() const;
  /// run() with a burst's resources instead of the model's pools.
  Result<ExecutionResult> runInBurst(const Request& request, const ExecuteOptions& options,
                                     BurstResources& resources);
  /// Validates the request and starts a fenced execution (PreparedModel::executeFenced).
  Result<FencedExecutionResult> executeFenced(const Request& request,
                                              const std::vector<SyncFence>& waitFor,
                                              const ExecuteOptions& options,
                                              OptionalDuration timeoutAfterFence);
  /// executeFenced for a request and options that already passed validate() (not checked
  /// again), whose run waits for `admission` once the fences signalled
  /// (hal::PreparedModelControl::executeFencedAdmitted).
  Result<FencedExecutionResult> executeFencedValidated(
      const Request& request, const std::vector<SyncFence>& waitFor, const ExecuteOptions& options,
      OptionalDuration timeoutAfterFence, hal::FencedAdmission admission,
      std::shared_ptr<const std::atomic<bool>> cancelled);
  /// Refuses new executions (DEVICE_UNAVAILABLE), ends fenced executions still waiting for
  /// their fences with DEVICE_UNAVAILABLE, and waits for in-flight ones.
  void stop();

  /// What a fenced execution (actors/fenced_execution.h) holds of its actor while it is in
  /// flight: a place in the actor's drain gate, so stop() waits for it, and its cancel hook
  /// with the actor (stop()) and with the runtime (the device released). release() removes
  /// the hook and leaves the gate, once; after it the actor may be destroyed. Destroying an
  /// unreleased hold releases it.
  class FencedHold {
   public:
    /// Admits a fenced execution of `actor` whose waits `cancel` ends. Errors:
    /// DEVICE_UNAVAILABLE when the prepared model is stopping or the device was released.
    static Result<FencedHold> acquire(ExecutionActor& actor, CancelRegistry::Cancel cancel);

    FencedHold(FencedHold&& other) noexcept;
    FencedHold& operator=(FencedHold&&) = delete;
    ~FencedHold() { release(); }

    void release();

   private:
    FencedHold(ExecutionActor* actor, uint64_t actorHook, uint64_t runtimeHook)
        : actor_(actor), actorHook_(actorHook), runtimeHook_(runtimeHook) {}

    ExecutionActor* actor_;  ///< null once released
    uint64_t actorHook_;
    uint64_t runtimeHook_;
  };

  /// The runtime the fence waits and the run use (its executor and scheduler).
  const std::shared_ptr<Runtime>& runtime() const { return runtime_; }

  /// Runs a request that passed validate() and holds `lease` on the scheduler, on the
  /// calling thread: what every path ends in (a fenced execution once its fences signalled).
  /// `start` is when the execution was launched (timing); `cancelled`, when set and true,
  /// stops it before its next step.
  Result<ExecutionResult> runAdmitted(const Request& request, const ExecuteOptions& options,
                                      std::chrono::steady_clock::time_point start,
                                      const std::atomic<bool>* cancelled, Lease& lease,
                                      BurstResources* burst = nullptr);

  /// The argument checks of every execution path: MeasureTiming, loop timeout,
  /// hal::validateRequest, and the driver-managed buffers a request names
  /// (actors/request_binding.h). Errors: INVALID_ARGUMENT naming the field; GENERAL_FAILURE
  /// for an uninitialized input buffer.
  Result<void> validate(const Request& request, const ExecuteOptions& options) const;

  /// True when an execution is bound to be short: the plan is fully static without control
  /// flow (its work does not depend on the data), its last executions each took less
  /// than kQuickRun, and the scheduler has nothing queued or more urgent (it would neither
  /// wait nor pause). nnhald runs such synchronous executions on its io thread.
  bool runsQuickly() const;

  /// This prepared model's identity in the roles of driver-managed buffers (unique per device).
  uint64_t bufferModelId() const { return bufferModelId_; }
  /// The device's buffer table (null when the model was made without one).
  const BufferTable* bufferTable() const { return buffers_.get(); }
  Priority priority() const { return runAs_.priority; }
  hal::ApplicationId application() const { return runAs_.application; }

 private:
  /// runAdmitted for a request without token pools: the backend's run and its timing.
  Result<ExecutionResult> runCompiled(const Request& request, const ExecuteOptions& options,
                                      std::chrono::steady_clock::time_point start,
                                      const std::atomic<bool>* cancelled, Lease& lease,
                                      BurstResources* burst);

  std::shared_ptr<Runtime> runtime_;
  std::shared_ptr<const backend::CompiledModel> compiled_;
  std::shared_ptr<BufferTable> buffers_;
  uint64_t bufferModelId_ = 0;
  RunAs runAs_;
  /// Executions queued on the scheduler and not started (bounded).
  std::atomic<uint32_t> queued_{0};
  /// Bytes of each model output when its shape is known at compile time (else 0).
  std::vector<size_t> outputBytes_;
  std::unique_ptr<backend::ExecutionMemory> memory_;
  DrainGate gate_;
  /// This model's fenced executions that are waiting for fences (cancelled by stop()).
  CancelRegistry fenceWaits_;
  /// The device's (cancelled when the device is released).
  std::shared_ptr<CancelRegistry> deviceFenceWaits_;
  /// Consecutive executions shorter than kQuickRun (saturates).
  std::atomic<uint32_t> quickRuns_{0};
  /// The shortest successful run so far (ns of the step loop; INT64_MAX before the first).
  /// A deadline closer than that can never be met: MISSED_DEADLINE_PERSISTENT.
  std::atomic<int64_t> fastestRunNs_{INT64_MAX};
};

}  // namespace nnhal::actors
