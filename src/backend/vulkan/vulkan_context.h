// backend/vulkan/vulkan_context.h — one Vulkan device opened for compute: the instance, the
// physical device chosen, the logical device with one compute queue, the compute pipelines
// (made on first use, one per shader of vulkan_plan.h) and the host-visible memory type
// execution buffers use.
//
// Choosing the device: `choice` (DeviceOptions / NNHAL_VULKAN_DEVICE) is an index into the
// list vulkanDevices() returns or a substring of a device's name; empty picks the first
// discrete GPU, else the first integrated one, else any other (a virtual GPU, or a CPU
// emulation such as Mesa's lavapipe, which `nnhal info` calls a CPU-emulated Vulkan device).
//
// Validation: with `validation` the Khronos validation layer is enabled when installed and
// every message of severity error is logged and counted (validationErrors); tests and CI
// run the whole GPU suite that way and require 0.
//
// Thread safety: every method may be called from any thread (the queue and the pipeline
// list are guarded by their own mutexes).
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend/vulkan/vulkan_plan.h"
#include "nnhal/status.h"

namespace nnhal::backend::vulkan {

/// One physical device as `nnhal info` lists it.
struct PhysicalDeviceDescription {
  uint32_t index = 0;
  std::string name;
  std::string kind;  ///< "discrete GPU", "integrated GPU", "virtual GPU", "CPU-emulated", "other"
  uint32_t vendorId = 0;
  uint32_t deviceId = 0;
  uint32_t driverVersion = 0;
  std::array<uint8_t, VK_UUID_SIZE> pipelineCacheUuid{};
  bool usable = false;  ///< has a compute queue and the limits nnhal-vulkan needs
  std::string unusableReason;
};

/// The physical devices of the installed Vulkan drivers. Errors: DEVICE_UNAVAILABLE when no
/// Vulkan loader or driver is present (the message says which).
Result<std::vector<PhysicalDeviceDescription>> vulkanDevices();

class Context {
 public:
  /// Opens the device `choice` names (see above). With a `stateDirectory`, compiled shaders
  /// are kept in its pipeline cache file (vulkan_pipeline_cache.h) and taken from it. Errors:
  /// DEVICE_UNAVAILABLE when there is no usable device or `choice` names none (the message
  /// lists them).
  static Result<std::shared_ptr<Context>> create(const std::string& choice, bool validation,
                                                 const std::filesystem::path& stateDirectory = {});
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const PhysicalDeviceDescription& description() const { return description_; }
  VkDevice device() const { return device_; }
  uint32_t queueFamily() const { return queueFamily_; }
  /// Nanoseconds per timestamp tick of the compute queue; 0 when it writes no timestamps.
  double timestampPeriod() const { return timestampPeriod_; }
  /// The bits of a timestamp that count (the others are garbage); 0 with no timestamps.
  uint32_t timestampBits() const { return timestampBits_; }
  /// Host-visible, host-coherent memory (device-local too where the device has such a type).
  uint32_t bufferMemoryType() const { return memoryType_; }
  VkDescriptorSetLayout setLayout() const { return setLayout_; }
  VkPipelineLayout pipelineLayout() const { return pipelineLayout_; }
  /// The pipeline of `shader`, made the first time it is asked for. Errors: GENERAL_FAILURE
  /// when the driver cannot make it.
  Result<VkPipeline> pipeline(Shader shader);
  /// Submits one command buffer; `fence` signals when it is done. Errors: DEVICE_UNAVAILABLE
  /// when the device was lost, RESOURCE_EXHAUSTED_TRANSIENT when out of memory.
  Result<void> submit(VkCommandBuffer commands, VkFence fence);
  /// Bytes of pipeline cache taken from the state directory at creation (0: none that fit).
  size_t pipelineCacheLoaded() const { return pipelineCacheLoaded_; }
  /// Error-severity messages the validation layer reported so far (0 without validation).
  uint64_t validationErrors() const { return validationErrors_.load(); }

 private:
  Context() = default;
  static VKAPI_ATTR VkBool32 VKAPI_CALL onMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                  VkDebugUtilsMessageTypeFlagsEXT types,
                                                  const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                  void* self);

  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queueFamily_ = 0;
  double timestampPeriod_ = 0;
  uint32_t timestampBits_ = 0;
  uint32_t memoryType_ = 0;
  VkDescriptorSetLayout setLayout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipelineLayout_ = VK_NULL_HANDLE;
  PhysicalDeviceDescription description_;
  std::mutex queueMutex_;
  std::mutex pipelineMutex_;
  VkPipelineCache pipelineCache_ = VK_NULL_HANDLE;
  std::filesystem::path pipelineCacheFile_;  ///< empty: not kept on disk
  size_t pipelineCacheLoaded_ = 0;
  std::array<VkPipeline, kShaderCount> pipelines_{};
  std::atomic<uint64_t> validationErrors_{0};
};

/// Error text of a VkResult ("VK_ERROR_OUT_OF_DEVICE_MEMORY").
std::string resultName(VkResult result);

}  // namespace nnhal::backend::vulkan
