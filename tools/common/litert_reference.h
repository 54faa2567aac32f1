// tools/common/litert_reference.h — TFLite's own results for a model, to compare nnhal's
// with: LiteRT (Google's TFLite runtime: WebAssembly, its CPU path XNNPACK, from the npm
// registry as @litertjs/core) run by Node.js through tools/litert/run_litert.mjs.
//
// Where it is: $NNHAL_LITERT_DIR when set, else tools/litert of the source tree nnhal was built
// from (scripts/setup.sh installs it there with `npm ci`). Node.js is `node` on the PATH.
//
// Thread safety: functions without shared state; each call runs its own Node.js process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/tflite_import.h"
#include "tools/common/output_report.h"

namespace nnhal::tools {

/// The folder holding run_litert.mjs and its node_modules. Errors: GENERAL_FAILURE naming
/// what is missing (Node.js, or LiteRT: "run scripts/setup.sh or npm ci --prefix ...").
Result<std::filesystem::path> findLitert();

/// One output as LiteRT computed it: its name in the model's signature, its type
/// ("float32", "uint8", "int8", "int32", "int64", ...), shape and raw bytes.
struct ReferenceTensor {
  std::string name;
  std::string dtype;
  std::vector<uint32_t> shape;
  std::vector<uint8_t> bytes;
};

/// Runs `model` with LiteRT on `inputs` (bytes as nnhal takes them: TENSOR_INT32 values for a
/// TFLite INT64 input, widened here). Errors: GENERAL_FAILURE with LiteRT's message.
Result<std::vector<ReferenceTensor>> runLitert(const std::filesystem::path& model,
                                               const std::vector<TensorDescription>& inputs,
                                               const std::vector<std::vector<uint8_t>>& bytes);

/// How one of nnhal's outputs differs from TFLite's.
struct OutputDifference {
  std::string name;
  /// Why this output was not compared (LiteRT gave another size: an output whose shape only
  /// the run decides, which LiteRT.js returns at its static size); empty when compared.
  std::string notCompared;
  size_t elements = 0;
  size_t differing = 0;  ///< elements not exactly equal
  /// Largest |nnhal - tflite| in real values (dequantized for quantized outputs).
  double maxAbs = 0;
  /// maxAbs divided by the largest |tflite| value of the output (0 when that is 0).
  double maxRelative = 0;
  /// Quantized and integer outputs: the largest difference in raw steps; 0 for floats.
  int64_t maxSteps = 0;
  /// Outputs of at least two elements: the index of the largest value, in each.
  int64_t argmaxNnhal = -1;
  int64_t argmaxTflite = -1;
};

/// Compares an output of nnhal with LiteRT's output of the same position. Errors:
/// INVALID_ARGUMENT when their element counts or types do not match.
Result<OutputDifference> compareOutput(const OutputTensor& nnhal, const ReferenceTensor& tflite);

}  // namespace nnhal::tools
