// tools/common/cts_runner.h — runs a CTS test model through a Device and judges it by the
// CTS accuracy rules (shared/cts/README.md, "How results are judged").
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "nnhal/device.h"
#include "tools/common/cts_model.h"

namespace nnhal::tools {

/// How the model is executed.
enum class CtsMode {
  kSynchronous,         ///< executeSynchronously
  kAsync,               ///< execute with a callback
  kDynamicOutputShape,  ///< executeSynchronously with every output's dimensions set to 0
  kBurst,               ///< Burst::execute on a burst of the prepared model (nnhal/burst.h)
  /// executeSynchronously with every input and output in a driver-managed buffer of its own
  /// (Device::allocate; inputs filled by copyFrom, outputs read back by copyTo)
  kDeviceBuffers,
};

std::string_view toString(CtsMode mode);

struct CtsOutcome {
  bool passed = false;
  std::string message;  ///< why it failed or was skipped (empty when passed)
  /// Not passed, but not a failure either: preparation failed and the device's
  /// getSupportedOperations reports an operation of the model as unsupported, which the HAL
  /// allows (VTS skips such models).
  bool skipped = false;
};

/// Judges actual outputs against the expected ones: per-type tolerances (float32 atol 1e-5
/// rtol 5 ulp, or 0.0048828125 both when relaxed or when the model has any TENSOR_FLOAT16
/// operand; float16 0.0048828125 both; int32 1; quant8 1 (3 for "mobilenet" tests); quant16
/// 1; bool8 exact), reported output shapes equal to the expected dimensions, ignored outputs
/// skipped, RANDOM_MULTINOMIAL judged by class frequencies. Returns "" when all pass,
/// otherwise the first failure.
std::string judgeOutputs(const CtsModel& cts, const std::vector<std::vector<uint8_t>>& actual,
                         const std::vector<OutputShape>& shapes);

/// Prepares and executes `cts` on `device` in `mode` and judges it. expectFailure models
/// pass when preparation or execution fails; a failed preparation of a model the device says
/// it does not fully support is skipped. `while_infinite_loop*` models pass when the
/// execution ends with MISSED_DEADLINE_* within `loopTimeout` (in kBurst mode, which has no
/// loop timeout, a deadline `loopTimeout` from the start).
CtsOutcome runCtsModel(Device& device, const CtsModel& cts, CtsMode mode,
                       std::chrono::nanoseconds loopTimeout = std::chrono::milliseconds(200));

}  // namespace nnhal::tools
