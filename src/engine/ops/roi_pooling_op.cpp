// ROI_POOLING: validation, output shape, kernels/roi_pooling.h.
//
// Inputs: 0 feature map [batches, height, width, depth] (NCHW: [batches, depth, height,
// width]; FLOAT32 or QUANT8_ASYMM(_SIGNED)), 1 rois [numRois, 4] (FLOAT32, or QUANT16_ASYMM
// scale 0.125 for a quantized map), 2 batch ids [numRois] (INT32), 3 output height, 4 output
// width (INT32, > 0), 5 height stride, 6 width stride (FLOAT32, > 0), 7 layout (BOOL, true:
// NCHW). Output 0 [numRois, outHeight, outWidth, depth] (NCHW: [numRois, depth, outHeight,
// outWidth]) of the map's type and quantization. Quantized rois are converted to float in
// scratch memory.
#include <algorithm>
#include <atomic>
#include <memory>

#include "engine/ops/conv_common.h"
#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/roi_pooling.h"

namespace nnhal::engine::ops {
namespace {

using namespace detection;

Result<void> checkTypes(const PrepareContext& ctx) {
  NNHAL_TRY(checkInputType(ctx, 0,
                           {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM,
                            OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(expectInput(ctx, 1,
                        type == OperandType::TENSOR_FLOAT32 ? OperandType::TENSOR_FLOAT32
                                                            : OperandType::TENSOR_QUANT16_ASYMM));
  NNHAL_TRY(expectInput(ctx, 2, OperandType::TENSOR_INT32));
  NNHAL_TRY(expectOutput(ctx, 0, type));
  if (type != OperandType::TENSOR_FLOAT32) {
    NNHAL_TRY(checkInputQuantization(ctx, 0));
    NNHAL_TRY(checkSameQuantization(ctx, 0, 0));
    NNHAL_TRY(expectBoxQuantization(ctx, 1));
  }
  return {};
}

Result<kernels::RoiPoolingParams> readParams(const PrepareContext& ctx) {
  kernels::RoiPoolingParams p;
  NNHAL_ASSIGN_OR_RETURN(const int32_t outHeight, readInt32(ctx, 3));
  NNHAL_ASSIGN_OR_RETURN(const int32_t outWidth, readInt32(ctx, 4));
  NNHAL_ASSIGN_OR_RETURN(const float heightStride, readFloat32(ctx, 5));
  NNHAL_ASSIGN_OR_RETURN(const float widthStride, readFloat32(ctx, 6));
  if (outHeight <= 0 || outWidth <= 0) {
    return invalidArgument(ctx.where(3) + " and input 4 (output size) must be > 0, got " +
                           std::to_string(outHeight) + "x" + std::to_string(outWidth));
  }
  if (!(heightStride > 0.0f) || !(widthStride > 0.0f)) {
    return invalidArgument(ctx.where(5) + " and input 6 (strides) must be > 0, got " +
                           std::to_string(heightStride) + " and " + std::to_string(widthStride));
  }
  p.outHeight = static_cast<uint32_t>(outHeight);
  p.outWidth = static_cast<uint32_t>(outWidth);
  p.heightScale = 1.0f / heightStride;
  p.widthScale = 1.0f / widthStride;
  return p;
}

template <typename T>
Result<void> run(const RunContext& rc, const kernels::RoiPoolingParams& p, T emptyValue,
                 const float* rois, uint32_t numRois, size_t grain) {
  std::atomic<bool> ok{true};
  rc.parallel().forRange(numRois, grain, [&](size_t begin, size_t end) {
    if (!kernels::roiPooling(p, rc.input<T>(0), emptyValue, rois, rc.input<int32_t>(2), numRois,
                             begin, end, rc.output<T>(0))) {
      ok = false;
    }
  });
  if (!ok) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "ROI_POOLING: a roi is malformed, out of the feature map, or has a bad batch id");
  }
  return {};
}

}  // namespace

PrepareResult prepareRoiPooling(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 8, 8, 1));
  NNHAL_TRY(checkTypes(ctx));
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, readBool(ctx, 7));
  NNHAL_TRY(expectRank(ctx, 0, 4));
  NNHAL_TRY(expectRank(ctx, 1, 2));
  NNHAL_TRY(expectRank(ctx, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(kernels::RoiPoolingParams p, readParams(ctx));
  const auto& dims = ctx.input(0).dimensions;
  p.input = kernels::FeatureMap{dims[0], dims[nchw ? 2 : 1], dims[nchw ? 3 : 2], dims[nchw ? 1 : 3],
                                nchw};
  if (p.input.batches == 0 || p.input.height == 0 || p.input.width == 0 || p.input.depth == 0) {
    return invalidArgument(ctx.where(0) + " must have non-zero batches, height, width and depth");
  }
  const uint32_t numRois = ctx.input(1).dimensions[0];
  NNHAL_TRY(expectDim(ctx, 1, 1, 4, "box size"));
  NNHAL_TRY(expectDim(ctx, 2, 0, numRois, "number of rois"));
  if (nchw) {
    NNHAL_TRY(ctx.setOutputShape(0, {numRois, p.input.depth, p.outHeight, p.outWidth}));
  } else {
    NNHAL_TRY(ctx.setOutputShape(0, {numRois, p.outHeight, p.outWidth, p.input.depth}));
  }

  const size_t grain = std::max<size_t>(1, numRois / spatial::kMaxTasks);
  const OperandType type = ctx.input(0).type;
  if (type == OperandType::TENSOR_FLOAT32) {
    return makeKernel([p, numRois, grain](const RunContext& rc) -> Result<void> {
      return run<float>(rc, p, 0.0f, rc.input<float>(1), numRois, grain);
    });
  }
  spatial::ScratchLayout layout;
  const size_t roisAt = layout.add(size_t{numRois} * 4 * sizeof(float));
  ctx.requestScratch(layout.total());
  const int32_t zeroPoint = ctx.input(0).zeroPoint;
  const bool isSigned = type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    if (numRois == 0) return {};
    auto* rois = reinterpret_cast<float*>(spatial::ScratchLayout::base(rc.scratch()) + roisAt);
    loadFloats(OperandType::TENSOR_QUANT16_ASYMM, 0.125f, 0, rc.input<void>(1), size_t{numRois} * 4,
               rois);
    if (isSigned) return run<int8_t>(rc, p, static_cast<int8_t>(zeroPoint), rois, numRois, grain);
    return run<uint8_t>(rc, p, static_cast<uint8_t>(zeroPoint), rois, numRois, grain);
  });
}

}  // namespace nnhal::engine::ops
