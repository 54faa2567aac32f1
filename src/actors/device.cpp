// The embedded driver factories: the public createDevice, and createEmbeddedDriver for
// nnhald (hal/driver_control.h). The Device's blocking convenience methods are in
// hal/device.cpp.
#include "nnhal/device.h"

#include <spdlog/spdlog.h>

#include "actors/device_actor.h"
#include "hal/calibration.h"
#include "hal/driver_control.h"
#include "hal/vlog.h"
#include "kernels/isa.h"

namespace nnhal {

KernelIsa kernelIsa() {
  const kernels::IsaSelection& s = kernels::isaSelection();
  return {std::string(kernels::toString(s.active)), std::string(kernels::toString(s.supported)),
          s.note};
}

CapabilitiesSource capabilitiesSource(const DeviceOptions& options) {
  const std::string isa(kernels::toString(kernels::activeIsa()));
  auto calibration =
      hal::applicableCalibration(options.stateDirectory, actors::driverVersion(options), isa);
  if (!calibration) return {false, calibration.error().message};
  return {true, "measured by nnhal calibrate at " + calibration->measuredAt +
                    " (kernels: " + calibration->isa + ")"};
}

Result<std::shared_ptr<Device>> createDevice(const DeviceOptions& options) {
  NNHAL_ASSIGN_OR_RETURN(hal::EmbeddedDriver driver, hal::createEmbeddedDriver(options));
  return std::move(driver.device);
}

namespace hal {

Result<EmbeddedDriver> createEmbeddedDriver(const DeviceOptions& options) {
  if (const std::string& note = kernels::isaSelection().note; !note.empty()) {
    spdlog::warn("kernels: {}", note);
  }
  NNHAL_VLOG(Manager,
             "creating the embedded driver: kernels {}, {} kernel threads, state directory '{}'",
             kernels::toString(kernels::activeIsa()), options.kernelThreads,
             options.stateDirectory.string());
  try {
    auto device = std::make_shared<actors::DeviceActor>(options);
    return EmbeddedDriver{device, device};
  } catch (const std::exception& e) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("cannot start the driver runtime: ") + e.what());
  }
}

}  // namespace hal

}  // namespace nnhal
