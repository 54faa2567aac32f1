// actors/prepared_model_impl.h — the embedded PreparedModel: a handle to an ExecutionActor,
// plus, when it was prepared with compilation caching, the driver's own duplicates of the
// cache file descriptors so that the cache can be rewritten later (updateCache).
#pragma once

#include <memory>
#include <string>

#include "actors/cache_actor.h"
#include "actors/execution_actor.h"
#include "actors/prepared_model_registry.h"
#include "cache/cache_format.h"
#include "common/vlog.h"
#include "hal/driver_control.h"
#include "nnhal/prepared_model.h"

namespace nnhal::actors {

/// What a prepared model keeps of the cache files it was saved to or loaded from.
struct CacheBinding {
  std::shared_ptr<CacheActor> actor;
  std::shared_ptr<const CacheFds> files;
  cache::Token token{};
  /// The device's backend, which encodes the model again for updateCache.
  std::shared_ptr<const backend::Backend> backend;
  backend::CacheSettings settings;
  /// For a model prepared from the cache: the bytes it was loaded from (null otherwise).
  std::shared_ptr<const CacheImage> loadedFrom;
  /// Who prepared the model and with which priority and preference: recorded with its
  /// token-map entry.
  RunAs runAs{};
};

class PreparedModelImpl final : public PreparedModel,
                                public hal::PreparedModelControl,
                                public std::enable_shared_from_this<PreparedModelImpl> {
 public:
  /// `buffers`: the device's driver-managed buffers (requests may name them by token);
  /// `registry`: the device's table of its prepared models, where this one is listed while
  /// it lives; `runAs`: the application the model was prepared for and
  /// PrepareOptions::priority, as which every execution of the model runs;
  /// `deviceFenceWaits`: the device's registry of fenced executions waiting for fences.
  /// `memory`: what `compiled` made for this model's executions (createMemory).
  PreparedModelImpl(std::shared_ptr<Runtime> runtime,
                    std::shared_ptr<const backend::CompiledModel> compiled,
                    std::unique_ptr<backend::ExecutionMemory> memory,
                    std::shared_ptr<BufferTable> buffers,
                    const std::shared_ptr<PreparedModelRegistry>& registry,
                    std::shared_ptr<const CacheBinding> cache = nullptr, RunAs runAs = {},
                    std::shared_ptr<CancelRegistry> deviceFenceWaits = nullptr)
      : actor_(std::move(runtime), compiled, std::move(memory), std::move(buffers), runAs,
               std::move(deviceFenceWaits)),
        compiled_(std::move(compiled)),
        cache_(std::move(cache)),
        registration_(registry->add(this, this)) {}

  Result<ExecutionResult> executeSynchronously(const Request& request,
                                               const ExecuteOptions& options) override {
    NNHAL_VLOG(Driver, "executeSynchronously");
    return actor_.run(request, options);
  }
  ErrorStatus execute(Request request, const ExecuteOptions& options,
                      ExecutionCallback callback) override {
    NNHAL_VLOG(Driver, "execute (asynchronous)");
    return actor_.post(
        ExecutionActor::Execute{std::move(request), options, std::move(callback), nullptr});
  }
  Result<FencedExecutionResult> executeFenced(const Request& request,
                                              const std::vector<SyncFence>& waitFor,
                                              const ExecuteOptions& options,
                                              OptionalDuration timeoutAfterFence) override {
    NNHAL_VLOG(Driver, "executeFenced: waits for {} fences", waitFor.size());
    return actor_.executeFenced(request, waitFor, options, timeoutAfterFence);
  }
  /// An EmbeddedBurst (actors/embedded_burst.h) that keeps this model alive.
  Result<std::shared_ptr<Burst>> configureExecutionBurst() override;
  using PreparedModel::executeSynchronously;

  /// See ExecutionActor::runsQuickly.
  bool runsQuickly() const override { return actor_.runsQuickly(); }

  /// What Device::allocate resolves a prepared model to: its identity in buffer roles, the
  /// device it belongs to (its buffer table) and its Model.
  uint64_t bufferModelId() const { return actor_.bufferModelId(); }
  const BufferTable* bufferTable() const { return actor_.bufferTable(); }
  const Model& model() const { return compiled_->model(); }

  /// True when this model keeps cache file descriptors (it was saved to or loaded from a
  /// compilation cache).
  bool hasCacheFiles() const { return cache_ != nullptr; }

  /// Rewrites the cache files this model was saved to or loaded from, under the same token,
  /// through the CacheActor (exclusive file locks: never interleaved with a load or another
  /// save). A model compiled from a Model is compiled again (a second compilation whose
  /// result replaces the cache); a model loaded from a cache writes back the authenticated
  /// bytes it was loaded from. Blocks until written. Errors: GENERAL_FAILURE when the model
  /// has no cache files or they cannot be written (e.g. read-only descriptors);
  /// DEVICE_UNAVAILABLE once the driver has shut down.
  Result<void> updateCache() const;

 protected:
  // hal::PreparedModelControl: nnhald's execution paths (validated once, by validate()).
  Result<void> checkRequest(const Request& request, const ExecuteOptions& options) const override {
    return actor_.validate(request, options);
  }
  Result<ExecutionResult> runChecked(const Request& request,
                                     const ExecuteOptions& options) override {
    return actor_.runValidated(request, options);
  }
  ErrorStatus postChecked(Request request, const ExecuteOptions& options,
                          ExecutionCallback callback,
                          std::shared_ptr<const std::atomic<bool>> cancelled) override {
    return actor_.postValidated(ExecutionActor::Execute{std::move(request), options,
                                                        std::move(callback), std::move(cancelled)});
  }
  Result<FencedExecutionResult> fencedChecked(
      const Request& request, const std::vector<SyncFence>& waitFor, const ExecuteOptions& options,
      OptionalDuration timeoutAfterFence, hal::FencedAdmission admission,
      std::shared_ptr<const std::atomic<bool>> cancelled) override {
    return actor_.executeFencedValidated(request, waitFor, options, timeoutAfterFence,
                                         std::move(admission), std::move(cancelled));
  }

 private:
  ExecutionActor actor_;
  std::shared_ptr<const backend::CompiledModel> compiled_;
  std::shared_ptr<const CacheBinding> cache_;
  /// Last: the model leaves the device's table before anything else of it is destroyed.
  PreparedModelRegistry::Entry registration_;
};

}  // namespace nnhal::actors
