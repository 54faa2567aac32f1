// L2_POOL_2D: the parameters of AVERAGE_POOL_2D (explicit paddings or an implicit padding
// code, strides, filter size, fused activation, optional layout BOOL), on TENSOR_FLOAT32
// only; output = sqrt(mean(x^2)) over each window (kernels/l2_pool.h). NCHW runs as NHWC
// between transposes (spatial::prepareNchwAsNhwc).
#include <algorithm>
#include <string>

#include "engine/ops/conv_common.h"
#include "engine/ops/ops.h"
#include "kernels/l2_pool.h"
#include "kernels/quantization.h"

namespace nnhal::engine::ops {
namespace {

// Below this many window reads the operation runs on the calling thread.
constexpr size_t kSerialWork = 1 << 16;

}  // namespace

PrepareResult prepareL2Pool2D(PrepareContext& ctx) {
  using namespace spatial;
  NNHAL_TRY(checkCounts(ctx, {7, 8, 10, 11}, 1));
  NNHAL_TRY(checkType(ctx, 0, OperandType::TENSOR_FLOAT32));
  if (ctx.output(0).type != OperandType::TENSOR_FLOAT32) {
    return invalidArgument(outputWhere(ctx, 0) + " must be TENSOR_FLOAT32, got " +
                           std::string(toString(ctx.output(0).type)));
  }
  NNHAL_TRY(checkRank(ctx, 0, 4));
  NNHAL_ASSIGN_OR_RETURN(WindowParams w, parseWindow(ctx, WindowLayout{1, 2, false}));
  if (w.nchw) return prepareNchwAsNhwc(ctx, w.layoutInput, &prepareL2Pool2D);
  const int32_t filterWidth = w.extras[0];
  const int32_t filterHeight = w.extras[1];
  if (filterWidth <= 0 || filterHeight <= 0) {
    return invalidArgument(ctx.where(w.implicitPadding ? 4 : 7) + " (filter size " +
                           std::to_string(filterWidth) + "x" + std::to_string(filterHeight) +
                           ") must be positive");
  }
  const auto& in = ctx.input(0).dimensions;
  if (in[1] == 0 || in[2] == 0 || in[3] == 0) {
    return invalidArgument(ctx.where(0) + " must have non-zero height, width and depth");
  }
  uint32_t outHeight = 0, outWidth = 0;
  NNHAL_TRY(resolveWindow(ctx, w, in[1], in[2], static_cast<uint32_t>(filterHeight),
                          static_cast<uint32_t>(filterWidth), &outHeight, &outWidth));
  NNHAL_TRY(ctx.setOutputShape(0, {in[0], outHeight, outWidth, in[3]}));

  kernels::PoolGeometry g;
  g.batches = in[0];
  g.inHeight = in[1];
  g.inWidth = in[2];
  g.depth = in[3];
  g.filterHeight = static_cast<uint32_t>(filterHeight);
  g.filterWidth = static_cast<uint32_t>(filterWidth);
  g.outHeight = outHeight;
  g.outWidth = outWidth;
  g.padTop = w.padTop;
  g.padLeft = w.padLeft;
  g.strideHeight = static_cast<uint32_t>(w.strideHeight);
  g.strideWidth = static_cast<uint32_t>(w.strideWidth);
  const size_t lines = g.outputLines();
  const size_t work = lines * g.outWidth * g.depth * g.filterHeight * g.filterWidth;
  const size_t grain =
      work <= kSerialWork ? std::max<size_t>(lines, 1) : std::max<size_t>(1, lines / kMaxTasks);
  float lo = 0.0f, hi = 0.0f;
  kernels::activationRangeFloat(w.activation, &lo, &hi);
  return makeKernel([g, lo, hi, grain](const RunContext& rc) -> Result<void> {
    const float* input = rc.input<float>(0);
    float* output = rc.output<float>(0);
    rc.parallel().forRange(g.outputLines(), grain, [&](size_t begin, size_t end) {
      kernels::l2PoolFloat(g, input, lo, hi, begin, end, output);
    });
    return {};
  });
}

}  // namespace nnhal::engine::ops
