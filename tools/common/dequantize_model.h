// tools/common/dequantize_model.h — a float32 copy of a quantized model.
//
// Benchmarks and tests compare float and quantized execution of the same network
// (MobileNet v2 quant and its float twin); this builds the float twin from the quantized
// graph instead of shipping a second model file.
//
// Thread safety: a pure function of its argument.
#pragma once

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::tools {

/// Returns `model` with the same operations, operand order and scalar parameters, computed
/// in float32:
///  - every TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM and
///    TENSOR_QUANT8_SYMM_PER_CHANNEL operand becomes TENSOR_FLOAT32, scale and zeroPoint 0
///    and no extraParams; constant values become (q - zeroPoint) * scale (per channel:
///    q * scales[c]);
///  - the TENSOR_INT32 bias (input 2) of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED
///    with a quantized input becomes TENSOR_FLOAT32 with value q * bias scale (per-channel
///    filters: q * input scale * filter scale[c]);
///  - every other operand (scalars, INT32 shape and axis tensors, float tensors) is kept.
/// Model inputs and outputs become float32 too: callers dequantize input data themselves.
/// Converted constants follow the TFLite import's rule: at most 128 bytes are appended to
/// operandValues (CONSTANT_COPY), larger ones go to one new sealed pool
/// (CONSTANT_REFERENCE, 64-byte aligned); pools nothing refers to any more are dropped.
/// Errors: INVALID_ARGUMENT for an operation whose float form differs from its quantized
/// form or that this conversion does not know (QUANTIZE, DEQUANTIZE, PAD_V2, IF, WHILE,
/// LSTMs...), for other quantized or float16 operand types (TENSOR_QUANT16_*,
/// TENSOR_FLOAT16), for referenced subgraphs, and for constants whose location lies
/// outside operandValues or their pool; each message names the operation or operand.
/// RESOURCE_EXHAUSTED_PERSISTENT when the new pool cannot be created.
Result<Model> dequantizeModel(const Model& model);

}  // namespace nnhal::tools
