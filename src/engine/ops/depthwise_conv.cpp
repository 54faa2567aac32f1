// DEPTHWISE_CONV_2D: validation, output shape, and a kernel over kernels/depthwise_conv.h.
//
// Inputs (NNAPI): 0 input [batches, height, width, depthIn]; 1 filter [1, filterHeight,
// filterWidth, depthOut]; 2 bias [depthOut] (omitted = zero); then either explicit paddings
// (3-6) or an implicit padding code (3), the strides (width, height), the depth multiplier
// (depthOut = depthIn * multiplier), the fused activation, optionally the layout BOOL and
// the dilation factors. 8, 9 or 11 inputs: implicit; 11, 12 or 14: explicit (with 11,
// input 8 is BOOL for the implicit form and INT32 for the explicit one). Layout BOOL true
// (NCHW input and output) runs the NHWC kernel between transposes.
#include <algorithm>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "engine/ops/conv_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/depthwise_conv.h"
#include "kernels/value_range.h"

namespace nnhal::engine::ops {
namespace {

using namespace spatial;

// Below this many multiply-adds the operation runs on the calling thread.
constexpr size_t kSerialWork = 1 << 16;

size_t lineGrain(const kernels::DepthwiseGeometry& g) {
  const size_t lines = g.outputLines();
  const size_t perLine = size_t{g.outWidth} * g.outDepth * g.filterHeight * g.filterWidth;
  if (lines * perLine <= kSerialWork) return std::max<size_t>(lines, 1);
  return std::max<size_t>(1, lines / kMaxTasks);
}

// Compilation caching: the quantized kernel saves its packed filter (PrepareContext::
// saveState). Restored values are accepted only within what packDepthwiseFilter produces, so
// accumulations stay within what real models produce: int16 values within [-255, 255], the
// range of an 8-bit filter value minus its zero point; in the VNNI layout, whose bytes are
// every int8, a constant e within [-127, 128] and per-channel tap sums within 255 per tap.
constexpr int16_t kMaxPackedTap = 255;

bool packedFilterValid(const kernels::DepthwiseGeometry& g, const int16_t* values, size_t count) {
  if (kernels::depthwiseVnniLayout(g, kernels::activeIsa())) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(values);
    int32_t e = 0;
    std::memcpy(&e, bytes, sizeof e);
    if (e < -127 || e > 128) return false;
    // Each channel's tap sum of w - zw: at most 255 per tap.
    const int64_t bound = int64_t{kMaxPackedTap} * g.filterHeight * g.filterWidth;
    for (size_t c = 0; c < g.outDepth; ++c) {
      int32_t sum = 0;
      std::memcpy(&sum, bytes + kernels::kDepthwiseVnniHeaderBytes + 4 * c, sizeof sum);
      if (sum < -bound || sum > bound) return false;
    }
    return true;
  }
  const auto [lo, hi] = kernels::minMaxWithZero(values, count);
  return lo >= -kMaxPackedTap && hi <= kMaxPackedTap;
}

struct QuantState {
  kernels::DepthwiseGeometry geometry;
  kernels::DepthwiseQuantParams params;
  std::vector<int16_t> filter;  // empty when the packed filter was restored
  std::vector<uint8_t> zeroPointRow;
  std::vector<int32_t> bias, multiplier, shift;
  bool filterConstant = false, biasConstant = false, filterSigned = false;
  int32_t filterZeroPoint = 0;
  size_t grain = 1;
};

struct FloatState {
  kernels::DepthwiseGeometry geometry;
  kernels::DepthwiseFloatParams params;
  std::vector<float> filter, bias;
  bool filterConstant = false, biasConstant = false;
  size_t grain = 1;
};

PrepareResult makeQuantKernel(PrepareContext& ctx, const kernels::DepthwiseGeometry& g,
                              const std::vector<kernels::QuantizedMultiplier>& multipliers,
                              FusedActivationFunc activation) {
  auto s = std::make_shared<QuantState>();
  s->geometry = g;
  s->grain = lineGrain(g);
  const OperandInfo& in = ctx.input(0);
  const OperandInfo& f = ctx.input(1);
  const OperandInfo& out = ctx.output(0);
  const size_t count = size_t{g.filterHeight} * g.filterWidth * g.outDepth;
  const bool hasBias = ctx.hasInput(2);
  NNHAL_TRY(checkConstantBytes(ctx, 1, count));
  if (hasBias) NNHAL_TRY(checkConstantBytes(ctx, 2, g.outDepth * sizeof(int32_t)));
  if (ctx.checksOnly()) return checkedKernel();  // no packing for a check
  s->filterSigned = f.type != OperandType::TENSOR_QUANT8_ASYMM;
  s->filterZeroPoint = f.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL ? 0 : f.zeroPoint;
  s->filterConstant = f.isConstant();
  s->biasConstant = !hasBias || ctx.input(2).isConstant();

  kernels::DepthwiseQuantParams& p = s->params;
  s->multiplier.resize(g.outDepth);
  s->shift.resize(g.outDepth);
  for (size_t c = 0; c < g.outDepth; ++c) {
    s->multiplier[c] = multipliers[c].multiplier;
    s->shift[c] = multipliers[c].shift;
    p.anyLeftShift |= multipliers[c].shift > 0;
  }
  p.multiplier = s->multiplier.data();
  p.shift = s->shift.data();
  p.inputZeroPoint = in.zeroPoint;
  p.inputSigned = in.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  s->zeroPointRow.assign(g.inDepth, static_cast<uint8_t>(in.zeroPoint));
  p.zeroPointRow = s->zeroPointRow.data();
  p.outputZeroPoint = out.zeroPoint;
  std::tie(p.outputMin, p.outputMax) = quantizedActivationRange(out, activation);
  const size_t packedCount = kernels::depthwisePackedFilterCount(g);
  if (s->filterConstant) {
    const size_t stateBytes = packedCount * sizeof(int16_t);
    const std::span<const uint8_t> restored = ctx.restoredState(stateBytes);
    const auto* restoredFilter =
        restored.empty() ? nullptr : reinterpret_cast<const int16_t*>(restored.data());
    if (restoredFilter != nullptr && packedFilterValid(g, restoredFilter, packedCount)) {
      ctx.acceptRestoredState();
      p.filter = restoredFilter;
    } else {
      s->filter.resize(packedCount);
      kernels::packDepthwiseFilter(g, f.constantData, s->filterSigned, s->filterZeroPoint,
                                   s->filter.data());
      p.filter = s->filter.data();
      if (ctx.savesState()) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(s->filter.data());
        ctx.saveState(std::vector<uint8_t>(bytes, bytes + stateBytes), {1});
      }
    }
  } else {
    ctx.requestScratch(packedCount * sizeof(int16_t));
  }
  if (hasBias && s->biasConstant) {
    s->bias.resize(g.outDepth);
    std::memcpy(s->bias.data(), ctx.input(2).constantData, g.outDepth * sizeof(int32_t));
    p.bias = s->bias.data();
  }
  return makeKernel(
      [s = std::shared_ptr<const QuantState>(std::move(s))](const RunContext& rc) -> Result<void> {
        const QuantState& st = *s;
        const size_t lines = st.geometry.outputLines();
        if (lines == 0) return {};
        kernels::DepthwiseQuantParams p = st.params;
        if (!st.filterConstant) {
          auto* filter = static_cast<int16_t*>(rc.scratch());
          kernels::packDepthwiseFilter(st.geometry, rc.input<uint8_t>(1), st.filterSigned,
                                       st.filterZeroPoint, filter);
          p.filter = filter;
        }
        if (!st.biasConstant) p.bias = rc.input<int32_t>(2);
        const uint8_t* input = rc.input<uint8_t>(0);
        uint8_t* output = rc.output<uint8_t>(0);
        rc.parallel().forRange(lines, st.grain, [&](size_t begin, size_t end) {
          kernels::depthwiseQuant(st.geometry, p, input, begin, end, output);
        });
        return {};
      });
}

PrepareResult makeFloatKernel(PrepareContext& ctx, const kernels::DepthwiseGeometry& g,
                              FusedActivationFunc activation) {
  auto s = std::make_shared<FloatState>();
  s->geometry = g;
  s->grain = lineGrain(g);
  const size_t count = size_t{g.filterHeight} * g.filterWidth * g.outDepth;
  const bool hasBias = ctx.hasInput(2);
  NNHAL_TRY(checkConstantBytes(ctx, 1, count * sizeof(float)));
  if (hasBias) NNHAL_TRY(checkConstantBytes(ctx, 2, g.outDepth * sizeof(float)));
  if (ctx.checksOnly()) return checkedKernel();  // no packing for a check
  s->filterConstant = ctx.input(1).isConstant();
  s->biasConstant = !hasBias || ctx.input(2).isConstant();
  kernels::DepthwiseFloatParams& p = s->params;
  kernels::activationRangeFloat(activation, &p.outputMin, &p.outputMax);
  if (s->filterConstant) {
    s->filter.resize(count);
    std::memcpy(s->filter.data(), ctx.input(1).constantData, count * sizeof(float));
    p.filter = s->filter.data();
  }
  if (hasBias && s->biasConstant) {
    s->bias.resize(g.outDepth);
    std::memcpy(s->bias.data(), ctx.input(2).constantData, g.outDepth * sizeof(float));
    p.bias = s->bias.data();
  }
  return makeKernel(
      [s = std::shared_ptr<const FloatState>(std::move(s))](const RunContext& rc) -> Result<void> {
        const FloatState& st = *s;
        const size_t lines = st.geometry.outputLines();
        if (lines == 0) return {};
        kernels::DepthwiseFloatParams p = st.params;
        if (!st.filterConstant) p.filter = rc.input<float>(1);
        if (!st.biasConstant) p.bias = rc.input<float>(2);
        const float* input = rc.input<float>(0);
        float* output = rc.output<float>(0);
        rc.parallel().forRange(lines, st.grain, [&](size_t begin, size_t end) {
          kernels::depthwiseFloat(st.geometry, p, input, begin, end, output);
        });
        return {};
      });
}

}  // namespace

PrepareResult prepareDepthwiseConv2D(PrepareContext& ctx) {
  NNHAL_TRY(checkCounts(ctx, {8, 9, 11, 12, 14}, 1));
  NNHAL_TRY(checkMainType(ctx));
  const OperandType type = ctx.input(0).type;
  const bool quant = isQuant8(type);
  NNHAL_TRY(checkFilterAndBias(ctx));
  NNHAL_ASSIGN_OR_RETURN(WindowParams w, parseWindow(ctx, WindowLayout{3, 1, true}));
  const int32_t multiplier = w.extras[0];

  if (w.nchw) return prepareNchwAsNhwc(ctx, w.layoutInput, &prepareDepthwiseConv2D);

  const auto& in = ctx.input(0).dimensions;
  const auto& filter = ctx.input(1).dimensions;
  NNHAL_TRY(checkNonEmptyImage(ctx));
  if (filter[0] != 1) {
    return invalidArgument(ctx.where(1) + " (filter) dimension 0 must be 1, got " +
                           std::to_string(filter[0]));
  }
  if (filter[1] == 0 || filter[2] == 0 || filter[3] == 0) {
    return invalidArgument(ctx.where(1) + " (filter) must have non-zero dimensions");
  }
  if (multiplier <= 0 || int64_t{multiplier} * in[3] != filter[3]) {
    return invalidArgument(ctx.where(w.implicitPadding ? 6 : 9) + " (depth multiplier " +
                           std::to_string(multiplier) + ") times the input depth " +
                           std::to_string(in[3]) + " must equal the filter depth " +
                           std::to_string(filter[3]));
  }
  NNHAL_TRY(checkBiasLength(ctx, filter[3]));
  NNHAL_ASSIGN_OR_RETURN(const kernels::WindowGeometry window,
                         resolveOutputWindow(ctx, w, filter[1], filter[2], filter[3]));
  const kernels::DepthwiseGeometry g{window, static_cast<uint32_t>(multiplier)};
  if (!quant) return makeFloatKernel(ctx, g, w.activation);
  NNHAL_ASSIGN_OR_RETURN(auto multipliers, quantWeightedMultipliers(ctx, 3, g.outDepth));
  return makeQuantKernel(ctx, g, multipliers, w.activation);
}

}  // namespace nnhal::engine::ops
