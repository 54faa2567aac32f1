#include "engine/ops/conv_common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "hal/operand_utils.h"

namespace nnhal::engine::ops::spatial {
namespace {

std::string opName(const PrepareContext& ctx) { return std::string(toString(ctx.type())); }

std::string typeName(OperandType type) { return std::string(toString(type)); }

// `where()` names the operand; it is formatted only for an error message.
template <typename Where>
Result<void> checkQuantParams(const Where& where, OperandType type, float scale,
                              int32_t zeroPoint) {
  if (!(scale > 0.0f) || !std::isfinite(scale)) {
    return invalidArgument(where() + " must have a positive finite scale, got " +
                           std::to_string(scale));
  }
  int32_t qmin = 0, qmax = 0;
  quant8Range(type, &qmin, &qmax);
  if (zeroPoint < qmin || zeroPoint > qmax) {
    return invalidArgument(where() + " zero point " + std::to_string(zeroPoint) + " is outside [" +
                           std::to_string(qmin) + ", " + std::to_string(qmax) + "]");
  }
  return {};
}

// One axis of resolveWindow.
Result<uint32_t> resolveAxis(const PrepareContext& ctx, const char* axis, uint32_t in,
                             uint32_t filter, int32_t stride, int32_t dilation, int32_t code,
                             bool implicit, int32_t* before, int32_t* after) {
  const int64_t effective = (int64_t{filter} - 1) * dilation + 1;
  if (implicit) {
    *before = 0;
    *after = 0;
    if (code == kPaddingSame) {
      const int64_t out = (int64_t{in} + stride - 1) / stride;
      const int64_t total = std::max<int64_t>((out - 1) * stride + effective - in, 0);
      *before = static_cast<int32_t>(total / 2);
      *after = static_cast<int32_t>(total - total / 2);
    }
  }
  if (*before >= effective || *after >= effective) {
    return invalidArgument(opName(ctx) + ": " + axis + " padding (" + std::to_string(*before) +
                           ", " + std::to_string(*after) +
                           ") must be smaller than the effective filter size " +
                           std::to_string(effective));
  }
  const int64_t span = int64_t{in} + *before + *after - effective;
  if (span < 0) {
    return invalidArgument(opName(ctx) + ": effective filter " + axis + " " +
                           std::to_string(effective) + " exceeds the padded input " + axis + " " +
                           std::to_string(int64_t{in} + *before + *after));
  }
  return static_cast<uint32_t>(span / stride + 1);
}

}  // namespace

bool isQuant8(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

void quant8Range(OperandType type, int32_t* qmin, int32_t* qmax) {
  if (type == OperandType::TENSOR_QUANT8_ASYMM) {
    *qmin = 0;
    *qmax = 255;
  } else {
    *qmin = -128;
    *qmax = 127;
  }
}

Result<void> checkCounts(const PrepareContext& ctx, std::initializer_list<size_t> allowed,
                         size_t outputs) {
  if (ctx.outputCount() != outputs) {
    return invalidArgument(opName(ctx) + " needs " + std::to_string(outputs) + " output(s), got " +
                           std::to_string(ctx.outputCount()));
  }
  if (std::find(allowed.begin(), allowed.end(), ctx.inputCount()) == allowed.end()) {
    std::string list;
    for (size_t n : allowed) list += (list.empty() ? "" : ", ") + std::to_string(n);
    return invalidArgument(opName(ctx) + " takes " + list + " inputs, got " +
                           std::to_string(ctx.inputCount()));
  }
  return {};
}

Result<void> checkMainType(const PrepareContext& ctx) {
  if (!ctx.hasInput(0)) return invalidArgument(ctx.where(0) + " is missing");
  const OperandType type = ctx.input(0).type;
  if (type != OperandType::TENSOR_FLOAT32 && !isQuant8(type)) {
    return invalidArgument(ctx.where(0) + " has type " + typeName(type) +
                           ", not supported (TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM or "
                           "TENSOR_QUANT8_ASYMM_SIGNED)");
  }
  if (ctx.output(0).type != type) {
    return invalidArgument(outputWhere(ctx, 0) + " has type " + typeName(ctx.output(0).type) +
                           " but input 0 has " + typeName(type));
  }
  return {};
}

Result<void> checkType(const PrepareContext& ctx, size_t i, OperandType expected) {
  if (!ctx.hasInput(i)) return invalidArgument(ctx.where(i) + " is missing");
  if (ctx.input(i).type != expected) {
    return invalidArgument(ctx.where(i) + " must be " + typeName(expected) + ", got " +
                           typeName(ctx.input(i).type));
  }
  return {};
}

Result<void> checkRank(const PrepareContext& ctx, size_t i, size_t rank) {
  const size_t actual = ctx.input(i).dimensions.size();
  if (actual != rank) {
    return invalidArgument(ctx.where(i) + " must have rank " + std::to_string(rank) + ", got " +
                           std::to_string(actual));
  }
  return {};
}

Result<void> checkQuant(const PrepareContext& ctx, size_t i) {
  const OperandInfo& in = ctx.input(i);
  return checkQuantParams([&] { return ctx.where(i); }, in.type, in.scale, in.zeroPoint);
}

Result<void> checkOutputQuant(const PrepareContext& ctx, size_t o) {
  const OperandInfo& out = ctx.output(o);
  return checkQuantParams([&] { return outputWhere(ctx, o); }, out.type, out.scale, out.zeroPoint);
}

Result<int32_t> readInt(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(checkType(ctx, i, OperandType::INT32));
  return ctx.scalar<int32_t>(i);
}

Result<bool> readBool(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(checkType(ctx, i, OperandType::BOOL));
  NNHAL_ASSIGN_OR_RETURN(const uint8_t value, ctx.scalar<uint8_t>(i));
  return value != 0;
}

Result<FusedActivationFunc> readFusedActivation(const PrepareContext& ctx, size_t i) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t value, readInt(ctx, i));
  if (value < 0 || value > 3) {
    return invalidArgument(ctx.where(i) + " (fused activation) must be 0..3, got " +
                           std::to_string(value));
  }
  return static_cast<FusedActivationFunc>(value);
}

Result<WindowParams> parseWindow(const PrepareContext& ctx, const WindowLayout& layout) {
  const size_t n = ctx.inputCount();
  const size_t implicitBase = layout.first + 3 + layout.extras + 1;
  const size_t explicitBase = layout.first + 6 + layout.extras + 1;
  WindowParams w;
  w.implicitPadding =
      n == implicitBase || (n > implicitBase && ctx.input(implicitBase).type == OperandType::BOOL);
  const size_t base = w.implicitPadding ? implicitBase : explicitBase;
  const bool countOk = n == base || n == base + 1 || (layout.dilation && n == base + 3);
  if (!countOk) {
    std::string message = opName(ctx) + " with " + (w.implicitPadding ? "implicit" : "explicit") +
                          " padding takes " + std::to_string(base) + ", " +
                          std::to_string(base + 1) +
                          (layout.dilation ? " or " + std::to_string(base + 3) : "") +
                          " inputs, got " + std::to_string(n);
    if (layout.dilation && n == base + 2) message += " (only one dilation factor given)";
    return invalidArgument(message);
  }
  size_t i = layout.first;
  if (w.implicitPadding) {
    NNHAL_ASSIGN_OR_RETURN(w.paddingCode, readInt(ctx, i));
    if (w.paddingCode != kPaddingSame && w.paddingCode != kPaddingValid) {
      return invalidArgument(ctx.where(i) +
                             " (implicit padding) must be 1 (SAME) or 2 (VALID), got " +
                             std::to_string(w.paddingCode));
    }
    ++i;
  } else {
    int32_t* pads[] = {&w.padLeft, &w.padRight, &w.padTop, &w.padBottom};
    for (int32_t* pad : pads) {
      NNHAL_ASSIGN_OR_RETURN(*pad, readInt(ctx, i));
      if (*pad < 0) {
        return invalidArgument(ctx.where(i) + " (padding) must be >= 0, got " +
                               std::to_string(*pad));
      }
      ++i;
    }
  }
  for (int32_t* stride : {&w.strideWidth, &w.strideHeight}) {
    NNHAL_ASSIGN_OR_RETURN(*stride, readInt(ctx, i));
    if (*stride <= 0) {
      return invalidArgument(ctx.where(i) + " (stride) must be > 0, got " +
                             std::to_string(*stride));
    }
    ++i;
  }
  for (size_t e = 0; e < layout.extras; ++e, ++i) {
    NNHAL_ASSIGN_OR_RETURN(w.extras[e], readInt(ctx, i));
  }
  NNHAL_ASSIGN_OR_RETURN(w.activation, readFusedActivation(ctx, i));
  ++i;
  if (n > base) {
    NNHAL_ASSIGN_OR_RETURN(w.nchw, readBool(ctx, i));
    w.layoutInput = i;
    ++i;
  }
  if (n == base + 3) {
    for (int32_t* dilation : {&w.dilationWidth, &w.dilationHeight}) {
      NNHAL_ASSIGN_OR_RETURN(*dilation, readInt(ctx, i));
      if (*dilation <= 0) {
        return invalidArgument(ctx.where(i) + " (dilation) must be > 0, got " +
                               std::to_string(*dilation));
      }
      ++i;
    }
  }
  return w;
}

Result<void> checkFilterAndBias(const PrepareContext& ctx) {
  const OperandType type = ctx.input(0).type;
  const bool quant = isQuant8(type);
  if (!ctx.hasInput(1)) return invalidArgument(ctx.where(1) + " (filter) is missing");
  const OperandType filterType = ctx.input(1).type;
  if (filterType != type && !(quant && filterType == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL)) {
    return invalidArgument(
        ctx.where(1) + " (filter) has type " + std::string(toString(filterType)) + ", expected " +
        std::string(toString(type)) + (quant ? " or TENSOR_QUANT8_SYMM_PER_CHANNEL" : ""));
  }
  NNHAL_TRY(checkRank(ctx, 0, 4));
  NNHAL_TRY(checkRank(ctx, 1, 4));
  if (ctx.hasInput(2)) {
    NNHAL_TRY(checkType(ctx, 2, quant ? OperandType::TENSOR_INT32 : OperandType::TENSOR_FLOAT32));
    NNHAL_TRY(checkRank(ctx, 2, 1));
  }
  return {};
}

Result<void> checkConvOperands(const PrepareContext& ctx) {
  if (ctx.outputCount() != 1) {
    return invalidArgument(std::string(toString(ctx.type())) + " needs 1 output, got " +
                           std::to_string(ctx.outputCount()));
  }
  NNHAL_TRY(checkMainType(ctx));
  NNHAL_TRY(checkFilterAndBias(ctx));
  const bool quant = isQuant8(ctx.input(0).type);
  if (quant) {
    NNHAL_TRY(checkQuant(ctx, 0));
    NNHAL_TRY(checkOutputQuant(ctx, 0));
  }
  return {};
}

Result<void> checkOhwiFilter(const PrepareContext& ctx) {
  NNHAL_TRY(checkNonEmptyImage(ctx));
  const auto& in = ctx.input(0).dimensions;
  const auto& filter = ctx.input(1).dimensions;
  if (filter[0] == 0 || filter[1] == 0 || filter[2] == 0) {
    return invalidArgument(ctx.where(1) + " (filter) must have non-zero dimensions");
  }
  if (filter[3] != in[3]) {
    return invalidArgument(ctx.where(1) + " (filter) depth " + std::to_string(filter[3]) +
                           " does not match the input depth " + std::to_string(in[3]));
  }
  return {};
}

Result<void> checkBiasLength(const PrepareContext& ctx, uint32_t channels, std::string_view what) {
  if (ctx.hasInput(2) && ctx.input(2).dimensions[0] != channels) {
    return invalidArgument(ctx.where(2) + " (bias) has " +
                           std::to_string(ctx.input(2).dimensions[0]) + " values for " +
                           std::to_string(channels) + " " + std::string(what));
  }
  return {};
}

Result<void> checkConstantBytes(const PrepareContext& ctx, size_t i, size_t bytes) {
  const OperandInfo& op = ctx.input(i);
  if (op.isConstant() && op.constantLength < bytes) {
    return invalidArgument(ctx.where(i) + " holds " + std::to_string(op.constantLength) +
                           " bytes, needs " + std::to_string(bytes));
  }
  return {};
}

Result<void> checkNonEmptyImage(const PrepareContext& ctx) {
  const auto& in = ctx.input(0).dimensions;
  if (in[1] == 0 || in[2] == 0 || in[3] == 0) {
    return invalidArgument(ctx.where(0) + " must have non-zero height, width and depth");
  }
  return {};
}

Result<kernels::WindowGeometry> resolveOutputWindow(PrepareContext& ctx, WindowParams& w,
                                                    uint32_t filterHeight, uint32_t filterWidth,
                                                    uint32_t outDepth) {
  const std::vector<uint32_t>& in = ctx.input(0).dimensions;
  uint32_t outHeight = 0, outWidth = 0;
  NNHAL_TRY(resolveWindow(ctx, w, in[1], in[2], filterHeight, filterWidth, &outHeight, &outWidth));
  NNHAL_TRY(ctx.setOutputShape(0, {in[0], outHeight, outWidth, outDepth}));
  kernels::WindowGeometry g;
  g.batches = in[0];
  g.inHeight = in[1];
  g.inWidth = in[2];
  g.inDepth = in[3];
  g.filterHeight = filterHeight;
  g.filterWidth = filterWidth;
  g.outHeight = outHeight;
  g.outWidth = outWidth;
  g.outDepth = outDepth;
  g.padTop = w.padTop;
  g.padLeft = w.padLeft;
  g.strideHeight = static_cast<uint32_t>(w.strideHeight);
  g.strideWidth = static_cast<uint32_t>(w.strideWidth);
  g.dilationHeight = static_cast<uint32_t>(w.dilationHeight);
  g.dilationWidth = static_cast<uint32_t>(w.dilationWidth);
  return g;
}

Result<void> resolveWindow(const PrepareContext& ctx, WindowParams& w, uint32_t inHeight,
                           uint32_t inWidth, uint32_t filterHeight, uint32_t filterWidth,
                           uint32_t* outHeight, uint32_t* outWidth) {
  NNHAL_ASSIGN_OR_RETURN(*outHeight, resolveAxis(ctx, "height", inHeight, filterHeight,
                                                 w.strideHeight, w.dilationHeight, w.paddingCode,
                                                 w.implicitPadding, &w.padTop, &w.padBottom));
  NNHAL_ASSIGN_OR_RETURN(
      *outWidth, resolveAxis(ctx, "width", inWidth, filterWidth, w.strideWidth, w.dilationWidth,
                             w.paddingCode, w.implicitPadding, &w.padLeft, &w.padRight));
  return {};
}

Result<std::vector<kernels::QuantizedMultiplier>> quantWeightedMultipliers(
    const PrepareContext& ctx, uint32_t channelDim, size_t channels) {
  NNHAL_TRY(checkQuant(ctx, 0));
  NNHAL_TRY(checkOutputQuant(ctx, 0));
  return convMultipliers(ctx, 1, 2, channelDim, channels);
}

Result<std::vector<kernels::QuantizedMultiplier>> convMultipliers(const PrepareContext& ctx,
                                                                  size_t filter, size_t bias,
                                                                  uint32_t channelDim,
                                                                  size_t channels) {
  const OperandInfo& in = ctx.input(0);
  const OperandInfo& f = ctx.input(filter);
  const float outputScale = ctx.output(0).scale;
  const auto multiplierFor = [&](float filterScale,
                                 kernels::QuantizedMultiplier* out) -> Result<void> {
    const double real = kernels::convolutionRealMultiplier(in.scale, filterScale, outputScale);
    if (!kernels::quantizeMultiplier(real, out)) {
      return invalidArgument(opName(ctx) + ": requantization multiplier " + std::to_string(real) +
                             " (input scale * filter scale / output "
                             "scale) is out of range");
    }
    return {};
  };
  if (f.type != OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    NNHAL_TRY(checkQuant(ctx, filter));
    if (ctx.hasInput(bias)) {
      const float biasScale = ctx.input(bias).scale;
      if (!kernels::biasScaleMatches(in.scale, f.scale, biasScale)) {
        return invalidArgument(ctx.where(bias) + " scale " + std::to_string(biasScale) +
                               " must equal input scale * filter scale = " +
                               std::to_string(static_cast<double>(in.scale * f.scale)));
      }
    }
    // Per-tensor: one multiplier for every channel.
    kernels::QuantizedMultiplier shared;
    NNHAL_TRY(multiplierFor(f.scale, &shared));
    return std::vector<kernels::QuantizedMultiplier>(channels, shared);
  }
  if (f.channelQuant == nullptr) {
    return invalidArgument(ctx.where(filter) + " is per-channel but has no channel scales");
  }
  if (f.channelQuant->channelDim != channelDim) {
    return invalidArgument(ctx.where(filter) + " must be quantized along dimension " +
                           std::to_string(channelDim) + ", got " +
                           std::to_string(f.channelQuant->channelDim));
  }
  const std::vector<float>& filterScales = f.channelQuant->scales;
  if (filterScales.size() != channels) {
    return invalidArgument(ctx.where(filter) + " has " + std::to_string(filterScales.size()) +
                           " channel scales for " + std::to_string(channels) + " channels");
  }
  if (f.zeroPoint != 0) return invalidArgument(ctx.where(filter) + " zero point must be 0");
  for (float s : filterScales) {
    if (!(s > 0.0f) || !std::isfinite(s)) {
      return invalidArgument(ctx.where(filter) + " has a channel scale that is not positive");
    }
  }
  std::vector<kernels::QuantizedMultiplier> result(channels);
  for (size_t c = 0; c < channels; ++c) {
    if (c > 0 && filterScales[c] == filterScales[c - 1]) {  // runs of equal scales
      result[c] = result[c - 1];
      continue;
    }
    NNHAL_TRY(multiplierFor(filterScales[c], &result[c]));
  }
  return result;
}

namespace {

// Copies a [batches][a][b][elementBytes] tensor to [batches][b][a][elementBytes].
void transposeInner(const uint8_t* src, size_t batches, size_t a, size_t b, size_t elementBytes,
                    uint8_t* dst) {
  for (size_t n = 0; n < batches; ++n) {
    const uint8_t* s = src + n * a * b * elementBytes;
    uint8_t* d = dst + n * a * b * elementBytes;
    for (size_t i = 0; i < a; ++i) {
      for (size_t j = 0; j < b; ++j) {
        std::memcpy(d + (j * a + i) * elementBytes, s + (i * b + j) * elementBytes, elementBytes);
      }
    }
  }
}

std::vector<uint32_t> nchwToNhwc(const std::vector<uint32_t>& d) {
  return {d[0], d[2], d[3], d[1]};
}
std::vector<uint32_t> nhwcToNchw(const std::vector<uint32_t>& d) {
  return {d[0], d[3], d[1], d[2]};
}

constexpr uint8_t kFalse = 0;

}  // namespace

Result<std::unique_ptr<Kernel>> prepareNchwAsNhwc(PrepareContext& ctx, size_t layoutInput,
                                                  PrepareFn prepareNhwc) {
  std::vector<OperandInfo> inputs;
  for (size_t i = 0; i < ctx.inputCount(); ++i) inputs.push_back(ctx.input(i));
  std::vector<OperandInfo> outputs = ctx.outputs();
  if (inputs[0].dimensions.size() != 4) {
    return invalidArgument(ctx.where(0) + " must have rank 4, got " +
                           std::to_string(inputs[0].dimensions.size()));
  }
  const std::vector<uint32_t> nchwIn = inputs[0].dimensions;
  inputs[0].dimensions = nchwToNhwc(nchwIn);
  inputs[layoutInput].constantData = &kFalse;
  if (!outputs[0].dimensions.empty()) {
    if (outputs[0].dimensions.size() != 4) {
      return invalidArgument(outputWhere(ctx, 0) + " must have rank 4");
    }
    outputs[0].dimensions = nchwToNhwc(outputs[0].dimensions);
  }
  PrepareContext inner(ctx.type(), std::move(inputs), std::move(outputs), ctx.relaxedFloat32());
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, prepareNhwc(inner));
  const std::vector<uint32_t> nhwcOut = inner.output(0).dimensions;
  NNHAL_TRY(ctx.setOutputShape(0, nhwcToNchw(nhwcOut)));

  const size_t elementBytes = hal::sizeOfElement(ctx.input(0).type);
  const size_t inBytes = ctx.input(0).elementCount() * elementBytes;
  const size_t outBytes = size_t{nhwcOut[0]} * nhwcOut[1] * nhwcOut[2] * nhwcOut[3] * elementBytes;
  ScratchLayout layout;
  const size_t inAt = layout.add(inBytes);
  const size_t outAt = layout.add(outBytes);
  const size_t innerAt = layout.add(inner.scratchBytes());
  ctx.requestScratch(layout.total());
  const size_t inputCount = ctx.inputCount();
  return makeKernel([kernel = std::shared_ptr<const Kernel>(std::move(kernel)), nchwIn, nhwcOut,
                     elementBytes, inAt, outAt, innerAt,
                     inputCount](const RunContext& rc) -> Result<void> {
    uint8_t* base = ScratchLayout::base(rc.scratch());
    // [N][C][H*W] -> [N][H*W][C]
    transposeInner(rc.input<uint8_t>(0), nchwIn[0], nchwIn[1], size_t{nchwIn[2]} * nchwIn[3],
                   elementBytes, base + inAt);
    std::vector<const void*> inputs(inputCount);
    for (size_t i = 0; i < inputCount; ++i) inputs[i] = rc.input<void>(i);
    inputs[0] = base + inAt;
    const std::vector<void*> outputs{base + outAt};
    const RunContext innerContext(inputs, outputs, base + innerAt, rc.parallel());
    NNHAL_TRY(kernel->run(innerContext));
    // [N][H*W][C] -> [N][C][H*W]
    transposeInner(base + outAt, nhwcOut[0], size_t{nhwcOut[1]} * nhwcOut[2], nhwcOut[3],
                   elementBytes, rc.output<uint8_t>(0));
    return {};
  });
}

size_t ScratchLayout::add(size_t bytes) {
  const size_t offset = used_;
  used_ += (bytes + 63) / 64 * 64;
  return offset;
}

uint8_t* ScratchLayout::base(void* scratch) {
  const auto address = reinterpret_cast<uintptr_t>(scratch);
  return static_cast<uint8_t*>(scratch) + (64 - address % 64) % 64;
}

}  // namespace nnhal::engine::ops::spatial
