// The embedded driver factory of the public Device interface (its blocking convenience
// methods are in hal/device.cpp).
#include "nnhal/device.h"

#include "actors/device_actor.h"

namespace nnhal {

Result<std::shared_ptr<Device>> createDevice(const DeviceOptions& options) {
  try {
    return std::shared_ptr<Device>(std::make_shared<actors::DeviceActor>(options));
  } catch (const std::exception& e) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("cannot start the driver runtime: ") + e.what());
  }
}

}  // namespace nnhal
