// tools/nnhal/calibrate_command.h — `nnhal calibrate`: measures the embedded driver's
// PerformanceInfo against the reference CPU path (common/calibration.h) and stores it in the
// state directory, where getCapabilities finds it. `--device nnhal-vulkan` measures the GPU
// device instead (docs/GPU.md): its float workload only, as it runs no quantized network.
#pragma once

#include <string>

namespace nnhal::cli {

struct CalibrateArgs {
  std::string stateDir;  ///< the driver's state directory (DeviceOptions::stateDirectory)
  std::string models;    ///< empty: the built-in workloads; else a folder with the .tflite files
  unsigned runs = 15;    ///< timed executions per measurement (the median is kept)
  bool ifStale = false;  ///< measure only when the state directory has no applicable calibration
  std::string device;    ///< empty or "nnhal-cpu": the CPU device; "nnhal-vulkan": the GPU device
};

/// Runs the calibration; returns the process exit code (0, or 1 with the error on stderr).
int runCalibrate(const CalibrateArgs& args);

}  // namespace nnhal::cli
