// actors/device_factory.h — devices over any Backend (backend/backend.h).
//
// createDevice (nnhal/device.h) and hal::createEmbeddedDriver make the CPU device; this makes
// the device of any backend, with the same HAL plumbing: a host (or nnhald) holding several
// devices calls it once per backend instance. Each device has its own state: give each its
// own DeviceOptions::stateDirectory (its token map and cache entries), or caching off.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "hal/driver_control.h"
#include "nnhal/device.h"

namespace nnhal::actors {

/// The device of `backend` with the plumbing's `options`. Errors: GENERAL_FAILURE when the
/// runtime cannot start (threads).
Result<hal::EmbeddedDriver> createDriver(const DeviceOptions& options,
                                         std::shared_ptr<const backend::Backend> backend);

}  // namespace nnhal::actors
