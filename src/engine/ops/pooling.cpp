// AVERAGE_POOL_2D, MAX_POOL_2D and L2_POOL_2D: validation, output shape, and the kernels of
// kernels/pooling.h and kernels/l2_pool.h.
//
// Inputs (NNAPI): 0 input [batches, height, width, depth]; then either explicit paddings
// (1-4: left, right, top, bottom) or an implicit padding code (1), the strides (width,
// height), the filter size (width, height), the fused activation, and optionally the layout
// BOOL (true: NCHW, run as NHWC between transposes). 7 or 8 inputs: implicit; 10 or 11:
// explicit. Quantized outputs are computed in the
// input's scale and zero point (as the NNAPI reference does); the activation clamp uses the
// output's. L2_POOL_2D takes the same inputs on TENSOR_FLOAT32 only: output =
// sqrt(mean(x^2)) over each window.
#include <algorithm>
#include <memory>
#include <string>

#include "engine/ops/conv_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/l2_pool.h"
#include "kernels/pooling.h"

namespace nnhal::engine::ops {
namespace {

using namespace spatial;

enum class PoolKind { kAverage, kMax, kL2 };

PrepareFn prepareFunctionOf(PoolKind kind) {
  switch (kind) {
    case PoolKind::kAverage:
      return &prepareAveragePool2D;
    case PoolKind::kMax:
      return &prepareMaxPool2D;
    case PoolKind::kL2:
      break;
  }
  return &prepareL2Pool2D;
}

/// Input 0 and output 0: L2 pooling is float32 only, the others take every main type.
Result<void> checkPoolTypes(const PrepareContext& ctx, PoolKind kind) {
  if (kind != PoolKind::kL2) return checkMainType(ctx);
  NNHAL_TRY(checkType(ctx, 0, OperandType::TENSOR_FLOAT32));
  if (ctx.output(0).type != OperandType::TENSOR_FLOAT32) {
    return invalidArgument(outputWhere(ctx, 0) + " must be TENSOR_FLOAT32, got " +
                           std::string(toString(ctx.output(0).type)));
  }
  return {};
}

// Below this many window reads the operation runs on the calling thread.
constexpr size_t kSerialWork = 1 << 16;

PrepareResult preparePool(PrepareContext& ctx, PoolKind kind) {
  NNHAL_TRY(checkCounts(ctx, {7, 8, 10, 11}, 1));
  NNHAL_TRY(checkPoolTypes(ctx, kind));
  NNHAL_TRY(checkRank(ctx, 0, 4));
  NNHAL_ASSIGN_OR_RETURN(WindowParams w, parseWindow(ctx, WindowLayout{1, 2, false}));
  if (w.nchw) return prepareNchwAsNhwc(ctx, w.layoutInput, prepareFunctionOf(kind));
  const int32_t filterWidth = w.extras[0];
  const int32_t filterHeight = w.extras[1];
  if (filterWidth <= 0 || filterHeight <= 0) {
    return invalidArgument(ctx.where(w.implicitPadding ? 4 : 7) + " (filter size " +
                           std::to_string(filterWidth) + "x" + std::to_string(filterHeight) +
                           ") must be positive");
  }
  const auto& in = ctx.input(0).dimensions;
  NNHAL_TRY(checkNonEmptyImage(ctx));
  NNHAL_ASSIGN_OR_RETURN(const kernels::WindowGeometry window,
                         resolveOutputWindow(ctx, w, static_cast<uint32_t>(filterHeight),
                                             static_cast<uint32_t>(filterWidth), in[3]));
  const kernels::PoolGeometry g{window};
  const size_t lines = g.outputLines();
  const size_t work = lines * g.outWidth * g.inDepth * g.filterHeight * g.filterWidth;
  const size_t grain =
      work <= kSerialWork ? std::max<size_t>(lines, 1) : std::max<size_t>(1, lines / kMaxTasks);
  const OperandType type = ctx.input(0).type;
  if (type == OperandType::TENSOR_FLOAT32) {
    float lo = 0.0f, hi = 0.0f;
    kernels::activationRangeFloat(w.activation, &lo, &hi);
    return makeKernel([g, lo, hi, grain, kind](const RunContext& rc) -> Result<void> {
      const float* input = rc.input<float>(0);
      float* output = rc.output<float>(0);
      rc.parallel().forRange(g.outputLines(), grain, [&](size_t begin, size_t end) {
        switch (kind) {
          case PoolKind::kAverage:
            kernels::averagePoolFloat(g, input, lo, hi, begin, end, output);
            break;
          case PoolKind::kMax:
            kernels::maxPoolFloat(g, input, lo, hi, begin, end, output);
            break;
          case PoolKind::kL2:
            kernels::l2PoolFloat(g, input, lo, hi, begin, end, output);
            break;
        }
      });
      return {};
    });
  }
  // Quantized: average and max pooling only (checkPoolTypes).
  NNHAL_TRY(checkQuant(ctx, 0));
  NNHAL_TRY(checkOutputQuant(ctx, 0));
  const OperandInfo& out = ctx.output(0);
  const auto [lo, hi] = quantizedActivationRange(out, w.activation);
  const bool isSigned = type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  return makeKernel([g, lo, hi, grain, kind, isSigned](const RunContext& rc) -> Result<void> {
    rc.parallel().forRange(g.outputLines(), grain, [&](size_t begin, size_t end) {
      if (isSigned) {
        const int8_t* input = rc.input<int8_t>(0);
        int8_t* output = rc.output<int8_t>(0);
        if (kind == PoolKind::kAverage) {
          kernels::averagePoolQuant<int8_t>(g, input, lo, hi, begin, end, output);
        } else {
          kernels::maxPoolQuant<int8_t>(g, input, lo, hi, begin, end, output);
        }
      } else {
        const uint8_t* input = rc.input<uint8_t>(0);
        uint8_t* output = rc.output<uint8_t>(0);
        if (kind == PoolKind::kAverage) {
          kernels::averagePoolQuant<uint8_t>(g, input, lo, hi, begin, end, output);
        } else {
          kernels::maxPoolQuant<uint8_t>(g, input, lo, hi, begin, end, output);
        }
      }
    });
    return {};
  });
}

}  // namespace

PrepareResult prepareAveragePool2D(PrepareContext& ctx) {
  return preparePool(ctx, PoolKind::kAverage);
}

PrepareResult prepareMaxPool2D(PrepareContext& ctx) { return preparePool(ctx, PoolKind::kMax); }

PrepareResult prepareL2Pool2D(PrepareContext& ctx) { return preparePool(ctx, PoolKind::kL2); }

}  // namespace nnhal::engine::ops
