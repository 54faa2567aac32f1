// HEATMAP_MAX_KEYPOINT: validation, output shapes, kernels/heatmap_max_keypoint.h.
//
// Inputs: 0 heatmaps [boxes, size, size, keypoints] (NCHW: [boxes, keypoints, size, size];
// FLOAT32 or QUANT8_ASYMM(_SIGNED)), 1 boxes [boxes, 4] (FLOAT32, or QUANT16_ASYMM scale
// 0.125 for quantized heatmaps), 2 layout (BOOL, true: NCHW). size >= 2.
// Outputs: 0 scores [boxes, keypoints] (heatmaps' type), 1 keypoints [boxes, keypoints, 2]
// (boxes' type). Quantized data is converted to float in scratch memory.
#include <algorithm>
#include <atomic>
#include <memory>

#include "engine/ops/conv_common.h"
#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/heatmap_max_keypoint.h"

namespace nnhal::engine::ops {
namespace {

using namespace detection;

// Boxes per parallel chunk.
constexpr size_t kBoxGrain = 4;

Result<void> checkTypes(const PrepareContext& ctx) {
  return checkOperands(ctx, {Role::kBoxes}, {Role::kMain, Role::kBoxes});
}

}  // namespace

PrepareResult prepareHeatmapMaxKeypoint(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 2));
  NNHAL_TRY(checkTypes(ctx));
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, readBool(ctx, 2));
  NNHAL_TRY(expectRanks(ctx, {4, 2}));
  kernels::HeatmapParams p;
  p.heatmap = featureMapOf(ctx, 0, nchw);
  if (p.heatmap.height != p.heatmap.width) {
    return invalidArgument(ctx.where(0) + " heatmaps must be square, got " +
                           std::to_string(p.heatmap.height) + "x" +
                           std::to_string(p.heatmap.width));
  }
  if (p.heatmap.width < 2) {
    return invalidArgument(ctx.where(0) + " heatmap size must be >= 2, got " +
                           std::to_string(p.heatmap.width));
  }
  NNHAL_TRY(expectDim(ctx, 1, 0, p.heatmap.batches, "boxes"));
  NNHAL_TRY(expectDim(ctx, 1, 1, 4, "box size"));
  const uint32_t boxes = p.heatmap.batches;
  const uint32_t keypoints = p.heatmap.depth;
  NNHAL_TRY(ctx.setOutputShape(0, {boxes, keypoints}));
  NNHAL_TRY(ctx.setOutputShape(1, {boxes, keypoints, 2}));
  const size_t grain = std::max<size_t>(kBoxGrain, boxes / spatial::kMaxTasks);
  const auto failure = [] {
    return fail(ErrorStatus::GENERAL_FAILURE, "HEATMAP_MAX_KEYPOINT: malformed box");
  };

  if (ctx.input(0).type == OperandType::TENSOR_FLOAT32) {
    return makeKernel([p, boxes, grain, failure](const RunContext& rc) -> Result<void> {
      std::atomic<bool> ok{true};
      rc.parallel().forRange(boxes, grain, [&](size_t begin, size_t end) {
        if (!kernels::heatmapMaxKeypoint(p, rc.input<float>(0), rc.input<float>(1), begin, end,
                                         rc.output<float>(0), rc.output<float>(1))) {
          ok = false;
        }
      });
      if (!ok) return failure();
      return {};
    });
  }

  const size_t heatmapCount = p.heatmap.elements();
  const size_t boxCount = size_t{boxes} * 4;
  const size_t scoreCount = size_t{boxes} * keypoints;
  spatial::ScratchLayout layout;
  const size_t heatmapAt = layout.add(heatmapCount * sizeof(float));
  const size_t boxesAt = layout.add(boxCount * sizeof(float));
  const size_t scoresAt = layout.add(scoreCount * sizeof(float));
  const size_t pointsAt = layout.add(scoreCount * 2 * sizeof(float));
  ctx.requestScratch(layout.total());
  const OperandInfo in = ctx.input(0);
  const OperandInfo scoreOut = ctx.output(0);
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    if (scoreCount == 0) return {};
    uint8_t* base = spatial::ScratchLayout::base(rc.scratch());
    auto* heatmap = reinterpret_cast<float*>(base + heatmapAt);
    auto* boxValues = reinterpret_cast<float*>(base + boxesAt);
    auto* scores = reinterpret_cast<float*>(base + scoresAt);
    auto* points = reinterpret_cast<float*>(base + pointsAt);
    loadFloats(in.type, in.scale, in.zeroPoint, rc.input<void>(0), heatmapCount, heatmap);
    loadFloats(OperandType::TENSOR_QUANT16_ASYMM, 0.125f, 0, rc.input<void>(1), boxCount,
               boxValues);
    std::atomic<bool> ok{true};
    rc.parallel().forRange(boxes, grain, [&](size_t begin, size_t end) {
      if (!kernels::heatmapMaxKeypoint(p, heatmap, boxValues, begin, end, scores, points)) {
        ok = false;
      }
    });
    if (!ok) return failure();
    storeFloats(scoreOut.type, scoreOut.scale, scoreOut.zeroPoint, scores, scoreCount,
                rc.output<void>(0));
    storeFloats(OperandType::TENSOR_QUANT16_ASYMM, 0.125f, 0, points, scoreCount * 2,
                rc.output<void>(1));
    return {};
  });
}

}  // namespace nnhal::engine::ops
