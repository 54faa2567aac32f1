// hal/tflite/mapping_helpers.h — pieces the operator mapping functions share: reading
// constant tensors the file provides as values (axes, sizes, pad values), adding the
// operands NNAPI needs and TFLite leaves implicit (zero biases, float parameters of the
// input's precision, intermediate tensors) and checking option values.
//
// Every error is the operator's INVALID_ARGUMENT from OperatorContext::error().
// Thread safety: pure functions over the context they are given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "hal/tflite/operator_mapping.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal::tfl {

/// TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED.
bool isQuant8(OperandType type);

/// Error "<field> is <value>; it must be >= 1" unless value >= 1.
Result<void> expectPositive(const OperatorContext& c, int32_t value, std::string_view field);

/// A new constant float scalar holding `value`: FLOAT16 when `tensorType` is TENSOR_FLOAT16,
/// FLOAT32 otherwise (NNAPI's float parameters follow the precision of the input tensor).
uint32_t addFloatScalarFor(ModelBuilder& b, OperandType tensorType, float value);

/// A new TEMPORARY_VARIABLE operand with the type and quantization of operand `like` and
/// the given dimensions (0 = unknown), for tensors between the operations of one operator.
uint32_t addTemporaryLike(ModelBuilder& b, uint32_t like, std::vector<uint32_t> dimensions);

/// The window settings of a TFLite pooling or convolution operator's options, as the NN HAL
/// operation's implicit-padding scalars take them.
struct WindowSettings {
  int32_t padding = 0;     ///< NNAPI's implicit padding code (SAME or VALID)
  int32_t activation = 0;  ///< NNAPI's fused activation code
  int32_t strideW = 1;
  int32_t strideH = 1;
};

/// Reads and checks, in this order: padding, fused activation, stride_w, stride_h (>= 1).
/// Options: Pool2DOptions, Conv2DOptions, DepthwiseConv2DOptions or TransposeConvOptions.
template <typename Options>
Result<WindowSettings> windowSettings(OperatorContext& c, const Options& options) {
  WindowSettings w;
  NNHAL_ASSIGN_OR_RETURN(w.padding, c.paddingCode(options.padding()));
  NNHAL_ASSIGN_OR_RETURN(w.activation, c.fusedActivation(options.fused_activation_function()));
  w.strideW = options.stride_w();
  w.strideH = options.stride_h();
  NNHAL_TRY(expectPositive(c, w.strideW, "stride_w"));
  NNHAL_TRY(expectPositive(c, w.strideH, "stride_h"));
  return w;
}

/// The values of constant TENSOR_INT32 operand `operand` (the TFLite tensor `what` of the
/// operator). Errors when the operand is not a constant or not INT32.
Result<std::vector<int32_t>> constantInt32s(const OperatorContext& c, uint32_t operand,
                                            std::string_view what);
/// Same, for a constant holding exactly one value.
Result<int32_t> constantInt32(const OperatorContext& c, uint32_t operand, std::string_view what);
/// The real value of a one-element constant of type TENSOR_FLOAT32, TENSOR_FLOAT16,
/// TENSOR_INT32 or a quantized 8-bit type (dequantized with its scale and zero point).
Result<double> constantReal(const OperatorContext& c, uint32_t operand, std::string_view what);

/// The bias operand of a convolution-like operator: operator input `biasInput` when present,
/// otherwise a new all-zero constant with one value per output channel (dimension
/// `channelDim` of the filter). A quantized input's bias gets NNAPI's quantization (INT32,
/// scale input scale * filter scale, or 0 for a per-channel filter, zero point 0).
Result<uint32_t> biasOperand(OperatorContext& c, uint32_t input, uint32_t filter, size_t biasInput,
                             size_t channelDim);

/// Hybrid operators (TFLite's dynamic-range quantization: a float input, int8 or uint8
/// weights): `operand` itself unless it is 8-bit quantized beside a float `input`; then a new
/// operand of the input's float type, computed from it by a DEQUANTIZE added before the
/// operator, as TFLite's NNAPI delegate does (AddDequantizeOperatorsWhereNeeded).
uint32_t dequantizedForFloatInput(OperatorContext& c, uint32_t input, uint32_t operand);

/// The activation code of the recurrent operations (RNN, SVDF, LSTM and their sequence
/// forms): TFLite's own numbering, which NNAPI shares there (0 none, 1 relu, 2 relu1,
/// 3 relu6, 4 tanh). SIGN_BIT has no NNAPI equivalent.
Result<int32_t> recurrentActivation(const OperatorContext& c,
                                    ::tflite::ActivationFunctionType activation);

/// Operator inputs [first, first + count) in order; an omitted input (-1, or past the end
/// of the list) becomes a new NO_VALUE operand of type `omittedType`.
Result<std::vector<uint32_t>> inputsOrOmitted(OperatorContext& c, size_t first, size_t count,
                                              OperandType omittedType);

/// A normalized axis in [0, rank): `axis` + rank when negative. Error naming `field` when
/// the axis lies outside [-rank, rank).
Result<int32_t> normalizeAxis(const OperatorContext& c, int32_t axis, size_t rank,
                              std::string_view field);

}  // namespace nnhal::hal::tfl
