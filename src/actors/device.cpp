// The embedded driver factories: the public createDevice, createEmbeddedDriver for nnhald
// (hal/driver_control.h), both the CPU backend's device, and createDriver over any backend
// (actors/device_factory.h); kernelIsa and capabilitiesSource are the CPU backend's
// (backend/cpu_backend.cpp). The Device's blocking convenience methods are in hal/device.cpp.
#include "nnhal/device.h"

#include "actors/device_actor.h"
#include "actors/device_factory.h"
#include "backend/cpu_backend.h"
#include "common/vlog.h"
#include "hal/driver_control.h"

namespace nnhal {

Result<std::shared_ptr<Device>> createDevice(const DeviceOptions& options) {
  NNHAL_ASSIGN_OR_RETURN(hal::EmbeddedDriver driver, hal::createEmbeddedDriver(options));
  return std::move(driver.device);
}

namespace actors {

Result<std::shared_ptr<Runtime>> makeRuntime(const DeviceOptions& options) {
  try {
    return std::make_shared<Runtime>(runtimeOptions(options));
  } catch (const std::exception& e) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("cannot start the driver runtime: ") + e.what());
  }
}

Result<hal::EmbeddedDriver> createDriver(const DeviceOptions& options,
                                         std::shared_ptr<const backend::Backend> backend,
                                         std::shared_ptr<Runtime> runtime) {
  try {
    auto device = std::make_shared<DeviceActor>(options, std::move(backend), std::move(runtime));
    return hal::EmbeddedDriver{device, device};
  } catch (const std::exception& e) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("cannot start the driver runtime: ") + e.what());
  }
}

}  // namespace actors

namespace hal {

Result<EmbeddedDriver> createEmbeddedDriver(const DeviceOptions& options) {
  std::shared_ptr<const backend::Backend> cpu;
  try {
    cpu = std::make_shared<backend::CpuBackend>(options);
  } catch (const std::exception& e) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("cannot start the CPU engine: ") + e.what());
  }
  return actors::createDriver(options, std::move(cpu));
}

}  // namespace hal

}  // namespace nnhal
