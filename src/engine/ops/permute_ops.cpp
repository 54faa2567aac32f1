// TRANSPOSE, TILE and CHANNEL_SHUFFLE (types.hal): outputs that are strided views of input 0
// (TILE repeats the input through zero strides).
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/data_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/strided_copy.h"

namespace nnhal::engine::ops {

PrepareResult prepareTranspose(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 2, 1));
  NNHAL_TRY(data::checkMovedFloatOrQuant8(ctx, 1, 4));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  const size_t rank = inDims.size();
  std::vector<int32_t> perm(rank);
  if (!ctx.hasInput(1)) {
    // Omitted: reverse the dimensions.
    for (size_t d = 0; d < rank; ++d) perm[d] = static_cast<int32_t>(rank - 1 - d);
  } else {
    NNHAL_ASSIGN_OR_RETURN(perm, data::readIntVector(ctx, 1, rank));
  }
  std::vector<bool> used(rank, false);
  for (size_t d = 0; d < rank; ++d) {
    if (perm[d] < 0 || static_cast<size_t>(perm[d]) >= rank || used[perm[d]]) {
      return invalidArgument(ctx.where(1) + " (perm) is not a permutation of 0.." +
                             std::to_string(rank - 1) + " (entry " + std::to_string(d) + " is " +
                             std::to_string(perm[d]) + ")");
    }
    used[perm[d]] = true;
  }
  const auto inStrides = kernels::denseStrides(data::dimsOf(ctx.input(0)));
  std::vector<uint32_t> outDims(rank);
  std::vector<size_t> viewDims(rank);
  std::vector<ptrdiff_t> viewStrides(rank);
  for (size_t d = 0; d < rank; ++d) {
    const auto from = static_cast<size_t>(perm[d]);
    outDims[d] = inDims[from];
    viewDims[d] = inDims[from];
    viewStrides[d] = inStrides[from];
  }
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view, data::makeView(ctx, viewDims, viewStrides, 0));
  return data::makeViewKernel(view);
}

PrepareResult prepareTile(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(data::checkMainTensor(
      ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
            OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkRank(ctx, 0, 1, kernels::kMaxViewRank / 2));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  const size_t rank = inDims.size();
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> multiples, data::readIntVector(ctx, 1, rank));
  const auto inStrides = kernels::denseStrides(data::dimsOf(ctx.input(0)));
  std::vector<uint32_t> outDims(rank);
  // Output dimension d is [multiples[d], inDims[d]]: the copy index has stride 0.
  std::vector<size_t> viewDims;
  std::vector<ptrdiff_t> viewStrides;
  for (size_t d = 0; d < rank; ++d) {
    if (multiples[d] < 0) {
      return invalidArgument(ctx.where(1) + " (multiples) entry " + std::to_string(d) +
                             " must be >= 0, got " + std::to_string(multiples[d]));
    }
    NNHAL_ASSIGN_OR_RETURN(
        outDims[d],
        data::toDimension(ctx, uint64_t{inDims[d]} * static_cast<uint64_t>(multiples[d])));
    viewDims.push_back(static_cast<size_t>(multiples[d]));
    viewStrides.push_back(0);
    viewDims.push_back(inDims[d]);
    viewStrides.push_back(inStrides[d]);
  }
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view, data::makeView(ctx, viewDims, viewStrides, 0));
  return data::makeViewKernel(view);
}

PrepareResult prepareChannelShuffle(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(data::checkMovedFloatOrQuant8(ctx, 1, 4));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  NNHAL_ASSIGN_OR_RETURN(const int32_t groups, data::readInt(ctx, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axis, readAxis(ctx, 2, inDims.size()));
  if (groups < 1) {
    return invalidArgument(ctx.where(1) + " (num_groups) must be >= 1, got " +
                           std::to_string(groups));
  }
  const auto g = static_cast<size_t>(groups);
  const size_t channels = inDims[axis];
  if (channels % g != 0) {
    return invalidArgument(ctx.where(0) + " dimension " + std::to_string(axis) + " (" +
                           std::to_string(channels) + ") is not a multiple of num_groups " +
                           std::to_string(groups));
  }
  NNHAL_TRY(ctx.setOutputShape(0, inDims));
  // The axis is viewed as [groups, channels / groups] and transposed: output channel
  // i * groups + j is input channel j * (channels / groups) + i.
  const size_t outer = dimensionProduct(inDims, 0, axis);
  const size_t inner = dimensionProduct(inDims, axis + 1, inDims.size());
  const size_t perGroup = channels / g;
  const std::vector<size_t> viewDims{outer, perGroup, g, inner};
  const std::vector<ptrdiff_t> viewStrides{static_cast<ptrdiff_t>(channels * inner),
                                           static_cast<ptrdiff_t>(inner),
                                           static_cast<ptrdiff_t>(perGroup * inner), 1};
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view, data::makeView(ctx, viewDims, viewStrides, 0));
  return data::makeViewKernel(view);
}

}  // namespace nnhal::engine::ops
