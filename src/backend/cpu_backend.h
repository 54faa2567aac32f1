// backend/cpu_backend.h — the CPU engine (engine/, kernels/) as a Backend: the device
// "nnhal-cpu", DeviceType CPU.
//
// compile() is engine::compile; the compiled model is an engine::ExecutionPlan, run by
// engine::execute with kernels fanned out over the backend's TBB arena (engine::Parallel,
// DeviceOptions::kernelThreads). Its ExecutionMemory is an arena pool (charged to the
// runtime's ArenaBudget) and a staging pool. Its cache images are the format of
// docs/CACHE_FORMAT.md: the model's structure, the constants still needed and the
// operations' precomputed state (packed weights). Capabilities are the calibration of the
// state directory when one matches this build and instruction-set level
// (common/calibration.h), else the documented defaults.
//
// Thread safety: as Backend.
#pragma once

#include <memory>
#include <string>

#include "backend/backend.h"
#include "engine/parallel.h"
#include "nnhal/device.h"

namespace nnhal::backend {

/// The version string a CPU device created with `options` reports (getVersionString):
/// options.versionOverride, else "nnhal-x.y.z+<build id>".
std::string cpuDriverVersion(const DeviceOptions& options);

class CpuBackend final : public Backend {
 public:
  /// Uses options.kernelThreads, stateDirectory (calibration) and versionOverride.
  explicit CpuBackend(const DeviceOptions& options);

  std::string name() const override { return "nnhal-cpu"; }
  std::string version() const override { return version_; }
  DeviceType type() const override { return DeviceType::CPU; }
  Capabilities capabilities() const override { return capabilities_; }
  std::vector<Extension> supportedExtensions() const override;
  Result<void> checkModel(const Model& model) const override;
  Result<std::vector<std::string>> explainSupport(const Model& model) const override;
  Result<Compiled> compile(Model model, const CompileOptions& options) const override;
  Result<std::unique_ptr<CompiledModel>> compileFromCache(
      const CacheImages& images, const CacheSettings& settings) const override;
  Result<cache::EncodedCache> encodeCache(const CompiledModel& model,
                                          const CacheSettings& settings) const override;

 private:
  std::string version_;
  Capabilities capabilities_;
  /// Shared with every compiled model, which may outlive the backend's device.
  std::shared_ptr<const engine::Parallel> parallel_;
};

}  // namespace nnhal::backend
