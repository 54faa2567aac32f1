// CONV_2D: validation, output shape, and the GEMM kernel of gemm_kernel.h.
//
// Inputs (NNAPI): 0 input [batches, height, width, depthIn]; 1 filter [depthOut,
// filterHeight, filterWidth, depthIn]; 2 bias [depthOut] (omitted = zero); then either
// explicit paddings (3-6: left, right, top, bottom) or an implicit padding code (3), the
// strides (width, height), the fused activation, optionally the layout BOOL and the
// dilation factors (width, height). 7, 8 or 10 inputs: implicit; 10, 11 or 13: explicit
// (with 10, input 7 is BOOL for the implicit form and INT32 for the explicit one).
// Layout BOOL true (NCHW input and output) runs the NHWC kernel between transposes.
#include <string>

#include "engine/ops/conv_common.h"
#include "engine/ops/gemm_kernel.h"
#include "engine/ops/ops.h"
#include "kernels/conv.h"

namespace nnhal::engine::ops {

PrepareResult prepareConv2D(PrepareContext& ctx) {
  using namespace spatial;
  NNHAL_TRY(checkCounts(ctx, {7, 8, 10, 11, 13}, 1));
  NNHAL_TRY(checkMainType(ctx));
  const OperandType type = ctx.input(0).type;
  const bool quant = isQuant8(type);
  NNHAL_TRY(checkFilterAndBias(ctx));
  NNHAL_ASSIGN_OR_RETURN(WindowParams w, parseWindow(ctx, WindowLayout{3, 0, true}));

  if (w.nchw) return prepareNchwAsNhwc(ctx, w.layoutInput, &prepareConv2D);

  const auto& filter = ctx.input(1).dimensions;
  NNHAL_TRY(checkOhwiFilter(ctx));
  NNHAL_TRY(checkBiasLength(ctx, filter[0]));
  NNHAL_ASSIGN_OR_RETURN(const kernels::WindowGeometry window,
                         resolveOutputWindow(ctx, w, filter[1], filter[2], filter[0]));
  const kernels::ConvGeometry g{window};
  if (!quant) return makeFloatGemmKernel(ctx, g, w.activation);
  NNHAL_ASSIGN_OR_RETURN(auto multipliers, quantWeightedMultipliers(ctx, 0, g.outDepth));
  return makeQuantGemmKernel(ctx, g, multipliers, w.activation);
}

}  // namespace nnhal::engine::ops
