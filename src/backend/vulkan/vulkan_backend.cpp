#include "backend/vulkan/vulkan_backend.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <string>
#include <utility>

#include "backend/vulkan/vulkan_slot.h"
#include "backend/vulkan_factory.h"
#include "cache/cache_format.h"
#include "common/calibration.h"
#include "engine/arena_budget.h"
#include "engine/prepared_state.h"
#include "hal/pool_io.h"
#include "hal/validation.h"
#include "kernels/gather.h"
#include "nnhal/version.h"

namespace nnhal::backend::vulkan {
namespace {

class VulkanCompiledModel final : public CompiledModel {
 public:
  VulkanCompiledModel(Model model, Plan plan, std::vector<VkPipeline> pipelines,
                      std::shared_ptr<Context> context)
      : model_(std::move(model)),
        plan_(std::move(plan)),
        pipelines_(std::move(pipelines)),
        context_(std::move(context)) {}

  const Model& model() const override { return model_; }
  uint64_t executionBytes() const override { return slotBytes(plan_); }
  bool dataIndependent() const override { return true; }
  std::vector<size_t> outputBytes() const override {
    std::vector<size_t> bytes;
    for (const TensorRange& r : plan_.outputs) bytes.push_back(r.requestBytes());
    return bytes;
  }
  Result<std::unique_ptr<ExecutionMemory>> createMemory(
      engine::ArenaBudget* budget, hal::ApplicationId application) const override {
    return std::make_unique<VulkanExecutionMemory>(slotBytes(plan_), budget, application);
  }
  Result<std::vector<OutputShape>> execute(const Request& request, ExecutionMemory& memory,
                                           const RunOptions& options) const override;
  std::string operationName(OperationType type) const override {
    return std::string(toString(type));
  }

 private:
  Model model_;
  Plan plan_;
  std::vector<VkPipeline> pipelines_;  ///< per Shader; owned by the context
  std::shared_ptr<Context> context_;
};

/// Element e of request bytes of `storage` as the buffer's float32.
float widen(Storage storage, const uint8_t* bytes, size_t e) {
  switch (storage) {
    case Storage::kFloat16: {
      _Float16 half{};
      std::memcpy(&half, bytes + e * sizeof half, sizeof half);
      return static_cast<float>(half);
    }
    case Storage::kUint8:
      return static_cast<float>(bytes[e]);
    case Storage::kInt8:
      return static_cast<float>(static_cast<int8_t>(bytes[e]));
    case Storage::kInt32: {
      int32_t whole = 0;
      std::memcpy(&whole, bytes + e * sizeof whole, sizeof whole);
      return static_cast<float>(whole);
    }
    case Storage::kFloat32:
    case Storage::kWords:
      break;
  }
  float value = 0;
  std::memcpy(&value, bytes + e * sizeof value, sizeof value);
  return value;
}

/// Stores the buffer's `value` as element e of request bytes of `storage` (float16 rounded
/// to nearest; 8-bit values are already whole and in range: QUANTIZE saturated them; int32
/// values are indices, whole and below 2^24). The buffer is the device's to write: a NaN
/// (which clamping keeps) becomes 0 before an integer conversion, which it would make
/// undefined.
void narrow(Storage storage, float value, uint8_t* bytes, size_t e) {
  const bool integer =
      storage == Storage::kUint8 || storage == Storage::kInt8 || storage == Storage::kInt32;
  if (integer && std::isnan(value)) value = 0.0f;
  switch (storage) {
    case Storage::kFloat16: {
      const auto half = static_cast<_Float16>(value);
      std::memcpy(bytes + e * sizeof half, &half, sizeof half);
      return;
    }
    case Storage::kUint8:
      bytes[e] = static_cast<uint8_t>(std::clamp(value, 0.0f, 255.0f));
      return;
    case Storage::kInt8:
      bytes[e] = static_cast<uint8_t>(static_cast<int8_t>(std::clamp(value, -128.0f, 127.0f)));
      return;
    case Storage::kInt32: {
      const auto whole = static_cast<int32_t>(std::clamp(value, -16777216.0f, 16777216.0f));
      std::memcpy(bytes + e * sizeof whole, &whole, sizeof whole);
      return;
    }
    case Storage::kFloat32:
    case Storage::kWords:
      std::memcpy(bytes + e * sizeof value, &value, sizeof value);
      return;
  }
}

float* rangeIn(uint8_t* base, const TensorRange& r) {
  return reinterpret_cast<float*>(base) + r.offset;
}

/// Copies request input `a` into the buffer range `r` (float16 widened). Errors: readPool's.
Result<void> readInput(const Memory& pool, const RequestArgument& a, const TensorRange& r,
                       uint8_t* base) {
  float* to = rangeIn(base, r);
  if (r.storage == Storage::kFloat32 || r.storage == Storage::kWords) {
    return hal::readPool(pool, a.location.offset,
                         {reinterpret_cast<uint8_t*>(to), r.requestBytes()});
  }
  std::vector<uint8_t> bytes(r.requestBytes());
  NNHAL_TRY(hal::readPool(pool, a.location.offset, bytes));
  for (size_t e = 0; e < r.elements; ++e) to[e] = widen(r.storage, bytes.data(), e);
  return {};
}

/// Copies the buffer range `r` to request output `a` (float16 rounded to nearest). Errors:
/// writePool's.
Result<void> writeOutput(const Memory& pool, const RequestArgument& a, const TensorRange& r,
                         uint8_t* base) {
  const float* from = rangeIn(base, r);
  if (r.storage == Storage::kFloat32 || r.storage == Storage::kWords) {
    return hal::writePool(pool, a.location.offset,
                          {reinterpret_cast<const uint8_t*>(from), r.requestBytes()});
  }
  std::vector<uint8_t> bytes(r.requestBytes());
  for (size_t e = 0; e < r.elements; ++e) narrow(r.storage, from[e], bytes.data(), e);
  return hal::writePool(pool, a.location.offset, bytes);
}

Result<std::vector<OutputShape>> VulkanCompiledModel::execute(const Request& request,
                                                              ExecutionMemory& memory,
                                                              const RunOptions& options) const {
  std::vector<OutputShape> shapes;
  bool sufficient = true;
  for (size_t k = 0; k < plan_.outputs.size(); ++k) {
    const bool fits = request.outputs[k].hasNoValue ||
                      request.outputs[k].location.length >= plan_.outputs[k].requestBytes();
    shapes.push_back({plan_.outputDimensions[k], fits});
    sufficient = sufficient && fits;
  }
  if (!sufficient) {
    return std::unexpected(Error{ErrorStatus::OUTPUT_INSUFFICIENT_SIZE,
                                 "an output's memory is smaller than the output", shapes});
  }
  if (options.cancelled != nullptr && options.cancelled->load()) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the execution was cancelled");
  }
  if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
    return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the deadline passed before the run");
  }
  auto& slots = static_cast<VulkanExecutionMemory&>(memory);
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<Slot> slot, slots.take(plan_, pipelines_, context_));
  const auto pool = [&](const RequestArgument& a) -> const Memory& {
    return std::get<Memory>(request.pools[a.location.poolIndex]);
  };
  for (size_t k = 0; k < plan_.inputs.size(); ++k) {
    const RequestArgument& a = request.inputs[k];
    if (a.hasNoValue) {
      std::fill_n(rangeIn(slot->bytes(), plan_.inputs[k]), plan_.inputs[k].elements, 0.0f);
      continue;
    }
    if (auto read = readInput(pool(a), a, plan_.inputs[k], slot->bytes()); !read) {
      slots.give(std::move(slot));
      return std::unexpected(read.error());
    }
  }
  // Indices that arrived with the request, as the CPU device checks them (GATHER's).
  for (const IndexCheck& check : plan_.indexChecks) {
    const TensorRange& r = plan_.inputs[check.input];
    const float* values = rangeIn(slot->bytes(), r);
    for (size_t e = 0; e < r.elements; ++e) {
      if (values[e] < 0.0f || values[e] >= static_cast<float>(check.bound)) {
        slots.give(std::move(slot));
        return fail(ErrorStatus::GENERAL_FAILURE,
                    kernels::indexOutOfRangeMessage(check.what, e, static_cast<int64_t>(values[e]),
                                                    check.bound));
      }
    }
  }
  if (options.yield != nullptr) options.yield->yield();
  auto ran = slot->run(options);
  if (!ran) {
    slots.drop(std::move(slot));  // its state is unknown
    return std::unexpected(ran.error());
  }
  for (size_t k = 0; k < plan_.outputs.size(); ++k) {
    const RequestArgument& a = request.outputs[k];
    if (a.hasNoValue) continue;
    if (auto written = writeOutput(pool(a), a, plan_.outputs[k], slot->bytes()); !written) {
      slots.give(std::move(slot));
      return std::unexpected(written.error());
    }
  }
  slots.give(std::move(slot));
  return shapes;
}

constexpr float kUnmeasured = 10.0f;

}  // namespace

VulkanBackend::VulkanBackend(std::shared_ptr<Context> context, std::string version,
                             MeasuredPerformance measured)
    : context_(std::move(context)), version_(std::move(version)), measured_(measured) {}

Capabilities VulkanBackend::capabilities() const {
  const PerformanceInfo unmeasured{kUnmeasured, kUnmeasured};
  const PerformanceInfo float32 = measured_.float32.value_or(unmeasured);
  const PerformanceInfo quantized = measured_.quantized.value_or(unmeasured);
  // The types of the float workload, and those of the 8-bit operations (TENSOR_INT32: their
  // biases and ARGMAX's indices).
  constexpr std::array kFloatTypes = {OperandType::FLOAT32,        OperandType::INT32,
                                      OperandType::TENSOR_FLOAT32, OperandType::BOOL,
                                      OperandType::TENSOR_FLOAT16, OperandType::FLOAT16};
  constexpr std::array kEightBitTypes = {
      OperandType::TENSOR_INT32, OperandType::TENSOR_QUANT8_ASYMM,
      OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, OperandType::TENSOR_QUANT8_ASYMM_SIGNED};
  Capabilities c;
  c.relaxedFloat32toFloat16PerformanceScalar = float32;
  c.relaxedFloat32toFloat16PerformanceTensor = float32;
  for (OperandType type :
       {OperandType::FLOAT32, OperandType::INT32, OperandType::UINT32, OperandType::TENSOR_FLOAT32,
        OperandType::TENSOR_INT32, OperandType::TENSOR_QUANT8_ASYMM, OperandType::BOOL,
        OperandType::TENSOR_QUANT16_SYMM, OperandType::TENSOR_FLOAT16, OperandType::TENSOR_BOOL8,
        OperandType::FLOAT16, OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL,
        OperandType::TENSOR_QUANT16_ASYMM, OperandType::TENSOR_QUANT8_SYMM,
        OperandType::TENSOR_QUANT8_ASYMM_SIGNED}) {
    const auto among = [type](const auto& types) {
      return std::ranges::find(types, type) != types.end();
    };
    const PerformanceInfo info = among(kFloatTypes)      ? float32
                                 : among(kEightBitTypes) ? quantized
                                                         : PerformanceInfo{};
    c.operandPerformance.push_back({type, info});
  }
  std::sort(c.operandPerformance.begin(), c.operandPerformance.end(),
            [](const auto& a, const auto& b) { return a.type < b.type; });
  return c;  // IF and WHILE keep the "not supported" maximum
}

Result<void> VulkanBackend::checkModel(const Model& model) const {
  if (!model.referenced.empty()) {
    return invalidArgument("nnhal-vulkan runs no control flow (the model references subgraphs)");
  }
  return checkPlan(model);
}

Result<std::vector<std::string>> VulkanBackend::explainSupport(const Model& model) const {
  return vulkan::explainSupport(model);
}

Result<std::unique_ptr<CompiledModel>> VulkanBackend::build(Model model) const {
  NNHAL_ASSIGN_OR_RETURN(Plan plan, buildPlan(model));
  std::vector<VkPipeline> pipelines(kShaderCount, VK_NULL_HANDLE);
  for (const Dispatch& d : plan.dispatches) {
    VkPipeline& p = pipelines[static_cast<size_t>(d.shader)];
    if (p == VK_NULL_HANDLE) {
      NNHAL_ASSIGN_OR_RETURN(p, context_->pipeline(d.shader));
    }
  }
  return std::unique_ptr<CompiledModel>(std::make_unique<VulkanCompiledModel>(
      std::move(model), std::move(plan), std::move(pipelines), context_));
}

Result<Compiled> VulkanBackend::compile(Model model, const CompileOptions& options) const {
  if (options.deadline && std::chrono::steady_clock::now() >= *options.deadline) {
    return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT, "the deadline passed before compiling");
  }
  Compiled compiled;
  NNHAL_ASSIGN_OR_RETURN(compiled.model, build(std::move(model)));
  if (options.cache != nullptr) {
    auto images = encodeCache(*compiled.model, *options.cache);
    if (images) {
      compiled.cache = std::move(*images);
    } else {
      compiled.cacheSkipped = images.error().message;
    }
  }
  return compiled;
}

Result<std::unique_ptr<CompiledModel>> VulkanBackend::compileFromCache(
    const CacheImages& images, const CacheSettings& settings) const {
  auto decoded = cache::decodeCache(images.model, images.modelDigest, images.data, settings.version,
                                    settings.options);
  if (!decoded) {
    return fail(decoded.error().status == ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT
                    ? ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT
                    : ErrorStatus::GENERAL_FAILURE,
                decoded.error().message);
  }
  if (auto valid = hal::validateModel(decoded->model); !valid) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "the cached model is invalid: " + valid.error().message);
  }
  auto built = build(std::move(decoded->model));
  if (!built) return fail(ErrorStatus::GENERAL_FAILURE, built.error().message);
  return built;
}

Result<cache::EncodedCache> VulkanBackend::encodeCache(const CompiledModel& model,
                                                       const CacheSettings& settings) const {
  // The plan is rebuilt from the model alone: no operation state to keep.
  const engine::PreparedStateStore none(engine::PreparedStateStore::Mode::kSave);
  return cache::encodeCache(model.model(), none, settings.version, settings.options);
}

}  // namespace nnhal::backend::vulkan

namespace nnhal::backend {

Result<VulkanBackendMade> createVulkanBackend(const VulkanOptions& options) {
  NNHAL_ASSIGN_OR_RETURN(
      std::shared_ptr<vulkan::Context> context,
      vulkan::Context::create(options.physicalDevice, options.validation, options.stateDirectory));
  const vulkan::PhysicalDeviceDescription& d = context->description();
  std::string uuid;
  for (uint8_t byte : d.pipelineCacheUuid) uuid += fmt::format("{:02x}", byte);
  // The device, its driver and the pipeline cache's identity: a cache made elsewhere misses.
  const std::string version =
      options.versionOverride.empty()
          ? fmt::format("{}+{} (vulkan: {} {:04x}:{:04x}, driver {:#x}, {})", kDriverVersion,
                        buildId(), d.name, d.vendorId, d.deviceId, d.driverVersion, uuid)
          : options.versionOverride;
  spdlog::info("nnhal-vulkan: {} ({})", d.name, d.kind);
  vulkan::MeasuredPerformance measured;
  if (!options.stateDirectory.empty()) {
    auto calibration = common::applicableCalibration(options.stateDirectory, version,
                                                     common::kVulkanCalibrationLevel);
    if (calibration) {
      measured.float32 = calibration->float32;
      // FLT_MAX: a calibration that ran no quantized workload.
      if (calibration->quantized.execTime < std::numeric_limits<float>::max()) {
        measured.quantized = calibration->quantized;
      }
    } else {
      spdlog::info("nnhal-vulkan capabilities: unmeasured ({})", calibration.error().message);
    }
  }
  VulkanDeviceInfo device{d.index, d.name, d.kind, d.usable, d.unusableReason};
  return VulkanBackendMade{
      std::make_shared<vulkan::VulkanBackend>(std::move(context), version, measured),
      std::move(device)};
}

Result<std::vector<VulkanDeviceInfo>> listVulkanDevices() {
  NNHAL_ASSIGN_OR_RETURN(const auto all, vulkan::vulkanDevices());
  std::vector<VulkanDeviceInfo> out;
  for (const auto& d : all) out.push_back({d.index, d.name, d.kind, d.usable, d.unusableReason});
  return out;
}

}  // namespace nnhal::backend
