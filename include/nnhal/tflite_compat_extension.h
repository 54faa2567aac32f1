// nnhal/tflite_compat_extension.h — the org.nnhal.tflite_compat vendor extension (NN HAL 1.2
// extensions): TensorFlow Lite builtin operators the NN HAL has no operation for, with
// TFLite's semantics. docs/EXTENSIONS.md is the full definition; this header gives the
// names and codes a client needs.
//
// Encoding (types.hal 1.2 ExtensionTypeEncoding): an extension operation or operand type is
// the 32-bit value (prefix << 16) | type, where `type` is the low 16 bits listed below and
// `prefix` is the 16-bit number the model assigns to the extension's name in
// Model::extensionNameToPrefix. The prefix is the model's choice (the NNAPI runtime numbers
// the extensions a model uses from 1); prefix 0 is reserved, since (0 << 16) | type is a
// base type. Example: a model mapping "org.nnhal.tflite_compat" to prefix 3 writes GATHER_ND
// as operation type 0x00030001.
//
// The extension defines operations only, no operand types: every operand is of a base type.
//
// Thread safety: constants and pure functions.
#pragma once

#include <cstdint>
#include <string_view>

#include "nnhal/types.h"

namespace nnhal {

/// types.hal ExtensionTypeEncoding: the low 16 bits hold the type within the extension, the
/// high 16 bits the model's prefix for the extension.
inline constexpr uint32_t kExtensionLowBitsType = 16;
inline constexpr uint32_t kExtensionHighBitsPrefix = 16;

/// The extension prefix of an operation or operand type code (0 for base types).
constexpr uint16_t extensionPrefixOf(uint32_t code) {
  return static_cast<uint16_t>(code >> kExtensionLowBitsType);
}
/// The type within its extension of an operation or operand type code.
constexpr uint16_t extensionTypeOf(uint32_t code) { return static_cast<uint16_t>(code & 0xFFFFu); }

namespace tflite_compat {

/// The extension's name, as Model::extensionNameToPrefix and getSupportedExtensions spell it.
inline constexpr std::string_view kExtensionName = "org.nnhal.tflite_compat";

/// Operation types within the extension (the low 16 bits). Values are never reused.
enum class Operation : uint16_t {
  /// TFLite FLOOR_DIV: out = floor(a / b), element-wise with NumPy broadcasting.
  /// Inputs: 0 a, 1 b (both TENSOR_FLOAT32 or both TENSOR_INT32, rank <= 6).
  /// Output: 0 of the inputs' type and their broadcast shape.
  /// TENSOR_INT32: a zero divisor fails the execution (GENERAL_FAILURE), as in TFLite;
  /// INT32_MIN / -1 wraps to INT32_MIN. TENSOR_FLOAT32: IEEE 754 (x / 0 is +-inf or NaN).
  FLOOR_DIV = 0,
  /// TFLite GATHER_ND: slices of `params` selected by index tuples.
  /// Inputs: 0 params (TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, TENSOR_QUANT8_ASYMM,
  /// TENSOR_QUANT8_ASYMM_SIGNED or TENSOR_BOOL8, rank P >= 1), 1 indices (TENSOR_INT32,
  /// rank Q >= 1, last dimension N <= P).
  /// Output: 0 of params' type, scale and zero point, shape indices.shape[:-1] +
  /// params.shape[N:]. An index outside its dimension fails the execution (GENERAL_FAILURE).
  GATHER_ND = 1,
  /// TFLite RESHAPE of any element type: the inputs, output and rules of the types.hal RESHAPE
  /// (0 input, 1 shape: constant 1-D TENSOR_INT32 with at most one -1), for TENSOR_INT32 too,
  /// which the base RESHAPE of HAL 1.3 refuses (TFLite models reshape int32 index tensors).
  RESHAPE = 2,
  /// TFLite CONCATENATION of any element type: the inputs, output and rules of the types.hal
  /// CONCATENATION (0..n-1 tensors, n the INT32 axis), for TENSOR_INT32 too, which the base
  /// operation of HAL 1.3 refuses.
  CONCATENATION = 3,
};

/// "FLOOR_DIV", "GATHER_ND", "RESHAPE", "CONCATENATION"; empty for a type the extension does
/// not define.
std::string_view operationName(uint16_t type);

/// The OperationType of `operation` in a model that maps this extension to `prefix`.
constexpr OperationType operationType(uint16_t prefix, Operation operation) {
  return static_cast<OperationType>((uint32_t{prefix} << kExtensionLowBitsType) |
                                    static_cast<uint16_t>(operation));
}

/// The extension as IDevice::getSupportedExtensions lists it (no operand types).
Extension describe();

}  // namespace tflite_compat
}  // namespace nnhal
