// hal/driver_control.h — what nnhald asks of the embedded driver beyond the public Device
// and PreparedModel interfaces.
//
// The daemon (src/ipc) knows the driver through nnhal/device.h and these interfaces, which
// the embedded driver's objects also implement: createEmbeddedDriver hands nnhald the
// device's control with the device, and DeviceControl::controlOf the control of each model
// it prepared (no cast to reach the driver). They let the daemon run the driver's argument
// checks before it queues a request (so that the launch status a client receives is the
// driver's own even when the work waits), learn which synchronous executions are short
// enough for an io thread, and cancel the executions of a client that left.
//
// Thread safety: as for Device and PreparedModel: any thread, concurrently.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "hal/application.h"
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
  struct ApplicationReport {
    uint32_t weight = 1;
    uint64_t arenaBytes = 0;  ///< its execution arenas (engine/arena_budget.h)
    uint64_t serviceNs = 0;   ///< time its work held slots (actors/scheduler.h)
  };
  virtual ApplicationReport applicationReport(ApplicationId application) const = 0;
};

/// Runs a fenced execution whose fences all signalled, then calls `finished`. Destroying it
/// without calling it ends the execution with DEVICE_UNAVAILABLE (its fence is signalled).
using FencedStart = std::move_only_function<void(std::move_only_function<void()> finished)>;
/// Decides when such an execution runs: it receives the FencedStart once the fences
/// signalled, and calls it when the execution may take a driver thread.
using FencedAdmission = std::function<void(FencedStart start)>;

class PreparedModelControl {
 public:
  virtual ~PreparedModelControl() = default;
  /// The checks every execution path starts with (INVALID_ARGUMENT naming the field).
  virtual Result<void> validate(const Request& request, const ExecuteOptions& options) const = 0;
  /// True when a synchronous execution is bound to be short: the plan is fully static
  /// without control flow and its recent executions each took under 200 µs.
  virtual bool runsQuickly() const = 0;
  /// executeSynchronously for a request and options that already passed validate() (the
  /// checks are not run twice on the daemon's fast path).
  virtual Result<ExecutionResult> executeValidated(const Request& request,
                                                   const ExecuteOptions& options) = 0;
  /// PreparedModel::execute that stops before its next step once `*cancelled` is true (the
  /// callback then gets DEVICE_UNAVAILABLE).
  virtual ErrorStatus executeCancellable(Request request, const ExecuteOptions& options,
                                         ExecutionCallback callback,
                                         std::shared_ptr<const std::atomic<bool>> cancelled) = 0;
  /// PreparedModel::executeFenced whose run, once the fences signalled, waits for
  /// `admission` (the daemon runs it within the client's running requests, so a client's
  /// fenced executions occupy no more driver threads than its other work, and a chain of
  /// fences never waits in a queue). Once `*cancelled` is true, the run stops before its next
  /// step (DEVICE_UNAVAILABLE).
  virtual Result<FencedExecutionResult> executeFencedAdmitted(
      const Request& request, const std::vector<SyncFence>& waitFor, const ExecuteOptions& options,
      OptionalDuration timeoutAfterFence, FencedAdmission admission,
      std::shared_ptr<const std::atomic<bool>> cancelled) = 0;
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
