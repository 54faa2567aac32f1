// DETECTION_POSTPROCESSING: validation, output shapes, kernels/detection_postprocess.h.
//
// Inputs: 0 class scores [batches, anchors, classes], 1 box deltas [batches, anchors,
// boxEncoding >= 4], 2 anchors [anchors, 4] (all FLOAT32), 3..6 scale y, x, h, w (FLOAT32,
// > 0), 7 use regular NMS (BOOL), 8 max detections (INT32, > 0), 9 max classes per detection
// (INT32, > 0 for fast NMS), 10 max detections per class (INT32, > 0 for regular NMS),
// 11 score threshold, 12 IoU threshold (FLOAT32, >= 0), 13 background in label (BOOL).
// Outputs: 0 scores [batches, d], 1 boxes [batches, d, 4] (FLOAT32), 2 classes [batches, d]
// and 3 detection counts [batches] (INT32), with d = max detections (regular NMS) or max
// detections * max classes per detection (fast NMS).
#include <memory>

#include "engine/ops/conv_common.h"
#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/detection_postprocess.h"

namespace nnhal::engine::ops {
namespace {

using namespace detection;

Result<void> checkTypes(const PrepareContext& ctx) {
  for (size_t i = 0; i < 3; ++i) NNHAL_TRY(expectInput(ctx, i, OperandType::TENSOR_FLOAT32));
  NNHAL_TRY(expectOutput(ctx, 0, OperandType::TENSOR_FLOAT32));
  NNHAL_TRY(expectOutput(ctx, 1, OperandType::TENSOR_FLOAT32));
  NNHAL_TRY(expectOutput(ctx, 2, OperandType::TENSOR_INT32));
  return expectOutput(ctx, 3, OperandType::TENSOR_INT32);
}

Result<float> readPositive(const PrepareContext& ctx, size_t i, const char* what) {
  NNHAL_ASSIGN_OR_RETURN(const float value, readFloat32(ctx, i));
  if (!(value > 0.0f)) {
    return invalidArgument(ctx.where(i) + " (" + what + ") must be > 0, got " +
                           std::to_string(value));
  }
  return value;
}

Result<float> readNonNegative(const PrepareContext& ctx, size_t i, const char* what) {
  NNHAL_ASSIGN_OR_RETURN(const float value, readFloat32(ctx, i));
  if (!(value >= 0.0f)) {
    return invalidArgument(ctx.where(i) + " (" + what + ") must be >= 0, got " +
                           std::to_string(value));
  }
  return value;
}

Result<int32_t> readCount(const PrepareContext& ctx, size_t i, const char* what) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t value, readInt32(ctx, i));
  if (value <= 0) {
    return invalidArgument(ctx.where(i) + " (" + what + ") must be > 0, got " +
                           std::to_string(value));
  }
  return value;
}

Result<kernels::DetectionParams> readParams(const PrepareContext& ctx) {
  kernels::DetectionParams p;
  NNHAL_ASSIGN_OR_RETURN(p.scaleY, readPositive(ctx, 3, "y scale"));
  NNHAL_ASSIGN_OR_RETURN(p.scaleX, readPositive(ctx, 4, "x scale"));
  NNHAL_ASSIGN_OR_RETURN(p.scaleH, readPositive(ctx, 5, "height scale"));
  NNHAL_ASSIGN_OR_RETURN(p.scaleW, readPositive(ctx, 6, "width scale"));
  NNHAL_ASSIGN_OR_RETURN(p.regularNms, readBool(ctx, 7));
  NNHAL_ASSIGN_OR_RETURN(p.maxDetections, readCount(ctx, 8, "max detections"));
  NNHAL_ASSIGN_OR_RETURN(p.maxClassesPerDetection, readInt32(ctx, 9));
  NNHAL_ASSIGN_OR_RETURN(p.maxDetectionsPerClass, readInt32(ctx, 10));
  if (p.regularNms) {
    NNHAL_TRY(readCount(ctx, 10, "max detections per class"));
  } else {
    NNHAL_TRY(readCount(ctx, 9, "max classes per detection"));
  }
  NNHAL_ASSIGN_OR_RETURN(p.scoreThreshold, readNonNegative(ctx, 11, "score threshold"));
  NNHAL_ASSIGN_OR_RETURN(p.iouThreshold, readNonNegative(ctx, 12, "IoU threshold"));
  NNHAL_ASSIGN_OR_RETURN(p.backgroundInLabel, readBool(ctx, 13));
  return p;
}

}  // namespace

PrepareResult prepareDetectionPostprocessing(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 14, 14, 4));
  NNHAL_TRY(checkTypes(ctx));
  NNHAL_TRY(expectRanks(ctx, {3, 3, 2}));
  NNHAL_ASSIGN_OR_RETURN(kernels::DetectionParams p, readParams(ctx));
  const auto& dims = ctx.input(0).dimensions;
  p.batches = dims[0];
  p.anchors = dims[1];
  p.classes = dims[2];
  p.boxEncoding = ctx.input(1).dimensions[2];
  if (p.classes < 2) {
    return invalidArgument(ctx.where(0) + " must have at least 2 classes (class 0 is the " +
                           "background), got " + std::to_string(p.classes));
  }
  if (p.boxEncoding < 4) {
    return invalidArgument(ctx.where(1) + " dimension 2 (box encoding) must be >= 4, got " +
                           std::to_string(p.boxEncoding));
  }
  NNHAL_TRY(expectDim(ctx, 1, 0, p.batches, "batches"));
  NNHAL_TRY(expectDim(ctx, 1, 1, p.anchors, "anchors"));
  NNHAL_TRY(expectDim(ctx, 2, 0, p.anchors, "anchors"));
  NNHAL_TRY(expectDim(ctx, 2, 1, 4, "box size"));
  const uint64_t slots = p.regularNms ? uint64_t(p.maxDetections)
                                      : uint64_t(p.maxDetections) * p.maxClassesPerDetection;
  if (slots > UINT32_MAX / 4) {
    return invalidArgument(ctx.where(8) + " (max detections) is too large");
  }
  const uint32_t d = p.outputsPerBatch();
  NNHAL_TRY(ctx.setOutputShape(0, {p.batches, d}));
  NNHAL_TRY(ctx.setOutputShape(1, {p.batches, d, 4}));
  NNHAL_TRY(ctx.setOutputShape(2, {p.batches, d}));
  NNHAL_TRY(ctx.setOutputShape(3, {p.batches}));

  spatial::ScratchLayout layout;
  const size_t boxesAt = layout.add(size_t{p.anchors} * 4 * sizeof(float));
  const size_t maxScoresAt = layout.add(size_t{p.anchors} * sizeof(float));
  const size_t selectAt = layout.add(p.selectCapacity() * sizeof(uint32_t));
  const size_t orderAt = layout.add(size_t{p.classes - 1} * sizeof(uint32_t));
  ctx.requestScratch(layout.total());
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    if (p.batches == 0) return {};
    uint8_t* base = spatial::ScratchLayout::base(rc.scratch());
    kernels::DetectionScratch scratch;
    scratch.boxes = reinterpret_cast<float*>(base + boxesAt);
    scratch.maxScores = reinterpret_cast<float*>(base + maxScoresAt);
    scratch.select = reinterpret_cast<uint32_t*>(base + selectAt);
    scratch.classOrder = reinterpret_cast<uint32_t*>(base + orderAt);
    kernels::detectionPostprocess(p, rc.input<float>(0), rc.input<float>(1), rc.input<float>(2),
                                  scratch, rc.output<float>(0), rc.output<float>(1),
                                  rc.output<int32_t>(2), rc.output<int32_t>(3));
    return {};
  });
}

}  // namespace nnhal::engine::ops
