// actors/device_actor.h — the embedded driver's Device: the HAL plumbing over one Backend.
//
// What the device is (its name, type, capabilities, operations, compiler and kernels) is its
// backend's (backend/backend.h); everything else is here, the same for every backend:
// argument validation, compilation caching with its files, token map and security rules,
// scheduling and QoS, memory domains, bursts and fenced executions (through the prepared
// models' ExecutionActors), timing and tracing.
//
// Queries (capabilities, supported operations, cache file counts) are answered on the
// caller's thread from immutable state. prepareModel validates on the caller's thread
// (its returned status is the validation result, as IDevice::prepareModel_1_3 requires),
// then sends a Compile message to the CompilationActor and, when the plan comes back,
// wraps it in a PreparedModel backed by its own ExecutionActor.
//
// Compilation caching (docs/CACHE_FORMAT.md): with cache files, the compile job also has the
// backend encode both cache images (on the pool); a Save
// message to the CacheActor then records the token and writes the files before the callback
// runs. prepareModelFromCache checks the handles on the caller's thread, sends a Load message
// to the CacheActor (read + authenticate) and then a Compile message whose job has the
// backend rebuild the compiled model from the images.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/cache_actor.h"
#include "actors/cancel_registry.h"
#include "actors/compilation_actor.h"
#include "actors/device_buffer.h"
#include "actors/prepared_model_registry.h"
#include "actors/runtime.h"
#include "backend/backend.h"
#include "cache/cache_format.h"
#include "hal/driver_control.h"
#include "nnhal/device.h"

namespace nnhal::actors {

/// The runtime options (threads, limits, tracing) of DeviceOptions.
RuntimeOptions runtimeOptions(const DeviceOptions& options);

class DeviceActor final : public Device, public hal::DeviceControl {
 public:
  /// The device of `backend`, with the plumbing's options of `options` (the state directory,
  /// caching and limits; not the backend's own, which it took when created), on `runtime`
  /// (shared with other devices), or on a runtime of its own made from `options` when null.
  DeviceActor(const DeviceOptions& options, std::shared_ptr<const backend::Backend> backend,
              std::shared_ptr<Runtime> runtime = nullptr);
  ~DeviceActor() override;

  std::string getName() const override;
  std::string getVersionString() const override;
  DeviceType getType() const override;
  Capabilities getCapabilities() const override;
  std::vector<Extension> getSupportedExtensions() const override;
  /// (1, 1) with a usable state directory, else (0, 0) (DeviceOptions::stateDirectory).
  NumberOfCacheFiles getNumberOfCacheFilesNeeded() const override;
  CompilationCaching getCompilationCaching() const override;
  Result<std::vector<bool>> getSupportedOperations(const Model& model) const override;
  Result<std::vector<std::string>> explainSupportedOperations(const Model& model) const override;
  ErrorStatus prepareModel(Model model, const PrepareOptions& options,
                           PrepareCallback callback) override;
  ErrorStatus prepareModelFromCache(const CacheFiles& cache, OptionalTimePoint deadline,
                                    PrepareCallback callback) override;
  /// IDevice::allocate: resolves the prepared models (this device's own only), checks the
  /// roles (hal/buffer_roles.h) and creates the buffer in the device's table.
  Result<AllocatedBuffer> allocate(
      const BufferDesc& desc, const std::vector<std::shared_ptr<PreparedModel>>& preparedModels,
      const std::vector<BufferRole>& inputRoles,
      const std::vector<BufferRole>& outputRoles) override;
  using Device::prepareModel;
  using Device::prepareModelFromCache;

  /// The argument checks prepareModel starts with (preference, priority, validateModel):
  /// INVALID_ARGUMENT naming the field. nnhald runs them before queueing a preparation.
  Result<void> checkPreparation(const Model& model, const PrepareOptions& options) const override;
  /// The argument checks prepareModelFromCache starts with: INVALID_ARGUMENT for the handle
  /// counts, GENERAL_FAILURE when caching is disabled.
  Result<void> checkPreparationFromCache(const CacheFiles& files) const override;
  /// prepareModel without its checks, for `application`: `model` and `options` passed
  /// checkPreparation.
  ErrorStatus prepareChecked(Model model, const PrepareOptions& options,
                             hal::ApplicationId application, PrepareCallback callback) override;
  /// prepareModelFromCache for `application`.
  ErrorStatus prepareFromCache(const CacheFiles& files, OptionalTimePoint deadline,
                               hal::ApplicationId application, PrepareCallback callback) override;
  void setApplicationWeight(hal::ApplicationId application, uint32_t weight) override {
    runtime_->scheduler().setWeight(application, weight);
  }
  ApplicationReport applicationReport(hal::ApplicationId application) const override;
  hal::PreparedModelControl* controlOf(const PreparedModel& model) const override;

 private:
  /// The duplicated descriptors to save to, or null (with the reason logged at debug level)
  /// when `files` cannot be saved to.
  std::shared_ptr<const CacheFds> filesForSave(const CacheFiles& files) const;

  /// Compiles the prepared models and on whose CompiledModel they run.
  std::shared_ptr<const backend::Backend> backend_;
  /// The version string cache images carry and how they are authenticated.
  backend::CacheSettings cacheSettings_;
  /// Why compilation caching is off ("" when it is on); set once, while constructing.
  std::string cachingOff_;
  std::shared_ptr<Runtime> runtime_;
  std::shared_ptr<CompilationActor> compiler_;
  std::shared_ptr<CacheActor> cache_;
  /// The driver-managed buffers (allocate), by token; shared with every prepared model.
  std::shared_ptr<BufferTable> buffers_;
  /// The prepared models this device made and that still live (allocate, controlOf).
  std::shared_ptr<PreparedModelRegistry> models_ = std::make_shared<PreparedModelRegistry>();
  /// Fenced executions of this device's models still waiting for their fences: cancelled
  /// when the device is released (the runtime may live on, serving other devices).
  std::shared_ptr<CancelRegistry> fenceWaits_ = std::make_shared<CancelRegistry>();
};

}  // namespace nnhal::actors
