// The GPU backend of a build without Vulkan (-DNNHAL_VULKAN=OFF): always refused.
#include "backend/vulkan_factory.h"

namespace nnhal::backend {

namespace {
constexpr const char* kOff = "nnhal was built without Vulkan (-DNNHAL_VULKAN=OFF)";
}

Result<VulkanBackendMade> createVulkanBackend(const VulkanOptions& /*options*/) {
  return fail(ErrorStatus::DEVICE_UNAVAILABLE, kOff);
}

Result<std::vector<VulkanDeviceInfo>> listVulkanDevices() {
  return fail(ErrorStatus::DEVICE_UNAVAILABLE, kOff);
}

}  // namespace nnhal::backend
