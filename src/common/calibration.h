// common/calibration.h — the driver's measured performance (`nnhal calibrate`) and the file in
// the state directory that keeps it between runs.
//
// PerformanceInfo (types.hal) is the driver's time or energy for a workload over the CPU's,
// lower is better. nnhal's reference CPU path is the one Android's TFLite would run instead:
// XNNPACK's operators on the same network (kReferencePath; tools/cpu_reference), timed in
// the same process, alternating with the driver:
//   execTime   = median time of a workload on the driver, all kernel threads
//                / the same on the reference, all cores;
//   powerUsage = the same ratio with one thread each (on a CPU, energy follows core time).
// It never claims more than was measured: quantized operand types take the largest (worst)
// ratio of the quantized workloads (MobileNet v1 0.25 and v2 quant), float32 and relaxed
// float32 that of the float workload (MobileNet v2 float); types without a workload, IF and
// WHILE take the largest ratio measured, and never less than 1.0 (parity with the CPU path).
// A calibration applies only to the driver version and instruction-set level it was measured
// with. Without one, every value is 1.0.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::common {

/// File name of the calibration in the state directory.
inline constexpr const char* kCalibrationFileName = "capabilities.json";
/// The reference CPU path a calibration of this format is measured against.
inline constexpr const char* kReferencePath = "xnnpack";

/// One workload's medians, ms.
struct WorkloadTiming {
  std::string name;
  bool quantized = false;
  double ms = 0;                    ///< the driver, all kernel threads
  double referenceMs = 0;           ///< the reference CPU path, all cores
  double oneThreadMs = 0;           ///< the driver, one kernel thread
  double referenceOneThreadMs = 0;  ///< the reference CPU path, one thread
};

struct Calibration {
  std::string driverVersion;               ///< Device::getVersionString of the measured driver
  std::string isa;                         ///< kernels' instruction-set level when measured
  std::string measuredAt;                  ///< UTC, ISO 8601
  std::string reference = kReferencePath;  ///< the reference CPU path measured against
  std::vector<WorkloadTiming> workloads;
  PerformanceInfo quantized{1.0f, 1.0f};   ///< quantized operand types
  PerformanceInfo float32{1.0f, 1.0f};     ///< float32 and relaxed float32
  PerformanceInfo unmeasured{1.0f, 1.0f};  ///< every other type, IF and WHILE
};

/// Fills quantized and float32 from the workloads as the header comment says. Errors:
/// INVALID_ARGUMENT when a time is not positive and finite or a kind has no workload.
Result<void> computePerformance(Calibration* calibration);

/// The level a GPU device's calibration is measured at (Calibration::isa).
inline constexpr const char* kVulkanCalibrationLevel = "vulkan";

/// computePerformance for a GPU device: float32 and quantized from their workloads as above
/// (powerUsage: the GPU's time over the one-thread reference's, as nothing measures its
/// energy); without a quantized workload, quantized is FLT_MAX (not measured: the device then
/// reports its unmeasured default); every other type the largest ratio measured, and never
/// less than 1.0. Errors: INVALID_ARGUMENT when a time is not positive and finite or there is
/// no float workload.
Result<void> computeGpuPerformance(Calibration* calibration);

/// Writes `calibration` as JSON to `file` (replacing it atomically). GENERAL_FAILURE when it
/// cannot be written.
Result<void> writeCalibration(const std::filesystem::path& file, const Calibration& calibration);

/// Reads a file writeCalibration wrote. GENERAL_FAILURE when it cannot be read;
/// INVALID_ARGUMENT, naming the problem, when it is malformed or a ratio is not positive and
/// finite.
Result<Calibration> readCalibration(const std::filesystem::path& file);

/// The calibration in `stateDirectory` when it exists, is well formed and was measured with
/// this `driverVersion` and `isa` against kReferencePath; otherwise an error saying why it does not
/// apply (GENERAL_FAILURE "no calibration" when there is none).
Result<Calibration> applicableCalibration(const std::filesystem::path& stateDirectory,
                                          const std::string& driverVersion, const std::string& isa);

/// The capabilities getCapabilities reports: from `calibration`, or the defaults (1.0
/// everywhere) when it is null. Every value is positive (VTS).
Capabilities capabilitiesFrom(const Calibration* calibration);

}  // namespace nnhal::common
