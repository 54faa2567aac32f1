// L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION and LOG_SOFTMAX: normalizations of the
// vectors along one axis (kernels/axis_normalization.h).
//
// L2_NORMALIZATION: 0 input (TENSOR_FLOAT32 or TENSOR_QUANT8_ASYMM(_SIGNED), rank 1..4),
//   1 optional INT32 axis (default -1). Quantized outputs must have scale 1/128 and zero
//   point 128 (unsigned) or 0 (signed).
// LOCAL_RESPONSE_NORMALIZATION: 0 input (TENSOR_FLOAT32, rank 1..4), 1 INT32 radius (>= 0),
//   2 FLOAT32 bias, 3 FLOAT32 alpha, 4 FLOAT32 beta, 5 optional INT32 axis (default -1).
// LOG_SOFTMAX: 0 input (TENSOR_FLOAT32, rank >= 1), 1 FLOAT32 beta (> 0), 2 INT32 axis.
// The output has the input's type and shape.
#include <algorithm>
#include <cmath>
#include <string>

#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/axis_normalization.h"

namespace nnhal::engine::ops {
namespace {

/// Vectors per parallel chunk: about kElementGrain elements.
size_t grainFor(const kernels::AxisShape& shape) {
  return std::max<size_t>(1, kElementGrain / std::max<size_t>(1, shape.axisSize));
}

/// Reads the optional axis at input `i` (default: the last dimension) and splits the input
/// shape around it.
Result<kernels::AxisShape> axisShape(const PrepareContext& ctx, size_t i) {
  const std::vector<uint32_t>& dims = ctx.input(0).dimensions;
  uint32_t axis = static_cast<uint32_t>(dims.size() - 1);
  if (ctx.hasInput(i)) {
    NNHAL_ASSIGN_OR_RETURN(axis, readAxis(ctx, i, dims.size()));
  }
  kernels::AxisShape shape;
  shape.outer = dimensionProduct(dims, 0, axis);
  shape.axisSize = dims[axis];
  shape.inner = dimensionProduct(dims, axis + 1, dims.size());
  return shape;
}

Result<float> readFloat(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(checkInputType(ctx, i, {OperandType::FLOAT32}));
  return ctx.scalar<float>(i);
}

template <typename T>
PrepareResult makeL2NormQuantKernel(kernels::AxisShape shape, int32_t inZero, int32_t outZero) {
  return makeKernel([shape, inZero, outZero](const RunContext& rc) -> Result<void> {
    const T* x = rc.input<T>(0);
    T* y = rc.output<T>(0);
    rc.parallel().forRange(shape.items(), grainFor(shape), [&](size_t begin, size_t end) {
      kernels::l2NormalizeQuant8<T>(x, y, shape, inZero, outZero, begin, end);
    });
    return {};
  });
}

}  // namespace

PrepareResult prepareL2Normalization(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 2, 1));
  NNHAL_TRY(checkFloatOrQuant8Tensor(ctx, 1, 4));
  const OperandInfo& in = ctx.input(0);
  NNHAL_ASSIGN_OR_RETURN(const kernels::AxisShape shape, axisShape(ctx, 1));
  if (isQuant8Asymm(in.type)) {
    NNHAL_TRY(checkInputQuantization(ctx, 0));
    const OperandInfo& out = ctx.output(0);
    const int32_t zeroPoint = in.type == OperandType::TENSOR_QUANT8_ASYMM ? 128 : 0;
    if (out.scale != 1.0f / 128.0f || out.zeroPoint != zeroPoint) {
      return invalidArgument(outputWhere(ctx, 0) + " must have scale 1/128 and zeroPoint " +
                             std::to_string(zeroPoint) + ", got (" + std::to_string(out.scale) +
                             ", " + std::to_string(out.zeroPoint) + ")");
    }
  }
  NNHAL_TRY(ctx.setOutputShape(0, in.dimensions));
  switch (in.type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeL2NormQuantKernel<uint8_t>(shape, in.zeroPoint, 128);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return makeL2NormQuantKernel<int8_t>(shape, in.zeroPoint, 0);
    default:
      return makeKernel([shape](const RunContext& rc) -> Result<void> {
        const float* x = rc.input<float>(0);
        float* y = rc.output<float>(0);
        rc.parallel().forRange(shape.items(), grainFor(shape), [&](size_t begin, size_t end) {
          kernels::l2NormalizeFloat32(x, y, shape, begin, end);
        });
        return {};
      });
  }
}

PrepareResult prepareLocalResponseNormalization(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 5, 6, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32}));
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::TENSOR_FLOAT32));
  NNHAL_TRY(checkRank(ctx, 0, 1, 4));
  kernels::LocalResponseParams params;
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::INT32}));
  NNHAL_ASSIGN_OR_RETURN(params.radius, ctx.scalar<int32_t>(1));
  if (params.radius < 0) {
    return invalidArgument(ctx.where(1) + " (radius) must be >= 0, got " +
                           std::to_string(params.radius));
  }
  NNHAL_ASSIGN_OR_RETURN(params.bias, readFloat(ctx, 2));
  NNHAL_ASSIGN_OR_RETURN(params.alpha, readFloat(ctx, 3));
  NNHAL_ASSIGN_OR_RETURN(params.beta, readFloat(ctx, 4));
  NNHAL_ASSIGN_OR_RETURN(const kernels::AxisShape shape, axisShape(ctx, 5));
  NNHAL_TRY(ctx.setOutputShape(0, ctx.input(0).dimensions));
  return makeKernel([shape, params](const RunContext& rc) -> Result<void> {
    const float* x = rc.input<float>(0);
    float* y = rc.output<float>(0);
    const size_t window = 2 * static_cast<size_t>(std::min(params.radius, 1 << 20)) + 1;
    const size_t grain = std::max<size_t>(1, grainFor(shape) / window);
    rc.parallel().forRange(shape.items(), grain, [&](size_t begin, size_t end) {
      kernels::localResponseNormFloat32(x, y, shape, params, begin, end);
    });
    return {};
  });
}

PrepareResult prepareLogSoftmax(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32}));
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::TENSOR_FLOAT32));
  if (ctx.input(0).dimensions.empty()) {
    return invalidArgument(ctx.where(0) + " must have rank >= 1, got a scalar");
  }
  NNHAL_ASSIGN_OR_RETURN(const float beta, readFloat(ctx, 1));
  if (!(beta > 0.0f) || !std::isfinite(beta)) {
    return invalidArgument(ctx.where(1) + " (beta) must be positive and finite, got " +
                           std::to_string(beta));
  }
  if (!ctx.hasInput(2)) return invalidArgument(ctx.where(2) + " (axis) is required");
  NNHAL_ASSIGN_OR_RETURN(const kernels::AxisShape shape, axisShape(ctx, 2));
  NNHAL_TRY(ctx.setOutputShape(0, ctx.input(0).dimensions));
  return makeKernel([shape, beta](const RunContext& rc) -> Result<void> {
    const float* x = rc.input<float>(0);
    float* y = rc.output<float>(0);
    rc.parallel().forRange(shape.items(), grainFor(shape), [&](size_t begin, size_t end) {
      kernels::logSoftmaxFloat32(x, y, shape, beta, begin, end);
    });
    return {};
  });
}

}  // namespace nnhal::engine::ops
