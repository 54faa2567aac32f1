// ARGMAX, ARGMIN and TOPK_V2 (types.hal): indices (and values) of the extreme elements
// along an axis.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/data_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/arg_topk.h"

namespace nnhal::engine::ops {
namespace {

/// Most tasks TOPK_V2 rows are split into (each has its own scratch slot).
constexpr size_t kTopKTasks = 8;

template <typename T>
std::unique_ptr<Kernel> makeArgKernel(size_t outer, size_t axisSize, size_t inner, bool isMin) {
  const size_t grain = std::max<size_t>(1, kElementGrain / std::max<size_t>(1, axisSize * inner));
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    const T* in = rc.input<T>(0);
    int32_t* out = rc.output<int32_t>(0);
    rc.parallel().forRange(outer, grain, [&](size_t begin, size_t end) {
      kernels::argMinMax<T>(in, axisSize, inner, isMin, out, begin, end);
    });
    return {};
  });
}

PrepareResult prepareArgMinMax(PrepareContext& ctx, bool isMin) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(
      checkInputType(ctx, 0,
                     {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
                      OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkRank(ctx, 0, 1, SIZE_MAX));
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::TENSOR_INT32));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axis, readAxis(ctx, 1, inDims.size()));
  if (inDims[axis] == 0) {
    return invalidArgument(ctx.where(0) + " dimension " + std::to_string(axis) +
                           " (the axis) is empty");
  }
  std::vector<uint32_t> outDims = inDims;
  outDims.erase(outDims.begin() + axis);
  if (outDims.empty()) outDims.push_back(1);  // a 1-D input gives shape [1], not rank 0
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  const size_t outer = dimensionProduct(inDims, 0, axis);
  const size_t inner = dimensionProduct(inDims, axis + 1, inDims.size());
  switch (ctx.input(0).type) {
    case OperandType::TENSOR_FLOAT32:
      return makeArgKernel<float>(outer, inDims[axis], inner, isMin);
    case OperandType::TENSOR_INT32:
      return makeArgKernel<int32_t>(outer, inDims[axis], inner, isMin);
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeArgKernel<uint8_t>(outer, inDims[axis], inner, isMin);
    default:
      return makeArgKernel<int8_t>(outer, inDims[axis], inner, isMin);
  }
}

template <typename T>
std::unique_ptr<Kernel> makeTopKKernel(size_t rows, size_t rowSize, size_t k) {
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    const T* in = rc.input<T>(0);
    T* values = rc.output<T>(0);
    int32_t* indices = rc.output<int32_t>(1);
    auto* scratch = static_cast<int32_t*>(rc.scratch());
    const size_t tasks = std::min(rows, kTopKTasks);
    rc.parallel().forRange(tasks, 1, [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        kernels::topK<T>(in, rowSize, k, values, indices, scratch + t * rowSize, rows * t / tasks,
                         rows * (t + 1) / tasks);
      }
    });
    return {};
  });
}

}  // namespace

PrepareResult prepareArgMax(PrepareContext& ctx) { return prepareArgMinMax(ctx, false); }

PrepareResult prepareArgMin(PrepareContext& ctx) { return prepareArgMinMax(ctx, true); }

PrepareResult prepareTopKV2(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 2));
  NNHAL_TRY(data::checkMainTensor(
      ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
            OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkOutputType(ctx, 1, OperandType::TENSOR_INT32));
  NNHAL_TRY(checkRank(ctx, 0, 1, SIZE_MAX));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  const size_t rowSize = inDims.back();
  NNHAL_ASSIGN_OR_RETURN(const int32_t k, data::readInt(ctx, 1));
  if (k < 1 || static_cast<size_t>(k) > rowSize) {
    return invalidArgument(ctx.where(1) + " (k) is " + std::to_string(k) + ", outside [1, " +
                           std::to_string(rowSize) + "]");
  }
  std::vector<uint32_t> outDims = inDims;
  outDims.back() = static_cast<uint32_t>(k);
  NNHAL_TRY(ctx.setOutputShape(0, outDims));
  NNHAL_TRY(ctx.setOutputShape(1, std::move(outDims)));
  const size_t rows = dimensionProduct(inDims, 0, inDims.size() - 1);
  ctx.requestScratch(std::min(rows, kTopKTasks) * rowSize * sizeof(int32_t));
  const auto kk = static_cast<size_t>(k);
  switch (ctx.input(0).type) {
    case OperandType::TENSOR_FLOAT32:
      return makeTopKKernel<float>(rows, rowSize, kk);
    case OperandType::TENSOR_INT32:
      return makeTopKKernel<int32_t>(rows, rowSize, kk);
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeTopKKernel<uint8_t>(rows, rowSize, kk);
    default:
      return makeTopKKernel<int8_t>(rows, rowSize, kk);
  }
}

}  // namespace nnhal::engine::ops
