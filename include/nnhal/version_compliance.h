// nnhal/version_compliance.h — which NN HAL version can express a Model or a Request.
//
// nnhal has one Model and one Request type, those of NN HAL 1.3. A driver or client that
// speaks an older HAL version (1.0, 1.1, 1.2) can take only the part of 1.3 its types.hal
// defines. These are the HAL utility functions for that (compliantWithV1_x / convertToV1_x
// of Android NN's Utils), over nnhal's types:
//
// - compliantWithV1_x(model) tells whether every operand type, operation type, operation
//   signature and model feature the model uses exists in HAL 1.x, and lists the main
//   subgraph's operations that do not (AOSP's noncompliantOperations), with a reason for
//   each thing that version lacks;
// - convertToV1_x(model) returns the model as HAL 1.x expresses it (the same Model, restricted
//   to that version's subset), or INVALID_ARGUMENT naming everything the conversion would
//   lose.
//
// What each version lacks (types.hal of 1.0-1.3):
// - 1.0 (operand types 0-5, operations 0-28): everything below, and
//   relaxComputationFloat32toFloat16 = true (added in 1.1; see docs/DEBUGGING.md);
// - 1.1 (operations 29-37): everything below 1.2, and
//   * operand types 6-13 (BOOL, TENSOR_QUANT16_SYMM, TENSOR_FLOAT16, TENSOR_BOOL8, FLOAT16,
//     TENSOR_QUANT8_SYMM_PER_CHANNEL, TENSOR_QUANT16_ASYMM, TENSOR_QUANT8_SYMM) and
//     operations 38-94, added in 1.2;
//   * tensors of unknown rank; extensions (Model::extensionNameToPrefix, types with a
//     non-zero prefix); hardware_buffer_blob memory (model and request pools);
//   * the 1.2 signatures of older operations: SOFTMAX / L2_NORMALIZATION /
//     LOCAL_RESPONSE_NORMALIZATION with an axis input, LSTM with layer normalization (27
//     inputs), RESIZE_BILINEAR with scales instead of sizes, TANH / L2_NORMALIZATION /
//     RESIZE_BILINEAR on TENSOR_QUANT8_ASYMM, SUB on TENSOR_QUANT8_ASYMM (the layout flags of
//     1.2 are BOOL operands, refused with the type);
// - 1.2: everything 1.3 added: operand types TENSOR_QUANT8_ASYMM_SIGNED and SUBGRAPH,
//   operations 95-101 (QUANTIZED_LSTM, IF, WHILE, ELU, HARD_SWISH, FILL, RANK), the SUBGRAPH
//   lifetime and Model::referenced, ADD / MUL / SUB / DIV / ABS on TENSOR_INT32,
//   RESIZE_BILINEAR / RESIZE_NEAREST_NEIGHBOR with align_corners / half_pixel_centers, and
//   request pools that are memory domain tokens (driver-managed buffers).
// Only main's operations are checked one by one (an older Model has no other subgraph).
// Other rules of ValidateHal (ranks, value ranges) are validateModel's, not repeated here.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal {

/// An NN HAL interface version.
enum class HalVersion : int32_t { V1_0 = 0, V1_1 = 1, V1_2 = 2, V1_3 = 3 };

/// "1.0" ... "1.3".
std::string_view toString(HalVersion version);

/// The version whose types.hal added `type`: 1.0 for 0-5 and the OEM types, 1.2 for 6-13 and
/// extension types (non-zero prefix), 1.3 for 14-15 and for unknown fundamental codes.
HalVersion introducedIn(OperandType type);

/// The version whose types.hal added `type`: 1.0 for 0-28 and OEM_OPERATION, 1.1 for 29-37,
/// 1.2 for 38-94 and extension operations, 1.3 for 95-101 and for unknown fundamental codes.
HalVersion introducedIn(OperationType type);

/// The answer of a compliance check.
struct Compliance {
  /// Indexes into Model::main.operations of the operations the version cannot express
  /// (ascending; always empty for a Request).
  std::vector<uint32_t> noncompliantOperations;
  /// One line per thing the version lacks, e.g. "main operation 3 (IF): operation type added
  /// in 1.3" or "request.pools[1]: a memory domain token (added in 1.3)". Empty = compliant.
  std::vector<std::string> losses;
  bool compliant() const { return losses.empty(); }
  explicit operator bool() const { return compliant(); }
};

/// Checks `model` against HAL `version` (see the top of this file). Never fails; does not
/// validate the model (call validateModel for that): operand indexes out of range are
/// reported as losses of the operations naming them.
Compliance compliantWith(HalVersion version, const Model& model);
/// Checks `request` against HAL `version`: every pool is shared memory (no memory domain
/// token, 1.3) of a kind the version maps (ashmem and mmap_fd; hardware_buffer_blob from 1.2).
Compliance compliantWith(HalVersion version, const Request& request);

inline Compliance compliantWithV1_0(const Model& model) {
  return compliantWith(HalVersion::V1_0, model);
}
inline Compliance compliantWithV1_1(const Model& model) {
  return compliantWith(HalVersion::V1_1, model);
}
inline Compliance compliantWithV1_2(const Model& model) {
  return compliantWith(HalVersion::V1_2, model);
}
inline Compliance compliantWithV1_0(const Request& request) {
  return compliantWith(HalVersion::V1_0, request);
}
inline Compliance compliantWithV1_1(const Request& request) {
  return compliantWith(HalVersion::V1_1, request);
}
inline Compliance compliantWithV1_2(const Request& request) {
  return compliantWith(HalVersion::V1_2, request);
}

/// `model` as HAL `version` expresses it: a copy using only that version's subset.
/// Errors: INVALID_ARGUMENT "cannot express the model in NN HAL 1.x: <losses joined by '; '>"
/// when compliantWith(version, model) reports losses.
Result<Model> convertTo(HalVersion version, const Model& model);
/// `request` as HAL `version` expresses it. Errors: INVALID_ARGUMENT naming the pools the
/// version cannot express (memory domain tokens before 1.3; hardware_buffer_blob before 1.2).
Result<Request> convertTo(HalVersion version, const Request& request);

inline Result<Model> convertToV1_0(const Model& model) {
  return convertTo(HalVersion::V1_0, model);
}
inline Result<Model> convertToV1_1(const Model& model) {
  return convertTo(HalVersion::V1_1, model);
}
inline Result<Model> convertToV1_2(const Model& model) {
  return convertTo(HalVersion::V1_2, model);
}
inline Result<Request> convertToV1_0(const Request& request) {
  return convertTo(HalVersion::V1_0, request);
}
inline Result<Request> convertToV1_1(const Request& request) {
  return convertTo(HalVersion::V1_1, request);
}
inline Result<Request> convertToV1_2(const Request& request) {
  return convertTo(HalVersion::V1_2, request);
}

}  // namespace nnhal
