// tools/nnhal/info_command.h — `nnhal info`: the device's identity and capabilities.
#pragma once

#include <string>

#include "nnhal/status.h"

namespace nnhal::cli {

struct InfoArgs {
  std::string connect;   ///< nnhald socket; empty = the embedded driver
  std::string stateDir;  ///< the embedded driver's state directory
  bool json = false;     ///< one JSON object on stdout instead of text lines
};

/// Prints what the device reports (IDevice getName, getVersionString, getType,
/// getCapabilities_1_3, getSupportedExtensions, getNumberOfCacheFilesNeeded) and, for the
/// embedded driver, its kernels' instruction-set level and where its capabilities come from.
/// Errors: those of createDevice / connect (DEVICE_UNAVAILABLE for an unreachable daemon).
Result<void> runInfo(const InfoArgs& args);

}  // namespace nnhal::cli
