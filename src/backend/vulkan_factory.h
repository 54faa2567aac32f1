// backend/vulkan_factory.h — the GPU backend nnhal-vulkan (backend/vulkan/vulkan_backend.h),
// as the layers above see it: made here, or refused with the reason when this build has no
// Vulkan (-DNNHAL_VULKAN=OFF: backend/vulkan_off/ is compiled instead) or this machine no
// usable Vulkan device.
//
// Thread safety: the functions may be called from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"

namespace nnhal::backend {

struct VulkanOptions {
  /// Which physical device: an index into listVulkanDevices() or part of a device's name;
  /// empty: the first discrete GPU, else integrated, else any other (NNHAL_VULKAN_DEVICE).
  std::string physicalDevice;
  /// Enable the Khronos validation layer and count its errors (NNHAL_VULKAN_VALIDATION=1).
  bool validation = false;
  /// getVersionString instead of the one naming the build, device and driver (tests).
  std::string versionOverride;
  /// The device's state directory (DeviceOptions::stateDirectory), where `nnhal calibrate
  /// --device nnhal-vulkan` keeps its measured capabilities and the device keeps its compiled
  /// shaders (vulkan/vulkan_pipeline_cache.h).
  std::filesystem::path stateDirectory;
};

/// One physical device of the installed Vulkan drivers.
struct VulkanDeviceInfo {
  uint32_t index = 0;
  std::string name;
  std::string kind;  ///< "discrete GPU", "integrated GPU", "virtual GPU", "CPU-emulated", "other"
  bool usable = false;
  std::string unusableReason;
};

/// The backend and the physical device it runs on.
struct VulkanBackendMade {
  std::shared_ptr<const Backend> backend;
  VulkanDeviceInfo device;
};

/// The backend on the device `options` chooses. Errors: DEVICE_UNAVAILABLE with the reason
/// (no Vulkan in this build, no driver, no usable device, no device matching the choice).
Result<VulkanBackendMade> createVulkanBackend(const VulkanOptions& options);

/// The Vulkan devices of this machine. Errors: DEVICE_UNAVAILABLE, as above.
Result<std::vector<VulkanDeviceInfo>> listVulkanDevices();

}  // namespace nnhal::backend
