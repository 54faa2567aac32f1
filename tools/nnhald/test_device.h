// tools/nnhald/test_device.h — nnhald's optional second device (--test-device): the CPU
// engine behind the fault-injecting test backend (backend/fault_injecting_backend.h), served
// beside the CPU device through the same HAL plumbing. It has its own state directory
// (<cache dir>/devices/<name>), so its token map and cache entries are its own.
#pragma once

#include "hal/driver_control.h"
#include "nnhal/device.h"
#include "nnhald/daemon_config.h"

namespace nnhal::daemon {

/// The test device `config` asks for, with the plumbing's `options` (those of the CPU
/// device). Errors: INVALID_ARGUMENT for an unknown operation name in --test-device-refuse
/// or a name equal to the CPU device's; GENERAL_FAILURE when its runtime cannot start.
Result<hal::EmbeddedDriver> createTestDevice(const DaemonConfig& config,
                                             const DeviceOptions& options);

}  // namespace nnhal::daemon
