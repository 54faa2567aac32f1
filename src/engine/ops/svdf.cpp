// SVDF: validation, output shapes and the kernel over kernels::svdfStep.
//
// Inputs: 0 input [batch, inputSize]; 1 weights_feature [filters, inputSize]; 2 weights_time
// [filters, memory]; 3 optional bias [units]; 4 state (in) [batch, memory * filters]; 5 INT32
// rank (> 0, dividing filters; units = filters / rank); 6 activation. Outputs: 0 state (out)
// [batch, memory * filters], 1 output [batch, units]. The state layout is the reference's:
// filter f's memory occupies [f * memory, (f + 1) * memory) of a batch row, newest last.
#include <string>

#include "engine/ops/ops.h"
#include "engine/ops/sequence_common.h"
#include "kernels/recurrent.h"

namespace nnhal::engine::ops {

PrepareResult prepareSvdf(PrepareContext& ctx) {
  constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;
  NNHAL_TRY(seq::checkInputCount(ctx, {7}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {2}));
  NNHAL_TRY(seq::requireType(ctx, 0, kFloat, "input"));
  NNHAL_TRY(seq::requireRank(ctx, 0, 2, "input"));
  const uint32_t batch = ctx.input(0).dimensions[0];
  const uint32_t inputSize = ctx.input(0).dimensions[1];
  NNHAL_TRY(seq::requireType(ctx, 1, kFloat, "weights_feature"));
  NNHAL_TRY(seq::requireRank(ctx, 1, 2, "weights_feature"));
  const uint32_t filters = ctx.input(1).dimensions[0];
  NNHAL_TRY(seq::requireShape(ctx, 1, {filters, inputSize}, "weights_feature"));
  NNHAL_TRY(seq::requireType(ctx, 2, kFloat, "weights_time"));
  NNHAL_TRY(seq::requireRank(ctx, 2, 2, "weights_time"));
  const uint32_t memory = ctx.input(2).dimensions[1];
  NNHAL_TRY(seq::requireShape(ctx, 2, {filters, memory}, "weights_time"));
  NNHAL_ASSIGN_OR_RETURN(const int32_t rank, seq::readInt32(ctx, 5, "rank"));
  if (rank <= 0 || filters % static_cast<uint32_t>(rank) != 0) {
    return invalidArgument(seq::describe(ctx, 5, "rank") + " must be positive and divide " +
                           std::to_string(filters) + " (the filters of weights_feature), got " +
                           std::to_string(rank));
  }
  const uint32_t units = filters / static_cast<uint32_t>(rank);
  NNHAL_ASSIGN_OR_RETURN(const bool hasBias, seq::optionalPresent(ctx, 3));
  if (hasBias) NNHAL_TRY(seq::requireTensor(ctx, 3, kFloat, {units}, "bias"));
  NNHAL_TRY(seq::requireTensor(ctx, 4, kFloat, {batch, memory * filters}, "state"));
  NNHAL_ASSIGN_OR_RETURN(const kernels::RecurrentActivation activation,
                         seq::readActivation(ctx, 6));
  NNHAL_TRY(seq::requireOutputType(ctx, 0, kFloat));
  NNHAL_TRY(seq::requireOutputType(ctx, 1, kFloat));
  NNHAL_TRY(ctx.setOutputShape(0, {batch, memory * filters}));
  NNHAL_TRY(ctx.setOutputShape(1, {batch, units}));

  kernels::SvdfShape shape;
  shape.batch = batch;
  shape.inputSize = inputSize;
  shape.units = units;
  shape.rank = static_cast<size_t>(rank);
  shape.memory = memory;
  shape.activation = activation;
  seq::ScratchPlan plan;
  const size_t scratchOffset = plan.reserve<float>(size_t{batch} * filters);
  ctx.requestScratch(plan.bytes());
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    kernels::svdfStep(shape, rc.input<float>(0), rc.input<float>(1), rc.input<float>(2),
                      hasBias ? rc.input<float>(3) : nullptr, rc.input<float>(4),
                      rc.output<float>(0), rc.output<float>(1),
                      seq::scratchAt<float>(rc, scratchOffset));
    return {};
  });
}

}  // namespace nnhal::engine::ops
