#include "nnhald/test_device.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <string>

#include "actors/device_factory.h"
#include "backend/cpu_backend.h"
#include "backend/fault_injecting_backend.h"
#include "backend/vulkan_factory.h"
#include "nnhal/gpu_device.h"

namespace nnhal::daemon {

Result<hal::EmbeddedDriver> createCpuDevice(const DaemonConfig& config,
                                            const DeviceOptions& options,
                                            std::shared_ptr<const backend::CpuBackend> cpu,
                                            std::shared_ptr<actors::Runtime> runtime) {
  if (!config.testLeakMapping && config.testHangAfter == 0) {
    return actors::createDriver(options, std::move(cpu), std::move(runtime));
  }
  backend::FaultPlan plan;
  plan.name = cpu->name();
  plan.leakMappingPerExecution = config.testLeakMapping;
  plan.hangAfterExecutions = config.testHangAfter;
  return actors::createDriver(
      options, std::make_shared<backend::FaultInjectingBackend>(std::move(cpu), std::move(plan)),
      std::move(runtime));
}

Result<hal::EmbeddedDriver> createTestDevice(const DaemonConfig& config,
                                             const DeviceOptions& options,
                                             std::shared_ptr<const backend::CpuBackend> cpu,
                                             std::shared_ptr<actors::Runtime> runtime) {
  backend::FaultPlan plan;
  plan.name = config.testDevice;
  for (const std::string& name : config.testDeviceRefuse) {
    const std::optional<OperationType> type = operationTypeFromString(name);
    if (!type) {
      return invalidArgument("--test-device-refuse: unknown operation '" + name + "'");
    }
    plan.refuse.push_back(*type);
  }
  plan.failCompileEvery = config.testDeviceFailCompileEvery;
  plan.failExecuteEvery = config.testDeviceFailExecuteEvery;
  plan.executeDelay = std::chrono::microseconds(config.testDeviceDelayUs);
  if (plan.name == cpu->name()) {
    return invalidArgument("--test-device: '" + plan.name + "' is the CPU device's name");
  }
  DeviceOptions own = options;
  if (!own.stateDirectory.empty()) own.stateDirectory = own.stateDirectory / "devices" / plan.name;
  return actors::createDriver(
      own, std::make_shared<backend::FaultInjectingBackend>(std::move(cpu), std::move(plan)),
      std::move(runtime));
}

Result<std::optional<hal::EmbeddedDriver>> createGpuDevice(
    const DaemonConfig& config, const DeviceOptions& options,
    std::shared_ptr<actors::Runtime> runtime) {
  if (config.gpu == "off") return std::nullopt;
  backend::VulkanOptions vulkan;
  const VulkanDeviceOptions fromEnvironment = vulkanOptionsFromEnvironment();
  vulkan.physicalDevice =
      config.gpuDevice.empty() ? fromEnvironment.physicalDevice : config.gpuDevice;
  vulkan.validation = fromEnvironment.validation;
  if (config.gpu == "auto" && vulkan.physicalDevice.empty()) {
    // Only the instance, not a device, to find out whether there is a real GPU at all.
    auto devices = backend::listVulkanDevices();
    const bool real = devices && std::any_of(devices->begin(), devices->end(), [](const auto& d) {
                        return d.usable && d.kind != "CPU-emulated";
                      });
    if (!real) {
      spdlog::info(
          "--gpu auto: no GPU to serve the GPU device on ({}; --gpu on serves it on a "
          "CPU-emulated Vulkan device)",
          devices ? "its Vulkan devices are CPU-emulated or unusable" : devices.error().message);
      return std::nullopt;
    }
  }
  DeviceOptions own = options;
  if (!own.stateDirectory.empty())
    own.stateDirectory = own.stateDirectory / "devices" / "nnhal-vulkan";
  vulkan.stateDirectory = own.stateDirectory;
  auto made = backend::createVulkanBackend(vulkan);
  if (!made) {
    if (config.gpu == "on") return std::unexpected(made.error());
    spdlog::info("--gpu auto: no GPU device ({})", made.error().message);
    return std::nullopt;
  }
  if (config.gpu == "auto" && made->device.kind == "CPU-emulated") {
    spdlog::info(
        "--gpu auto: the only Vulkan device, {}, is CPU-emulated: not served (--gpu on "
        "serves it)",
        made->device.name);
    return std::nullopt;
  }
  NNHAL_ASSIGN_OR_RETURN(hal::EmbeddedDriver driver,
                         actors::createDriver(own, std::move(made->backend), std::move(runtime)));
  spdlog::info("serving the GPU device nnhal-vulkan on {} ({})", made->device.name,
               made->device.kind);
  return driver;
}

}  // namespace nnhal::daemon
