#include "tools/nnhal/info_command.h"

#include <cstdio>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/gpu_device.h"
#include "tools/nnhal/run_command.h"

namespace nnhal::cli {
namespace {

/// What `nnhal info` reports, read once from the device.
struct DeviceFacts {
  std::string name;
  std::string versionString;
  DeviceType type{};
  Capabilities capabilities;
  std::vector<Extension> extensions;
  NumberOfCacheFiles numberOfCacheFilesNeeded;
  CompilationCaching compilationCaching;
  bool embedded = false;
  KernelIsa kernelIsa;                    ///< embedded only
  CapabilitiesSource capabilitiesSource;  ///< embedded only
};

nlohmann::json toJson(const PerformanceInfo& info) {
  return {{"execTime", info.execTime}, {"powerUsage", info.powerUsage}};
}

nlohmann::json toJson(const DeviceFacts& facts) {
  const Capabilities& caps = facts.capabilities;
  nlohmann::json operandPerformance = nlohmann::json::array();
  for (const OperandPerformance& p : caps.operandPerformance) {
    operandPerformance.push_back({{"type", toString(p.type)}, {"info", toJson(p.info)}});
  }
  nlohmann::json extensions = nlohmann::json::array();
  for (const Extension& extension : facts.extensions) {
    nlohmann::json operandTypes = nlohmann::json::array();
    for (const Extension::OperandTypeInformation& t : extension.operandTypes) {
      operandTypes.push_back(
          {{"type", t.type}, {"isTensor", t.isTensor}, {"byteSize", t.byteSize}});
    }
    extensions.push_back({{"name", extension.name}, {"operandTypes", operandTypes}});
  }
  nlohmann::json out = {
      {"name", facts.name},
      {"versionString", facts.versionString},
      {"type", toString(facts.type)},
      {"numberOfCacheFilesNeeded",
       {{"modelCache", facts.numberOfCacheFilesNeeded.modelCache},
        {"dataCache", facts.numberOfCacheFilesNeeded.dataCache}}},
      {"compilationCaching",
       {{"available", facts.compilationCaching.available},
        {"reason", facts.compilationCaching.reason}}},
      {"extensions", extensions},
      {"capabilities",
       {{"relaxedFloat32toFloat16PerformanceScalar",
         toJson(caps.relaxedFloat32toFloat16PerformanceScalar)},
        {"relaxedFloat32toFloat16PerformanceTensor",
         toJson(caps.relaxedFloat32toFloat16PerformanceTensor)},
        {"operandPerformance", operandPerformance},
        {"ifPerformance", toJson(caps.ifPerformance)},
        {"whilePerformance", toJson(caps.whilePerformance)}}},
  };
  if (facts.embedded) {
    out["kernelIsa"] = {{"active", facts.kernelIsa.active},
                        {"supported", facts.kernelIsa.supported},
                        {"note", facts.kernelIsa.note}};
    out["capabilitiesSource"] = {{"measured", facts.capabilitiesSource.measured},
                                 {"detail", facts.capabilitiesSource.detail}};
  }
  return out;
}

/// A PerformanceInfo value for people: three decimals, or "unsupported" for the HAL's maximum
/// (FLT_MAX: what a device reports for types it does not run).
std::string ratio(float value) {
  if (value >= std::numeric_limits<float>::max()) return "unsupported";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

void printText(const DeviceFacts& facts) {
  const Capabilities& caps = facts.capabilities;
  std::printf("name: %s\nversion: %s\ntype: %s\n", facts.name.c_str(), facts.versionString.c_str(),
              std::string(toString(facts.type)).c_str());
  if (facts.embedded) {
    const KernelIsa& isa = facts.kernelIsa;
    std::printf("kernels: %s (this CPU supports %s%s%s)\n", isa.active.c_str(),
                isa.supported.c_str(), isa.note.empty() ? "" : "; ", isa.note.c_str());
  }
  std::printf("cache files needed: %u model, %u data", facts.numberOfCacheFilesNeeded.modelCache,
              facts.numberOfCacheFilesNeeded.dataCache);
  if (!facts.compilationCaching.available) {
    std::printf(" (compilation caching off: %s)", facts.compilationCaching.reason.c_str());
  }
  std::printf("\n");
  std::string extensionNames;
  for (const Extension& extension : facts.extensions) {
    extensionNames += (extensionNames.empty() ? " (" : ", ") + extension.name;
  }
  if (!extensionNames.empty()) extensionNames += ")";
  std::printf("extensions: %zu%s\n", facts.extensions.size(), extensionNames.c_str());
  std::printf("relaxed float32->float16 performance: scalar %s, tensor %s\n",
              ratio(caps.relaxedFloat32toFloat16PerformanceScalar.execTime).c_str(),
              ratio(caps.relaxedFloat32toFloat16PerformanceTensor.execTime).c_str());
  std::printf("IF performance: %s, WHILE performance: %s\n",
              ratio(caps.ifPerformance.execTime).c_str(),
              ratio(caps.whilePerformance.execTime).c_str());
  if (facts.embedded) {
    const CapabilitiesSource& source = facts.capabilitiesSource;
    std::printf("capabilities: %s (%s)\n", source.measured ? "measured" : "documented defaults",
                source.detail.c_str());
  }
  std::printf("operand performance (execTime, powerUsage; 1.0 = CPU reference):\n");
  for (const OperandPerformance& p : caps.operandPerformance) {
    std::printf("  %-32s %s %s\n", std::string(toString(p.type)).c_str(),
                ratio(p.info.execTime).c_str(), ratio(p.info.powerUsage).c_str());
  }
}

DeviceFacts factsOf(const Device& device, const InfoArgs& args, const DeviceOptions& options) {
  DeviceFacts facts;
  facts.name = device.getName();
  facts.versionString = device.getVersionString();
  facts.type = device.getType();
  facts.capabilities = device.getCapabilities();
  facts.extensions = device.getSupportedExtensions();
  facts.numberOfCacheFilesNeeded = device.getNumberOfCacheFilesNeeded();
  facts.compilationCaching = device.getCompilationCaching();
  // The kernel levels and the calibration are the embedded CPU device's.
  facts.embedded = args.connect.empty() && facts.type == DeviceType::CPU;
  if (facts.embedded) {
    facts.kernelIsa = kernelIsa();
    facts.capabilitiesSource = capabilitiesSource(options);
  }
  return facts;
}

}  // namespace

Result<void> runInfo(const InfoArgs& args) {
  DeviceOptions options;
  options.stateDirectory = args.stateDir;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> device,
                         openDevice(args.connect, options, args.device));
  std::vector<DeviceFacts> devices{factsOf(*device, args, options)};
  std::vector<std::string> names{devices.front().name};
  if (!args.connect.empty()) {
    NNHAL_ASSIGN_OR_RETURN(names, daemonDevices(*device));
    for (const std::string& name : names) {
      if (!args.device.empty() || name == devices.front().name) continue;
      NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> other,
                             openDevice(args.connect, options, name));
      devices.push_back(factsOf(*other, args, options));
    }
  }
  // The embedded GPU device: which Vulkan device it would use, or why there is none.
  std::optional<VulkanDeviceStatus> gpu;
  if (args.connect.empty() && args.device.empty()) {
    gpu = vulkanDeviceStatus(vulkanOptionsFromEnvironment());
  }
  if (args.json) {
    nlohmann::json out = toJson(devices.front());
    if (gpu) {
      out["gpuDevice"] = {{"name", "nnhal-vulkan"},
                          {"available", gpu->available},
                          {"physicalDevice", gpu->name},
                          {"kind", gpu->kind},
                          {"reason", gpu->reason}};
    }
    if (!args.connect.empty()) {
      out["daemonDevices"] = names;
      nlohmann::json others = nlohmann::json::array();
      for (size_t i = 1; i < devices.size(); ++i) others.push_back(toJson(devices[i]));
      out["otherDevices"] = others;
    }
    std::printf("%s\n", out.dump(2).c_str());
    return {};
  }
  if (names.size() > 1) {
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    std::printf("nnhald serves %zu devices: %s\n", names.size(), list.c_str());
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices.size() > 1) std::printf("\n[device %zu of %zu]\n", i + 1, devices.size());
    printText(devices[i]);
  }
  if (gpu) {
    if (gpu->available) {
      std::printf("gpu device: nnhal-vulkan on %s (%s; nnhal info --device nnhal-vulkan)\n",
                  gpu->name.c_str(), gpu->kind.c_str());
    } else {
      std::printf("gpu device: none (%s)\n", gpu->reason.c_str());
    }
  }
  return {};
}

}  // namespace nnhal::cli
