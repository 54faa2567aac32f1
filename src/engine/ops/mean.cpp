// MEAN (types.hal): average over the axes listed in a TENSOR_INT32 input, optionally keeping
// the reduced dimensions with size 1.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"
#include "kernels/reduce.h"

namespace nnhal::engine::ops {
namespace {

using ReducedMask = std::array<bool, kernels::kMaxReduceRank>;

/// Marks the dimensions named by `axes` (negative values count from the end) and computes
/// the output dimensions. Returns an error text, or an empty string on success.
std::string planMean(const std::vector<uint32_t>& dims, const int32_t* axes, size_t axisCount,
                     bool keepDims, ReducedMask* reduced, std::vector<uint32_t>* outDims) {
  const auto rank = static_cast<int64_t>(dims.size());
  reduced->fill(false);
  for (size_t i = 0; i < axisCount; ++i) {
    const int64_t a = axes[i];
    if (a < -rank || a >= rank) {
      return "entry " + std::to_string(i) + " is " + std::to_string(a) + ", outside [-" +
             std::to_string(rank) + ", " + std::to_string(rank) + ")";
    }
    (*reduced)[static_cast<size_t>(a < 0 ? a + rank : a)] = true;
  }
  outDims->clear();
  for (size_t d = 0; d < dims.size(); ++d) {
    if (!(*reduced)[d]) {
      outDims->push_back(dims[d]);
    } else if (keepDims) {
      outDims->push_back(1);
    }
  }
  if (outDims->empty()) outDims->push_back(1);
  return {};
}

/// Output dimensions and reduction layout, fixed at prepare time or computed per execution
/// when the axes are a request input.
struct MeanPlan {
  std::vector<uint32_t> inputDims;
  std::vector<uint32_t> outputDims;
  bool keepDims = false;
  bool constantAxes = true;
  size_t axisCount = 0;
  kernels::ReduceLayout layout;

  Result<kernels::ReduceLayout> layoutFor(const RunContext& rc) const {
    if (constantAxes) return layout;
    ReducedMask reduced{};
    std::vector<uint32_t> dims;
    const std::string why =
        planMean(inputDims, rc.input<int32_t>(1), axisCount, keepDims, &reduced, &dims);
    if (!why.empty() || dims != outputDims) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "MEAN input 1 (axes) does not match the prepared output dimensions" +
                      (why.empty() ? std::string() : ": " + why));
    }
    const auto l = kernels::makeReduceLayout(
        inputDims, std::span<const bool>(reduced.data(), inputDims.size()));
    if (!l) return fail(ErrorStatus::GENERAL_FAILURE, "MEAN: unsupported input rank");
    return *l;
  }
};

template <typename T>
PrepareResult makeQuantKernel(MeanPlan plan, kernels::MeanQuantParams params) {
  return makeKernel([plan = std::move(plan), params](const RunContext& rc) -> Result<void> {
    NNHAL_ASSIGN_OR_RETURN(const kernels::ReduceLayout layout, plan.layoutFor(rc));
    const T* in = rc.input<T>(0);
    T* out = rc.output<T>(0);
    const size_t grain =
        std::max<size_t>(1, kElementGrain / std::max<size_t>(1, layout.reducedCount));
    rc.parallel().forRange(layout.outputCount, grain, [&](size_t begin, size_t end) {
      kernels::meanQuant8<T>(in, out, layout, params, begin, end);
    });
    return {};
  });
}

}  // namespace

PrepareResult prepareMean(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(checkFloatOrQuant8Tensor(ctx, 1, 4));
  const OperandInfo& in = ctx.input(0);
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkOutputQuantization(ctx, 0));
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, 1, 1, 1));
  NNHAL_TRY(checkInputType(ctx, 2, {OperandType::INT32}));
  NNHAL_ASSIGN_OR_RETURN(const int32_t keepDims, ctx.scalar<int32_t>(2));

  MeanPlan plan;
  plan.inputDims = in.dimensions;
  plan.keepDims = keepDims > 0;
  plan.axisCount = ctx.input(1).dimensions[0];
  const OperandInfo& axesInfo = ctx.input(1);
  plan.constantAxes = axesInfo.isConstant() || plan.axisCount == 0;  // no axes: no bytes
  if (plan.constantAxes) {
    if (plan.axisCount > 0 && axesInfo.constantLength != plan.axisCount * sizeof(int32_t)) {
      return invalidArgument(ctx.where(1) + " has " + std::to_string(axesInfo.constantLength) +
                             " bytes for " + std::to_string(plan.axisCount) + " elements");
    }
    std::vector<int32_t> axes(plan.axisCount);
    if (!axes.empty()) {
      std::memcpy(axes.data(), axesInfo.constantData, axes.size() * sizeof(int32_t));
    }
    ReducedMask reduced{};
    const std::string why = planMean(plan.inputDims, axes.data(), axes.size(), plan.keepDims,
                                     &reduced, &plan.outputDims);
    if (!why.empty()) return invalidArgument(ctx.where(1) + " (axes) " + why);
    const auto layout = kernels::makeReduceLayout(
        plan.inputDims, std::span<const bool>(reduced.data(), plan.inputDims.size()));
    if (!layout) return invalidArgument(ctx.where(0) + " has an unsupported rank");
    plan.layout = *layout;
  } else {
    // The axes arrive with the request: the model must declare the output dimensions, and
    // every execution checks that the axes agree with them.
    plan.outputDims = ctx.output(0).dimensions;
    if (!hal::hasFullySpecifiedShape(ctx.output(0).type, plan.outputDims)) {
      ctx.markValuesMissing();  // prepared again once the value is known
      return invalidArgument(ctx.where(1) +
                             " (axes) is not a constant and output 0 does not declare its "
                             "dimensions");
    }
  }
  NNHAL_TRY(ctx.setOutputShape(0, plan.outputDims));

  const OperandInfo& out = ctx.output(0);
  switch (in.type) {
    case OperandType::TENSOR_FLOAT32:
      return makeKernel([plan = std::move(plan)](const RunContext& rc) -> Result<void> {
        NNHAL_ASSIGN_OR_RETURN(const kernels::ReduceLayout layout, plan.layoutFor(rc));
        const float* x = rc.input<float>(0);
        float* y = rc.output<float>(0);
        const size_t grain =
            std::max<size_t>(1, kElementGrain / std::max<size_t>(1, layout.reducedCount));
        rc.parallel().forRange(layout.outputCount, grain, [&](size_t begin, size_t end) {
          kernels::meanFloat32(x, y, layout, begin, end);
        });
        return {};
      });
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED: {
      kernels::MeanQuantParams params;
      params.scaleRatio = static_cast<double>(in.scale) / static_cast<double>(out.scale);
      params.inputZeroPoint = in.zeroPoint;
      params.outputZeroPoint = out.zeroPoint;
      if (in.type == OperandType::TENSOR_QUANT8_ASYMM) {
        return makeQuantKernel<uint8_t>(std::move(plan), params);
      }
      return makeQuantKernel<int8_t>(std::move(plan), params);
    }
    default:
      return invalidArgument(ctx.where(0) + " has an unsupported type");
  }
}

}  // namespace nnhal::engine::ops
