// ROI_ALIGN: validation, output shape, kernels/roi_align.h.
//
// Inputs: 0 feature map [batches, height, width, depth] (NCHW: [batches, depth, height,
// width]; FLOAT32 or QUANT8_ASYMM(_SIGNED)), 1 rois [numRois, 4] (FLOAT32, or QUANT16_ASYMM
// scale 0.125 for a quantized map), 2 batch ids [numRois] (INT32), 3 output height, 4 output
// width (INT32, > 0), 5 height stride, 6 width stride (FLOAT32, > 0), 7 height sampling
// ratio, 8 width sampling ratio (INT32, >= 0; 0: adaptive), 9 layout (BOOL, true: NCHW).
// Output 0 [numRois, outHeight, outWidth, depth] (NCHW: [numRois, depth, outHeight,
// outWidth]) of the map's type. numRois may be 0 (an empty output).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>

#include "engine/ops/conv_common.h"
#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/roi_align.h"

namespace nnhal::engine::ops {
namespace {

/// Most samples one ROI_ALIGN output value may average (explicit sampling ratios).
constexpr int64_t kMaxRoiSamples = 1 << 16;
/// Most samples (bilinear interpolations of one channel) one ROI_ALIGN execution may take:
/// about a second of work.
constexpr uint64_t kMaxRoiWork = uint64_t{1} << 30;

using namespace detection;

Result<void> checkTypes(const PrepareContext& ctx) {
  return checkOperands(ctx, {Role::kBoxes, Role::kInt32}, {Role::kMain});
}

/// The sampling ratios (inputs 7 and 8): >= 0 (0: adaptive) and a bounded product.
Result<void> readSamplingRatios(const PrepareContext& ctx, kernels::RoiAlignParams& p) {
  NNHAL_ASSIGN_OR_RETURN(p.heightSamplingRatio, readInt32(ctx, 7));
  NNHAL_ASSIGN_OR_RETURN(p.widthSamplingRatio, readInt32(ctx, 8));
  if (p.heightSamplingRatio < 0 || p.widthSamplingRatio < 0) {
    return invalidArgument(ctx.where(7) + " and input 8 (sampling ratios) must be >= 0, got " +
                           std::to_string(p.heightSamplingRatio) + " and " +
                           std::to_string(p.widthSamplingRatio));
  }
  // Each output value averages ratio_h * ratio_w samples; the spec sets no bound, but a
  // ratio of 2^31 would keep a driver thread busy for centuries (one kernel call is never
  // interrupted), so explicit ratios are bounded. Adaptive ratios are bounded by the input.
  if (int64_t{p.heightSamplingRatio} * p.widthSamplingRatio > kMaxRoiSamples) {
    return invalidArgument(ctx.where(7) + " and input 8 (sampling ratios " +
                           std::to_string(p.heightSamplingRatio) + " x " +
                           std::to_string(p.widthSamplingRatio) + "): this driver takes at most " +
                           std::to_string(kMaxRoiSamples) + " samples per output value");
  }
  return {};
}

}  // namespace

PrepareResult prepareRoiAlign(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 10, 10, 1));
  NNHAL_TRY(checkTypes(ctx));
  NNHAL_ASSIGN_OR_RETURN(const kernels::RoiWindow window, prepareRoiWindow(ctx, 9));
  kernels::RoiAlignParams p{window};
  NNHAL_TRY(readSamplingRatios(ctx, p));
  const uint32_t numRois = ctx.input(1).dimensions[0];

  // The work of one execution: an explicit sampling ratio multiplies it by a factor that no
  // tensor size bounds, and a kernel call is never interrupted (not even by a deadline).
  const auto samplesAlong = [](int32_t ratio, uint32_t in, uint32_t out) -> uint64_t {
    return ratio > 0 ? static_cast<uint64_t>(ratio) : in / out + 2;  // adaptive: <= bin + 1
  };
  uint64_t work = 1;
  for (const uint64_t factor :
       {uint64_t{numRois}, uint64_t{p.outHeight}, uint64_t{p.outWidth}, uint64_t{p.input.depth},
        samplesAlong(p.heightSamplingRatio, p.input.height, p.outHeight),
        samplesAlong(p.widthSamplingRatio, p.input.width, p.outWidth)}) {
    if (__builtin_mul_overflow(work, factor, &work)) work = UINT64_MAX;
  }
  if (work > kMaxRoiWork) {
    return invalidArgument("ROI_ALIGN would take up to " + std::to_string(work) +
                           " samples in one execution; this driver takes at most " +
                           std::to_string(kMaxRoiWork));
  }

  const size_t grain = std::max<size_t>(1, numRois / spatial::kMaxTasks);
  const auto failure = [] {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "ROI_ALIGN: a roi is malformed, out of the feature map, or has a bad batch id");
  };
  const OperandType type = ctx.input(0).type;
  if (type == OperandType::TENSOR_FLOAT32) {
    return makeKernel([p, numRois, grain, failure](const RunContext& rc) -> Result<void> {
      std::atomic<bool> ok{true};
      rc.parallel().forRange(numRois, grain, [&](size_t begin, size_t end) {
        if (!kernels::roiAlignFloat(p, rc.input<float>(0), rc.input<float>(1), rc.input<int32_t>(2),
                                    numRois, begin, end, rc.output<float>(0))) {
          ok = false;
        }
      });
      if (!ok) return failure();
      return {};
    });
  }
  kernels::RoiAlignQuant q;
  q.inputScale = ctx.input(0).scale;
  q.inputZeroPoint = ctx.input(0).zeroPoint;
  q.outputScale = ctx.output(0).scale;
  q.outputZeroPoint = ctx.output(0).zeroPoint;
  const bool isSigned = type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  return makeKernel([p, q, numRois, grain, failure,
                     isSigned](const RunContext& rc) -> Result<void> {
    std::atomic<bool> ok{true};
    rc.parallel().forRange(numRois, grain, [&](size_t begin, size_t end) {
      const bool done = isSigned
                            ? kernels::roiAlignQuant(p, q, rc.input<int8_t>(0),
                                                     rc.input<uint16_t>(1), rc.input<int32_t>(2),
                                                     numRois, begin, end, rc.output<int8_t>(0))
                            : kernels::roiAlignQuant(p, q, rc.input<uint8_t>(0),
                                                     rc.input<uint16_t>(1), rc.input<int32_t>(2),
                                                     numRois, begin, end, rc.output<uint8_t>(0));
      if (!done) ok = false;
    });
    if (!ok) return failure();
    return {};
  });
}

}  // namespace nnhal::engine::ops
