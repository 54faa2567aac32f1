// GENERATE_PROPOSALS: validation, value-dependent output shapes, kernels/generate_proposals.h.
//
// Inputs: 0 scores [batches, height, width, anchors] (NCHW: [batches, anchors, height,
// width]; FLOAT32 or QUANT8_ASYMM(_SIGNED)), 1 deltas [batches, height, width, anchors * 4]
// (NCHW likewise; scores' type), 2 anchors [anchors, 4] (FLOAT32, or QUANT16_SYMM scale
// 0.125 for quantized scores), 3 image info [batches, 2] (FLOAT32, or QUANT16_ASYMM scale
// 0.125), 4 height stride, 5 width stride (FLOAT32), 6 pre-NMS top N, 7 post-NMS top N
// (INT32), 8 IoU threshold, 9 min size (FLOAT32), 10 layout (BOOL, true: NCHW).
// Outputs: 0 scores [n] (scores' type), 1 boxes [n, 4] (FLOAT32 or QUANT16_ASYMM), 2 batch
// ids [n] (INT32), where n depends on the values.
//
// As for BOX_WITH_NMS_LIMIT, prepare computes the result from the input values and the
// kernel copies it out.
#include <cstring>
#include <memory>
#include <vector>

#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/generate_proposals.h"

namespace nnhal::engine::ops {
namespace {

using namespace detection;

Result<void> checkTypes(const PrepareContext& ctx) {
  NNHAL_TRY(checkOperands(ctx, {Role::kMain, Role::kSymm16, Role::kBoxes},
                          {Role::kMain, Role::kBoxes, Role::kInt32}));
  const OperandInfo& anchors = ctx.input(2);
  if (anchors.type == OperandType::TENSOR_QUANT16_SYMM && anchors.scale != 0.125f) {
    return invalidArgument(ctx.where(2) + " (anchors) must have scale 0.125, got " +
                           std::to_string(anchors.scale));
  }
  return {};
}

Result<kernels::ProposalParams> readParams(const PrepareContext& ctx) {
  kernels::ProposalParams p;
  NNHAL_ASSIGN_OR_RETURN(p.heightStride, readFloat32(ctx, 4));
  NNHAL_ASSIGN_OR_RETURN(p.widthStride, readFloat32(ctx, 5));
  NNHAL_ASSIGN_OR_RETURN(p.preNmsTopN, readInt32(ctx, 6));
  NNHAL_ASSIGN_OR_RETURN(p.postNmsTopN, readInt32(ctx, 7));
  NNHAL_ASSIGN_OR_RETURN(p.iouThreshold, readFloat32(ctx, 8));
  NNHAL_ASSIGN_OR_RETURN(p.minSize, readFloat32(ctx, 9));
  if (!(p.heightStride > 0.0f) || !(p.widthStride > 0.0f)) {
    return invalidArgument(ctx.where(4) + " and input 5 (strides) must be > 0, got " +
                           std::to_string(p.heightStride) + " and " +
                           std::to_string(p.widthStride));
  }
  return p;
}

}  // namespace

PrepareResult prepareGenerateProposals(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 11, 11, 3));
  NNHAL_TRY(checkTypes(ctx));
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, readBool(ctx, 10));
  NNHAL_TRY(expectRanks(ctx, {4, 4, 2, 2}));
  NNHAL_ASSIGN_OR_RETURN(kernels::ProposalParams p, readParams(ctx));
  const kernels::FeatureMap scoreMap = featureMapOf(ctx, 0, nchw);
  p.batches = scoreMap.batches;
  p.height = scoreMap.height;
  p.width = scoreMap.width;
  p.anchors = scoreMap.depth;
  NNHAL_TRY(expectDim(ctx, 1, 0, p.batches, "batches"));
  NNHAL_TRY(expectDim(ctx, 1, nchw ? 2 : 1, p.height, "height"));
  NNHAL_TRY(expectDim(ctx, 1, nchw ? 3 : 2, p.width, "width"));
  NNHAL_TRY(expectDim(ctx, 1, nchw ? 1 : 3, p.anchors * 4, "4 per anchor"));
  NNHAL_TRY(expectDim(ctx, 2, 0, p.anchors, "anchors"));
  NNHAL_TRY(expectDim(ctx, 2, 1, 4, "box size"));
  NNHAL_TRY(expectDim(ctx, 3, 0, p.batches, "batches"));
  NNHAL_TRY(expectDim(ctx, 3, 1, 2, "image height and width"));

  auto scores = floatValues(ctx, 0);
  auto deltas = floatValues(ctx, 1);
  auto anchors = floatValues(ctx, 2);
  auto imageInfo = floatValues(ctx, 3);
  if (!scores) return std::unexpected(scores.error());
  if (!deltas) return std::unexpected(deltas.error());
  if (!anchors) return std::unexpected(anchors.error());
  if (!imageInfo) return std::unexpected(imageInfo.error());
  if (nchw) {
    *scores = nchwToNhwc(*scores, ctx.input(0).dimensions);
    *deltas = nchwToNhwc(*deltas, ctx.input(1).dimensions);
  }
  kernels::Proposals result;
  if (!kernels::generateProposals(p, scores->data(), deltas->data(), anchors->data(),
                                  imageInfo->data(), &result)) {
    return invalidArgument(ctx.where(2) + " holds a malformed anchor (x2 < x1 or y2 < y1)");
  }
  const auto n = static_cast<uint32_t>(result.scores.size());
  NNHAL_TRY(ctx.setOutputShape(0, {n}));
  NNHAL_TRY(ctx.setOutputShape(1, {n, 4}));
  NNHAL_TRY(ctx.setOutputShape(2, {n}));
  std::vector<uint8_t> scoreBytes = storedBytes(ctx, 0, result.scores);
  std::vector<uint8_t> boxBytes = storedBytes(ctx, 1, result.rois);
  std::vector<uint8_t> batchBytes(result.batchIds.size() * sizeof(int32_t));
  if (!batchBytes.empty()) {
    std::memcpy(batchBytes.data(), result.batchIds.data(), batchBytes.size());
  }
  return makeKernel([scoreBytes = std::move(scoreBytes), boxBytes = std::move(boxBytes),
                     batchBytes = std::move(batchBytes)](const RunContext& rc) -> Result<void> {
    copyToOutput(rc, 0, scoreBytes);
    copyToOutput(rc, 1, boxBytes);
    copyToOutput(rc, 2, batchBytes);
    return {};
  });
}

}  // namespace nnhal::engine::ops
