#include "backend/vulkan/vulkan_context.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <utility>

#include "backend/vulkan/vulkan_pipeline_cache.h"
#include "common/enum_names.h"

namespace nnhal::backend::vulkan {
namespace {

/// Vulkan's two-call enumeration: get(&count, nullptr) for the count, then get(&count, items)
/// for at most that many items (fewer when the set shrank in between).
template <typename T, typename Get>
std::vector<T> enumerated(Get&& get) {
  uint32_t count = 0;
  get(&count, nullptr);
  std::vector<T> items(count);
  get(&count, items.data());
  items.resize(count);
  return items;
}

// SPIR-V of shaders/*.comp, compiled by glslc at build time (CMakeLists.txt).
constexpr uint32_t kBinarySpirv[] = {
#include "binary.spv.inc"
};
constexpr uint32_t kUnarySpirv[] = {
#include "unary.spv.inc"
};
constexpr uint32_t kConv2dSpirv[] = {
#include "conv2d.spv.inc"
};
constexpr uint32_t kPoolSpirv[] = {
#include "pool.spv.inc"
};
constexpr uint32_t kSoftmaxSpirv[] = {
#include "softmax.spv.inc"
};
constexpr uint32_t kFullyConnectedSpirv[] = {
#include "fully_connected.spv.inc"
};
constexpr uint32_t kConcatSpirv[] = {
#include "concat.spv.inc"
};
constexpr uint32_t kGatherSpirv[] = {
#include "gather.spv.inc"
};
constexpr uint32_t kMeanSpirv[] = {
#include "mean.spv.inc"
};
constexpr uint32_t kResizeSpirv[] = {
#include "resize.spv.inc"
};
constexpr uint32_t kQuantizeSpirv[] = {
#include "quantize.spv.inc"
};
constexpr uint32_t kTransposeConvSpirv[] = {
#include "transpose_conv.spv.inc"
};
constexpr uint32_t kConvQuantSpirv[] = {
#include "conv2d_quant.spv.inc"
};
constexpr uint32_t kTransposeConvQuantSpirv[] = {
#include "transpose_conv_quant.spv.inc"
};
constexpr uint32_t kSelectSpirv[] = {
#include "select.spv.inc"
};
constexpr uint32_t kGatherAxisSpirv[] = {
#include "gather_axis.spv.inc"
};

/// Indexed by Shader (vulkan_plan.h), in its order.
constexpr std::array<std::span<const uint32_t>, kShaderCount> kSpirv{
    kBinarySpirv,    kUnarySpirv,
    kConv2dSpirv,    kPoolSpirv,
    kSoftmaxSpirv,   kFullyConnectedSpirv,
    kConcatSpirv,    kGatherSpirv,
    kMeanSpirv,      kResizeSpirv,
    kQuantizeSpirv,  kTransposeConvSpirv,
    kConvQuantSpirv, kTransposeConvQuantSpirv,
    kSelectSpirv,    kGatherAxisSpirv};

std::span<const uint32_t> spirvOf(Shader shader) { return kSpirv[static_cast<size_t>(shader)]; }

constexpr common::EnumNames<VkResult, 12> kResultNames{{
    {VK_SUCCESS, "VK_SUCCESS"},
    {VK_NOT_READY, "VK_NOT_READY"},
    {VK_TIMEOUT, "VK_TIMEOUT"},
    {VK_INCOMPLETE, "VK_INCOMPLETE"},
    {VK_ERROR_OUT_OF_HOST_MEMORY, "VK_ERROR_OUT_OF_HOST_MEMORY"},
    {VK_ERROR_OUT_OF_DEVICE_MEMORY, "VK_ERROR_OUT_OF_DEVICE_MEMORY"},
    {VK_ERROR_INITIALIZATION_FAILED, "VK_ERROR_INITIALIZATION_FAILED"},
    {VK_ERROR_DEVICE_LOST, "VK_ERROR_DEVICE_LOST"},
    {VK_ERROR_MEMORY_MAP_FAILED, "VK_ERROR_MEMORY_MAP_FAILED"},
    {VK_ERROR_LAYER_NOT_PRESENT, "VK_ERROR_LAYER_NOT_PRESENT"},
    {VK_ERROR_EXTENSION_NOT_PRESENT, "VK_ERROR_EXTENSION_NOT_PRESENT"},
    {VK_ERROR_INCOMPATIBLE_DRIVER, "VK_ERROR_INCOMPATIBLE_DRIVER"},
}};

std::string kindOf(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "CPU-emulated";
    default:
      return "other";
  }
}

/// Lower is preferred: discrete, integrated, virtual, then the rest.
int preference(const std::string& kind) {
  if (kind == "discrete GPU") return 0;
  if (kind == "integrated GPU") return 1;
  if (kind == "virtual GPU") return 2;
  return 3;
}

/// The instance, with the validation layer and its messenger extension when asked and
/// installed. Owns nothing on failure.
Result<VkInstance> createInstance(bool validation, bool& validationEnabled) {
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "nnhal";
  app.pEngineName = "nnhal-vulkan";
  app.apiVersion = VK_API_VERSION_1_1;
  std::vector<const char*> layers;
  std::vector<const char*> extensions;
  validationEnabled = false;
  if (validation) {
    const auto available =
        enumerated<VkLayerProperties>([](uint32_t* count, VkLayerProperties* items) {
          return vkEnumerateInstanceLayerProperties(count, items);
        });
    const bool present = std::any_of(available.begin(), available.end(), [](const auto& l) {
      return std::strcmp(l.layerName, "VK_LAYER_KHRONOS_validation") == 0;
    });
    if (present) {
      layers.push_back("VK_LAYER_KHRONOS_validation");
      extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
      validationEnabled = true;
    } else {
      spdlog::warn(
          "nnhal-vulkan: validation asked for, but VK_LAYER_KHRONOS_validation is not "
          "installed (vulkan-validationlayers)");
    }
  }
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<uint32_t>(layers.size());
  info.ppEnabledLayerNames = layers.data();
  info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
  info.ppEnabledExtensionNames = extensions.data();
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult result = vkCreateInstance(&info, nullptr, &instance);
  if (result != VK_SUCCESS) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                "no Vulkan driver: vkCreateInstance failed with " + resultName(result));
  }
  return instance;
}

std::vector<VkQueueFamilyProperties> queueFamilies(VkPhysicalDevice device) {
  return enumerated<VkQueueFamilyProperties>(
      [device](uint32_t* count, VkQueueFamilyProperties* items) {
        vkGetPhysicalDeviceQueueFamilyProperties(device, count, items);
      });
}

/// A compute-capable queue family, or nullopt.
std::optional<uint32_t> computeFamily(VkPhysicalDevice device) {
  const std::vector<VkQueueFamilyProperties> families = queueFamilies(device);
  for (uint32_t k = 0; k < families.size(); ++k) {
    if ((families[k].queueFlags & VK_QUEUE_COMPUTE_BIT) != 0) return k;
  }
  return std::nullopt;
}

PhysicalDeviceDescription describe(VkPhysicalDevice device, uint32_t index) {
  VkPhysicalDeviceProperties properties{};
  vkGetPhysicalDeviceProperties(device, &properties);
  PhysicalDeviceDescription d;
  d.index = index;
  d.name = properties.deviceName;
  d.kind = kindOf(properties.deviceType);
  d.vendorId = properties.vendorID;
  d.deviceId = properties.deviceID;
  d.driverVersion = properties.driverVersion;
  std::copy(std::begin(properties.pipelineCacheUUID), std::end(properties.pipelineCacheUUID),
            d.pipelineCacheUuid.begin());
  const VkPhysicalDeviceLimits& limits = properties.limits;
  if (!computeFamily(device)) {
    d.unusableReason = "no compute queue";
  } else if (limits.maxPushConstantsSize < kMaxPushWords * sizeof(uint32_t)) {
    d.unusableReason = "push constants below 128 bytes";
  } else if (limits.maxComputeWorkGroupCount[0] < kMaxWorkgroupsX ||
             limits.maxComputeWorkGroupCount[1] < kMaxWorkgroupsX) {
    d.unusableReason = "fewer than 65,535 workgroups per dimension";
  } else {
    d.usable = true;
  }
  return d;
}

std::vector<VkPhysicalDevice> physicalDevices(VkInstance instance) {
  return enumerated<VkPhysicalDevice>([instance](uint32_t* count, VkPhysicalDevice* items) {
    return vkEnumeratePhysicalDevices(instance, count, items);
  });
}

/// The device `choice` names among `all` (see vulkan_context.h), or an error listing them.
Result<size_t> choose(const std::vector<PhysicalDeviceDescription>& all,
                      const std::string& choice) {
  std::string listed;
  for (const auto& d : all) {
    listed += (listed.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name + " (" +
              d.kind + (d.usable ? "" : ", unusable: " + d.unusableReason) + ")";
  }
  if (listed.empty()) listed = "none";
  if (!choice.empty()) {
    const bool numeric = std::all_of(choice.begin(), choice.end(), ::isdigit);
    for (size_t k = 0; k < all.size(); ++k) {
      const bool named = numeric ? std::to_string(all[k].index) == choice
                                 : all[k].name.find(choice) != std::string::npos;
      if (!named) continue;
      if (!all[k].usable) {
        return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                    "Vulkan device '" + choice + "' is unusable: " + all[k].unusableReason);
      }
      return k;
    }
    return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                "no Vulkan device matches '" + choice + "' (devices: " + listed + ")");
  }
  std::optional<size_t> best;
  for (size_t k = 0; k < all.size(); ++k) {
    if (all[k].usable && (!best || preference(all[k].kind) < preference(all[*best].kind))) best = k;
  }
  if (!best)
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "no usable Vulkan device (" + listed + ")");
  return *best;
}

/// A memory type for execution buffers: host-visible and coherent, device-local if possible.
std::optional<uint32_t> hostMemoryType(VkPhysicalDevice device) {
  VkPhysicalDeviceMemoryProperties memory{};
  vkGetPhysicalDeviceMemoryProperties(device, &memory);
  constexpr VkMemoryPropertyFlags kHost =
      VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  std::optional<uint32_t> found;
  for (uint32_t k = 0; k < memory.memoryTypeCount; ++k) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[k].propertyFlags;
    if ((flags & kHost) != kHost) continue;
    if ((flags & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) != 0) return k;
    if (!found) found = k;
  }
  return found;
}

}  // namespace

std::string resultName(VkResult result) {
  const std::string_view name = common::nameOf(kResultNames, result, "");
  return name.empty() ? "VkResult(" + std::to_string(static_cast<int>(result)) + ")"
                      : std::string(name);
}

Result<std::vector<PhysicalDeviceDescription>> vulkanDevices() {
  bool validationEnabled = false;
  NNHAL_ASSIGN_OR_RETURN(VkInstance instance, createInstance(false, validationEnabled));
  std::vector<PhysicalDeviceDescription> all;
  const auto devices = physicalDevices(instance);
  for (uint32_t k = 0; k < devices.size(); ++k) all.push_back(describe(devices[k], k));
  vkDestroyInstance(instance, nullptr);
  return all;
}

VKAPI_ATTR VkBool32 VKAPI_CALL Context::onMessage(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                  VkDebugUtilsMessageTypeFlagsEXT /*types*/,
                                                  const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                  void* self) {
  if ((severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0) {
    static_cast<Context*>(self)->validationErrors_.fetch_add(1);
    spdlog::error("nnhal-vulkan validation: {}", data->pMessage);
  } else if ((severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT) != 0) {
    spdlog::warn("nnhal-vulkan validation: {}", data->pMessage);
  }
  return VK_FALSE;
}

Result<std::shared_ptr<Context>> Context::create(const std::string& choice, bool validation,
                                                 const std::filesystem::path& stateDirectory) {
  std::shared_ptr<Context> c(new Context());
  bool validationEnabled = false;
  NNHAL_ASSIGN_OR_RETURN(c->instance_, createInstance(validation, validationEnabled));
  if (validationEnabled) {
    VkDebugUtilsMessengerCreateInfoEXT info{};
    info.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
    info.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT |
                           VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
    info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
    info.pfnUserCallback = &Context::onMessage;
    info.pUserData = c.get();
    const auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(c->instance_, "vkCreateDebugUtilsMessengerEXT"));
    if (create != nullptr) create(c->instance_, &info, nullptr, &c->messenger_);
    spdlog::info("nnhal-vulkan: the Khronos validation layer is on");
  }
  const auto devices = physicalDevices(c->instance_);
  std::vector<PhysicalDeviceDescription> all;
  for (uint32_t k = 0; k < devices.size(); ++k) all.push_back(describe(devices[k], k));
  NNHAL_ASSIGN_OR_RETURN(const size_t chosen, choose(all, choice));
  c->physical_ = devices[chosen];
  c->description_ = all[chosen];
  c->queueFamily_ = *computeFamily(c->physical_);
  {
    VkPhysicalDeviceProperties properties{};
    vkGetPhysicalDeviceProperties(c->physical_, &properties);
    c->timestampBits_ = queueFamilies(c->physical_)[c->queueFamily_].timestampValidBits;
    c->timestampPeriod_ = c->timestampBits_ == 0 ? 0.0 : properties.limits.timestampPeriod;
  }
  const auto memoryType = hostMemoryType(c->physical_);
  if (!memoryType) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                "Vulkan device '" + c->description_.name + "' has no host-visible memory");
  }
  c->memoryType_ = *memoryType;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo queue{};
  queue.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  queue.queueFamilyIndex = c->queueFamily_;
  queue.queueCount = 1;
  queue.pQueuePriorities = &priority;
  VkDeviceCreateInfo deviceInfo{};
  deviceInfo.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  deviceInfo.queueCreateInfoCount = 1;
  deviceInfo.pQueueCreateInfos = &queue;
  if (VkResult r = vkCreateDevice(c->physical_, &deviceInfo, nullptr, &c->device_);
      r != VK_SUCCESS) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                "vkCreateDevice on '" + c->description_.name + "' failed: " + resultName(r));
  }
  vkGetDeviceQueue(c->device_, c->queueFamily_, 0, &c->queue_);

  VkDescriptorSetLayoutBinding binding{};
  binding.binding = 0;
  binding.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
  binding.descriptorCount = 1;
  binding.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  VkDescriptorSetLayoutCreateInfo setInfo{};
  setInfo.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  setInfo.bindingCount = 1;
  setInfo.pBindings = &binding;
  VkPushConstantRange push{};
  push.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  push.size = kMaxPushWords * sizeof(uint32_t);
  VkPipelineLayoutCreateInfo layoutInfo{};
  layoutInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  layoutInfo.setLayoutCount = 1;
  layoutInfo.pushConstantRangeCount = 1;
  layoutInfo.pPushConstantRanges = &push;
  if (vkCreateDescriptorSetLayout(c->device_, &setInfo, nullptr, &c->setLayout_) != VK_SUCCESS) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "vkCreateDescriptorSetLayout failed");
  }
  layoutInfo.pSetLayouts = &c->setLayout_;
  if (vkCreatePipelineLayout(c->device_, &layoutInfo, nullptr, &c->pipelineLayout_) != VK_SUCCESS) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "vkCreatePipelineLayout failed");
  }
  std::vector<uint8_t> kept;
  if (!stateDirectory.empty()) {
    c->pipelineCacheFile_ = stateDirectory / kPipelineCacheFileName;
    kept = loadPipelineCache(c->pipelineCacheFile_, c->description_);
  }
  VkPipelineCacheCreateInfo cacheInfo{};
  cacheInfo.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
  cacheInfo.initialDataSize = kept.size();
  cacheInfo.pInitialData = kept.empty() ? nullptr : kept.data();
  if (vkCreatePipelineCache(c->device_, &cacheInfo, nullptr, &c->pipelineCache_) != VK_SUCCESS) {
    c->pipelineCache_ = VK_NULL_HANDLE;  // pipelines are then compiled every time
  } else {
    c->pipelineCacheLoaded_ = kept.size();
  }
  return c;
}

Context::~Context() {
  if (device_ != VK_NULL_HANDLE) {
    vkDeviceWaitIdle(device_);
    for (VkPipeline p : pipelines_) {
      if (p != VK_NULL_HANDLE) vkDestroyPipeline(device_, p, nullptr);
    }
    if (pipelineCache_ != VK_NULL_HANDLE) vkDestroyPipelineCache(device_, pipelineCache_, nullptr);
    if (pipelineLayout_ != VK_NULL_HANDLE)
      vkDestroyPipelineLayout(device_, pipelineLayout_, nullptr);
    if (setLayout_ != VK_NULL_HANDLE) vkDestroyDescriptorSetLayout(device_, setLayout_, nullptr);
    vkDestroyDevice(device_, nullptr);
  }
  if (messenger_ != VK_NULL_HANDLE) {
    const auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy != nullptr) destroy(instance_, messenger_, nullptr);
  }
  if (instance_ != VK_NULL_HANDLE) vkDestroyInstance(instance_, nullptr);
}

Result<VkPipeline> Context::pipeline(Shader shader) {
  std::lock_guard lock(pipelineMutex_);
  VkPipeline& slot = pipelines_[static_cast<size_t>(shader)];
  if (slot != VK_NULL_HANDLE) return slot;
  const std::span<const uint32_t> code = spirvOf(shader);
  VkShaderModuleCreateInfo moduleInfo{};
  moduleInfo.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
  moduleInfo.codeSize = code.size_bytes();
  moduleInfo.pCode = code.data();
  VkShaderModule module = VK_NULL_HANDLE;
  if (VkResult r = vkCreateShaderModule(device_, &moduleInfo, nullptr, &module); r != VK_SUCCESS) {
    return fail(ErrorStatus::GENERAL_FAILURE, "vkCreateShaderModule failed: " + resultName(r));
  }
  VkComputePipelineCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  info.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.layout = pipelineLayout_;
  const VkResult r = vkCreateComputePipelines(device_, pipelineCache_, 1, &info, nullptr, &slot);
  vkDestroyShaderModule(device_, module, nullptr);
  if (r != VK_SUCCESS) {
    slot = VK_NULL_HANDLE;
    return fail(ErrorStatus::GENERAL_FAILURE, "vkCreateComputePipelines failed: " + resultName(r));
  }
  if (pipelineCache_ != VK_NULL_HANDLE && !pipelineCacheFile_.empty()) {
    // The new pipeline joins the cache on disk (at most once per shader and process).
    size_t size = 0;
    if (vkGetPipelineCacheData(device_, pipelineCache_, &size, nullptr) == VK_SUCCESS &&
        size <= kMaxPipelineCacheBytes) {
      std::vector<uint8_t> blob(size);
      if (vkGetPipelineCacheData(device_, pipelineCache_, &size, blob.data()) == VK_SUCCESS) {
        blob.resize(size);
        savePipelineCache(pipelineCacheFile_, blob);
      }
    }
  }
  return slot;
}

Result<void> Context::submit(VkCommandBuffer commands, VkFence fence) {
  VkSubmitInfo info{};
  info.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  info.commandBufferCount = 1;
  info.pCommandBuffers = &commands;
  VkResult r = VK_SUCCESS;
  {
    std::lock_guard lock(queueMutex_);
    r = vkQueueSubmit(queue_, 1, &info, fence);
  }
  if (r == VK_SUCCESS) return {};
  if (r == VK_ERROR_DEVICE_LOST) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, "the Vulkan device was lost");
  }
  return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "vkQueueSubmit failed: " + resultName(r));
}

}  // namespace nnhal::backend::vulkan
