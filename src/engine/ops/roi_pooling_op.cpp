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
  return checkOperands(ctx, {Role::kBoxes, Role::kInt32}, {Role::kMainSameQuant});
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
  NNHAL_ASSIGN_OR_RETURN(const kernels::RoiWindow window, prepareRoiWindow(ctx, 7));
  const kernels::RoiPoolingParams p{window};
  const uint32_t numRois = ctx.input(1).dimensions[0];

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
