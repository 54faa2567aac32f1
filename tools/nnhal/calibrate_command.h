// tools/nnhal/calibrate_command.h — `nnhal calibrate`: measures the embedded driver's
// PerformanceInfo (common/calibration.h) and stores it in the state directory, where
// getCapabilities finds it.
#pragma once

#include <string>

namespace nnhal::cli {

struct CalibrateArgs {
  std::string models;          ///< folder holding the reference workloads' .tflite files
  std::string stateDir;        ///< the driver's state directory (DeviceOptions::stateDirectory)
  unsigned runs = 15;          ///< timed executions per measurement (the median is kept)
  bool referenceOnly = false;  ///< internal: print this process's times as JSON and stop
};

/// Runs the calibration; returns the process exit code (0, or 1 with the error on stderr).
int runCalibrate(const CalibrateArgs& args);

}  // namespace nnhal::cli
