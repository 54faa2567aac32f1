// One-input element-wise operations: ABS, EXP, FLOOR, LOG, NEG, RSQRT, SIN, SQRT, TANH,
// HARD_SWISH, ELU, LOGICAL_NOT (types.hal). The output has the input's shape.
#include <cstdint>
#include <limits>
#include <string>

#include "engine/ops/elementwise_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/activations.h"
#include "kernels/unary_math.h"

namespace nnhal::engine::ops {
namespace {

using kernels::UnaryOp;
constexpr size_t kAnyRank = std::numeric_limits<size_t>::max();

PrepareResult makeFloatKernel(UnaryOp op, size_t count) {
  return makeUnaryKernel<float, float>(count,
                                       [op](const float* in, float* out, size_t begin, size_t end) {
                                         kernels::unaryFloat32(op, in, out, begin, end);
                                       });
}

template <typename T>
PrepareResult makeTableKernel(size_t count, const kernels::Quant8Table<T>& table) {
  return makeUnaryKernel<T, T>(count, [table](const T* in, T* out, size_t begin, size_t end) {
    kernels::lookupQuant8<T>(in, out, table, begin, end);
  });
}

/// float32-only unary math (and int32 for ABS / NEG), input rank <= maxRank.
PrepareResult prepareUnaryMath(PrepareContext& ctx, UnaryOp op, bool allowInt32, size_t maxRank) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 1, 1));
  if (allowInt32) {
    NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32}));
  } else {
    NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32}));
  }
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(checkOutputType(ctx, 0, type));
  NNHAL_TRY(checkRank(ctx, 0, 0, maxRank));
  NNHAL_TRY(sameShapeOutput(ctx));
  const size_t count = ctx.input(0).elementCount();
  if (type == OperandType::TENSOR_INT32) {
    if (op == UnaryOp::kAbs) return makeUnaryKernel<int32_t, int32_t>(count, kernels::absInt32);
    return makeUnaryKernel<int32_t, int32_t>(count, kernels::negInt32);
  }
  return makeFloatKernel(op, count);
}

/// Common checks of the activations with quantized variants (TANH, HARD_SWISH): one input of
/// float32 or 8-bit asymmetric type, an output of the same type and shape.
Result<OperandType> checkQuantizableUnary(PrepareContext& ctx, size_t maxRank) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 1, 1));
  NNHAL_TRY(checkFloatOrQuant8Tensor(ctx, 0, maxRank));
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkOutputQuantization(ctx, 0));
  return type;
}

}  // namespace

PrepareResult prepareAbs(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kAbs, true, kAnyRank);
}
PrepareResult prepareExp(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kExp, false, kAnyRank);
}
PrepareResult prepareFloor(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kFloor, false, 4);
}
PrepareResult prepareLog(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kLog, false, kAnyRank);
}
PrepareResult prepareNeg(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kNeg, true, kAnyRank);
}
PrepareResult prepareRsqrt(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kRsqrt, false, kAnyRank);
}
PrepareResult prepareSin(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kSin, false, kAnyRank);
}
PrepareResult prepareSqrt(PrepareContext& ctx) {
  return prepareUnaryMath(ctx, UnaryOp::kSqrt, false, kAnyRank);
}

PrepareResult prepareTanh(PrepareContext& ctx) {
  NNHAL_ASSIGN_OR_RETURN(const OperandType type, checkQuantizableUnary(ctx, 4));
  const OperandInfo& in = ctx.input(0);
  const OperandInfo& out = ctx.output(0);
  if (isQuant8Asymm(type)) {
    // types.hal: the quantized output has scale 1/128 and zero point 128 (unsigned) or 0.
    const int32_t zeroPoint = type == OperandType::TENSOR_QUANT8_ASYMM ? 128 : 0;
    if (out.scale != 1.0f / 128.0f || out.zeroPoint != zeroPoint) {
      return invalidArgument(outputWhere(ctx, 0) + " must have scale 1/128 and zeroPoint " +
                             std::to_string(zeroPoint) + ", got (" + std::to_string(out.scale) +
                             ", " + std::to_string(out.zeroPoint) + ")");
    }
  }
  NNHAL_TRY(sameShapeOutput(ctx));
  const size_t count = in.elementCount();
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeTableKernel<uint8_t>(count,
                                      kernels::makeTanhTable<uint8_t>(in.scale, in.zeroPoint));
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return makeTableKernel<int8_t>(count, kernels::makeTanhTable<int8_t>(in.scale, in.zeroPoint));
    default:
      return makeFloatKernel(UnaryOp::kTanh, count);
  }
}

PrepareResult prepareHardSwish(PrepareContext& ctx) {
  NNHAL_ASSIGN_OR_RETURN(const OperandType type, checkQuantizableUnary(ctx, kAnyRank));
  NNHAL_TRY(sameShapeOutput(ctx));
  const OperandInfo& in = ctx.input(0);
  const OperandInfo& out = ctx.output(0);
  const size_t count = in.elementCount();
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeTableKernel<uint8_t>(count, kernels::makeHardSwishTable<uint8_t>(
                                                 in.scale, in.zeroPoint, out.scale, out.zeroPoint));
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return makeTableKernel<int8_t>(count, kernels::makeHardSwishTable<int8_t>(
                                                in.scale, in.zeroPoint, out.scale, out.zeroPoint));
    default:
      return makeFloatKernel(UnaryOp::kHardSwish, count);
  }
}

PrepareResult prepareElu(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32}));
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::FLOAT32}));
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::TENSOR_FLOAT32));
  NNHAL_ASSIGN_OR_RETURN(const float alpha, ctx.scalar<float>(1));
  NNHAL_TRY(sameShapeOutput(ctx));
  return makeUnaryKernel<float, float>(
      ctx.input(0).elementCount(), [alpha](const float* in, float* out, size_t begin, size_t end) {
        kernels::eluFloat32(in, out, alpha, begin, end);
      });
}

PrepareResult prepareLogicalNot(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 1, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_BOOL8}));
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::TENSOR_BOOL8));
  NNHAL_TRY(sameShapeOutput(ctx));
  return makeUnaryKernel<uint8_t, uint8_t>(ctx.input(0).elementCount(), kernels::logicalNot);
}

}  // namespace nnhal::engine::ops
