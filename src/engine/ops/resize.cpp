// RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (types.hal 1.0-1.3).
//
// Inputs: 0 the image, rank 4 (TENSOR_FLOAT32 or TENSOR_QUANT8_ASYMM(_SIGNED); quantized
// outputs keep the input's scale and zero point); 1 output width and 2 output height, both
// INT32 (sizes > 0) or both FLOAT32 (scales: size = floor(inputSize * scale), which must be
// > 0); 3 layout BOOL (true: NCHW; optional for RESIZE_BILINEAR only); 4 align_corners and
// 5 half_pixel_centers, optional BOOLs (not both true). Only the batch dimension may be 0.
// NCHW runs as NHWC between transposes (spatial::prepareNchwAsNhwc).
#include <algorithm>
#include <cmath>
#include <string>

#include "engine/ops/conv_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/resize.h"

namespace nnhal::engine::ops {
namespace {

constexpr size_t kLayoutInput = 3;
constexpr size_t kAlignCornersInput = 4;
constexpr size_t kHalfPixelInput = 5;

/// The optional BOOL at input `i` (false when absent).
Result<bool> optionalBool(const PrepareContext& ctx, size_t i) {
  if (i >= ctx.inputCount()) return false;
  NNHAL_TRY(checkInputType(ctx, i, {OperandType::BOOL}));
  NNHAL_ASSIGN_OR_RETURN(const uint8_t value, ctx.scalar<uint8_t>(i));
  return value != 0;
}

/// Output size along one axis from input `i` (INT32 size or FLOAT32 scale).
Result<uint32_t> outputSize(const PrepareContext& ctx, size_t i, uint32_t inSize,
                            const char* what) {
  if (ctx.input(i).type == OperandType::INT32) {
    NNHAL_ASSIGN_OR_RETURN(const int32_t size, ctx.scalar<int32_t>(i));
    if (size <= 0) {
      return invalidArgument(ctx.where(i) + " (output " + what + ") must be > 0, got " +
                             std::to_string(size));
    }
    return static_cast<uint32_t>(size);
  }
  NNHAL_ASSIGN_OR_RETURN(const float scale, ctx.scalar<float>(i));
  const float size = std::floor(static_cast<float>(inSize) * scale);
  if (!std::isfinite(scale) || !(size >= 1.0f) || size > static_cast<float>(1 << 30)) {
    return invalidArgument(ctx.where(i) + " (" + what + " scale " + std::to_string(scale) +
                           ") gives an output " + what + " outside [1, 2^30] for input " + what +
                           " " + std::to_string(inSize));
  }
  return static_cast<uint32_t>(size);
}

template <typename T>
PrepareResult makeResizeKernel(const kernels::ResizeGeometry& g, bool bilinear) {
  const size_t perLine = std::max<size_t>(1, size_t{g.outWidth} * g.channels);
  const size_t grain = std::max<size_t>(1, kElementGrain / perLine);
  return makeKernel([g, bilinear, grain](const RunContext& rc) -> Result<void> {
    const T* input = rc.input<T>(0);
    T* output = rc.output<T>(0);
    rc.parallel().forRange(g.outputLines(), grain, [&](size_t begin, size_t end) {
      if (bilinear) {
        kernels::resizeBilinear<T>(g, input, begin, end, output);
      } else {
        kernels::resizeNearestNeighbor<T>(g, input, begin, end, output);
      }
    });
    return {};
  });
}

PrepareResult prepareResize(PrepareContext& ctx, bool bilinear) {
  NNHAL_TRY(checkOperandCounts(ctx, bilinear ? 3 : 4, 6, 1));
  NNHAL_TRY(checkFloatOrQuant8Tensor(ctx, 4, 4));
  const OperandInfo& in = ctx.input(0);
  if (isQuant8Asymm(in.type)) {
    NNHAL_TRY(checkInputQuantization(ctx, 0));
    NNHAL_TRY(checkSameQuantization(ctx, 0, 0));
  }
  NNHAL_TRY(checkInputType(ctx, 2, {OperandType::INT32, OperandType::FLOAT32}));
  NNHAL_TRY(checkInputType(ctx, 1, {ctx.input(2).type}));
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, optionalBool(ctx, kLayoutInput));
  NNHAL_ASSIGN_OR_RETURN(const bool alignCorners, optionalBool(ctx, kAlignCornersInput));
  NNHAL_ASSIGN_OR_RETURN(const bool halfPixelCenters, optionalBool(ctx, kHalfPixelInput));
  if (alignCorners && halfPixelCenters) {
    return invalidArgument(ctx.where(kHalfPixelInput) +
                           " (half_pixel_centers) cannot be true together with align_corners");
  }
  if (nchw) {
    return spatial::prepareNchwAsNhwc(
        ctx, kLayoutInput, bilinear ? &prepareResizeBilinear : &prepareResizeNearestNeighbor);
  }
  const std::vector<uint32_t>& dims = in.dimensions;
  if (dims[1] == 0 || dims[2] == 0 || dims[3] == 0) {
    return invalidArgument(ctx.where(0) + " must have non-zero height, width and depth");
  }
  kernels::ResizeGeometry g;
  g.batches = dims[0];
  g.inHeight = dims[1];
  g.inWidth = dims[2];
  g.channels = dims[3];
  NNHAL_ASSIGN_OR_RETURN(g.outWidth, outputSize(ctx, 1, g.inWidth, "width"));
  NNHAL_ASSIGN_OR_RETURN(g.outHeight, outputSize(ctx, 2, g.inHeight, "height"));
  g.alignCorners = alignCorners;
  g.halfPixelCenters = halfPixelCenters;
  NNHAL_TRY(ctx.setOutputShape(0, {g.batches, g.outHeight, g.outWidth, g.channels}));
  switch (in.type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeResizeKernel<uint8_t>(g, bilinear);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return makeResizeKernel<int8_t>(g, bilinear);
    default:
      return makeResizeKernel<float>(g, bilinear);
  }
}

}  // namespace

PrepareResult prepareResizeBilinear(PrepareContext& ctx) { return prepareResize(ctx, true); }

PrepareResult prepareResizeNearestNeighbor(PrepareContext& ctx) {
  return prepareResize(ctx, false);
}

}  // namespace nnhal::engine::ops
