// STRIDED_SLICE, SLICE and SPLIT (types.hal): outputs that are strided views of input 0.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/data_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/strided_copy.h"

namespace nnhal::engine::ops {
namespace {

/// NNAPI's (TFLite legacy) clamping of a begin/end index of a dimension of size `dim` > 0:
/// negative indices count from the end; positive strides clamp into [0, dim], negative
/// strides into [-1, dim - 1].
int64_t clampedIndex(int64_t index, int64_t dim, bool positiveStride) {
  const auto wrap = [dim](int64_t v) { return ((v % dim) + dim) % dim; };
  if (positiveStride) return index >= dim ? dim : wrap(std::min(std::max(index, -dim), dim));
  return index < -dim ? -1 : wrap(std::min(std::max(index, -dim), dim - 1));
}

/// Number of steps of `stride` from `begin` before reaching `end` (exclusive).
int64_t stepCount(int64_t begin, int64_t end, int64_t stride) {
  if (stride > 0) return end > begin ? (end - begin + stride - 1) / stride : 0;
  return begin > end ? (begin - end - stride - 1) / -stride : 0;
}

}  // namespace

PrepareResult prepareStridedSlice(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 7, 7, 1));
  NNHAL_TRY(data::checkMovedFloatOrQuant8(ctx, 1, 4));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  const size_t rank = inDims.size();
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> begins, data::readIntVector(ctx, 1, rank));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> ends, data::readIntVector(ctx, 2, rank));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> steps, data::readIntVector(ctx, 3, rank));
  NNHAL_ASSIGN_OR_RETURN(const int32_t beginMask, data::readInt(ctx, 4));
  NNHAL_ASSIGN_OR_RETURN(const int32_t endMask, data::readInt(ctx, 5));
  NNHAL_ASSIGN_OR_RETURN(const int32_t shrinkMask, data::readInt(ctx, 6));

  const auto inStrides = kernels::denseStrides(data::dimsOf(ctx.input(0)));
  std::vector<size_t> viewDims(rank);
  std::vector<ptrdiff_t> viewStrides(rank);
  ptrdiff_t offset = 0;
  std::vector<uint32_t> outDims;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = inDims[d];
    const int64_t stride = steps[d];
    if (stride == 0) {
      return invalidArgument(ctx.where(3) + " (strides) entry " + std::to_string(d) +
                             " must not be 0");
    }
    const bool positive = stride > 0;
    const uint32_t bit = uint32_t{1} << d;
    int64_t first = 0;
    int64_t count = 0;
    if (dim > 0) {
      first = (static_cast<uint32_t>(beginMask) & bit) ? (positive ? 0 : dim - 1)
                                                       : clampedIndex(begins[d], dim, positive);
      const int64_t last = (static_cast<uint32_t>(endMask) & bit)
                               ? (positive ? dim : -1)
                               : clampedIndex(ends[d], dim, positive);
      count = stepCount(first, last, stride);
    }
    if (static_cast<uint32_t>(shrinkMask) & bit) {
      if (!positive) {
        return invalidArgument(ctx.where(3) + " (strides) entry " + std::to_string(d) +
                               " must be positive for a dimension in the shrink axis mask");
      }
      if (count != 1) {
        return invalidArgument(ctx.where(6) + " (shrink axis mask) shrinks dimension " +
                               std::to_string(d) + " whose slice has " + std::to_string(count) +
                               " elements, not 1");
      }
    } else {
      outDims.push_back(static_cast<uint32_t>(count));
    }
    viewDims[d] = static_cast<size_t>(count);
    viewStrides[d] = inStrides[d] * static_cast<ptrdiff_t>(stride);
    offset += static_cast<ptrdiff_t>(first) * inStrides[d];
  }
  // Shrinking every dimension leaves one element: shape [1], as the NNAPI reference
  // reports (a tensor of rank 0 would read as "unknown rank").
  if (outDims.empty()) outDims.push_back(1);
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view,
                         data::makeView(ctx, viewDims, viewStrides, offset));
  return data::makeViewKernel(view);
}

PrepareResult prepareSlice(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(data::checkMainTensor(
      ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
            OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkRank(ctx, 0, 1, kernels::kMaxViewRank));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  const size_t rank = inDims.size();
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> begins, data::readIntVector(ctx, 1, rank));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> sizes, data::readIntVector(ctx, 2, rank));
  const auto inStrides = kernels::denseStrides(data::dimsOf(ctx.input(0)));
  std::vector<size_t> viewDims(rank);
  std::vector<ptrdiff_t> viewStrides(rank);
  std::vector<uint32_t> outDims(rank);
  ptrdiff_t offset = 0;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t dim = inDims[d];
    const int64_t first = begins[d];
    if (first < 0 || first > dim) {
      return invalidArgument(ctx.where(1) + " (begin) entry " + std::to_string(d) + " is " +
                             std::to_string(first) + ", outside [0, " + std::to_string(dim) + "]");
    }
    const int64_t size = sizes[d] == -1 ? dim - first : sizes[d];
    if (size < 0 || first + size > dim) {
      return invalidArgument(ctx.where(2) + " (size) entry " + std::to_string(d) + " is " +
                             std::to_string(sizes[d]) + ", which does not fit dimension size " +
                             std::to_string(dim) + " from " + std::to_string(first));
    }
    outDims[d] = static_cast<uint32_t>(size);
    viewDims[d] = static_cast<size_t>(size);
    viewStrides[d] = inStrides[d];
    offset += static_cast<ptrdiff_t>(first) * inStrides[d];
  }
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view,
                         data::makeView(ctx, viewDims, viewStrides, offset));
  return data::makeViewKernel(view);
}

PrepareResult prepareSplit(PrepareContext& ctx) {
  if (ctx.outputCount() == 0) return invalidArgument("SPLIT needs at least one output");
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, ctx.outputCount()));
  NNHAL_TRY(data::checkMainTensor(
      ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
            OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkRank(ctx, 0, 1, kernels::kMaxViewRank));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axis, readAxis(ctx, 1, inDims.size()));
  NNHAL_ASSIGN_OR_RETURN(const int32_t splits, data::readInt(ctx, 2));
  if (splits < 1 || static_cast<size_t>(splits) != ctx.outputCount()) {
    return invalidArgument(ctx.where(2) + " (num_splits) is " + std::to_string(splits) +
                           " but the operation has " + std::to_string(ctx.outputCount()) +
                           " outputs");
  }
  if (inDims[axis] % static_cast<uint32_t>(splits) != 0) {
    return invalidArgument(ctx.where(0) + " dimension " + std::to_string(axis) + " (" +
                           std::to_string(inDims[axis]) + ") is not a multiple of num_splits " +
                           std::to_string(splits));
  }
  const uint32_t part = inDims[axis] / static_cast<uint32_t>(splits);
  std::vector<uint32_t> outDims = inDims;
  outDims[axis] = part;
  const std::vector<size_t> viewDims(outDims.begin(), outDims.end());
  const auto dense = kernels::denseStrides(data::dimsOf(ctx.input(0)));
  const std::vector<ptrdiff_t> viewStrides(dense.begin(), dense.begin() + inDims.size());
  std::vector<kernels::StridedView> views;
  for (size_t o = 0; o < ctx.outputCount(); ++o) {
    NNHAL_TRY(checkOutputType(ctx, o, ctx.input(0).type));
    NNHAL_TRY(checkSameQuantization(ctx, 0, o));
    NNHAL_TRY(ctx.setOutputShape(o, outDims));
    const ptrdiff_t offset = static_cast<ptrdiff_t>(o * part) * dense[axis];
    NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view,
                           data::makeView(ctx, viewDims, viewStrides, offset));
    views.push_back(view);
  }
  return data::makeViewsKernel(std::move(views));
}

}  // namespace nnhal::engine::ops
