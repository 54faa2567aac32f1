// FULLY_CONNECTED: validation, output shape, and the GEMM kernel of gemm_kernel.h.
//
// Inputs (NNAPI): 0 input of rank 2..4, flattened to [batches, inputSize]; 1 weights
// [numUnits, inputSize]; 2 bias [numUnits] (omitted = zero); 3 fused activation.
// Output [batches, numUnits].
#include <string>

#include "engine/ops/conv_common.h"
#include "engine/ops/gemm_kernel.h"
#include "engine/ops/ops.h"
#include "kernels/fully_connected.h"

namespace nnhal::engine::ops {

PrepareResult prepareFullyConnected(PrepareContext& ctx) {
  using namespace spatial;
  NNHAL_TRY(checkCounts(ctx, {4}, 1));
  NNHAL_TRY(checkMainType(ctx));
  const OperandType type = ctx.input(0).type;
  const bool quant = isQuant8(type);
  NNHAL_TRY(checkType(ctx, 1, type));
  const bool hasBias = ctx.hasInput(2);
  if (hasBias) {
    NNHAL_TRY(checkType(ctx, 2, quant ? OperandType::TENSOR_INT32 : OperandType::TENSOR_FLOAT32));
    NNHAL_TRY(checkRank(ctx, 2, 1));
  }
  const size_t rank = ctx.input(0).dimensions.size();
  if (rank < 2 || rank > 4) {
    return invalidArgument(ctx.where(0) + " must have rank 2 to 4, got " + std::to_string(rank));
  }
  NNHAL_TRY(checkRank(ctx, 1, 2));
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation, readFusedActivation(ctx, 3));

  const auto& weights = ctx.input(1).dimensions;
  const uint32_t units = weights[0];
  const uint32_t inputSize = weights[1];
  if (units == 0 || inputSize == 0) {
    return invalidArgument(ctx.where(1) + " (weights) must have non-zero dimensions");
  }
  const size_t elements = ctx.input(0).elementCount();
  if (elements % inputSize != 0) {
    return invalidArgument(ctx.where(0) + " has " + std::to_string(elements) +
                           " elements, not a multiple of the input size " +
                           std::to_string(inputSize));
  }
  const auto batches = static_cast<uint32_t>(elements / inputSize);
  NNHAL_TRY(checkBiasLength(ctx, units, "units"));
  NNHAL_TRY(ctx.setOutputShape(0, {batches, units}));

  const kernels::ConvGeometry g = kernels::fullyConnectedGeometry(batches, inputSize, units);
  if (!quant) return makeFloatGemmKernel(ctx, g, activation);
  NNHAL_ASSIGN_OR_RETURN(auto multipliers, quantWeightedMultipliers(ctx, 0, units));
  return makeQuantGemmKernel(ctx, g, multipliers, activation);
}

}  // namespace nnhal::engine::ops
