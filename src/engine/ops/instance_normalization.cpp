// INSTANCE_NORMALIZATION (types.hal 1.2): 0 input TENSOR_FLOAT32 of rank 4, 1 FLOAT32 gamma,
// 2 FLOAT32 beta, 3 FLOAT32 epsilon (> 0), 4 BOOL layout (true: NCHW). Output: the input's
// type and shape. Each (batch, channel) plane is normalized on its own
// (kernels/instance_norm.h); both layouts run directly, without transposes.
#include <algorithm>
#include <cmath>
#include <string>

#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/instance_norm.h"

namespace nnhal::engine::ops {

PrepareResult prepareInstanceNormalization(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 5, 5, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_FLOAT32}));
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::TENSOR_FLOAT32));
  NNHAL_TRY(checkRank(ctx, 0, 4, 4));
  kernels::InstanceNormParams params;
  float* scalars[] = {&params.gamma, &params.beta, &params.epsilon};
  for (size_t i = 1; i <= 3; ++i) {
    NNHAL_TRY(checkInputType(ctx, i, {OperandType::FLOAT32}));
    NNHAL_ASSIGN_OR_RETURN(*scalars[i - 1], ctx.scalar<float>(i));
    if (!std::isfinite(*scalars[i - 1])) {
      return invalidArgument(ctx.where(i) + " must be finite");
    }
  }
  if (!(params.epsilon > 0.0f)) {
    return invalidArgument(ctx.where(3) + " (epsilon) must be positive, got " +
                           std::to_string(params.epsilon));
  }
  NNHAL_TRY(checkInputType(ctx, 4, {OperandType::BOOL}));
  NNHAL_ASSIGN_OR_RETURN(const uint8_t layout, ctx.scalar<uint8_t>(4));

  const std::vector<uint32_t>& dims = ctx.input(0).dimensions;
  kernels::InstanceNormShape shape;
  shape.nchw = layout != 0;
  shape.batches = dims[0];
  shape.channels = shape.nchw ? dims[1] : dims[3];
  shape.spatial = shape.nchw ? size_t{dims[2]} * dims[3] : size_t{dims[1]} * dims[2];
  NNHAL_TRY(ctx.setOutputShape(0, dims));
  const size_t grain = std::max<size_t>(1, kElementGrain / std::max<size_t>(1, shape.spatial));
  return makeKernel([shape, params, grain](const RunContext& rc) -> Result<void> {
    const float* x = rc.input<float>(0);
    float* y = rc.output<float>(0);
    rc.parallel().forRange(shape.items(), grain, [&](size_t begin, size_t end) {
      kernels::instanceNormFloat32(x, y, shape, params, begin, end);
    });
    return {};
  });
}

}  // namespace nnhal::engine::ops
