// The public factory of the GPU device (nnhal/gpu_device.h): the Vulkan backend
// (backend/vulkan_factory.h) under the HAL plumbing of actors::createDriver.
#include <cstdlib>
#include <string_view>

#include "actors/device_factory.h"
#include "backend/vulkan_factory.h"
#include "nnhal/gpu_device.h"

namespace nnhal {

namespace {

backend::VulkanOptions backendOptions(const VulkanDeviceOptions& vulkan,
                                      const std::filesystem::path& stateDirectory = {}) {
  backend::VulkanOptions options;
  options.stateDirectory = stateDirectory;
  options.physicalDevice = vulkan.physicalDevice;
  options.validation = vulkan.validation;
  return options;
}

}  // namespace

VulkanDeviceOptions vulkanOptionsFromEnvironment() {
  VulkanDeviceOptions options;
  if (const char* device = std::getenv("NNHAL_VULKAN_DEVICE"); device != nullptr) {
    options.physicalDevice = device;
  }
  const char* validation = std::getenv("NNHAL_VULKAN_VALIDATION");
  options.validation = validation != nullptr && std::string_view(validation) == "1";
  return options;
}

Result<std::shared_ptr<Device>> createVulkanDevice(const DeviceOptions& options,
                                                   const VulkanDeviceOptions& vulkan) {
  NNHAL_ASSIGN_OR_RETURN(
      backend::VulkanBackendMade made,
      backend::createVulkanBackend(backendOptions(vulkan, options.stateDirectory)));
  NNHAL_ASSIGN_OR_RETURN(hal::EmbeddedDriver driver,
                         actors::createDriver(options, std::move(made.backend)));
  return std::move(driver.device);
}

VulkanDeviceStatus vulkanDeviceStatus(const VulkanDeviceOptions& vulkan) {
  auto made = backend::createVulkanBackend(backendOptions(vulkan));
  if (!made) return {false, "", "", made.error().message};
  return {true, made->device.name, made->device.kind, ""};
}

}  // namespace nnhal
