// The windowed operations: the convolutions, pooling, FULLY_CONNECTED and TRANSPOSE_CONV_2D,
// float and 8-bit (vulkan_planner.h).
#include "backend/vulkan/vulkan_planner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <variant>

#include "kernels/activations.h"
#include "kernels/binary_math.h"
#include "kernels/elementwise.h"
#include "kernels/quantization.h"
#include "kernels/unary_math.h"

namespace nnhal::backend::vulkan::planning {

/// The leading padding of one dimension for NNAPI's implicit padding scheme (1 SAME, 2 VALID).
static Planned<int32_t> implicitPadding(int32_t scheme, uint32_t in, uint32_t out, uint32_t stride,
                                        uint32_t filter, uint32_t dilation) {
  if (scheme == 2) return 0;
  if (scheme != 1) return refuse("padding scheme " + std::to_string(scheme) + " is unknown");
  const int64_t effective = (int64_t{filter} - 1) * dilation + 1;
  const int64_t total = std::max<int64_t>((int64_t{out} - 1) * stride + effective - int64_t{in}, 0);
  return static_cast<int32_t>(total / 2);
}

/// The output size along one dimension: explicit paddings, or the implicit scheme's rule.
static int64_t windowOutput(bool implicit, int32_t scheme, int64_t in, int64_t padHead,
                            int64_t padTail, uint32_t stride, uint32_t filter, uint32_t dilation) {
  const int64_t effective = (int64_t{filter} - 1) * dilation + 1;
  if (implicit) {
    return scheme == 1 ? (in + stride - 1) / stride
                       : std::max<int64_t>((in - effective + stride) / stride, 0);
  }
  const int64_t span = in + padHead + padTail - effective;
  return span < 0 ? 0 : span / stride + 1;
}

namespace {

struct Window {
  int32_t padTop = 0, padLeft = 0;
  uint32_t strideH = 1, strideW = 1, dilH = 1, dilW = 1;
  float lo = -kInfinity, hi = kInfinity;
  uint32_t multiplier = 0;
};

}  // namespace

Planned<void> Planner::convolution(ConvKind kind) {
  const bool depthwise = kind == ConvKind::kDepthwise;
  const size_t count = op().inputs.size();
  // The implicit-padding form has one input fewer before the activation (types.hal);
  // DEPTHWISE_CONV_2D's multiplier and GROUPED_CONV_2D's group count precede it.
  const size_t layoutAt = kind == ConvKind::kConv ? 7 : 8;
  const bool implicit =
      count == layoutAt || (count > layoutAt && input(layoutAt).type == OperandType::BOOL);
  const size_t first = 3;                   // padding scheme, or the four paddings
  const size_t strides = implicit ? 4 : 7;  // strideW, strideH
  size_t next = strides + 2;
  Window w;
  uint32_t groups = 1;
  if (depthwise) {
    NNHAL_PLAN_TRY(m, scalarInt(next));
    if (m < 1) return invalid("the depth multiplier must be at least 1");
    w.multiplier = static_cast<uint32_t>(m);
    ++next;
  } else if (kind == ConvKind::kGrouped) {
    NNHAL_PLAN_TRY(g, scalarInt(next));
    if (g < 1) return invalid("the group count must be at least 1");
    groups = static_cast<uint32_t>(g);
    ++next;
  }
  NNHAL_PLAN_TRY(range, activation(next));
  const size_t activationAt = next;
  ++next;
  w.lo = range.first;
  w.hi = range.second;
  if (count > next) {
    NNHAL_PLAN_TRY(nchw, scalarBool(next));
    if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
    ++next;
  }
  if (count > next + 1) {
    NNHAL_PLAN_TRY(dw, scalarInt(next));
    NNHAL_PLAN_TRY(dh, scalarInt(next + 1));
    if (dw < 1 || dh < 1) return refuse("dilation factors must be at least 1");
    w.dilW = static_cast<uint32_t>(dw);
    w.dilH = static_cast<uint32_t>(dh);
  }
  NNHAL_PLAN_TRY(sw, scalarInt(strides));
  NNHAL_PLAN_TRY(sh, scalarInt(strides + 1));
  if (sw < 1 || sh < 1) return refuse("strides must be at least 1");
  w.strideW = static_cast<uint32_t>(sw);
  w.strideH = static_cast<uint32_t>(sh);
  const bool quantized = isQuant8(input(0).type);
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  NNHAL_PLAN_TRY(filter, tensor(inputIndex(1), quantized));
  NNHAL_PLAN_TRY(bias, tensor(inputIndex(2), quantized));
  // Copies: the plan's own constants below may move the operands.
  const Operand i = input(0);
  const Operand f = input(1);
  if (i.dimensions.size() != 4 || f.dimensions.size() != 4) {
    return invalid("the input and filter must have rank 4");
  }
  const uint32_t fH = f.dimensions[1];
  const uint32_t fW = f.dimensions[2];
  const uint32_t outC = depthwise ? f.dimensions[3] : f.dimensions[0];
  const bool channelsFit = depthwise
                               ? f.dimensions[0] == 1 && i.dimensions[3] * w.multiplier == outC
                               : f.dimensions[3] * groups == i.dimensions[3] && outC % groups == 0;
  if (!channelsFit || input(2).dimensions != std::vector<uint32_t>{outC}) {
    return invalid("the input, filter and bias channels do not fit together");
  }
  int32_t scheme = 0;
  int32_t padBottom = 0;
  int32_t padRight = 0;
  if (implicit) {
    NNHAL_PLAN_TRY(code, scalarInt(first));
    if (code != 1 && code != 2) return invalid("padding scheme " + std::to_string(code));
    scheme = code;
  } else {
    NNHAL_PLAN_TRY(left, scalarInt(first));
    NNHAL_PLAN_TRY(right, scalarInt(first + 1));
    NNHAL_PLAN_TRY(top, scalarInt(first + 2));
    NNHAL_PLAN_TRY(bottom, scalarInt(first + 3));
    if (left < 0 || right < 0 || top < 0 || bottom < 0) return invalid("negative padding");
    w.padLeft = left;
    w.padTop = top;
    padRight = right;
    padBottom = bottom;
  }
  const int64_t outH =
      windowOutput(implicit, scheme, i.dimensions[1], w.padTop, padBottom, w.strideH, fH, w.dilH);
  const int64_t outW =
      windowOutput(implicit, scheme, i.dimensions[2], w.padLeft, padRight, w.strideW, fW, w.dilW);
  if (outH < 1 || outW < 1) return invalid("the window is larger than the padded input");
  NNHAL_PLAN_CHECK(shapeOutput(
      {i.dimensions[0], static_cast<uint32_t>(outH), static_cast<uint32_t>(outW), outC}));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  QuantizedDot q;
  if (quantized) {
    NNHAL_PLAN_TRY(dot, quantizedDot(depthwise ? 3 : 0, outC, activationAt));
    q = dot;
  }
  const Operand& o = output(0);
  if (implicit) {
    NNHAL_PLAN_TRY(
        top, implicitPadding(scheme, i.dimensions[1], o.dimensions[1], w.strideH, fH, w.dilH));
    NNHAL_PLAN_TRY(
        left, implicitPadding(scheme, i.dimensions[2], o.dimensions[2], w.strideW, fW, w.dilW));
    w.padTop = top;
    w.padLeft = left;
  }
  // The window's geometry, the same words in both shaders' Params (after the offsets).
  const std::vector<uint32_t> geometry = {i.dimensions[1],
                                          i.dimensions[2],
                                          i.dimensions[3],
                                          o.dimensions[1],
                                          o.dimensions[2],
                                          o.dimensions[3],
                                          fH,
                                          fW,
                                          w.strideH,
                                          w.strideW,
                                          static_cast<uint32_t>(w.padTop),
                                          static_cast<uint32_t>(w.padLeft),
                                          w.dilH,
                                          w.dilW,
                                          w.multiplier};
  std::vector<uint32_t> words = {elementsOf(o), offsetWord(out), offsetWord(in), offsetWord(filter),
                                 offsetWord(bias)};
  if (quantized) words.push_back(offsetWord(q.requant));
  words.insert(words.end(), geometry.begin(), geometry.end());
  if (quantized) {
    words.insert(words.end(),
                 {groups, static_cast<uint32_t>(q.inZero), static_cast<uint32_t>(q.filterZero),
                  static_cast<uint32_t>(q.outZero), static_cast<uint32_t>(q.lo),
                  static_cast<uint32_t>(q.hi)});
  } else {
    words.insert(words.end(), {floatBits(w.lo), floatBits(w.hi), groups});
  }
  dispatch(quantized ? Shader::kConvQuant : Shader::kConv2d, elementsOf(o), std::move(words));
  return {};
}

Planned<void> Planner::pooling(uint32_t kind) {
  const size_t count = op().inputs.size();
  const bool implicit = count == 7 || (count == 8 && input(7).type == OperandType::BOOL);
  const size_t strides = implicit ? 2 : 5;  // strideW, strideH, filterW, filterH, activation
  const size_t layoutAt = strides + 5;
  if (count > layoutAt) {
    NNHAL_PLAN_TRY(nchw, scalarBool(layoutAt));
    if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
  }
  NNHAL_PLAN_TRY(sw, scalarInt(strides));
  NNHAL_PLAN_TRY(sh, scalarInt(strides + 1));
  NNHAL_PLAN_TRY(fw, scalarInt(strides + 2));
  NNHAL_PLAN_TRY(fh, scalarInt(strides + 3));
  NNHAL_PLAN_TRY(floatRange, activation(strides + 4));
  std::pair<float, float> range = floatRange;
  if (sw < 1 || sh < 1 || fw < 1 || fh < 1) return refuse("strides and filter sizes must be >= 1");
  // AVERAGE_POOL_2D and MAX_POOL_2D also on 8-bit tensors, whose output keeps the input's
  // scale and zero point: the average rounds half away from zero in integers (the shader's
  // op 3), the maximum is exact on the integer values held as floats.
  const bool quantized = kind != 2 && isQuant8(input(0).type);
  if (quantized) {
    if (output(0).type != input(0).type || output(0).scale != input(0).scale ||
        output(0).zeroPoint != input(0).zeroPoint) {
      return invalid("the output's type and quantization must be the input's");
    }
    NNHAL_PLAN_TRY(levels, quantizedActivation(strides + 4));
    range = {static_cast<float>(levels.first), static_cast<float>(levels.second)};
    // The shader sums the taps' integers in float, exact below 2^24: 65,536 taps of 255.
    if (kind == 0 && int64_t{fw} * fh > 65536) {
      return refuse("a quantized average over more than 65,536 taps is not supported");
    }
    if (kind == 0) kind = 3;
  }
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  const Operand& i = input(0);
  if (i.dimensions.size() != 4) return invalid("the input must have rank 4");
  int32_t padTop = 0;
  int32_t padLeft = 0;
  int32_t padBottom = 0;
  int32_t padRight = 0;
  int32_t scheme = 0;
  if (implicit) {
    NNHAL_PLAN_TRY(code, scalarInt(1));
    if (code != 1 && code != 2) return invalid("padding scheme " + std::to_string(code));
    scheme = code;
  } else {
    NNHAL_PLAN_TRY(left, scalarInt(1));
    NNHAL_PLAN_TRY(right, scalarInt(2));
    NNHAL_PLAN_TRY(top, scalarInt(3));
    NNHAL_PLAN_TRY(bottom, scalarInt(4));
    if (left < 0 || right < 0 || top < 0 || bottom < 0) return invalid("negative padding");
    padLeft = left;
    padTop = top;
    padRight = right;
    padBottom = bottom;
  }
  const auto strideH = static_cast<uint32_t>(sh);
  const auto strideW = static_cast<uint32_t>(sw);
  const auto filterH = static_cast<uint32_t>(fh);
  const auto filterW = static_cast<uint32_t>(fw);
  const int64_t outH =
      windowOutput(implicit, scheme, i.dimensions[1], padTop, padBottom, strideH, filterH, 1);
  const int64_t outW =
      windowOutput(implicit, scheme, i.dimensions[2], padLeft, padRight, strideW, filterW, 1);
  if (outH < 1 || outW < 1) return invalid("the window is larger than the padded input");
  NNHAL_PLAN_CHECK(shapeOutput({i.dimensions[0], static_cast<uint32_t>(outH),
                                static_cast<uint32_t>(outW), i.dimensions[3]}));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  const Operand& o = output(0);
  if (implicit) {
    NNHAL_PLAN_TRY(top,
                   implicitPadding(scheme, i.dimensions[1], o.dimensions[1], strideH, filterH, 1));
    NNHAL_PLAN_TRY(left,
                   implicitPadding(scheme, i.dimensions[2], o.dimensions[2], strideW, filterW, 1));
    padTop = top;
    padLeft = left;
  }
  dispatch(Shader::kPool, elementsOf(o),
           {elementsOf(o), kind, offsetWord(out), offsetWord(in), i.dimensions[1], i.dimensions[2],
            i.dimensions[3], o.dimensions[1], o.dimensions[2], static_cast<uint32_t>(fh),
            static_cast<uint32_t>(fw), static_cast<uint32_t>(sh), static_cast<uint32_t>(sw),
            static_cast<uint32_t>(padTop), static_cast<uint32_t>(padLeft), floatBits(range.first),
            floatBits(range.second)});
  return {};
}

Planned<void> Planner::fullyConnected() {
  const bool quantized = isQuant8(input(0).type);
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  NNHAL_PLAN_TRY(weights, tensor(inputIndex(1), quantized));
  NNHAL_PLAN_TRY(bias, tensor(inputIndex(2), quantized));
  NNHAL_PLAN_TRY(range, activation(3));
  const Operand& w = input(1);
  if (w.dimensions.size() != 2) return invalid("the weights must have rank 2");
  const uint32_t units = w.dimensions[0];
  const uint32_t inSize = w.dimensions[1];
  if (inSize == 0 || elementsOf(input(0)) % inSize != 0 ||
      input(2).dimensions != std::vector<uint32_t>{units}) {
    return invalid("the input, weights and bias sizes do not fit together");
  }
  const uint32_t batches = elementsOf(input(0)) / inSize;
  NNHAL_PLAN_CHECK(shapeOutput({batches, units}));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  if (quantized) {
    // A 1x1 convolution of a [batches, 1, 1, inSize] image.
    NNHAL_PLAN_TRY(q, quantizedDot(0, units, 3));
    dispatch(Shader::kConvQuant, batches * units,
             {batches * units,
              offsetWord(out),
              offsetWord(in),
              offsetWord(weights),
              offsetWord(bias),
              offsetWord(q.requant),
              1,
              1,
              inSize,
              1,
              1,
              units,
              1,
              1,
              1,
              1,
              0,
              0,
              1,
              1,
              0,
              1,
              static_cast<uint32_t>(q.inZero),
              static_cast<uint32_t>(q.filterZero),
              static_cast<uint32_t>(q.outZero),
              static_cast<uint32_t>(q.lo),
              static_cast<uint32_t>(q.hi)});
    return {};
  }
  dispatch(Shader::kFullyConnected, elementsOf(output(0)),
           {elementsOf(output(0)), offsetWord(out), offsetWord(in), offsetWord(weights),
            offsetWord(bias), inSize, units, floatBits(range.first), floatBits(range.second)});
  return {};
}

Planned<void> Planner::transposeConv() {
  // Inputs: 0 input, 1 filter [outC, fH, fW, inC], 2 bias; implicit (9): 3 output shape,
  // 4 padding scheme, 5 strideW, 6 strideH, 7 activation, 8 layout; explicit (11): 3-6
  // paddings left, right, top, bottom, 7 strideW, 8 strideH, 9 activation, 10 layout.
  const size_t count = op().inputs.size();
  if (count != 9 && count != 11) return invalid("TRANSPOSE_CONV_2D takes 9 or 11 inputs");
  const bool implicit = count == 9;
  const size_t strides = implicit ? 5 : 7;
  NNHAL_PLAN_TRY(sw, scalarInt(strides));
  NNHAL_PLAN_TRY(sh, scalarInt(strides + 1));
  NNHAL_PLAN_TRY(range, activation(strides + 2));
  NNHAL_PLAN_TRY(nchw, scalarBool(strides + 3));
  if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
  if (sw < 1 || sh < 1) return invalid("strides must be at least 1");
  const bool quantized = isQuant8(input(0).type);
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  NNHAL_PLAN_TRY(filter, tensor(inputIndex(1), quantized));
  NNHAL_PLAN_TRY(bias, tensor(inputIndex(2), quantized));
  // Copies: the plan's own constants (quantizedDot) may move the operands.
  const std::vector<uint32_t> i = input(0).dimensions;
  const std::vector<uint32_t> f = input(1).dimensions;
  if (i.size() != 4 || f.size() != 4 || f[3] != i[3] ||
      input(2).dimensions != std::vector<uint32_t>{f[0]}) {
    return invalid("the input, filter and bias shapes do not fit together");
  }
  int64_t pads[4] = {0, 0, 0, 0};  // left, right, top, bottom
  if (implicit) {
    NNHAL_PLAN_TRY(shape, constantInts(3));
    NNHAL_PLAN_TRY(scheme, scalarInt(4));
    if (shape.size() != 4) return invalid("the output shape must have 4 entries");
    if (scheme != 1 && scheme != 2) return invalid("padding scheme " + std::to_string(scheme));
    // Inside an NCHW operation the output shape tensor lists NCHW dimensions.
    const int64_t height = shape[input0_ ? 2 : 1];
    const int64_t width = shape[input0_ ? 3 : 2];
    const auto implicitPads = [&](int64_t out, int64_t stride, int64_t size, int64_t* head,
                                  int64_t* tail) {
      if (scheme != 1) return;
      const int64_t needed = ((out + stride - 1) / stride - 1) * stride + size;
      *head = std::max<int64_t>(needed - out, 0) / 2;
      *tail = needed - out - *head;
    };
    implicitPads(width, sw, f[2], &pads[0], &pads[1]);
    implicitPads(height, sh, f[1], &pads[2], &pads[3]);
  } else {
    for (size_t k = 0; k < 4; ++k) {
      NNHAL_PLAN_TRY(v, scalarInt(3 + k));
      pads[k] = v;
    }
    if (pads[0] < 0 || pads[2] < 0) return invalid("a negative left or top padding");
  }
  const int64_t outH = (int64_t{i[1]} - 1) * sh + f[1] - pads[2] - pads[3];
  const int64_t outW = (int64_t{i[2]} - 1) * sw + f[2] - pads[0] - pads[1];
  if (outH < 1 || outW < 1 || outH > 65536 || outW > 65536) {
    return invalid("an output size outside [1, 65536]");
  }
  NNHAL_PLAN_CHECK(
      shapeOutput({i[0], static_cast<uint32_t>(outH), static_cast<uint32_t>(outW), f[0]}));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  const std::vector<uint32_t> geometry = {i[1],
                                          i[2],
                                          i[3],
                                          static_cast<uint32_t>(outH),
                                          static_cast<uint32_t>(outW),
                                          f[0],
                                          f[1],
                                          f[2],
                                          static_cast<uint32_t>(sh),
                                          static_cast<uint32_t>(sw),
                                          static_cast<uint32_t>(pads[2]),
                                          static_cast<uint32_t>(pads[0])};
  std::vector<uint32_t> words = {elementsOf(output(0)), offsetWord(out), offsetWord(in),
                                 offsetWord(filter), offsetWord(bias)};
  if (quantized) {
    // Per-channel filters are [outC, fH, fW, inC]: their scales along dimension 0.
    NNHAL_PLAN_TRY(q, quantizedDot(0, f[0], strides + 2));
    words.push_back(offsetWord(q.requant));
    words.insert(words.end(), geometry.begin(), geometry.end());
    for (int32_t v : {q.inZero, q.filterZero, q.outZero, q.lo, q.hi}) {
      words.push_back(static_cast<uint32_t>(v));
    }
    dispatch(Shader::kTransposeConvQuant, elementsOf(output(0)), std::move(words));
    return {};
  }
  words.insert(words.end(), geometry.begin(), geometry.end());
  words.push_back(floatBits(range.first));
  words.push_back(floatBits(range.second));
  dispatch(Shader::kTransposeConv, elementsOf(output(0)), std::move(words));
  return {};
}

Planned<Planner::QuantizedDot> Planner::quantizedDot(uint32_t channelDim, uint32_t channels,
                                                     size_t activationAt) {
  const Operand& in = input(0);
  const Operand& filter = input(1);
  const Operand& bias = input(2);
  const Operand& out = output(0);
  const bool perChannel = filter.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  if (out.type != in.type || (!perChannel && filter.type != in.type)) {
    return invalid("the input, filter and output types do not match");
  }
  if (bias.type != OperandType::TENSOR_INT32) return invalid("the bias must be TENSOR_INT32");
  if (!perChannel) {
    if (!kernels::biasScaleMatches(in.scale, filter.scale, bias.scale)) {
      return invalid("the bias scale must equal input scale * filter scale");
    }
  }
  // The multipliers as the CPU device computes them (kernels/quantization.h).
  std::vector<float> filterScales(channels, filter.scale);
  if (perChannel) {
    const auto* params = std::get_if<SymmPerChannelQuantParams>(&filter.extraParams);
    if (params == nullptr || params->channelDim != channelDim ||
        params->scales.size() != channels) {
      return invalid("the filter's per-channel scales do not fit its output channels");
    }
    filterScales = params->scales;
  }
  std::vector<int32_t> requant;
  for (float filterScale : filterScales) {
    const double real = kernels::convolutionRealMultiplier(in.scale, filterScale, out.scale);
    kernels::QuantizedMultiplier m;
    if (!kernels::quantizeMultiplier(real, &m)) {
      return invalid(
          "the requantization multiplier (input scale * filter scale / output "
          "scale) is out of range");
    }
    requant.push_back(m.multiplier);
    requant.push_back(m.shift);
  }
  QuantizedDot q;
  q.inZero = in.zeroPoint;
  q.filterZero = perChannel ? 0 : filter.zeroPoint;
  q.outZero = out.zeroPoint;
  NNHAL_PLAN_TRY(range, quantizedActivation(activationAt));
  q.lo = range.first;
  q.hi = range.second;
  q.requant = ownConstant(std::move(requant));  // last: it may move the operands
  NNHAL_PLAN_CHECK(tensor(q.requant, true));
  return q;
}

}  // namespace nnhal::backend::vulkan::planning
