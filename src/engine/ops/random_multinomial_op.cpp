// RANDOM_MULTINOMIAL: validation, output shape, kernels/multinomial.h.
//
// Inputs: 0 logits [batches, classes] (FLOAT32; classes > 0), 1 samples per batch (INT32,
// > 0), 2 seeds [2] (TENSOR_INT32). Output 0 [batches, samples] (TENSOR_INT32) of class
// indexes. The same seeds give the same samples.
#include <memory>

#include "engine/ops/conv_common.h"
#include "engine/ops/detection_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/multinomial.h"

namespace nnhal::engine::ops {

using namespace detection;

PrepareResult prepareRandomMultinomial(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(expectInput(ctx, 0, OperandType::TENSOR_FLOAT32));
  NNHAL_TRY(expectInput(ctx, 2, OperandType::TENSOR_INT32));
  NNHAL_TRY(expectOutput(ctx, 0, OperandType::TENSOR_INT32));
  NNHAL_TRY(expectRank(ctx, 0, 2));
  NNHAL_TRY(expectRank(ctx, 2, 1));
  NNHAL_TRY(expectDim(ctx, 2, 0, 2, "two seeds"));
  NNHAL_ASSIGN_OR_RETURN(const int32_t samples, readInt32(ctx, 1));
  if (samples <= 0) {
    return invalidArgument(ctx.where(1) + " (sample count) must be > 0, got " +
                           std::to_string(samples));
  }
  const uint32_t batches = ctx.input(0).dimensions[0];
  const uint32_t classes = ctx.input(0).dimensions[1];
  if (classes == 0) return invalidArgument(ctx.where(0) + " must have at least one class");
  NNHAL_TRY(ctx.setOutputShape(0, {batches, static_cast<uint32_t>(samples)}));
  spatial::ScratchLayout layout;
  const size_t cdfAt = layout.add(size_t{classes} * sizeof(double));
  ctx.requestScratch(layout.total());
  const auto sampleCount = static_cast<uint32_t>(samples);
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    if (batches == 0) return {};
    const int32_t* seeds = rc.input<int32_t>(2);
    auto* cdf = reinterpret_cast<double*>(spatial::ScratchLayout::base(rc.scratch()) + cdfAt);
    kernels::randomMultinomial(rc.input<float>(0), batches, classes, sampleCount,
                               kernels::multinomialSeed(seeds[0], seeds[1]), cdf,
                               rc.output<int32_t>(0));
    return {};
  });
}

}  // namespace nnhal::engine::ops
