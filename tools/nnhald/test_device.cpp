#include "nnhald/test_device.h"

#include <memory>
#include <string>

#include "actors/device_factory.h"
#include "backend/cpu_backend.h"
#include "backend/fault_injecting_backend.h"

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

}  // namespace nnhal::daemon
