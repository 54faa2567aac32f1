// hal/driver_control.h — what nnhald asks of the embedded driver beyond the public Device
// and PreparedModel interfaces.
//
// The daemon (src/ipc) knows the driver through nnhal/device.h and these interfaces, which
// the embedded driver's objects also implement: createEmbeddedDriver hands nnhald the
// device's control with the device, and DeviceControl::controlOf the control of each model
// it prepared (no cast to reach the driver). They let the daemon run the driver's argument
// checks before it queues a request (so that the launch status a client receives is the
// driver's own even when the work waits; the ValidatedRequest it gets back is what the
// execution paths take, so nothing is checked twice or runs unchecked), learn which
// synchronous executions are short enough for an io thread, and cancel the executions of a
// client that left.
//
// Thread safety: as for Device and PreparedModel: any thread, concurrently.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "hal/application.h"
#include "hal/file_pool_staging.h"
#include "nnhal/device.h"
#include "nnhal/prepared_model.h"

namespace nnhal::hal {

class PreparedModelControl;

class DeviceControl {
 public:
  virtual ~DeviceControl() = default;
  /// The control of `model` when this device prepared it, else null (a model of another
  /// device). Valid while the caller holds `model`.
  virtual PreparedModelControl* controlOf(const PreparedModel& model) const = 0;
  /// The checks prepareModel starts with (INVALID_ARGUMENT naming the field).
  virtual Result<void> checkPreparation(const Model& model,
                                        const PrepareOptions& options) const = 0;
  /// The checks prepareModelFromCache starts with (INVALID_ARGUMENT for handle counts,
  /// GENERAL_FAILURE when caching is disabled).
  virtual Result<void> checkPreparationFromCache(const CacheFiles& files) const = 0;
  /// prepareModel for a model and options that already passed checkPreparation (the
  /// checks are not run again: the daemon ran them off its io threads), for `application`:
  /// the preparation and every execution of the prepared model run as it (fair share between
  /// applications, priority within one: actors/scheduler.h).
  virtual ErrorStatus prepareChecked(Model model, const PrepareOptions& options,
                                     ApplicationId application, PrepareCallback callback) = 0;
  /// prepareModelFromCache for `application`.
  virtual ErrorStatus prepareFromCache(const CacheFiles& files, OptionalTimePoint deadline,
                                       ApplicationId application, PrepareCallback callback) = 0;
  /// The share of the device `application` gets relative to the others (1 = the default).
  virtual void setApplicationWeight(ApplicationId application, uint32_t weight) = 0;
  /// What the device holds and did for `application`.
  /// Devices that share one runtime (actors/device_factory.h) report the same scheduler and
  /// arena budget: `runtime` says which, so that a sum over devices counts each once.
  struct ApplicationReport {
    uint32_t weight = 1;
    uint64_t arenaBytes = 0;  ///< its execution arenas (engine/arena_budget.h)
    uint64_t serviceNs = 0;   ///< time its work held slots (actors/scheduler.h)
    uint64_t runtime = 0;     ///< identity of the runtime the numbers are of
  };
  virtual ApplicationReport applicationReport(ApplicationId application) const = 0;
};

/// Runs a fenced execution whose fences all signalled, then calls `finished`. Destroying it
/// without calling it ends the execution with DEVICE_UNAVAILABLE (its fence is signalled).
using FencedStart = std::move_only_function<void(std::move_only_function<void()> finished)>;
/// Decides when such an execution runs: it receives the FencedStart once the fences
/// signalled, and calls it when the execution may take a driver thread.
using FencedAdmission = std::function<void(FencedStart start)>;

/// A request and its options that passed the argument checks of one prepared model
/// (PreparedModelControl::validate). Only validate() makes one, and the execution paths of
/// PreparedModelControl take one instead of a Request: a request nnhald runs is validated
/// exactly once, and cannot run unvalidated or on another model (that model refuses it,
/// INVALID_ARGUMENT). Movable, not copyable: one per execution.
class ValidatedRequest {
 public:
  ValidatedRequest(ValidatedRequest&&) noexcept = default;
  ValidatedRequest& operator=(ValidatedRequest&&) noexcept = default;
  ValidatedRequest(const ValidatedRequest&) = delete;
  ValidatedRequest& operator=(const ValidatedRequest&) = delete;

  const Request& request() const { return request_; }
  const ExecuteOptions& options() const { return options_; }
  /// Whether one of its pools is a client file (hasFilePools).
  bool hasFilePools() const { return hal::hasFilePools(request_); }
  /// FilePoolStaging::stage / plan on this request: its client files are replaced by local
  /// copies of the same ranges, so the checks it passed still hold. Errors: those of
  /// FilePoolStaging.
  Result<FilePoolStaging> stageFilePools(uint64_t maxBytes) {
    return FilePoolStaging::stage(request_, maxBytes);
  }
  Result<FilePoolStaging> planFilePools(uint64_t maxBytes) {
    return FilePoolStaging::plan(request_, maxBytes);
  }

 private:
  friend class PreparedModelControl;
  ValidatedRequest(const PreparedModelControl* model, Request request, ExecuteOptions options)
      : model_(model), request_(std::move(request)), options_(options) {}
  const PreparedModelControl* model_;
  Request request_;
  ExecuteOptions options_;
};

class PreparedModelControl {
 public:
  virtual ~PreparedModelControl() = default;
  /// The checks every execution path starts with. Errors: INVALID_ARGUMENT naming the field;
  /// GENERAL_FAILURE for an uninitialized driver-managed input buffer.
  Result<ValidatedRequest> validate(Request request, const ExecuteOptions& options) const {
    NNHAL_TRY(checkRequest(request, options));
    return ValidatedRequest(this, std::move(request), options);
  }
  /// True when a synchronous execution is bound to be short: the plan is fully static
  /// without control flow and its recent executions each took under 200 µs.
  virtual bool runsQuickly() const = 0;
  /// executeSynchronously, on the calling thread. Errors: INVALID_ARGUMENT for a request
  /// another model validated; those of executeSynchronously.
  Result<ExecutionResult> executeValidated(const ValidatedRequest& request) {
    NNHAL_TRY(checkValidatedHere(request));
    return runChecked(request.request(), request.options());
  }
  /// PreparedModel::execute that stops before its next step once `*cancelled` is true (the
  /// callback then gets DEVICE_UNAVAILABLE). A request another model validated:
  /// INVALID_ARGUMENT (returned, and given to the callback).
  ErrorStatus executeCancellable(ValidatedRequest request, ExecutionCallback callback,
                                 std::shared_ptr<const std::atomic<bool>> cancelled) {
    if (auto here = checkValidatedHere(request); !here) {
      const ErrorStatus status = here.error().status;
      callback(std::unexpected(std::move(here).error()));
      return status;
    }
    const ExecuteOptions options = request.options();
    return postChecked(std::move(request.request_), options, std::move(callback),
                       std::move(cancelled));
  }
  /// PreparedModel::executeFenced whose run, once the fences signalled, waits for
  /// `admission` (the daemon runs it within the client's running requests, so a client's
  /// fenced executions occupy no more driver threads than its other work, and a chain of
  /// fences never waits in a queue). Once `*cancelled` is true, the run stops before its next
  /// step (DEVICE_UNAVAILABLE). Errors: INVALID_ARGUMENT for a request another model
  /// validated; those of executeFenced besides the request's checks.
  Result<FencedExecutionResult> executeFencedAdmitted(
      const ValidatedRequest& request, const std::vector<SyncFence>& waitFor,
      OptionalDuration timeoutAfterFence, FencedAdmission admission,
      std::shared_ptr<const std::atomic<bool>> cancelled) {
    NNHAL_TRY(checkValidatedHere(request));
    return fencedChecked(request.request(), waitFor, request.options(), timeoutAfterFence,
                         std::move(admission), std::move(cancelled));
  }

 protected:
  /// What validate() checks.
  virtual Result<void> checkRequest(const Request& request,
                                    const ExecuteOptions& options) const = 0;
  /// The execution paths, for a request that passed checkRequest (not checked again).
  virtual Result<ExecutionResult> runChecked(const Request& request,
                                             const ExecuteOptions& options) = 0;
  virtual ErrorStatus postChecked(Request request, const ExecuteOptions& options,
                                  ExecutionCallback callback,
                                  std::shared_ptr<const std::atomic<bool>> cancelled) = 0;
  virtual Result<FencedExecutionResult> fencedChecked(
      const Request& request, const std::vector<SyncFence>& waitFor, const ExecuteOptions& options,
      OptionalDuration timeoutAfterFence, FencedAdmission admission,
      std::shared_ptr<const std::atomic<bool>> cancelled) = 0;

 private:
  Result<void> checkValidatedHere(const ValidatedRequest& request) const {
    if (request.model_ != this) {
      return fail(ErrorStatus::INVALID_ARGUMENT,
                  "the request was validated for another prepared model");
    }
    return {};
  }
};

/// The embedded driver as nnhald holds it: the public Device and its control, one object.
struct EmbeddedDriver {
  std::shared_ptr<Device> device;
  std::shared_ptr<DeviceControl> control;
};

/// createDevice, with the control of the device it creates (defined by the embedded driver,
/// src/actors/device.cpp). Errors: those of createDevice.
Result<EmbeddedDriver> createEmbeddedDriver(const DeviceOptions& options = {});

}  // namespace nnhal::hal
