// AXIS_ALIGNED_BBOX_TRANSFORM: validation, output shape, kernels/bbox_transform.h.
//
// Inputs: 0 rois [numRois, 4] (FLOAT32, or QUANT16_ASYMM scale 0.125), 1 deltas [numRois,
// numClasses * 4] (FLOAT32, or QUANT8_ASYMM(_SIGNED) for quantized rois), 2 batch ids
// [numRois] (INT32), 3 image info [numBatches, 2] (the rois' type). Output 0 [numRois,
// numClasses * 4] of the rois' type. numRois may be 0. Quantized data is converted to float
// in scratch memory, transformed, and converted back.
#include <memory>

#include "engine/ops/conv_common.h"
#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/bbox_transform.h"

namespace nnhal::engine::ops {
namespace {

using namespace detection;

Result<void> checkTypes(const PrepareContext& ctx) {
  NNHAL_TRY(
      checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT16_ASYMM}));
  const OperandType type = ctx.input(0).type;
  if (type == OperandType::TENSOR_FLOAT32) {
    NNHAL_TRY(expectInput(ctx, 1, type));
    NNHAL_TRY(expectInput(ctx, 3, type));
  } else {
    NNHAL_TRY(checkInputType(
        ctx, 1, {OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
    NNHAL_TRY(checkInputQuantization(ctx, 1));
    NNHAL_TRY(expectInput(ctx, 3, type));
    NNHAL_TRY(expectBoxQuantization(ctx, 0));
    NNHAL_TRY(expectBoxQuantization(ctx, 3));
    NNHAL_TRY(expectOutputBoxQuantization(ctx, 0));
  }
  NNHAL_TRY(expectInput(ctx, 2, OperandType::TENSOR_INT32));
  return expectOutput(ctx, 0, type);
}

}  // namespace

PrepareResult prepareAxisAlignedBboxTransform(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 4, 4, 1));
  NNHAL_TRY(checkTypes(ctx));
  NNHAL_TRY(expectRanks(ctx, {2, 2, 1, 2}));
  const auto& roiDims = ctx.input(0).dimensions;
  const auto& deltaDims = ctx.input(1).dimensions;
  kernels::BboxTransformShape s;
  s.numRois = roiDims[0];
  s.numClasses = deltaDims[1] / 4;
  s.numBatches = ctx.input(3).dimensions[0];
  NNHAL_TRY(expectDim(ctx, 0, 1, 4, "box size"));
  if (s.numClasses == 0 || deltaDims[1] % 4 != 0) {
    return invalidArgument(ctx.where(1) + " dimension 1 must be a positive multiple of 4, got " +
                           std::to_string(deltaDims[1]));
  }
  NNHAL_TRY(expectDim(ctx, 1, 0, s.numRois, "number of rois"));
  NNHAL_TRY(expectDim(ctx, 2, 0, s.numRois, "number of rois"));
  NNHAL_TRY(expectDim(ctx, 3, 1, 2, "image height and width"));
  if (s.numBatches == 0) return invalidArgument(ctx.where(3) + " must have at least one batch");
  NNHAL_TRY(ctx.setOutputShape(0, {s.numRois, s.numClasses * 4}));

  if (ctx.input(0).type == OperandType::TENSOR_FLOAT32) {
    return makeKernel([s](const RunContext& rc) -> Result<void> {
      if (!kernels::axisAlignedBboxTransform(s, rc.input<float>(0), rc.input<float>(1),
                                             rc.input<int32_t>(2), rc.input<float>(3),
                                             rc.output<float>(0))) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "AXIS_ALIGNED_BBOX_TRANSFORM: batch id out of range or malformed roi");
      }
      return {};
    });
  }

  // Quantized: work in float in scratch.
  const size_t roiCount = size_t{s.numRois} * 4;
  const size_t deltaCount = roiCount * s.numClasses;
  const size_t infoCount = size_t{s.numBatches} * 2;
  spatial::ScratchLayout layout;
  const size_t roiAt = layout.add(roiCount * sizeof(float));
  const size_t deltaAt = layout.add(deltaCount * sizeof(float));
  const size_t infoAt = layout.add(infoCount * sizeof(float));
  const size_t outAt = layout.add(deltaCount * sizeof(float));
  ctx.requestScratch(layout.total());
  const OperandInfo deltas = ctx.input(1);
  const OperandInfo info = ctx.input(3);
  const OperandInfo out = ctx.output(0);
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    if (deltaCount == 0) return {};
    uint8_t* base = spatial::ScratchLayout::base(rc.scratch());
    auto* rois = reinterpret_cast<float*>(base + roiAt);
    auto* deltaValues = reinterpret_cast<float*>(base + deltaAt);
    auto* infoValues = reinterpret_cast<float*>(base + infoAt);
    auto* result = reinterpret_cast<float*>(base + outAt);
    loadFloats(OperandType::TENSOR_QUANT16_ASYMM, 0.125f, 0, rc.input<void>(0), roiCount, rois);
    loadFloats(deltas.type, deltas.scale, deltas.zeroPoint, rc.input<void>(1), deltaCount,
               deltaValues);
    loadFloats(info.type, info.scale, info.zeroPoint, rc.input<void>(3), infoCount, infoValues);
    if (!kernels::axisAlignedBboxTransform(s, rois, deltaValues, rc.input<int32_t>(2), infoValues,
                                           result)) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "AXIS_ALIGNED_BBOX_TRANSFORM: batch id out of range or malformed roi");
    }
    storeFloats(out.type, out.scale, out.zeroPoint, result, deltaCount, rc.output<void>(0));
    return {};
  });
}

}  // namespace nnhal::engine::ops
