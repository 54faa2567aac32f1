// ADD and MUL: element-wise arithmetic with NumPy-style broadcasting (types.hal ADD, MUL).
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "engine/ops/elementwise_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/elementwise.h"
#include "kernels/quantization.h"

namespace nnhal::engine::ops {
namespace {

using kernels::BroadcastLayout;

enum class ArithOp { kAdd, kMul };

/// The kernel of a quantized ADD or MUL: `kernel` (addQuant8 / mulQuant8) over parallel
/// ranges of the output, with `params` (null: the scales give no representable multiplier).
template <typename T, typename Params, typename Kernel>
PrepareResult makeQuantArithKernel(const PrepareContext& ctx, const std::optional<Params>& params,
                                   const BroadcastLayout& layout, Kernel kernel) {
  if (!params) {
    return invalidArgument(outputWhere(ctx, 0) +
                           ": the input/output scales give an unrepresentable multiplier");
  }
  return makeKernel([p = *params, layout, kernel](const RunContext& rc) -> Result<void> {
    const T* a = rc.input<T>(0);
    const T* b = rc.input<T>(1);
    T* o = rc.output<T>(0);
    rc.parallel().forRange(layout.outputCount, kElementGrain, [&](size_t begin, size_t end) {
      kernel(a, b, o, layout, p, begin, end);
    });
    return {};
  });
}

template <typename T>
PrepareResult makeQuantKernel(const PrepareContext& ctx, ArithOp op, FusedActivationFunc activation,
                              const BroadcastLayout& layout) {
  const OperandInfo& in1 = ctx.input(0);
  const OperandInfo& in2 = ctx.input(1);
  const OperandInfo& out = ctx.output(0);
  const auto [outMin, outMax] = quantizedActivationRange(out, activation);
  if (op == ArithOp::kAdd) {
    return makeQuantArithKernel<T>(
        ctx,
        kernels::makeQuantAddParams(in1.scale, in1.zeroPoint, in2.scale, in2.zeroPoint, out.scale,
                                    out.zeroPoint, outMin, outMax),
        layout, [](auto&&... args) { kernels::addQuant8<T>(args...); });
  }
  // types.hal asks output_scale > input1_scale * input2_scale of a quantized MUL. nnhal
  // computes smaller output scales too, as TFLite does (converters write scales like 3e-35
  // where calibration saw only zeros, e.g. in LSTM states): every nonzero product saturates
  // (kernels/quantization.h). docs/ARCHITECTURE.md, "Conformance", lists this deviation.
  return makeQuantArithKernel<T>(
      ctx,
      kernels::makeQuantMulParams(in1.scale, in1.zeroPoint, in2.scale, in2.zeroPoint, out.scale,
                                  out.zeroPoint, outMin, outMax),
      layout, [](auto&&... args) { kernels::mulQuant8<T>(args...); });
}

PrepareResult prepareArith(PrepareContext& ctx, ArithOp op) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(
      checkInputType(ctx, 0,
                     {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
                      OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(checkInputType(ctx, 1, {type}));
  NNHAL_TRY(checkOutputType(ctx, 0, type));
  NNHAL_TRY(checkRank(ctx, 0, 0, 4));
  NNHAL_TRY(checkRank(ctx, 1, 0, 4));
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkInputQuantization(ctx, 1));
  NNHAL_TRY(checkOutputQuantization(ctx, 0));
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation, readActivation(ctx, 2));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outDims, broadcastDimensions(ctx, 0, 1));
  const auto layout =
      kernels::makeBroadcastLayout(ctx.input(0).dimensions, ctx.input(1).dimensions);
  if (!layout) return invalidArgument(ctx.where(1) + " cannot be broadcast with input 0");
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));

  switch (type) {
    case OperandType::TENSOR_FLOAT32:
      return makeFloatClampedKernel(
          *layout, activation, op == ArithOp::kAdd ? kernels::addFloat32 : kernels::mulFloat32);
    case OperandType::TENSOR_INT32:
      if (activation != FusedActivationFunc::NONE) {
        return invalidArgument(ctx.where(2) +
                               " (fused activation) must be NONE for TENSOR_INT32 operands");
      }
      return makeBinaryKernel<int32_t, int32_t, int32_t>(
          *layout, op == ArithOp::kAdd ? kernels::addInt32 : kernels::mulInt32);
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeQuantKernel<uint8_t>(ctx, op, activation, *layout);
    default:
      return makeQuantKernel<int8_t>(ctx, op, activation, *layout);
  }
}

}  // namespace

PrepareResult prepareAdd(PrepareContext& ctx) { return prepareArith(ctx, ArithOp::kAdd); }

PrepareResult prepareMul(PrepareContext& ctx) { return prepareArith(ctx, ArithOp::kMul); }

}  // namespace nnhal::engine::ops
