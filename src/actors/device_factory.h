// actors/device_factory.h — devices over any Backend (backend/backend.h).
//
// createDevice (nnhal/device.h) and hal::createEmbeddedDriver make the CPU device; this makes
// the device of any backend, with the same HAL plumbing: a host (or nnhald) holding several
// devices calls it once per backend instance, on one shared runtime (makeRuntime): its
// threads, its scheduler (fair share between applications over all the devices' work, as all
// of it runs on the same cores) and its arena budget. Each device keeps its own state: give
// each its own DeviceOptions::stateDirectory (its token map and cache entries), or caching
// off.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "hal/driver_control.h"
#include "nnhal/device.h"

namespace nnhal::actors {

class Runtime;

/// A runtime for several devices, with the threads, limits and tracing of `options`. Errors:
/// GENERAL_FAILURE when its threads cannot start.
Result<std::shared_ptr<Runtime>> makeRuntime(const DeviceOptions& options);

/// The device of `backend` with the plumbing's `options`, on `runtime` (null: a runtime of its
/// own, from `options`). Errors: GENERAL_FAILURE when the runtime cannot start (threads).
Result<hal::EmbeddedDriver> createDriver(const DeviceOptions& options,
                                         std::shared_ptr<const backend::Backend> backend,
                                         std::shared_ptr<Runtime> runtime = nullptr);

}  // namespace nnhal::actors
