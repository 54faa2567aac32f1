// engine/ops/detection_common.h — checks, value readers and float conversions shared by the
// prepare functions of the detection family (detection_ops.h).
//
// These operations compute in float: quantized tensors are converted at the borders with
// kernels/detection_quant.h, as the NNAPI reference does. Boxes in TENSOR_QUANT16_ASYMM
// always have scale 0.125 and zero point 0. Every failure is INVALID_ARGUMENT with a message
// starting with the operation and operand ("ROI_ALIGN input 3 ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "engine/operation.h"
#include "kernels/roi_common.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine::ops::detection {

/// Input `i` is present and of exactly `type`.
Result<void> expectInput(const PrepareContext& ctx, size_t i, OperandType type);
/// Output `o` is of exactly `type`.
Result<void> expectOutput(const PrepareContext& ctx, size_t o, OperandType type);
/// Input `i` has exactly `rank` dimensions.
Result<void> expectRank(const PrepareContext& ctx, size_t i, size_t rank);
/// Inputs 0, 1, ... have exactly ranks[0], ranks[1], ... dimensions (checked in that order).
Result<void> expectRanks(const PrepareContext& ctx, std::initializer_list<size_t> ranks);
/// The feature map view of input `i`, a rank-4 tensor stored NHWC or (nchw) NCHW.
kernels::FeatureMap featureMapOf(const PrepareContext& ctx, size_t i, bool nchw);
/// Dimension `d` of input `i` equals `expected` (`what` names it in the message).
Result<void> expectDim(const PrepareContext& ctx, size_t i, size_t d, uint32_t expected,
                       const std::string& what);

/// The quantization of a QUANT16_ASYMM box tensor: scale 0.125, zero point 0.
Result<void> expectBoxQuantization(const PrepareContext& ctx, size_t i);
Result<void> expectOutputBoxQuantization(const PrepareContext& ctx, size_t o);

/// What a tensor operand of a detection operation must be, relative to input 0, whose type
/// (the operation's type) is TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM or
/// TENSOR_QUANT8_ASYMM_SIGNED.
enum class Role : uint8_t {
  kMain,           ///< the operation's type; when quantized, a valid scale and zero point
  kMainSameQuant,  ///< (outputs) the operation's type with input 0's scale and zero point
  kBoxes,          ///< TENSOR_FLOAT32, or TENSOR_QUANT16_ASYMM (scale 0.125, zero point 0)
  kSymm16,  ///< TENSOR_FLOAT32, or TENSOR_QUANT16_SYMM (its scale is the operation's to check)
  kInt32,   ///< TENSOR_INT32
};
/// Checks input 0 and then inputs 1.. against `inputs` and outputs 0.. against `outputs`:
/// every type first, then the quantizations.
Result<void> checkOperands(const PrepareContext& ctx, std::initializer_list<Role> inputs,
                           std::initializer_list<Role> outputs);

/// ROI_ALIGN and ROI_POOLING (after their type checks): input 0 the feature map (rank 4,
/// NHWC or, when the BOOL at `layoutInput` is true, NCHW; no zero size), 1 the rois
/// [numRois, 4], 2 their batch ids [numRois], 3 and 4 the output height and width (> 0), 5
/// and 6 the height and width strides (> 0). Sets output 0's shape to [numRois, outHeight,
/// outWidth, depth] in the input's layout.
Result<kernels::RoiWindow> prepareRoiWindow(PrepareContext& ctx, size_t layoutInput);

/// Scalar readers that check the operand type first (INT32, FLOAT32, BOOL).
Result<int32_t> readInt32(const PrepareContext& ctx, size_t i);
Result<float> readFloat32(const PrepareContext& ctx, size_t i);
Result<bool> readBool(const PrepareContext& ctx, size_t i);

/// Bytes per element of the tensor types these operations use (0 for others).
size_t elementBytes(OperandType type);

/// Converts n stored elements of `type` (TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM(_SIGNED),
/// TENSOR_QUANT16_ASYMM, TENSOR_QUANT16_SYMM) to float.
void loadFloats(OperandType type, float scale, int32_t zeroPoint, const void* in, size_t n,
                float* out);
/// Converts n floats to stored elements of `type` (same types), saturating.
void storeFloats(OperandType type, float scale, int32_t zeroPoint, const float* in, size_t n,
                 void* out);

/// The value of input `i` converted to float (see PrepareContext::values for when it is
/// not known yet).
Result<std::vector<float>> floatValues(const PrepareContext& ctx, size_t i);

/// `values` as stored bytes of output `o`'s type and quantization.
std::vector<uint8_t> storedBytes(const PrepareContext& ctx, size_t o,
                                 const std::vector<float>& values);

/// Copies `bytes` into output `o` of a run (nothing for an empty vector).
void copyToOutput(const RunContext& rc, size_t o, const std::vector<uint8_t>& bytes);

/// Transposes a float [n, c, h, w] tensor to [n, h, w, c].
std::vector<float> nchwToNhwc(const std::vector<float>& in, const std::vector<uint32_t>& dims);

}  // namespace nnhal::engine::ops::detection
