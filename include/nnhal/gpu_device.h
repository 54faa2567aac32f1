// nnhal/gpu_device.h — nnhal's GPU device, "nnhal-vulkan" (DeviceType GPU): models run as
// Vulkan compute shaders on a GPU, behind the same HAL plumbing as the CPU device
// (preparation, compilation caching, executions of every path, bursts, memory domains,
// priorities and fair share).
//
// What it runs (getSupportedOperations says it per operation, with the reason for each
// refusal; docs/GPU.md lists them): TENSOR_FLOAT32 and TENSOR_FLOAT16 models (float16 held
// and computed in float32) of rank <= 4 whose inputs have every dimension given (other
// shapes may be left open: they are found at preparation), NHWC or NCHW, in the elementwise
// arithmetic and activations, the convolutions (plain, depthwise, grouped), pooling,
// resizing, the operations along an axis (SOFTMAX, normalizations), the reductions,
// FULLY_CONNECTED and the data movements (RESHAPE, SQUEEZE, EXPAND_DIMS, CONCATENATION, PAD,
// TRANSPOSE, SLICE, STRIDED_SLICE, CHANNEL_SHUFFLE), with DEQUANTIZE and QUANTIZE at 8-bit
// boundaries; and TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED models (filters also per
// channel) in the convolutions, FULLY_CONNECTED, ADD, MUL, average and max pooling, SOFTMAX
// and the reshapes, with the CPU device's results to the bit.
// Preparing a model with any other operation fails with INVALID_ARGUMENT naming it.
//
// Which GPU: VulkanDeviceOptions::physicalDevice (an index from `nnhal info` or part of a
// device's name); empty: the first discrete GPU, else integrated, else any other device,
// such as Mesa's CPU emulation lavapipe (which nnhal info calls CPU-emulated).
//
// Thread safety: as nnhal/device.h.
#pragma once

#include <memory>
#include <string>

#include "nnhal/device.h"
#include "nnhal/status.h"

namespace nnhal {

struct VulkanDeviceOptions {
  /// The physical device (see above); empty: the preferred one.
  std::string physicalDevice;
  /// Enables the Khronos validation layer (vulkan-validationlayers), which logs what it
  /// finds; the tests require none.
  bool validation = false;
};

/// VulkanDeviceOptions from the environment: NNHAL_VULKAN_DEVICE (physicalDevice) and
/// NNHAL_VULKAN_VALIDATION=1.
VulkanDeviceOptions vulkanOptionsFromEnvironment();

/// Creates the embedded GPU driver with the plumbing's `options` (its own state directory
/// keeps its cache entries apart from the CPU device's). Errors: DEVICE_UNAVAILABLE with the
/// reason when this build has no Vulkan (-DNNHAL_VULKAN=OFF), no Vulkan driver is installed
/// or no usable device matches; GENERAL_FAILURE when the runtime cannot start.
Result<std::shared_ptr<Device>> createVulkanDevice(const DeviceOptions& options,
                                                   const VulkanDeviceOptions& vulkan = {});

/// The Vulkan device createVulkanDevice would use, for `nnhal info`.
struct VulkanDeviceStatus {
  bool available = false;
  std::string name;    ///< the physical device's name ("llvmpipe (LLVM 15.0.6, 256 bits)")
  std::string kind;    ///< "discrete GPU", "integrated GPU", "virtual GPU", "CPU-emulated"
  std::string reason;  ///< why none is available
};
VulkanDeviceStatus vulkanDeviceStatus(const VulkanDeviceOptions& vulkan = {});

}  // namespace nnhal
