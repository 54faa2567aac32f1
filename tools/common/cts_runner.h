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
  /// executeFenced with no fences to wait for; the outcome and timing from getExecutionInfo
  /// after the returned fence signalled (HAL 1.3). Models with an output of unknown shape
  /// are skipped (a fenced execution must not have one).
  kFenced,
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
/// 1; bool8 exact; or each output's CtsModel::outputTolerances where the model has them),
/// reported output shapes equal to the expected dimensions, ignored outputs
/// skipped, RANDOM_MULTINOMIAL judged by class frequencies. Returns "" when all pass,
/// otherwise the first failure.
std::string judgeOutputs(const CtsModel& cts, const std::vector<std::vector<uint8_t>>& actual,
                         const std::vector<OutputShape>& shapes);

/// The variations the VTS GeneratedTests make of each mode.
struct CtsRunOptions {
  /// MeasureTiming of the execution. The timing rules are checked either way (the VTS's):
  /// with NO every Timing field is kNoTiming; with YES a field may be kNoTiming, and
  /// timeOnDevice <= timeInDriver when both are reported; for kFenced the same for
  /// timingLaunched and timingFenced, and each fenced time <= its launched one.
  MeasureTiming measure = MeasureTiming::NO;
  /// Output 0's buffer one element short (VTS OutputType::INSUFFICIENT): the execution must
  /// fail with OUTPUT_INSUFFICIENT_SIZE and report output 0 as not sufficient, with its
  /// full dimensions. Models whose output 0 holds fewer than 2 elements, and kFenced and
  /// kDeviceBuffers, are run as they are.
  bool outputOneElementShort = false;
  /// The kind of the request's pool (ctsRequest): ashmem, mmap_fd (a regular file) or
  /// hardware_buffer_blob, as the VTS's TestMemory kinds. kDeviceBuffers moves every
  /// argument out of it into a driver-managed buffer.
  MemoryKind poolKind = MemoryKind::ASHMEM;
  /// kFenced only: the execution waits for one fence, which is signalled only after
  /// executeFenced returned; its own fence must not have signalled before that.
  bool waitForFence = false;
  /// The WHILE loop timeout for `while_infinite_loop*` models.
  std::chrono::nanoseconds loopTimeout = std::chrono::milliseconds(200);
};

/// Prepares and executes `cts` on `device` in `mode` and judges it. expectFailure models
/// pass when preparation or execution fails; a failed preparation of a model the device says
/// it does not fully support is skipped. `while_infinite_loop*` models pass when the
/// execution ends with MISSED_DEADLINE_* within the loop timeout (in kBurst and kFenced
/// modes, a deadline that far from the start).
CtsOutcome runCtsModel(Device& device, const CtsModel& cts, CtsMode mode,
                       const CtsRunOptions& options = {});

/// Prepares `cts` on `device`, runs it once with executeSynchronously and returns the bytes
/// of every main output (sized by the operands' dimensions, which must all be known): the
/// expected outputs a reference device gives. Errors: the preparation's or the execution's,
/// with its message; INVALID_ARGUMENT for an output of unknown shape.
Result<std::vector<std::vector<uint8_t>>> computeOutputs(Device& device, const CtsModel& cts);

/// The model the VTS's quantization coupling test derives from `cts`: every
/// TENSOR_QUANT8_ASYMM operand becomes TENSOR_QUANT8_ASYMM_SIGNED with its zero point and
/// values moved down by 128 (constants, inputs and expected outputs alike); the name gets
/// "_signed". Applied by the VTS to single-operation models with such operands, which
/// must then pass exactly when the original passes (and be skipped exactly when it is).
CtsModel toSignedQuantization(const CtsModel& cts);

/// True when the VTS runs the quantization coupling test on `cts`: a valid model of one
/// operation, no referenced subgraph, a TENSOR_QUANT8_ASYMM input or output of that
/// operation, and the operation not one of HASHTABLE_LOOKUP, LSH_PROJECTION, PAD_V2, CAST and
/// QUANTIZED_16BIT_LSTM (whose quant8 operands are not coupled to their values).
bool hasCoupledQuantization(const CtsModel& cts);

}  // namespace nnhal::tools
