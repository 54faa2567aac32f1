// backend/vulkan/vulkan_backend.h — the GPU device "nnhal-vulkan" (DeviceType GPU): a
// Backend that runs models as Vulkan compute dispatches (vulkan_plan.h) on one device
// (vulkan_context.h), served by the same HAL plumbing as the CPU device.
//
// compile() builds the plan and makes the pipelines it needs; a compiled model records one
// command buffer per execution slot (an execution buffer, its descriptor set, its fence), so
// an execution copies the request's inputs into the slot's buffer, resubmits the recorded
// commands, waits for the fence and copies the outputs back. Concurrent executions of one
// model use separate slots. The cache images are the cache format of docs/CACHE_FORMAT.md
// holding the model only; a cache load rebuilds the plan from it. The version string names
// the Vulkan device, its driver version and pipeline-cache UUID, so a cache made on another
// GPU or driver is never loaded.
//
// Capabilities: the ratios `nnhal calibrate --device nnhal-vulkan` measured for this device
// and driver (common/calibration.h): the float workload's for the float types, INT32 and BOOL,
// the quantized workloads' for the 8-bit types and TENSOR_INT32; a kind not measured reports
// 10 (ten times the CPU reference path). The types it never runs report the HAL's "not
// supported" maximum: nothing better than what was measured is claimed.
//
// Thread safety: as Backend.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "backend/backend.h"
#include "backend/vulkan/vulkan_context.h"

namespace nnhal::backend::vulkan {

/// What an applicable calibration measured of this device, by kind of workload.
struct MeasuredPerformance {
  std::optional<PerformanceInfo> float32;
  std::optional<PerformanceInfo> quantized;
};

class VulkanBackend final : public Backend {
 public:
  VulkanBackend(std::shared_ptr<Context> context, std::string version,
                MeasuredPerformance measured);

  std::string name() const override { return "nnhal-vulkan"; }
  std::string version() const override { return version_; }
  DeviceType type() const override { return DeviceType::GPU; }
  Capabilities capabilities() const override;
  std::vector<Extension> supportedExtensions() const override { return {}; }
  Result<void> checkModel(const Model& model) const override;
  Result<std::vector<std::string>> explainSupport(const Model& model) const override;
  Result<Compiled> compile(Model model, const CompileOptions& options) const override;
  Result<std::unique_ptr<CompiledModel>> compileFromCache(
      const CacheImages& images, const CacheSettings& settings) const override;
  Result<cache::EncodedCache> encodeCache(const CompiledModel& model,
                                          const CacheSettings& settings) const override;

  const Context& context() const { return *context_; }

 private:
  Result<std::unique_ptr<CompiledModel>> build(Model model) const;

  std::shared_ptr<Context> context_;
  std::string version_;
  MeasuredPerformance measured_;
};

}  // namespace nnhal::backend::vulkan
