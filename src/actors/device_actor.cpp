#include "actors/device_actor.h"

#include <spdlog/spdlog.h>

#include <optional>
#include <string>

#include "actors/prepared_model_impl.h"
#include "cache/cache_format.h"
#include "cache/token_map.h"
#include "common/vlog.h"
#include "hal/validation.h"

namespace nnhal::actors {
namespace {

// One file of each kind: the format is one model cache and one data cache.
constexpr uint32_t kModelCacheFiles = 1;
constexpr uint32_t kDataCacheFiles = 1;

using Plan = CompilationActor::Plan;

bool validPreference(ExecutionPreference p) {
  return p == ExecutionPreference::LOW_POWER || p == ExecutionPreference::FAST_SINGLE_ANSWER ||
         p == ExecutionPreference::SUSTAINED_SPEED;
}

bool validPriority(Priority p) {
  return p == Priority::LOW || p == Priority::MEDIUM || p == Priority::HIGH;
}

/// The handle counts of IDevice.hal: as many handles as getNumberOfCacheFilesNeeded says,
/// each holding exactly one descriptor. Errors: INVALID_ARGUMENT naming the field.
Result<void> checkCacheShape(const CacheFiles& files) {
  const auto check = [](const std::vector<CacheHandle>& handles, uint32_t needed,
                        const char* name) -> Result<void> {
    if (handles.size() != needed) {
      return invalidArgument(std::string(name) + ": " + std::to_string(handles.size()) +
                             " cache files, the driver needs " + std::to_string(needed));
    }
    for (size_t i = 0; i < handles.size(); ++i) {
      if (handles[i].size() != 1) {
        return invalidArgument(std::string(name) + "[" + std::to_string(i) +
                               "]: " + std::to_string(handles[i].size()) +
                               " descriptors, a cache handle holds exactly one");
      }
    }
    return {};
  };
  NNHAL_TRY(check(files.modelCache, kModelCacheFiles, "modelCache"));
  NNHAL_TRY(check(files.dataCache, kDataCacheFiles, "dataCache"));
  return {};
}

/// Duplicates the descriptor of one cache handle after checking its access. Only regular
/// files outside FUSE are accepted: reading a pipe, a device or a file system run by the
/// client could block the cache actor forever.
Result<cache::UniqueFd> keepDescriptor(int fd, bool needRead, bool needWrite, const char* name) {
  auto access = cache::accessOf(fd);
  if (!access) return fail(ErrorStatus::GENERAL_FAILURE, std::string(name) + ": bad descriptor");
  if (auto regular = cache::checkRegularFile(fd); !regular) {
    return fail(ErrorStatus::GENERAL_FAILURE, std::string(name) + ": " + regular.error().message);
  }
  if (needRead && !access->readable) {
    return fail(ErrorStatus::GENERAL_FAILURE, std::string(name) + ": descriptor is not readable");
  }
  if (needWrite && !access->writable) {
    return fail(ErrorStatus::GENERAL_FAILURE, std::string(name) + ": descriptor is not writable");
  }
  auto copy = cache::duplicate(fd);
  if (!copy)
    return fail(ErrorStatus::GENERAL_FAILURE, std::string(name) + ": " + copy.error().message);
  return copy;
}

Result<std::shared_ptr<const CacheFds>> keepDescriptors(const CacheFiles& files, bool needRead,
                                                        bool needWrite) {
  auto fds = std::make_shared<CacheFds>();
  NNHAL_ASSIGN_OR_RETURN(
      fds->model, keepDescriptor(files.modelCache[0][0], needRead, needWrite, "modelCache[0]"));
  NNHAL_ASSIGN_OR_RETURN(
      fds->data, keepDescriptor(files.dataCache[0][0], needRead, needWrite, "dataCache[0]"));
  return std::shared_ptr<const CacheFds>(std::move(fds));
}

/// The token map of the state directory, or null with the reason compilation caching is off.
std::unique_ptr<cache::TokenMap> openTokenMap(const DeviceOptions& options,
                                              const std::string& cacheVersion,
                                              std::string* offReason) {
  if (!options.compilationCaching) {
    *offReason = "compilation caching is turned off";
    return nullptr;
  }
  if (options.stateDirectory.empty()) {
    *offReason = "the driver has no state directory";
    return nullptr;
  }
  auto map = cache::TokenMap::open(options.stateDirectory, cacheVersion);
  if (!map) {
    spdlog::warn("compilation caching disabled: {}", map.error().message);
    *offReason = map.error().message;
    return nullptr;
  }
  if ((*map)->opened() == cache::TokenMap::Opened::kResetCorrupt) {
    spdlog::warn("the compilation cache token map in {} was damaged; starting empty",
                 options.stateDirectory.string());
  }
  return std::move(*map);
}

/// Calls `callback` on a pool thread (never on an actor's strand).
void deliver(const std::shared_ptr<Runtime>& runtime, PrepareCallback callback,
             Result<std::shared_ptr<PreparedModel>> result) {
  postTo(runtime, [callback = std::move(callback), result = std::move(result)]() mutable {
    callback(std::move(result));
  });
}

/// The files a model was loaded from, kept by its CacheBinding.
struct LoadedBytes {
  cache::AlignedBuffer model;
  cache::Digest modelDigest{};
  std::shared_ptr<const cache::FillingBuffer> data;  ///< complete once the model compiled
};

/// What the device's prepared models share: the runtime, the buffer table, the registry of
/// models and that of fenced executions waiting for fences.
struct PreparedContext {
  std::shared_ptr<Runtime> runtime;
  std::shared_ptr<BufferTable> buffers;
  std::shared_ptr<PreparedModelRegistry> models;
  std::shared_ptr<CancelRegistry> fenceWaits;
};

/// The prepared model of a compilation's outcome, with its execution memory.
Result<std::shared_ptr<PreparedModelImpl>> makePrepared(const PreparedContext& context,
                                                        Result<Plan> compiled,
                                                        std::shared_ptr<const CacheBinding> binding,
                                                        RunAs runAs) {
  if (!compiled) return std::unexpected(std::move(compiled).error());
  NNHAL_ASSIGN_OR_RETURN(
      std::unique_ptr<backend::ExecutionMemory> memory,
      (*compiled)->createMemory(&context.runtime->arenaBudget(), runAs.application));
  return std::make_shared<PreparedModelImpl>(context.runtime, std::move(*compiled),
                                             std::move(memory), context.buffers, context.models,
                                             std::move(binding), runAs, context.fenceWaits);
}

/// A compilation's reply that hands its prepared model (or error) to `callback`.
CompilationActor::Reply replyWithPrepared(PreparedContext context,
                                          std::shared_ptr<const CacheBinding> binding, RunAs runAs,
                                          PrepareCallback callback) {
  return [context = std::move(context), binding = std::move(binding), runAs,
          callback = std::move(callback)](Result<Plan> compiled) mutable {
    auto prepared = makePrepared(context, std::move(compiled), std::move(binding), runAs);
    if (!prepared) {
      callback(std::unexpected(std::move(prepared).error()));
      return;
    }
    callback(std::shared_ptr<PreparedModel>(std::move(*prepared)));
  };
}

/// `callback`, recording a "preparation" span from now until it is called.
PrepareCallback tracedPreparation(TraceRecorder* trace, const char* name,
                                  PrepareCallback callback) {
  if (trace == nullptr) return callback;
  return [trace, name, start = std::chrono::steady_clock::now(),
          callback = std::move(callback)](Result<std::shared_ptr<PreparedModel>> result) mutable {
    trace->record("preparation", name, start);
    callback(std::move(result));
  };
}

}  // namespace

RuntimeOptions runtimeOptions(const DeviceOptions& options) {
  return RuntimeOptions{.threads = options.runtimeThreads,
                        .preparationThreads = options.preparationThreads,
                        .preparationPolicy = options.preparationPolicy,
                        .maxExecutionBytes = options.maxExecutionBytes,
                        .maxQueuedExecutions = options.maxQueuedExecutions,
                        .trace = options.trace,
                        .maxArenaBytes = options.maxArenaBytes,
                        .arenaIdleRelease = options.arenaIdleRelease};
}

DeviceActor::DeviceActor(const DeviceOptions& options,
                         std::shared_ptr<const backend::Backend> backend,
                         std::shared_ptr<Runtime> runtime)
    : backend_(std::move(backend)),
      cacheSettings_{cache::cacheVersion(backend_->version()), {options.authenticateDataCache}},
      runtime_(runtime ? std::move(runtime) : std::make_shared<Runtime>(runtimeOptions(options))),
      compiler_(std::make_shared<CompilationActor>(runtime_)),
      cache_(std::make_shared<CacheActor>(
          runtime_, openTokenMap(options, cacheSettings_.version, &cachingOff_),
          static_cast<size_t>(options.maxDataCacheBytes))),
      buffers_(std::make_shared<BufferTable>(options.maxBuffers)) {}

DeviceActor::~DeviceActor() {
  // Fenced executions still waiting for fences that may never signal end now (their
  // fences are signalled); later executeFenced calls are refused.
  fenceWaits_->closeAndCancelAll({ErrorStatus::DEVICE_UNAVAILABLE, "the device was released", {}});
  // Loads first: their replies start compilations, which must still be admitted.
  cache_->stop();
  compiler_->stop();
  buffers_->close();  // buffers the client still holds keep working
}

std::string DeviceActor::getName() const { return backend_->name(); }
std::string DeviceActor::getVersionString() const { return backend_->version(); }
DeviceType DeviceActor::getType() const { return backend_->type(); }
Capabilities DeviceActor::getCapabilities() const { return backend_->capabilities(); }

std::vector<Extension> DeviceActor::getSupportedExtensions() const {
  return backend_->supportedExtensions();
}

NumberOfCacheFiles DeviceActor::getNumberOfCacheFilesNeeded() const {
  // IDevice.hal 1.2: a driver that cannot cache says (0, 0), and only then.
  if (!cache_->enabled()) return {0, 0};
  return {kModelCacheFiles, kDataCacheFiles};
}

CompilationCaching DeviceActor::getCompilationCaching() const {
  if (!cache_->enabled()) return {false, cachingOff_};
  return {true, ""};
}

Result<std::vector<std::string>> DeviceActor::explainSupportedOperations(const Model& model) const {
  NNHAL_TRY(hal::validateModel(model));
  return backend_->explainSupport(model);
}

Result<std::vector<bool>> DeviceActor::getSupportedOperations(const Model& model) const {
  NNHAL_VLOG(Driver, "getSupportedOperations: {} operations in main", model.main.operations.size());
  NNHAL_ASSIGN_OR_RETURN(auto reasons, explainSupportedOperations(model));
  std::vector<bool> supported;
  supported.reserve(reasons.size());
  for (const std::string& reason : reasons) supported.push_back(reason.empty());
  return supported;
}

std::shared_ptr<const CacheFds> DeviceActor::filesForSave(const CacheFiles& files) const {
  // IDevice.hal: faults of the cache arguments never fail prepareModel; nothing is saved.
  auto skip = [](const std::string& why) -> std::shared_ptr<const CacheFds> {
    spdlog::debug("compilation cache not saved: {}", why);
    NNHAL_VLOG(Cache, "the compilation will not be saved: {}", why);
    return nullptr;
  };
  if (!cache_->enabled()) return skip("compilation caching is off: " + cachingOff_);
  if (auto shape = checkCacheShape(files); !shape) return skip(shape.error().message);
  auto fds = keepDescriptors(files, false, true);
  if (!fds) return skip(fds.error().message);
  return std::move(*fds);
}

Result<void> DeviceActor::checkPreparation(const Model& model,
                                           const PrepareOptions& options) const {
  if (!validPreference(options.preference)) {
    return invalidArgument("preference: invalid ExecutionPreference " +
                           std::to_string(static_cast<int32_t>(options.preference)));
  }
  if (!validPriority(options.priority)) {
    return invalidArgument("priority: invalid Priority " +
                           std::to_string(static_cast<int32_t>(options.priority)));
  }
  NNHAL_TRY(hal::validateModel(model));
  // What the compiler would refuse (a rank the operation does not take, an activation code
  // out of range, shapes that do not broadcast) is refused at launch, as the NN HAL asks.
  return backend_->checkModel(model);
}

Result<void> DeviceActor::checkPreparationFromCache(const CacheFiles& files) const {
  // IDevice.hal 1.2: GENERAL_FAILURE when caching is not supported, whatever the files (the
  // handle counts are then measured against (0, 0), which no cache could meet).
  if (!cache_->enabled()) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "compilation caching is off (getNumberOfCacheFilesNeeded is 0, 0): " + cachingOff_);
  }
  NNHAL_TRY(checkCacheShape(files));
  return {};
}

ErrorStatus DeviceActor::prepareModel(Model model, const PrepareOptions& options,
                                      PrepareCallback callback) {
  NNHAL_VLOG(Driver, "prepareModel: {} operations in main, preference {}, priority {}{}",
             model.main.operations.size(), toString(options.preference), toString(options.priority),
             options.cache ? ", with cache files" : "");
  auto reject = [&](Error error) {
    const ErrorStatus status = error.status;
    spdlog::debug("prepareModel rejected: {}", error.message);
    NNHAL_VLOG(Driver, "prepareModel rejected: {}", error.message);
    callback(std::unexpected(std::move(error)));
    return status;
  };
  if (auto valid = checkPreparation(model, options); !valid) {
    return reject(std::move(valid).error());
  }
  return prepareChecked(std::move(model), options, hal::kEmbeddedApplication, std::move(callback));
}

ErrorStatus DeviceActor::prepareChecked(Model model, const PrepareOptions& options,
                                        hal::ApplicationId application, PrepareCallback callback) {
  const RunAs runAs{application, options.priority, options.preference};
  callback = tracedPreparation(runtime_->trace(), "prepareModel", std::move(callback));
  const PreparedContext context{runtime_, buffers_, models_, fenceWaits_};
  std::shared_ptr<const CacheFds> files = options.cache ? filesForSave(*options.cache) : nullptr;
  if (files == nullptr) {
    compiler_->post(CompilationActor::Compile{
        [backend = backend_, model = std::move(model)](
            OptionalTimePoint deadline, engine::YieldPoint* yield) mutable -> Result<Plan> {
          NNHAL_ASSIGN_OR_RETURN(backend::Compiled compiled,
                                 backend->compile(std::move(model), {deadline, yield, nullptr}));
          return Plan(std::move(compiled.model));
        },
        options.deadline, replyWithPrepared(context, nullptr, runAs, std::move(callback)), runAs});
    return ErrorStatus::NONE;
  }

  // Compile, and have the backend encode both cache images, on the pool.
  auto encoded = std::make_shared<std::optional<cache::EncodedCache>>();
  CompilationActor::Job job =
      [backend = backend_, model = std::move(model), encoded, settings = cacheSettings_](
          OptionalTimePoint deadline, engine::YieldPoint* yield) mutable -> Result<Plan> {
    NNHAL_ASSIGN_OR_RETURN(backend::Compiled compiled,
                           backend->compile(std::move(model), {deadline, yield, &settings}));
    if (compiled.cache) {
      NNHAL_VLOG(Cache, "cache encoded: {} model bytes, {} data bytes",
                 compiled.cache->model.size(), compiled.cache->data.size());
      encoded->emplace(std::move(*compiled.cache));
    } else {
      NNHAL_VLOG(Cache, "cache not encoded: {}", compiled.cacheSkipped);
      spdlog::debug("compilation cache not saved: {}", compiled.cacheSkipped);
    }
    return Plan(std::move(compiled.model));
  };
  auto binding = std::make_shared<CacheBinding>();
  binding->actor = cache_;
  binding->files = std::move(files);
  binding->token = options.cache->token;
  binding->backend = backend_;
  binding->settings = cacheSettings_;
  binding->runAs = runAs;
  compiler_->post(CompilationActor::Compile{
      std::move(job), options.deadline,
      [context, runAs, binding = std::shared_ptr<const CacheBinding>(binding), encoded,
       callback = std::move(callback)](Result<Plan> compiled) mutable {
        auto prepared = makePrepared(context, std::move(compiled), binding, runAs);
        if (!prepared) {
          callback(std::unexpected(std::move(prepared).error()));
          return;
        }
        if (!encoded->has_value()) {
          callback(std::shared_ptr<PreparedModel>(std::move(*prepared)));
          return;
        }
        auto owner = std::make_shared<cache::EncodedCache>(std::move(**encoded));
        CacheImage image{owner->model, owner->modelDigest, owner->data, owner};
        // The files are complete before the client hears of the prepared model.
        binding->actor->post(CacheActor::Save{
            binding->token, binding->files, std::move(image),
            [runtime = context.runtime, prepared = std::move(*prepared),
             callback = std::move(callback)](Result<void> saved) mutable {
              if (!saved) spdlog::debug("compilation cache not saved: {}", saved.error().message);
              if (saved) {
                NNHAL_VLOG(Cache, "cache saved");
              } else {
                NNHAL_VLOG(Cache, "cache not saved: {}", saved.error().message);
              }
              deliver(runtime, std::move(callback), std::shared_ptr<PreparedModel>(prepared));
            },
            binding->runAs});
      },
      runAs});
  return ErrorStatus::NONE;
}

ErrorStatus DeviceActor::prepareModelFromCache(const CacheFiles& files, OptionalTimePoint deadline,
                                               PrepareCallback callback) {
  return prepareFromCache(files, deadline, hal::kEmbeddedApplication, std::move(callback));
}

ErrorStatus DeviceActor::prepareFromCache(const CacheFiles& files, OptionalTimePoint deadline,
                                          hal::ApplicationId application,
                                          PrepareCallback callback) {
  callback = tracedPreparation(runtime_->trace(), "prepareModelFromCache", std::move(callback));
  NNHAL_VLOG(Driver, "prepareModelFromCache: {} model and {} data cache files",
             files.modelCache.size(), files.dataCache.size());
  auto reject = [&](Error error) {
    const ErrorStatus status = error.status;
    spdlog::debug("prepareModelFromCache rejected: {}", error.message);
    NNHAL_VLOG(Driver, "prepareModelFromCache rejected: {}", error.message);
    callback(std::unexpected(std::move(error)));
    return status;
  };
  if (auto valid = checkPreparationFromCache(files); !valid) {
    return reject(std::move(valid).error());
  }
  auto fds = keepDescriptors(files, true, false);
  if (!fds) return reject(std::move(fds).error());

  cache_->post(CacheActor::Load{
      files.token, *fds,
      [context = PreparedContext{runtime_, buffers_, models_, fenceWaits_}, backend = backend_,
       compiler = compiler_, cache = cache_, files = *fds, token = files.token,
       settings = cacheSettings_, deadline,
       callback = std::move(callback)](Result<CacheActor::Loaded> loaded) mutable {
        if (!loaded) {
          NNHAL_VLOG(Cache, "cache miss: {}", loaded.error().message);
          deliver(context.runtime, std::move(callback), std::unexpected(std::move(loaded).error()));
          return;
        }
        NNHAL_VLOG(Cache, "cache hit: the token and the files' hashes match");
        auto bytes = std::make_shared<LoadedBytes>();
        bytes->model = std::move(loaded->model);
        bytes->modelDigest = loaded->modelDigest;
        bytes->data = loaded->data;
        auto binding = std::make_shared<CacheBinding>();
        binding->actor = std::move(cache);
        binding->files = std::move(files);
        binding->token = token;
        binding->backend = backend;
        binding->settings = settings;
        binding->runAs = loaded->runAs;
        binding->loadedFrom = std::make_shared<const CacheImage>(
            CacheImage{bytes->model.bytes(), bytes->modelDigest, bytes->data->bytes(), bytes});
        // Loading a cache is fast and does not stop midway: the deadline is checked around it.
        CompilationActor::Job job = [backend, bytes, settings](
                                        OptionalTimePoint, engine::YieldPoint*) -> Result<Plan> {
          NNHAL_ASSIGN_OR_RETURN(
              std::unique_ptr<backend::CompiledModel> compiled,
              backend->compileFromCache({bytes->model.bytes(), bytes->modelDigest, bytes->data},
                                        settings));
          return Plan(std::move(compiled));
        };
        // IDevice::prepareModelFromCache_1_3 takes no priority: the model runs with the
        // priority and preference it was saved with, recorded in the token map.
        const RunAs runAs = loaded->runAs;
        compiler->post(CompilationActor::Compile{
            std::move(job), deadline,
            replyWithPrepared(std::move(context), std::move(binding), runAs, std::move(callback)),
            runAs});
      },
      application});
  return ErrorStatus::NONE;
}

hal::DeviceControl::ApplicationReport DeviceActor::applicationReport(
    hal::ApplicationId application) const {
  ApplicationReport report;
  report.runtime = reinterpret_cast<uintptr_t>(runtime_.get());
  report.arenaBytes = runtime_->arenaBudget().held(application);
  for (const ApplicationStats& s : runtime_->scheduler().applications()) {
    if (s.application != application) continue;
    report.weight = s.weight;
    report.serviceNs = s.serviceNs;
  }
  return report;
}

Result<AllocatedBuffer> DeviceActor::allocate(
    const BufferDesc& desc, const std::vector<std::shared_ptr<PreparedModel>>& preparedModels,
    const std::vector<BufferRole>& inputRoles, const std::vector<BufferRole>& outputRoles) {
  NNHAL_VLOG(Driver, "allocate: {} prepared models, {} input roles, {} output roles",
             preparedModels.size(), inputRoles.size(), outputRoles.size());
  std::vector<hal::BufferModel> models;
  models.reserve(preparedModels.size());
  for (size_t i = 0; i < preparedModels.size(); ++i) {
    const PreparedModelImpl* prepared =
        preparedModels[i] != nullptr ? models_->find(preparedModels[i].get()) : nullptr;
    if (prepared == nullptr) {
      return invalidArgument("preparedModels[" + std::to_string(i) + "]: " +
                             (preparedModels[i] ? "not a prepared model of this device" : "null"));
    }
    models.push_back({prepared->bufferModelId(), &prepared->model()});
  }
  NNHAL_ASSIGN_OR_RETURN(hal::BufferShape shape,
                         hal::validateBufferRoles(desc, models, inputRoles, outputRoles));
  return buffers_->create(std::move(shape));
}

hal::PreparedModelControl* DeviceActor::controlOf(const PreparedModel& model) const {
  return models_->find(&model);
}

}  // namespace nnhal::actors
