// RELU, RELU1, RELU6, LOGISTIC and SOFTMAX (types.hal).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/activations.h"
#include "kernels/quantization.h"
#include "kernels/softmax.h"

namespace nnhal::engine::ops {
namespace {

constexpr float kOutputScale256 = 1.0f / 256.0f;

/// Checks shared by the single-input activations; sets the output shape.
Result<void> prepareUnary(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 1, 1));
  NNHAL_TRY(checkFloatOrQuant8Tensor(ctx, 0, 4));
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  return ctx.setOutputShape(0, ctx.input(0).dimensions);
}

/// Quantized LOGISTIC and SOFTMAX outputs must be scale 1/256 with zero point 0 (uint8)
/// or -128 (int8).
Result<void> checkProbabilityOutput(const PrepareContext& ctx) {
  const OperandInfo& out = ctx.output(0);
  if (!isQuant8Asymm(out.type)) return {};
  const int32_t zeroPoint = out.type == OperandType::TENSOR_QUANT8_ASYMM ? 0 : -128;
  if (out.scale != kOutputScale256 || out.zeroPoint != zeroPoint) {
    return invalidArgument(outputWhere(ctx, 0) + " must have scale 1/256 and zeroPoint " +
                           std::to_string(zeroPoint) + ", got scale " + std::to_string(out.scale) +
                           " zeroPoint " + std::to_string(out.zeroPoint));
  }
  return {};
}

template <typename T>
PrepareResult makeClampQuantKernel(int32_t lo, int32_t hi, size_t count) {
  return makeKernel([lo, hi, count](const RunContext& rc) -> Result<void> {
    const T* in = rc.input<T>(0);
    T* out = rc.output<T>(0);
    rc.parallel().forRange(count, kElementGrain, [&](size_t begin, size_t end) {
      kernels::clampQuant8<T>(in, out, lo, hi, begin, end);
    });
    return {};
  });
}

/// RELU family: clamp of the real value to [lo, hi].
PrepareResult prepareClamp(PrepareContext& ctx, FusedActivationFunc range) {
  NNHAL_TRY(prepareUnary(ctx));
  NNHAL_TRY(checkSameQuantization(ctx, 0, 0));
  const OperandInfo& in = ctx.input(0);
  const size_t count = in.elementCount();
  if (in.type == OperandType::TENSOR_FLOAT32) {
    float lo = 0.0f;
    float hi = 0.0f;
    kernels::activationRangeFloat(range, &lo, &hi);
    return makeKernel([lo, hi, count](const RunContext& rc) -> Result<void> {
      const float* x = rc.input<float>(0);
      float* y = rc.output<float>(0);
      rc.parallel().forRange(count, kElementGrain, [&](size_t begin, size_t end) {
        kernels::clampFloat32(x, y, lo, hi, begin, end);
      });
      return {};
    });
  }
  const auto [qmin, qmax] = quant8Range(in.type);
  int32_t lo = qmin;
  int32_t hi = qmax;
  kernels::activationRangeQuantized(range, in.scale, in.zeroPoint, qmin, qmax, &lo, &hi);
  if (in.type == OperandType::TENSOR_QUANT8_ASYMM) {
    return makeClampQuantKernel<uint8_t>(lo, hi, count);
  }
  return makeClampQuantKernel<int8_t>(lo, hi, count);
}

template <typename T>
PrepareResult makeLookupKernel(const kernels::Quant8Table<T>& table, size_t count) {
  return makeKernel([table, count](const RunContext& rc) -> Result<void> {
    const T* in = rc.input<T>(0);
    T* out = rc.output<T>(0);
    rc.parallel().forRange(count, kElementGrain, [&](size_t begin, size_t end) {
      kernels::lookupQuant8<T>(in, out, table, begin, end);
    });
    return {};
  });
}

template <typename T>
PrepareResult makeSoftmaxQuantKernel(const kernels::AxisShape& shape,
                                     const kernels::SoftmaxExpTable& table, size_t grain) {
  return makeKernel([shape, table, grain](const RunContext& rc) -> Result<void> {
    const T* in = rc.input<T>(0);
    T* out = rc.output<T>(0);
    rc.parallel().forRange(shape.items(), grain, [&](size_t begin, size_t end) {
      kernels::softmaxQuant8<T>(in, out, shape, table, begin, end);
    });
    return {};
  });
}

}  // namespace

PrepareResult prepareRelu(PrepareContext& ctx) {
  return prepareClamp(ctx, FusedActivationFunc::RELU);
}

PrepareResult prepareRelu1(PrepareContext& ctx) {
  return prepareClamp(ctx, FusedActivationFunc::RELU1);
}

PrepareResult prepareRelu6(PrepareContext& ctx) {
  return prepareClamp(ctx, FusedActivationFunc::RELU6);
}

PrepareResult prepareLogistic(PrepareContext& ctx) {
  NNHAL_TRY(prepareUnary(ctx));
  NNHAL_TRY(checkProbabilityOutput(ctx));
  const OperandInfo& in = ctx.input(0);
  const size_t count = in.elementCount();
  switch (in.type) {
    case OperandType::TENSOR_FLOAT32:
      return makeKernel([count](const RunContext& rc) -> Result<void> {
        const float* x = rc.input<float>(0);
        float* y = rc.output<float>(0);
        rc.parallel().forRange(count, kElementGrain, [&](size_t begin, size_t end) {
          kernels::logisticFloat32(x, y, begin, end);
        });
        return {};
      });
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeLookupKernel<uint8_t>(kernels::makeLogisticTable<uint8_t>(in.scale, in.zeroPoint),
                                       count);
    default:
      return makeLookupKernel<int8_t>(kernels::makeLogisticTable<int8_t>(in.scale, in.zeroPoint),
                                      count);
  }
}

PrepareResult prepareSoftmax(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 3, 1));
  NNHAL_TRY(checkFloatOrQuant8Tensor(ctx, 1, 4));
  const OperandInfo& in = ctx.input(0);
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkProbabilityOutput(ctx));
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::FLOAT32}));
  NNHAL_ASSIGN_OR_RETURN(const float beta, ctx.scalar<float>(1));
  if (!(beta > 0.0f) || !std::isfinite(beta)) {
    return invalidArgument(ctx.where(1) + " (beta) must be positive and finite, got " +
                           std::to_string(beta));
  }
  const std::vector<uint32_t>& dims = in.dimensions;
  uint32_t axis = static_cast<uint32_t>(dims.size() - 1);
  if (ctx.hasInput(2)) {
    NNHAL_ASSIGN_OR_RETURN(axis, readAxis(ctx, 2, dims.size()));
  }
  NNHAL_TRY(ctx.setOutputShape(0, dims));

  kernels::AxisShape shape;
  shape.outer = dimensionProduct(dims, 0, axis);
  shape.axisSize = dims[axis];
  shape.inner = dimensionProduct(dims, axis + 1, dims.size());
  const size_t grain = std::max<size_t>(1, kElementGrain / std::max<size_t>(1, shape.axisSize));
  switch (in.type) {
    case OperandType::TENSOR_FLOAT32:
      return makeKernel([shape, beta, grain](const RunContext& rc) -> Result<void> {
        const float* x = rc.input<float>(0);
        float* y = rc.output<float>(0);
        rc.parallel().forRange(shape.items(), grain, [&](size_t begin, size_t end) {
          kernels::softmaxFloat32(x, y, shape, beta, begin, end);
        });
        return {};
      });
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeSoftmaxQuantKernel<uint8_t>(shape, kernels::makeSoftmaxExpTable(beta, in.scale),
                                             grain);
    default:
      return makeSoftmaxQuantKernel<int8_t>(shape, kernels::makeSoftmaxExpTable(beta, in.scale),
                                            grain);
  }
}

}  // namespace nnhal::engine::ops
