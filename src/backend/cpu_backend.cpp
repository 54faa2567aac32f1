#include "backend/cpu_backend.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "common/calibration.h"
#include "common/vlog.h"
#include "engine/compiler.h"
#include "engine/executor.h"
#include "engine/operation_registry.h"
#include "engine/prepared_state.h"
#include "kernels/isa.h"
#include "nnhal/version.h"

namespace nnhal::backend {
namespace {

/// An arena pool for the plan's temporaries and a staging pool for shared request memory.
class CpuExecutionMemory final : public ExecutionMemory {
 public:
  CpuExecutionMemory(size_t arenaBytes, engine::ArenaBudget* budget, hal::ApplicationId application)
      : arenas(arenaBytes, budget, application) {}
  engine::ArenaPool arenas;
  engine::StagingPool staging;
};

class CpuCompiledModel final : public CompiledModel {
 public:
  CpuCompiledModel(std::unique_ptr<engine::ExecutionPlan> plan,
                   std::shared_ptr<const engine::Parallel> parallel)
      : plan_(std::move(plan)), parallel_(std::move(parallel)) {}

  const engine::ExecutionPlan& plan() const { return *plan_; }

  const Model& model() const override { return plan_->model; }
  uint64_t executionBytes() const override {
    uint64_t largest = 0;
    for (const engine::SubgraphPlan& subgraph : plan_->subgraphs) {
      largest = std::max<uint64_t>(largest, subgraph.arenaBytes);
    }
    return largest;
  }
  bool dataIndependent() const override { return plan_->main().fullyStatic; }
  std::vector<size_t> outputBytes() const override {
    std::vector<size_t> bytes;
    for (uint32_t operand : plan_->main().outputOperands) {
      const engine::PlannedOperand& planned = plan_->main().operands[operand];
      bytes.push_back(planned.shapeKnown ? planned.byteSize : 0);
    }
    return bytes;
  }
  Result<std::unique_ptr<ExecutionMemory>> createMemory(
      engine::ArenaBudget* budget, hal::ApplicationId application) const override {
    auto memory =
        std::make_unique<CpuExecutionMemory>(plan_->main().arenaBytes, budget, application);
    memory->arenas.warm();  // the first execution then runs like the others
    return memory;
  }
  Result<std::vector<OutputShape>> execute(const Request& request, ExecutionMemory& memory,
                                           const RunOptions& options) const override {
    auto& pools = static_cast<CpuExecutionMemory&>(memory);
    return engine::execute(*plan_, request, pools.arenas, *parallel_,
                           engine::RunOptions{options.deadline, options.loopTimeout,
                                              options.cancelled, options.maxBytes, &pools.staging,
                                              options.yield, options.profile, options.preference});
  }
  std::string operationName(OperationType type) const override {
    return engine::operationName(type, plan_->model);
  }

 private:
  std::unique_ptr<engine::ExecutionPlan> plan_;
  std::shared_ptr<const engine::Parallel> parallel_;
};

Capabilities calibratedCapabilities(const DeviceOptions& options, const std::string& version) {
  auto calibration = common::applicableCalibration(
      options.stateDirectory, version, std::string(kernels::toString(kernels::activeIsa())));
  if (calibration) return common::capabilitiesFrom(&*calibration);
  if (!options.stateDirectory.empty()) {
    spdlog::info("capabilities: documented defaults ({})", calibration.error().message);
  }
  return common::capabilitiesFrom(nullptr);
}

}  // namespace

std::string cpuDriverVersion(const DeviceOptions& options) {
  if (!options.versionOverride.empty()) return options.versionOverride;
  return std::string(kDriverVersion) + "+" + std::string(buildId());
}

CpuBackend::CpuBackend(const DeviceOptions& options)
    : version_(cpuDriverVersion(options)),
      capabilities_(calibratedCapabilities(options, version_)),
      parallel_(std::make_shared<const engine::Parallel>(options.kernelThreads)) {
  // The first execution runs like the others: the kernel threads start with the device.
  parallel_->warmUp();
  if (const std::string& note = kernels::isaSelection().note; !note.empty()) {
    spdlog::warn("kernels: {}", note);
  }
  NNHAL_VLOG(Manager, "the CPU engine: kernels {}, {} kernel threads, state directory '{}'",
             kernels::toString(kernels::activeIsa()), options.kernelThreads,
             options.stateDirectory.string());
}

std::vector<Extension> CpuBackend::supportedExtensions() const {
  return engine::supportedExtensions();
}

Result<void> CpuBackend::checkModel(const Model& model) const { return engine::checkModel(model); }

Result<std::vector<std::string>> CpuBackend::explainSupport(const Model& model) const {
  return engine::explainSupport(model);
}

Result<Compiled> CpuBackend::compile(Model model, const CompileOptions& options) const {
  Compiled compiled;
  if (options.cache == nullptr) {
    NNHAL_ASSIGN_OR_RETURN(
        std::unique_ptr<engine::ExecutionPlan> plan,
        engine::compile(std::move(model), {nullptr, options.deadline, options.yield}));
    compiled.model = std::make_unique<CpuCompiledModel>(std::move(plan), parallel_);
    return compiled;
  }
  // Compile recording the operations' precomputed state, then encode both images.
  engine::PreparedStateStore state(engine::PreparedStateStore::Mode::kSave);
  NNHAL_ASSIGN_OR_RETURN(
      std::unique_ptr<engine::ExecutionPlan> plan,
      engine::compile(std::move(model), {&state, options.deadline, options.yield}));
  auto bytes =
      cache::encodeCache(plan->model, state, options.cache->version, options.cache->options);
  if (bytes) {
    compiled.cache = std::move(*bytes);
  } else {
    compiled.cacheSkipped = std::move(bytes).error().message;
  }
  compiled.model = std::make_unique<CpuCompiledModel>(std::move(plan), parallel_);
  return compiled;
}

Result<std::unique_ptr<CompiledModel>> CpuBackend::compileFromCache(
    const CacheImages& images, const CacheSettings& settings) const {
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<engine::ExecutionPlan> plan,
                         cache::compileFromCache(images.model, images.modelDigest, images.data,
                                                 settings.version, settings.options));
  return std::unique_ptr<CompiledModel>(
      std::make_unique<CpuCompiledModel>(std::move(plan), parallel_));
}

Result<cache::EncodedCache> CpuBackend::encodeCache(const CompiledModel& model,
                                                    const CacheSettings& settings) const {
  // A second compilation of the same model, this time recording precomputed state.
  engine::PreparedStateStore state(engine::PreparedStateStore::Mode::kSave);
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<engine::ExecutionPlan> plan,
                         engine::compile(model.model(), {&state}));
  return cache::encodeCache(plan->model, state, settings.version, settings.options);
}

}  // namespace nnhal::backend

namespace nnhal {

KernelIsa kernelIsa() {
  const kernels::IsaSelection& s = kernels::isaSelection();
  return {std::string(kernels::toString(s.active)), std::string(kernels::toString(s.supported)),
          s.note};
}

CapabilitiesSource capabilitiesSource(const DeviceOptions& options) {
  const std::string isa(kernels::toString(kernels::activeIsa()));
  auto calibration = common::applicableCalibration(options.stateDirectory,
                                                   backend::cpuDriverVersion(options), isa);
  if (!calibration) return {false, calibration.error().message};
  return {true, "measured by nnhal calibrate at " + calibration->measuredAt +
                    " (kernels: " + calibration->isa + ", against " + calibration->reference + ")"};
}

}  // namespace nnhal
