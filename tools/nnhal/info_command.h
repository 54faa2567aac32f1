// tools/nnhal/info_command.h — `nnhal info`: the device's identity and capabilities.
#pragma once

#include <string>

#include "nnhal/status.h"

namespace nnhal::cli {

struct InfoArgs {
  std::string connect;   ///< nnhald socket; empty = the embedded driver
  std::string stateDir;  ///< the embedded driver's state directory
  std::string device;    ///< one device by name; empty = every device (nnhald may serve several)
  bool json = false;     ///< one JSON object on stdout instead of text lines
};

/// Prints what the device reports (IDevice getName, getVersionString, getType,
/// getCapabilities_1_3, getSupportedExtensions, getNumberOfCacheFilesNeeded) and, for the
/// embedded driver, its kernels' instruction-set level and where its capabilities come from.
/// Through nnhald, every device it serves (or only `device`), its default first; the JSON
/// object is the first device's, with "daemonDevices" naming them all and "otherDevices"
/// holding the others' objects.
/// Errors: those of createDevice / connect (DEVICE_UNAVAILABLE for an unreachable daemon).
Result<void> runInfo(const InfoArgs& args);

}  // namespace nnhal::cli
