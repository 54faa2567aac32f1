#include "engine/ops/elementwise_common.h"

#include <algorithm>
#include <vector>

namespace nnhal::engine::ops {

Result<kernels::BroadcastLayout> broadcastToOutput(PrepareContext& ctx, size_t maxRank) {
  const size_t limit = std::min(maxRank, static_cast<size_t>(kernels::kMaxBroadcastRank));
  NNHAL_TRY(checkRank(ctx, 0, 0, limit));
  NNHAL_TRY(checkRank(ctx, 1, 0, limit));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outDims, broadcastDimensions(ctx, 0, 1));
  const auto layout =
      kernels::makeBroadcastLayout(ctx.input(0).dimensions, ctx.input(1).dimensions);
  if (!layout) return invalidArgument(ctx.where(1) + " cannot be broadcast with input 0");
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  return *layout;
}

Result<void> sameShapeOutput(PrepareContext& ctx) {
  return ctx.setOutputShape(0, ctx.input(0).dimensions);
}

PrepareResult makeFloatClampedKernel(const kernels::BroadcastLayout& layout,
                                     FusedActivationFunc activation, FloatClampedBinaryFn fn) {
  float lo = 0.0f;
  float hi = 0.0f;
  kernels::activationRangeFloat(activation, &lo, &hi);
  return makeBinaryKernel<float, float, float>(
      layout,
      [lo, hi, fn](const float* a, const float* b, float* o, const kernels::BroadcastLayout& l,
                   size_t begin, size_t end) { fn(a, b, o, l, lo, hi, begin, end); });
}

}  // namespace nnhal::engine::ops
