// tools/nnhald/test_device.h — the devices nnhald serves: the CPU device, and the optional
// second device (--test-device), the CPU engine behind the fault-injecting test backend
// (backend/fault_injecting_backend.h), served beside it through the same HAL plumbing. The
// test device has its own state directory (<cache dir>/devices/<name>), so its token map and
// cache entries are its own. With the hidden --test-leak-mapping-per-execution or
// --test-hang-after-executions (nnhal-soak's own tests), the CPU device itself is wrapped in
// the test backend with those faults, under its own name. Both devices run on one runtime
// (actors/device_factory.h): one set of threads, one fair share, one arena budget; and both
// run on `cpu`, one CPU engine (one TBB arena: the kernel threads are not doubled). The GPU
// device (--gpu, docs/GPU.md) joins them on the same runtime with its own state directory.
#pragma once

#include <memory>
#include <optional>

#include "actors/device_factory.h"
#include "backend/cpu_backend.h"
#include "hal/driver_control.h"
#include "nnhal/device.h"
#include "nnhald/daemon_config.h"

namespace nnhal::daemon {

/// The CPU device on `runtime`, wrapped in the test backend when a hidden test fault is
/// asked for. Errors: those of actors::createDriver.
Result<hal::EmbeddedDriver> createCpuDevice(const DaemonConfig& config,
                                            const DeviceOptions& options,
                                            std::shared_ptr<const backend::CpuBackend> cpu,
                                            std::shared_ptr<actors::Runtime> runtime);

/// The GPU device nnhal-vulkan as --gpu and --gpu-device ask (tools/nnhald/daemon_config.h),
/// on `runtime`, in its own state directory (<cache dir>/devices/nnhal-vulkan); nullopt when
/// --gpu is off, or auto and the only Vulkan device is CPU-emulated. Errors: with --gpu on,
/// DEVICE_UNAVAILABLE when there is no usable Vulkan device; GENERAL_FAILURE as
/// actors::createDriver.
Result<std::optional<hal::EmbeddedDriver>> createGpuDevice(
    const DaemonConfig& config, const DeviceOptions& options,
    std::shared_ptr<actors::Runtime> runtime);

/// The test device `config` asks for, on `runtime`, with the plumbing's `options` (those of
/// the CPU device). Errors: INVALID_ARGUMENT for an unknown operation name in --test-device-refuse
/// or a name equal to the CPU device's; GENERAL_FAILURE when its runtime cannot start.
Result<hal::EmbeddedDriver> createTestDevice(const DaemonConfig& config,
                                             const DeviceOptions& options,
                                             std::shared_ptr<const backend::CpuBackend> cpu,
                                             std::shared_ptr<actors::Runtime> runtime);

}  // namespace nnhal::daemon
