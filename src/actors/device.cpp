// The embedded driver factory of the public Device interface (its blocking convenience
// methods are in hal/device.cpp).
#include "nnhal/device.h"

#include <spdlog/spdlog.h>

#include "actors/device_actor.h"
#include "kernels/isa.h"

namespace nnhal {

KernelIsa kernelIsa() {
  const kernels::IsaSelection& s = kernels::isaSelection();
  return {std::string(kernels::toString(s.active)), std::string(kernels::toString(s.supported)),
          s.note};
}

Result<std::shared_ptr<Device>> createDevice(const DeviceOptions& options) {
  if (const std::string& note = kernels::isaSelection().note; !note.empty()) {
    spdlog::warn("kernels: {}", note);
  }
  try {
    return std::shared_ptr<Device>(std::make_shared<actors::DeviceActor>(options));
  } catch (const std::exception& e) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("cannot start the driver runtime: ") + e.what());
  }
}

}  // namespace nnhal
