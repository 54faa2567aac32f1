// engine/ops/conv_common.h — checks and parameter parsing shared by the prepare functions
// of the convolutions (CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D, TRANSPOSE_CONV_2D),
// FULLY_CONNECTED and the pools.
//
// Every failure is INVALID_ARGUMENT with a message that starts with the operation and the
// operand ("CONV_2D input 3 ..."). Names live in ops::spatial so they cannot collide with
// the helpers of the other operation files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/operation.h"
#include "engine/ops/shape_utils.h"
#include "kernels/quantization.h"
#include "kernels/window_geometry.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine::ops::spatial {

/// NNAPI implicit padding codes.
inline constexpr int32_t kPaddingSame = 1;
inline constexpr int32_t kPaddingValid = 2;

/// True for TENSOR_QUANT8_ASYMM and TENSOR_QUANT8_ASYMM_SIGNED.
bool isQuant8(OperandType type);
/// Stored range of an 8-bit asymmetric type: [0, 255] or [-128, 127].
void quant8Range(OperandType type, int32_t* qmin, int32_t* qmax);

/// Exactly `outputs` outputs and an input count among `allowed`.
Result<void> checkCounts(const PrepareContext& ctx, std::initializer_list<size_t> allowed,
                         size_t outputs);
/// Input 0 is TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED (FLOAT16 and
/// other types: "not supported"), and output 0 has the same type.
Result<void> checkMainType(const PrepareContext& ctx);
/// Input `i` is present and has type `expected`.
Result<void> checkType(const PrepareContext& ctx, size_t i, OperandType expected);
/// Input `i` has exactly rank `rank`.
Result<void> checkRank(const PrepareContext& ctx, size_t i, size_t rank);
/// Scale > 0 and finite, zero point inside the type's range, for quantized input `i` /
/// output `o`.
Result<void> checkQuant(const PrepareContext& ctx, size_t i);
Result<void> checkOutputQuant(const PrepareContext& ctx, size_t o);

/// The operands every convolution shares (CONV_2D, DEPTHWISE_CONV_2D, GROUPED_CONV_2D,
/// TRANSPOSE_CONV_2D; after checkMainType): the filter (input 1) present, of input 0's type or,
/// for a quantized input, TENSOR_QUANT8_SYMM_PER_CHANNEL; input 0 and the filter of rank 4;
/// the bias (input 2, may be omitted = zero) of rank 1, TENSOR_INT32 for a quantized input and
/// TENSOR_FLOAT32 otherwise.
Result<void> checkFilterAndBias(const PrepareContext& ctx);
/// GROUPED_CONV_2D and TRANSPOSE_CONV_2D: exactly one output; input 0 and output 0 TENSOR_FLOAT32,
/// TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED; input 0 and the filter (input 1) rank 4; the
/// filter of the input's type (or TENSOR_QUANT8_SYMM_PER_CHANNEL for quantized inputs); the bias
/// (input 2, may be omitted = zero) of rank 1 and TENSOR_FLOAT32 or (quantized) TENSOR_INT32; for
/// quantized operations valid input and output scales and zero points.
/// Errors: INVALID_ARGUMENT naming the operand.
Result<void> checkConvOperands(const PrepareContext& ctx);
/// CONV_2D and TRANSPOSE_CONV_2D (NHWC, after checkFilterAndBias): input 0 with no zero
/// size (checkNonEmptyImage), the filter [depthOut, filterHeight, filterWidth, depthIn] (OHWI)
/// with no zero size and depthIn equal to the input's depth.
Result<void> checkOhwiFilter(const PrepareContext& ctx);
/// The bias (input 2), when present, holds `channels` values (messages call them `what`:
/// "output channels", "units").
Result<void> checkBiasLength(const PrepareContext& ctx, uint32_t channels,
                             std::string_view what = "output channels");
/// A constant input `i` holds at least `bytes` bytes (inputs given at execution pass: the
/// request's validation checks their lengths).
Result<void> checkConstantBytes(const PrepareContext& ctx, size_t i, size_t bytes);
/// Input 0 (NHWC, rank 4) has non-zero height, width and depth.
Result<void> checkNonEmptyImage(const PrepareContext& ctx);

/// Reads INT32 scalar input `i` (checking its type).
Result<int32_t> readInt(const PrepareContext& ctx, size_t i);
/// Reads BOOL scalar input `i` (checking its type).
Result<bool> readBool(const PrepareContext& ctx, size_t i);
/// Reads the fused activation (INT32 0..3) at input `i`.
Result<FusedActivationFunc> readFusedActivation(const PrepareContext& ctx, size_t i);

/// Where the scalar parameters of a windowed operation sit. After the tensor inputs
/// (`first` = index of the first scalar) come either a padding code (implicit form) or four
/// explicit paddings (left, right, top, bottom), then stride width and height, then
/// `extras` operation-specific INT32 scalars (depth multiplier; filter width and height),
/// the fused activation, and optionally the layout BOOL and (if `dilation`) dilation
/// width and height.
struct WindowLayout {
  size_t first = 3;
  size_t extras = 0;
  bool dilation = true;
};

/// The parsed scalars of a windowed operation.
struct WindowParams {
  bool implicitPadding = false;
  int32_t paddingCode = 0;
  int32_t padLeft = 0, padRight = 0, padTop = 0, padBottom = 0;
  int32_t strideWidth = 1, strideHeight = 1;
  int32_t dilationWidth = 1, dilationHeight = 1;
  int32_t extras[2] = {0, 0};
  FusedActivationFunc activation = FusedActivationFunc::NONE;
  bool nchw = false;
  size_t layoutInput = 0;  ///< index of the layout BOOL (0 when absent)
};

/// Parses and checks (types and value ranges) the scalars: padding code 1 or 2, paddings
/// >= 0, strides and dilations > 0, activation 0..3; the input count decides the form.
Result<WindowParams> parseWindow(const PrepareContext& ctx, const WindowLayout& layout);

/// For the implicit form, fills in the paddings from the input and filter sizes by the NNAPI
/// rule (SAME: total = max((ceil(in / stride) - 1) * stride + effectiveFilter - in, 0),
/// before = total / 2; VALID: 0). Then checks every padding is smaller than the effective
/// filter size and computes the output height and width
/// ((in + before + after - effectiveFilter) / stride + 1, which must be >= 1).
Result<void> resolveWindow(const PrepareContext& ctx, WindowParams& w, uint32_t inHeight,
                           uint32_t inWidth, uint32_t filterHeight, uint32_t filterWidth,
                           uint32_t* outHeight, uint32_t* outWidth);

/// The window of an operation on NHWC input 0 ([batches, height, width, depth]) with a
/// filterHeight x filterWidth filter: resolveWindow's checks and output size, then output 0's
/// shape set to [batches, outHeight, outWidth, outDepth]. Returns the geometry (inDepth =
/// depth, the leading paddings, strides and dilations of `w`).
Result<kernels::WindowGeometry> resolveOutputWindow(PrepareContext& ctx, WindowParams& w,
                                                    uint32_t filterHeight, uint32_t filterWidth,
                                                    uint32_t outDepth);

/// Prepares an operation whose input 0 and output 0 use the NCHW layout (the BOOL at
/// `layoutInput` is true) by preparing it for NHWC with `prepareNhwc` (on a copy of the
/// context with input 0 and the declared output 0 permuted to NHWC and the layout BOOL
/// false), then wrapping that kernel: each run transposes input 0 to NHWC in scratch, runs
/// it into an NHWC scratch output and transposes the result into output 0.
/// Errors: those of prepareNhwc; INVALID_ARGUMENT for an input or declared output that is
/// not of rank 4.
Result<std::unique_ptr<Kernel>> prepareNchwAsNhwc(PrepareContext& ctx, size_t layoutInput,
                                                  PrepareFn prepareNhwc);

/// Requantization multipliers of a convolution-like operation, one per output channel:
/// input scale * filter scale (per channel for TENSOR_QUANT8_SYMM_PER_CHANNEL filters, whose
/// channelDim must be `channelDim` and whose scale count must be `channels`) / output scale.
/// For per-tensor filters the bias scale must equal input scale * filter scale (relative
/// tolerance 1e-6, as the NNAPI reference checks).
Result<std::vector<kernels::QuantizedMultiplier>> convMultipliers(const PrepareContext& ctx,
                                                                  size_t filter, size_t bias,
                                                                  uint32_t channelDim,
                                                                  size_t channels);
/// The quantized form of CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED: checkQuant of input
/// 0, checkOutputQuant of output 0, then convMultipliers of filter input 1 and bias input 2.
Result<std::vector<kernels::QuantizedMultiplier>> quantWeightedMultipliers(
    const PrepareContext& ctx, uint32_t channelDim, size_t channels);

/// Scratch regions, each 64-byte aligned; total() includes the slack to align the base.
class ScratchLayout {
 public:
  /// Reserves `bytes` and returns the region's offset from the aligned base.
  size_t add(size_t bytes);
  size_t total() const { return used_ == 0 ? 0 : used_ + 64; }
  /// The aligned base of the scratch buffer of a RunContext.
  static uint8_t* base(void* scratch);

 private:
  size_t used_ = 0;
};

/// Owned, 64-byte aligned bytes for packed weights (the address is stable across moves).
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t bytes)
      : storage_(bytes + 64),
        offset_(static_cast<size_t>(ScratchLayout::base(storage_.data()) - storage_.data())) {}
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(storage_.data() + offset_);
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(storage_.data() + offset_);
  }

 private:
  std::vector<uint8_t> storage_;
  size_t offset_ = 0;
};

/// Most work items a GEMM-based operation is split into (each gets its own scratch slot).
inline constexpr size_t kMaxTasks = 16;

}  // namespace nnhal::engine::ops::spatial
