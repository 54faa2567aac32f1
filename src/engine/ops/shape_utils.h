// engine/ops/shape_utils.h — checks and shape helpers shared by the prepare functions of
// the element-wise, activation, shape and reduction operations.
//
// Every check fails with INVALID_ARGUMENT and a message that starts with the operation
// name and the operand ("ADD input 1 ...", "SOFTMAX output 0 ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "engine/operation.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine::ops {

/// Elements per chunk when element-wise work is split across threads.
inline constexpr size_t kElementGrain = size_t{1} << 14;

/// "ADD output 0" — prefix for error messages about an output.
std::string outputWhere(const PrepareContext& ctx, size_t output);

/// True for TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED.
bool isQuant8Asymm(OperandType type);

/// Stored value range of an 8-bit quantized type: [0, 255] or [-128, 127].
std::pair<int32_t, int32_t> quant8Range(OperandType type);

/// Input count in [minInputs, maxInputs] (maxInputs = SIZE_MAX: no upper bound) and exactly
/// `outputs` outputs.
Result<void> checkOperandCounts(const PrepareContext& ctx, size_t minInputs, size_t maxInputs,
                                size_t outputs);

/// Input `i` is present and of one of the `allowed` types.
Result<void> checkInputType(const PrepareContext& ctx, size_t i,
                            std::initializer_list<OperandType> allowed);

/// Output `o` has type `expected`.
Result<void> checkOutputType(const PrepareContext& ctx, size_t o, OperandType expected);

/// Input `i` has a rank in [minRank, maxRank].
Result<void> checkRank(const PrepareContext& ctx, size_t i, size_t minRank, size_t maxRank);

/// For quantized tensors: input `i` has a positive finite scale and a zero point within
/// its type's range.
Result<void> checkInputQuantization(const PrepareContext& ctx, size_t i);
/// The same for output `o`.
Result<void> checkOutputQuantization(const PrepareContext& ctx, size_t o);

/// Output `o` has the same scale and zero point as input `i` (as types.hal requires of
/// e.g. RELU and RESHAPE).
Result<void> checkSameQuantization(const PrepareContext& ctx, size_t i, size_t o);

/// The clamp that fused activation `activation` puts on quantized output `out`, in stored
/// values ([min, max] within the type's range; the whole range for NONE).
std::pair<int32_t, int32_t> quantizedActivationRange(const OperandInfo& out,
                                                     FusedActivationFunc activation);

/// The operand types of the operations that map one float or 8-bit asymmetric tensor to
/// another: input 0 TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED of rank
/// minRank..maxRank, output 0 of the same type.
Result<void> checkFloatOrQuant8Tensor(const PrepareContext& ctx, size_t minRank, size_t maxRank);

/// Input 0 of RESHAPE and CONCATENATION (the moved tensor): TENSOR_FLOAT32 or an 8-bit
/// asymmetric type, and with `int32` (the tflite_compat extension's forms) TENSOR_INT32 too.
Result<void> checkMovedTensorType(const PrepareContext& ctx, bool int32);

/// Reads the INT32 fused activation of input `i` (0..3).
Result<FusedActivationFunc> readActivation(const PrepareContext& ctx, size_t i);

/// Reads the INT32 axis of input `i` and resolves a negative value (-rank..rank-1).
Result<uint32_t> readAxis(const PrepareContext& ctx, size_t i, size_t rank);

/// NumPy-style broadcast of the dimensions of inputs `a` and `b`.
Result<std::vector<uint32_t>> broadcastDimensions(const PrepareContext& ctx, size_t a, size_t b);

/// Product of dims[from, to).
size_t dimensionProduct(const std::vector<uint32_t>& dims, size_t from, size_t to);

}  // namespace nnhal::engine::ops
