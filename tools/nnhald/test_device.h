// tools/nnhald/test_device.h — the devices nnhald serves: the CPU device, and the optional
// second device (--test-device), the CPU engine behind the fault-injecting test backend
// (backend/fault_injecting_backend.h), served beside it through the same HAL plumbing. The
// test device has its own state directory (<cache dir>/devices/<name>), so its token map and
// cache entries are its own. With the hidden --test-leak-mapping-per-execution or
// --test-hang-after-executions (nnhal-soak's own tests), the CPU device itself is wrapped in
// the test backend with those faults, under its own name. Both devices run on one runtime
// (actors/device_factory.h): one set of threads, one fair share, one arena budget; and both
// run on `cpu`, one CPU engine (one TBB arena: the kernel threads are not doubled).
#pragma once

#include <memory>

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

/// The test device `config` asks for, on `runtime`, with the plumbing's `options` (those of
/// the CPU device). Errors: INVALID_ARGUMENT for an unknown operation name in --test-device-refuse
/// or a name equal to the CPU device's; GENERAL_FAILURE when its runtime cannot start.
Result<hal::EmbeddedDriver> createTestDevice(const DaemonConfig& config,
                                             const DeviceOptions& options,
                                             std::shared_ptr<const backend::CpuBackend> cpu,
                                             std::shared_ptr<actors::Runtime> runtime);

}  // namespace nnhal::daemon
