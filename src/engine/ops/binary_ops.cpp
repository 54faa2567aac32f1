// Two-input element-wise operations with NumPy-style broadcasting: SUB, DIV, POW, MAXIMUM,
// MINIMUM, PRELU, LOGICAL_AND, LOGICAL_OR (types.hal).
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "engine/ops/elementwise_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/binary_math.h"
#include "kernels/elementwise.h"
#include "kernels/quantization.h"

namespace nnhal::engine::ops {
namespace {

using kernels::BroadcastLayout;
constexpr size_t kAnyRank = std::numeric_limits<size_t>::max();
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kI32 = OperandType::TENSOR_INT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

/// Checks operand counts, that input 0 has one of `allowed` types, that input 1 and output 0
/// have the same type and that quantized operands have valid scales and zero points.
Result<OperandType> checkSameTypedBinary(const PrepareContext& ctx, size_t inputs,
                                         std::initializer_list<OperandType> allowed) {
  NNHAL_TRY(checkOperandCounts(ctx, inputs, inputs, 1));
  NNHAL_TRY(checkInputType(ctx, 0, allowed));
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(checkInputType(ctx, 1, {type}));
  NNHAL_TRY(checkOutputType(ctx, 0, type));
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkInputQuantization(ctx, 1));
  NNHAL_TRY(checkOutputQuantization(ctx, 0));
  return type;
}

Result<void> requireNoActivation(const PrepareContext& ctx, FusedActivationFunc activation) {
  if (activation != FusedActivationFunc::NONE) {
    return invalidArgument(ctx.where(2) +
                           " (fused activation) must be NONE for TENSOR_INT32 operands");
  }
  return {};
}

std::string unrepresentable(const PrepareContext& ctx) {
  return outputWhere(ctx, 0) + ": the input/output scales give an unrepresentable multiplier";
}

template <typename T>
PrepareResult makeQuantSubKernel(const PrepareContext& ctx, FusedActivationFunc activation,
                                 const BroadcastLayout& layout) {
  const OperandInfo& in1 = ctx.input(0);
  const OperandInfo& in2 = ctx.input(1);
  const OperandInfo& out = ctx.output(0);
  const auto [outMin, outMax] = quantizedActivationRange(out, activation);
  const auto params = kernels::makeQuantSubParams(
      in1.scale, in1.zeroPoint, in2.scale, in2.zeroPoint, out.scale, out.zeroPoint, outMin, outMax);
  if (!params) return invalidArgument(unrepresentable(ctx));
  return makeBinaryKernel<T, T, T>(
      layout, [p = *params](const T* a, const T* b, T* o, const BroadcastLayout& l, size_t begin,
                            size_t end) { kernels::addQuant8<T>(a, b, o, l, p, begin, end); });
}

template <typename T>
PrepareResult makeQuantMinMaxKernel(const PrepareContext& ctx, bool minimum,
                                    const BroadcastLayout& layout) {
  const OperandInfo& out = ctx.output(0);
  const auto tableA = kernels::makeRequantizeTable<T>(ctx.input(0).scale, ctx.input(0).zeroPoint,
                                                      out.scale, out.zeroPoint);
  const auto tableB = kernels::makeRequantizeTable<T>(ctx.input(1).scale, ctx.input(1).zeroPoint,
                                                      out.scale, out.zeroPoint);
  return makeBinaryKernel<T, T, T>(
      layout, [tableA, tableB, minimum](const T* a, const T* b, T* o, const BroadcastLayout& l,
                                        size_t begin, size_t end) {
        kernels::minMaxQuant8<T>(a, b, o, l, tableA, tableB, minimum, begin, end);
      });
}

PrepareResult prepareMinMax(PrepareContext& ctx, bool minimum) {
  NNHAL_ASSIGN_OR_RETURN(const OperandType type,
                         checkSameTypedBinary(ctx, 2, {kF32, kI32, kQ8, kQ8S}));
  NNHAL_ASSIGN_OR_RETURN(const BroadcastLayout layout, broadcastToOutput(ctx, kAnyRank));
  switch (type) {
    case kF32:
      return makeBinaryKernel<float, float, float>(
          layout, [minimum](const float* a, const float* b, float* o, const BroadcastLayout& l,
                            size_t begin, size_t end) {
            kernels::minMaxFloat32(a, b, o, l, minimum, begin, end);
          });
    case kI32:
      return makeBinaryKernel<int32_t, int32_t, int32_t>(
          layout, [minimum](const int32_t* a, const int32_t* b, int32_t* o,
                            const BroadcastLayout& l, size_t begin,
                            size_t end) { kernels::minMaxInt32(a, b, o, l, minimum, begin, end); });
    case kQ8:
      return makeQuantMinMaxKernel<uint8_t>(ctx, minimum, layout);
    default:
      return makeQuantMinMaxKernel<int8_t>(ctx, minimum, layout);
  }
}

template <typename T>
PrepareResult makeQuantPreluKernel(const PrepareContext& ctx, const BroadcastLayout& layout) {
  const OperandInfo& in = ctx.input(0);
  const OperandInfo& alpha = ctx.input(1);
  const OperandInfo& out = ctx.output(0);
  const auto params = kernels::makeQuantPreluParams(in.scale, in.zeroPoint, alpha.scale,
                                                    alpha.zeroPoint, out.scale, out.zeroPoint);
  if (!params) return invalidArgument(unrepresentable(ctx));
  return makeBinaryKernel<T, T, T>(
      layout, [p = *params](const T* a, const T* s, T* o, const BroadcastLayout& l, size_t begin,
                            size_t end) { kernels::preluQuant8<T>(a, s, o, l, p, begin, end); });
}

using BoolKernelFn = void (*)(const uint8_t*, const uint8_t*, uint8_t*, const BroadcastLayout&,
                              size_t, size_t) noexcept;

PrepareResult prepareLogical(PrepareContext& ctx, BoolKernelFn fn) {
  NNHAL_TRY(checkSameTypedBinary(ctx, 2, {OperandType::TENSOR_BOOL8}));
  NNHAL_ASSIGN_OR_RETURN(const BroadcastLayout layout, broadcastToOutput(ctx, kAnyRank));
  return makeBinaryKernel<uint8_t, uint8_t, uint8_t>(layout, fn);
}

}  // namespace

PrepareResult prepareSub(PrepareContext& ctx) {
  NNHAL_ASSIGN_OR_RETURN(const OperandType type,
                         checkSameTypedBinary(ctx, 3, {kF32, kI32, kQ8, kQ8S}));
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation, readActivation(ctx, 2));
  NNHAL_ASSIGN_OR_RETURN(const BroadcastLayout layout, broadcastToOutput(ctx, 4));
  switch (type) {
    case kF32:
      return makeFloatClampedKernel(layout, activation, kernels::subFloat32);
    case kI32:
      NNHAL_TRY(requireNoActivation(ctx, activation));
      return makeBinaryKernel<int32_t, int32_t, int32_t>(layout, kernels::subInt32);
    case kQ8:
      return makeQuantSubKernel<uint8_t>(ctx, activation, layout);
    default:
      return makeQuantSubKernel<int8_t>(ctx, activation, layout);
  }
}

PrepareResult prepareDiv(PrepareContext& ctx) {
  NNHAL_ASSIGN_OR_RETURN(const OperandType type, checkSameTypedBinary(ctx, 3, {kF32, kI32}));
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation, readActivation(ctx, 2));
  NNHAL_ASSIGN_OR_RETURN(const BroadcastLayout layout, broadcastToOutput(ctx, 4));
  if (type == kI32) {
    NNHAL_TRY(requireNoActivation(ctx, activation));
    // Division by zero gives 0, as the NNAPI reference (CTS div_int32_by_zero).
    return makeBinaryKernel<int32_t, int32_t, int32_t>(layout, kernels::divInt32);
  }
  return makeFloatClampedKernel(layout, activation, kernels::divFloat32);
}

PrepareResult preparePow(PrepareContext& ctx) {
  NNHAL_TRY(checkSameTypedBinary(ctx, 2, {kF32}));
  NNHAL_ASSIGN_OR_RETURN(const BroadcastLayout layout, broadcastToOutput(ctx, 4));
  return makeBinaryKernel<float, float, float>(layout, kernels::powFloat32);
}

PrepareResult prepareMaximum(PrepareContext& ctx) { return prepareMinMax(ctx, false); }

PrepareResult prepareMinimum(PrepareContext& ctx) { return prepareMinMax(ctx, true); }

PrepareResult preparePrelu(PrepareContext& ctx) {
  NNHAL_ASSIGN_OR_RETURN(const OperandType type, checkSameTypedBinary(ctx, 2, {kF32, kQ8, kQ8S}));
  NNHAL_ASSIGN_OR_RETURN(const BroadcastLayout layout, broadcastToOutput(ctx, kAnyRank));
  switch (type) {
    case kF32:
      return makeBinaryKernel<float, float, float>(layout, kernels::preluFloat32);
    case kQ8:
      return makeQuantPreluKernel<uint8_t>(ctx, layout);
    default:
      return makeQuantPreluKernel<int8_t>(ctx, layout);
  }
}

PrepareResult prepareLogicalAnd(PrepareContext& ctx) {
  return prepareLogical(ctx, kernels::logicalAnd);
}

PrepareResult prepareLogicalOr(PrepareContext& ctx) {
  return prepareLogical(ctx, kernels::logicalOr);
}

}  // namespace nnhal::engine::ops
