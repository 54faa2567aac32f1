// Comparisons with NumPy-style broadcasting and a TENSOR_BOOL8 output: EQUAL, NOT_EQUAL,
// GREATER, GREATER_EQUAL, LESS, LESS_EQUAL (types.hal). Inputs are both TENSOR_BOOL8,
// TENSOR_FLOAT32, TENSOR_INT32, TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_ASYMM_SIGNED; quantized
// inputs may have different scales and zero points and are compared by real value.
#include <cstdint>
#include <limits>

#include "engine/ops/elementwise_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/comparisons.h"

namespace nnhal::engine::ops {
namespace {

using kernels::BroadcastLayout;
using kernels::CompareOp;

template <typename T>
PrepareResult makeQuantCompareKernel(const PrepareContext& ctx, CompareOp op,
                                     const BroadcastLayout& layout) {
  const auto realA = kernels::makeDequantTable<T>(ctx.input(0).scale, ctx.input(0).zeroPoint);
  const auto realB = kernels::makeDequantTable<T>(ctx.input(1).scale, ctx.input(1).zeroPoint);
  return makeBinaryKernel<T, T, uint8_t>(
      layout, [op, realA, realB](const T* a, const T* b, uint8_t* out, const BroadcastLayout& l,
                                 size_t begin, size_t end) {
        kernels::compareQuant8<T>(op, a, b, out, l, realA, realB, begin, end);
      });
}

PrepareResult prepareComparison(PrepareContext& ctx, CompareOp op) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(checkInputType(
      ctx, 0,
      {OperandType::TENSOR_BOOL8, OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
       OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(checkInputType(ctx, 1, {type}));
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::TENSOR_BOOL8));
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkInputQuantization(ctx, 1));
  NNHAL_ASSIGN_OR_RETURN(const BroadcastLayout layout,
                         broadcastToOutput(ctx, std::numeric_limits<size_t>::max()));
  switch (type) {
    case OperandType::TENSOR_FLOAT32:
      return makeBinaryKernel<float, float, uint8_t>(
          layout,
          [op](const float* a, const float* b, uint8_t* out, const BroadcastLayout& l, size_t begin,
               size_t end) { kernels::compareFloat32(op, a, b, out, l, begin, end); });
    case OperandType::TENSOR_INT32:
      return makeBinaryKernel<int32_t, int32_t, uint8_t>(
          layout,
          [op](const int32_t* a, const int32_t* b, uint8_t* out, const BroadcastLayout& l,
               size_t begin, size_t end) { kernels::compareInt32(op, a, b, out, l, begin, end); });
    case OperandType::TENSOR_BOOL8:
      return makeBinaryKernel<uint8_t, uint8_t, uint8_t>(
          layout,
          [op](const uint8_t* a, const uint8_t* b, uint8_t* out, const BroadcastLayout& l,
               size_t begin, size_t end) { kernels::compareBool8(op, a, b, out, l, begin, end); });
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeQuantCompareKernel<uint8_t>(ctx, op, layout);
    default:
      return makeQuantCompareKernel<int8_t>(ctx, op, layout);
  }
}

}  // namespace

PrepareResult prepareEqual(PrepareContext& ctx) {
  return prepareComparison(ctx, CompareOp::kEqual);
}
PrepareResult prepareNotEqual(PrepareContext& ctx) {
  return prepareComparison(ctx, CompareOp::kNotEqual);
}
PrepareResult prepareGreater(PrepareContext& ctx) {
  return prepareComparison(ctx, CompareOp::kGreater);
}
PrepareResult prepareGreaterEqual(PrepareContext& ctx) {
  return prepareComparison(ctx, CompareOp::kGreaterEqual);
}
PrepareResult prepareLess(PrepareContext& ctx) { return prepareComparison(ctx, CompareOp::kLess); }
PrepareResult prepareLessEqual(PrepareContext& ctx) {
  return prepareComparison(ctx, CompareOp::kLessEqual);
}

}  // namespace nnhal::engine::ops
