// BOX_WITH_NMS_LIMIT: validation, value-dependent output shapes, kernels/nms.h.
//
// Inputs: 0 scores [numRois, numClasses] (FLOAT32 or QUANT8_ASYMM(_SIGNED)), 1 boxes
// [numRois, numClasses * 4] (FLOAT32, or QUANT16_ASYMM scale 0.125 for quantized scores),
// 2 batch ids [numRois] (INT32; rows of one batch consecutive), 3 score threshold (FLOAT32),
// 4 max detections (INT32, < 0: no limit), 5 NMS kernel (INT32: 0 hard, 1 linear,
// 2 gaussian), 6 IoU threshold, 7 gaussian sigma, 8 NMS score threshold (FLOAT32).
// Outputs: 0 scores [n] (scores' type), 1 boxes [n, 4] (boxes' type), 2 classes [n] and
// 3 batch ids [n] (INT32), where n depends on the values. numClasses > 1; numRois may be 0.
//
// The whole result is computed by prepare from the input values (prepare runs again at
// execution when they are not constants); the kernel copies it into the outputs.
#include <cstring>
#include <memory>
#include <vector>

#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/nms.h"

namespace nnhal::engine::ops {
namespace {

using namespace detection;

Result<void> checkTypes(const PrepareContext& ctx) {
  return checkOperands(ctx, {Role::kBoxes, Role::kInt32},
                       {Role::kMain, Role::kBoxes, Role::kInt32, Role::kInt32});
}

Result<kernels::BoxWithNmsParams> readParams(const PrepareContext& ctx) {
  kernels::BoxWithNmsParams p;
  NNHAL_ASSIGN_OR_RETURN(p.scoreThreshold, readFloat32(ctx, 3));
  NNHAL_ASSIGN_OR_RETURN(p.maxDetections, readInt32(ctx, 4));
  NNHAL_ASSIGN_OR_RETURN(const int32_t kernel, readInt32(ctx, 5));
  if (kernel < 0 || kernel > 2) {
    return invalidArgument(ctx.where(5) +
                           " (NMS kernel) must be 0 (hard), 1 (linear) or 2 (gaussian), got " +
                           std::to_string(kernel));
  }
  p.nms.kernel = static_cast<kernels::NmsKernel>(kernel);
  NNHAL_ASSIGN_OR_RETURN(p.nms.iouThreshold, readFloat32(ctx, 6));
  NNHAL_ASSIGN_OR_RETURN(p.nms.sigma, readFloat32(ctx, 7));
  NNHAL_ASSIGN_OR_RETURN(p.nms.scoreThreshold, readFloat32(ctx, 8));
  return p;
}

}  // namespace

PrepareResult prepareBoxWithNmsLimit(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 9, 9, 4));
  NNHAL_TRY(checkTypes(ctx));
  NNHAL_TRY(expectRanks(ctx, {2, 2, 1}));
  const uint32_t numRois = ctx.input(0).dimensions[0];
  const uint32_t numClasses = ctx.input(0).dimensions[1];
  if (numClasses < 2) {
    return invalidArgument(ctx.where(0) + " must have at least 2 classes (class 0 is the " +
                           "background), got " + std::to_string(numClasses));
  }
  NNHAL_TRY(expectDim(ctx, 1, 0, numRois, "number of rois"));
  NNHAL_TRY(expectDim(ctx, 1, 1, numClasses * 4, "4 per class"));
  NNHAL_TRY(expectDim(ctx, 2, 0, numRois, "number of rois"));
  NNHAL_ASSIGN_OR_RETURN(const kernels::BoxWithNmsParams params, readParams(ctx));

  // The selection depends on the values.
  auto scores = floatValues(ctx, 0);
  auto boxes = floatValues(ctx, 1);
  auto batchIds = ctx.values<int32_t>(2);
  if (!scores) return std::unexpected(scores.error());
  if (!boxes) return std::unexpected(boxes.error());
  if (!batchIds) return std::unexpected(batchIds.error());
  if (batchIds->size() != numRois) {
    return invalidArgument(ctx.where(2) + " has " + std::to_string(batchIds->size()) +
                           " values, expected " + std::to_string(numRois));
  }
  kernels::BoxWithNmsResult result;
  if (!kernels::boxWithNmsLimit(scores->data(), boxes->data(), batchIds->data(), numRois,
                                numClasses, params, &result)) {
    return invalidArgument(ctx.where(1) + " holds a malformed box (x2 < x1 or y2 < y1)");
  }
  const auto n = static_cast<uint32_t>(result.indexes.size());
  NNHAL_TRY(ctx.setOutputShape(0, {n}));
  NNHAL_TRY(ctx.setOutputShape(1, {n, 4}));
  NNHAL_TRY(ctx.setOutputShape(2, {n}));
  NNHAL_TRY(ctx.setOutputShape(3, {n}));

  std::vector<uint8_t> scoreBytes = storedBytes(ctx, 0, result.scores);
  std::vector<uint8_t> boxBytes;
  if (ctx.input(1).type == OperandType::TENSOR_FLOAT32) {
    std::vector<float> selected;
    selected.reserve(size_t{n} * 4);
    for (uint32_t index : result.indexes) {
      selected.insert(selected.end(), boxes->begin() + size_t{index} * 4,
                      boxes->begin() + size_t{index} * 4 + 4);
    }
    boxBytes = storedBytes(ctx, 1, selected);
  } else {
    // Quantized boxes are copied as stored.
    NNHAL_ASSIGN_OR_RETURN(const std::vector<uint16_t> stored, ctx.values<uint16_t>(1));
    std::vector<uint16_t> selected;
    selected.reserve(size_t{n} * 4);
    for (uint32_t index : result.indexes) {
      selected.insert(selected.end(), stored.begin() + size_t{index} * 4,
                      stored.begin() + size_t{index} * 4 + 4);
    }
    boxBytes.resize(selected.size() * sizeof(uint16_t));
    if (!selected.empty()) std::memcpy(boxBytes.data(), selected.data(), boxBytes.size());
  }
  std::vector<uint8_t> classBytes(size_t{n} * sizeof(int32_t));
  std::vector<uint8_t> batchBytes(size_t{n} * sizeof(int32_t));
  for (uint32_t k = 0; k < n; ++k) {
    const auto cls = static_cast<int32_t>(result.indexes[k] % numClasses);
    std::memcpy(classBytes.data() + k * sizeof(int32_t), &cls, sizeof(int32_t));
    std::memcpy(batchBytes.data() + k * sizeof(int32_t), &result.batchIds[k], sizeof(int32_t));
  }
  return makeKernel([scoreBytes = std::move(scoreBytes), boxBytes = std::move(boxBytes),
                     classBytes = std::move(classBytes),
                     batchBytes = std::move(batchBytes)](const RunContext& rc) -> Result<void> {
    copyToOutput(rc, 0, scoreBytes);
    copyToOutput(rc, 1, boxBytes);
    copyToOutput(rc, 2, classBytes);
    copyToOutput(rc, 3, batchBytes);
    return {};
  });
}

}  // namespace nnhal::engine::ops
