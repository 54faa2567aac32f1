// nnhal/tflite_import.h — turn a TensorFlow Lite flatbuffer into an nnhal Model.
//
// The import works the way TFLite's NNAPI delegate builds an NNAPI model: every TFLite
// tensor becomes an Operand; weights and other constant buffers larger than 128 bytes
// (ANEURALNETWORKS_MAX_SIZE_OF_IMMEDIATELY_COPIED_VALUES) become CONSTANT_REFERENCE
// operands in one shared-memory pool (Model::pools[0]); smaller constants and every
// operation parameter (padding, strides, fused activation, ...) become CONSTANT_COPY
// operands in Model::operandValues. Builtin options map to the NNAPI operation's explicit
// inputs as types.hal defines them; omitted optional inputs become NO_VALUE operands. A few
// operators without a single NNAPI operation are lowered as the delegate does (PACK ->
// EXPAND_DIMS + CONCATENATION, UNPACK -> SPLIT + SQUEEZE, SPLIT_V with unequal sizes ->
// SLICEs, LEAKY_RELU -> PRELU with a constant alpha).
//
// The imported model is stateless: a variable tensor (the state that RNN, SVDF and LSTM
// operators carry from one invocation to the next) becomes a constant holding its initial
// value (zeros unless the file gives data), so each execution computes the operators from
// that initial state, as TFLite's first invocation does. The state outputs NNAPI's RNN,
// SVDF and LSTM write become temporaries nothing reads.
//
// TFLite INT64 tensors (ARG_MAX / ARG_MIN outputs, index tensors) become TENSOR_INT32 and
// are marked in TensorDescription::int64; INT64 constants are narrowed to int32 (an error
// when a value does not fit).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal {

/// Description of a model input or output tensor, as the TFLite file names it.
struct TensorDescription {
  std::string name;
  OperandType type = OperandType::TENSOR_FLOAT32;
  std::vector<uint32_t> dimensions;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  /// The TFLite tensor is INT64 (e.g. ARG_MAX's output): the model computes it as
  /// TENSOR_INT32, as TFLite's NNAPI delegate does, and a caller that wants TFLite's layout
  /// widens each value to int64 (widenInt32ToInt64) on the way out, or narrows int64 input
  /// values (narrowInt64ToInt32) on the way in.
  bool int64 = false;
};

/// `count` int32 values widened to int64 (sign-extended), in the machine's byte order.
std::vector<uint8_t> widenInt32ToInt64(std::span<const uint8_t> int32Bytes);

/// int64 values narrowed to int32. Errors: INVALID_ARGUMENT when the byte count is not a
/// multiple of 8 or a value lies outside the int32 range (the message names the element).
Result<std::vector<uint8_t>> narrowInt64ToInt32(std::span<const uint8_t> int64Bytes);

struct ImportedModel {
  Model model;
  /// One per Model::main.inputIndexes / outputIndexes entry, in the same order.
  std::vector<TensorDescription> inputs;
  std::vector<TensorDescription> outputs;
};

/// What the import may use beyond the NN HAL's own operations.
struct ImportOptions {
  /// The vendor extensions of the device the model is for (Device::getSupportedExtensions()).
  /// When it lists org.nnhal.tflite_compat (nnhal/tflite_compat_extension.h), the builtins
  /// FLOOR_DIV and GATHER_ND import as that extension's operations and the model maps the
  /// extension to prefix 1 in extensionNameToPrefix; otherwise they are refused by name.
  std::vector<Extension> extensions;
};

/// Imports the first subgraph of a .tflite flatbuffer held in memory.
/// Errors: INVALID_ARGUMENT for bytes that are not a valid TFLite flatbuffer (verified with
/// the flatbuffers verifier before anything is read), for an operator without an NN HAL
/// equivalent (the message names the operator, e.g. "unsupported TFLite operator
/// SQUARED_DIFFERENCE (builtin code 99) at operator 12"), for tensor types NNAPI has no
/// type for, and for buffers that lie outside the file.
Result<ImportedModel> importTfliteModel(std::span<const uint8_t> bytes,
                                        const ImportOptions& options = {});

/// Reads `path` and imports it. Errors: INVALID_ARGUMENT for a missing or unreadable file
/// (the message gives the path), plus the errors of importTfliteModel.
Result<ImportedModel> importTfliteFile(const std::filesystem::path& path,
                                       const ImportOptions& options = {});

}  // namespace nnhal
