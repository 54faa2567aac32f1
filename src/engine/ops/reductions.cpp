// REDUCE_SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN, REDUCE_ANY, REDUCE_ALL (types.hal 1.2+).
//
// Inputs: 0 the tensor (rank 1..4): TENSOR_FLOAT32 for SUM and PROD, also
// TENSOR_QUANT8_ASYMM(_SIGNED) for MAX and MIN (output scale and zero point equal to the
// input's), TENSOR_BOOL8 for ANY and ALL; 1 the axes, a 1-D TENSOR_INT32 whose entries lie
// in [-rank, rank) (negative values count from the end; duplicates allowed); 2 keep_dims
// BOOL. The output drops the reduced dimensions (keeps them with size 1 when keep_dims);
// when every dimension is dropped its shape is [1].
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/reduce.h"
#include "kernels/reduce_ops.h"

namespace nnhal::engine::ops {
namespace {

using kernels::ReduceKind;

/// Input 0 has a type the reduction supports.
Result<void> checkReduceType(const PrepareContext& ctx, ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kProd:
      return checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32});
    case ReduceKind::kMax:
    case ReduceKind::kMin:
      return checkInputType(ctx, 0,
                            {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM,
                             OperandType::TENSOR_QUANT8_ASYMM_SIGNED});
    default:
      return checkInputType(ctx, 0, {OperandType::TENSOR_BOOL8});
  }
}

PrepareResult prepareReduce(PrepareContext& ctx, ReduceKind kind) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(checkReduceType(ctx, kind));
  const OperandInfo& in = ctx.input(0);
  NNHAL_TRY(checkOutputType(ctx, 0, in.type));
  NNHAL_TRY(checkRank(ctx, 0, 1, 4));
  if (isQuant8Asymm(in.type)) {
    NNHAL_TRY(checkInputQuantization(ctx, 0));
    NNHAL_TRY(checkSameQuantization(ctx, 0, 0));
  }
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, 1, 1, 1));
  NNHAL_TRY(checkInputType(ctx, 2, {OperandType::BOOL}));
  NNHAL_ASSIGN_OR_RETURN(const uint8_t keepDims, ctx.scalar<uint8_t>(2));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> axes, ctx.values<int32_t>(1));
  if (axes.size() != ctx.input(1).dimensions[0]) {
    return invalidArgument(ctx.where(1) + " (axes) holds " + std::to_string(axes.size()) +
                           " values for " + std::to_string(ctx.input(1).dimensions[0]) +
                           " elements");
  }

  const std::vector<uint32_t>& dims = in.dimensions;
  const auto rank = static_cast<int64_t>(dims.size());
  std::array<bool, kernels::kMaxReduceRank> reduced{};
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i];
    if (a < -rank || a >= rank) {
      return invalidArgument(ctx.where(1) + " (axes) entry " + std::to_string(i) + " is " +
                             std::to_string(a) + ", outside [-" + std::to_string(rank) + ", " +
                             std::to_string(rank) + ")");
    }
    reduced[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  std::vector<uint32_t> outDims;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!reduced[d]) {
      outDims.push_back(dims[d]);
    } else if (keepDims != 0) {
      outDims.push_back(1);
    }
  }
  if (outDims.empty()) outDims.push_back(1);
  const auto layout =
      kernels::makeReduceLayout(dims, std::span<const bool>(reduced.data(), dims.size()));
  if (!layout) return invalidArgument(ctx.where(0) + " has an unsupported rank");
  NNHAL_TRY(ctx.setOutputShape(0, outDims));

  const kernels::ReduceLayout l = *layout;
  const size_t grain = std::max<size_t>(1, kElementGrain / std::max<size_t>(1, l.reducedCount));
  switch (in.type) {
    case OperandType::TENSOR_FLOAT32:
      return makeKernel([l, kind, grain](const RunContext& rc) -> Result<void> {
        const float* x = rc.input<float>(0);
        float* y = rc.output<float>(0);
        rc.parallel().forRange(l.outputCount, grain, [&](size_t begin, size_t end) {
          kernels::reduceFloat32(kind, x, y, l, begin, end);
        });
        return {};
      });
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeKernel([l, kind, grain](const RunContext& rc) -> Result<void> {
        const uint8_t* x = rc.input<uint8_t>(0);
        uint8_t* y = rc.output<uint8_t>(0);
        rc.parallel().forRange(l.outputCount, grain, [&](size_t begin, size_t end) {
          kernels::reduceQuant8<uint8_t>(kind, x, y, l, begin, end);
        });
        return {};
      });
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return makeKernel([l, kind, grain](const RunContext& rc) -> Result<void> {
        const int8_t* x = rc.input<int8_t>(0);
        int8_t* y = rc.output<int8_t>(0);
        rc.parallel().forRange(l.outputCount, grain, [&](size_t begin, size_t end) {
          kernels::reduceQuant8<int8_t>(kind, x, y, l, begin, end);
        });
        return {};
      });
    default:  // TENSOR_BOOL8
      return makeKernel([l, kind, grain](const RunContext& rc) -> Result<void> {
        const uint8_t* x = rc.input<uint8_t>(0);
        uint8_t* y = rc.output<uint8_t>(0);
        rc.parallel().forRange(l.outputCount, grain, [&](size_t begin, size_t end) {
          kernels::reduceBool8(kind, x, y, l, begin, end);
        });
        return {};
      });
  }
}

}  // namespace

PrepareResult prepareReduceAll(PrepareContext& ctx) { return prepareReduce(ctx, ReduceKind::kAll); }
PrepareResult prepareReduceAny(PrepareContext& ctx) { return prepareReduce(ctx, ReduceKind::kAny); }
PrepareResult prepareReduceMax(PrepareContext& ctx) { return prepareReduce(ctx, ReduceKind::kMax); }
PrepareResult prepareReduceMin(PrepareContext& ctx) { return prepareReduce(ctx, ReduceKind::kMin); }
PrepareResult prepareReduceProd(PrepareContext& ctx) {
  return prepareReduce(ctx, ReduceKind::kProd);
}
PrepareResult prepareReduceSum(PrepareContext& ctx) { return prepareReduce(ctx, ReduceKind::kSum); }

}  // namespace nnhal::engine::ops
