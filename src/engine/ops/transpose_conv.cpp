// TRANSPOSE_CONV_2D: validation, output shape, and the kernels of kernels/transpose_conv.h.
//
// Padding follows the NNAPI reference: the explicit form gives left, right, top and bottom
// (right and bottom may be negative, to pick among the output sizes a strided convolution
// maps to the same input size); the implicit form derives them from the output shape
// tensor: SAME with needed = (ceil(out / stride) - 1) * stride + filter and total = needed -
// out gives head = max(total, 0) / 2 and tail = total - head; VALID gives 0 and 0. The output
// size is then (in - 1) * stride + filter - head - tail. The NCHW layout runs the NHWC
// kernel between transposes.
#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/ops/conv_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/transpose_conv.h"

namespace nnhal::engine::ops {
namespace {

using kernels::TransposeConvGeometry;
using spatial::ScratchLayout;

// Below this many multiply-adds an operation runs as one task.
constexpr size_t kSerialWork = size_t{1} << 17;

struct TransposeParams {
  bool implicitPadding = false;
  std::vector<int32_t> outputShape;  // implicit form: the output shape tensor
  int32_t paddingCode = 0;
  int32_t padLeft = 0, padRight = 0, padTop = 0, padBottom = 0;
  int32_t strideWidth = 1, strideHeight = 1;
  FusedActivationFunc activation = FusedActivationFunc::NONE;
  bool nchw = false;
  size_t layoutInput = 0;
};

Result<int32_t> readStride(const PrepareContext& ctx, size_t i) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t stride, spatial::readInt(ctx, i));
  if (stride <= 0) {
    return invalidArgument(ctx.where(i) + " (stride) must be > 0, got " + std::to_string(stride));
  }
  return stride;
}

// Reads and checks every scalar (and the output shape tensor), so that values not known
// at compile time defer the whole operation to execution.
Result<TransposeParams> parseParams(const PrepareContext& ctx) {
  using namespace spatial;
  TransposeParams p;
  p.implicitPadding = ctx.inputCount() == 9;
  if (p.implicitPadding) {
    NNHAL_TRY(checkType(ctx, 3, OperandType::TENSOR_INT32));
    NNHAL_TRY(checkRank(ctx, 3, 1));
    if (ctx.input(3).dimensions[0] != 4) {
      return invalidArgument(ctx.where(3) + " (output shape) must have 4 values, got " +
                             std::to_string(ctx.input(3).dimensions[0]));
    }
    NNHAL_ASSIGN_OR_RETURN(p.outputShape, ctx.values<int32_t>(3));
    if (p.outputShape.size() != 4) {
      return invalidArgument(ctx.where(3) + " (output shape) must hold 4 values, got " +
                             std::to_string(p.outputShape.size()));
    }
    NNHAL_ASSIGN_OR_RETURN(p.paddingCode, readInt(ctx, 4));
    if (p.paddingCode != kPaddingSame && p.paddingCode != kPaddingValid) {
      return invalidArgument(ctx.where(4) +
                             " (implicit padding) must be 1 (SAME) or 2 (VALID), got " +
                             std::to_string(p.paddingCode));
    }
    NNHAL_ASSIGN_OR_RETURN(p.strideWidth, readStride(ctx, 5));
    NNHAL_ASSIGN_OR_RETURN(p.strideHeight, readStride(ctx, 6));
    NNHAL_ASSIGN_OR_RETURN(p.activation, readFusedActivation(ctx, 7));
    p.layoutInput = 8;
  } else {
    int32_t* pads[] = {&p.padLeft, &p.padRight, &p.padTop, &p.padBottom};
    for (size_t k = 0; k < 4; ++k) {
      NNHAL_ASSIGN_OR_RETURN(*pads[k], readInt(ctx, 3 + k));
    }
    if (p.padLeft < 0) {
      return invalidArgument(ctx.where(3) + " (left padding) must be >= 0, got " +
                             std::to_string(p.padLeft));
    }
    if (p.padTop < 0) {
      return invalidArgument(ctx.where(5) + " (top padding) must be >= 0, got " +
                             std::to_string(p.padTop));
    }
    NNHAL_ASSIGN_OR_RETURN(p.strideWidth, readStride(ctx, 7));
    NNHAL_ASSIGN_OR_RETURN(p.strideHeight, readStride(ctx, 8));
    NNHAL_ASSIGN_OR_RETURN(p.activation, readFusedActivation(ctx, 9));
    p.layoutInput = 10;
  }
  NNHAL_ASSIGN_OR_RETURN(p.nchw, readBool(ctx, p.layoutInput));
  return p;
}

// Paddings of one axis from the implicit padding code and the requested output size.
void implicitPadding(int64_t outSize, int64_t stride, int64_t filter, int32_t code, int32_t* head,
                     int32_t* tail) {
  *head = 0;
  *tail = 0;
  if (code != spatial::kPaddingSame) return;
  const int64_t in = (outSize + stride - 1) / stride;
  const int64_t total = (in - 1) * stride + filter - outSize;
  *head = static_cast<int32_t>(std::max<int64_t>(total, 0) / 2);
  *tail = static_cast<int32_t>(total - *head);
}

// Output size of one axis; errors name the axis.
Result<uint32_t> outputSize(const PrepareContext& ctx, const char* axis, uint32_t in,
                            uint32_t filter, int32_t stride, int32_t head, int32_t tail) {
  const int64_t size = (int64_t{in} - 1) * stride + filter - head - tail;
  if (size <= 0 || size > std::numeric_limits<int32_t>::max()) {
    return invalidArgument(std::string(toString(ctx.type())) + ": output " + axis + " " +
                           std::to_string(size) + " (from input " + axis + " " +
                           std::to_string(in) + ", filter " + std::to_string(filter) + ", stride " +
                           std::to_string(stride) + ", paddings " + std::to_string(head) + " and " +
                           std::to_string(tail) + ") must be positive");
  }
  return static_cast<uint32_t>(size);
}

size_t ceilDiv(size_t a, size_t b) { return (a + b - 1) / b; }

struct TransposeState {
  TransposeConvGeometry g;
  size_t tasks = 1, rowsPerTask = 1;
  bool quant = false;
  bool filterConstant = false, biasConstant = false, hasBias = false;
  // float
  std::vector<float> packedFloat, biasFloat;
  float outputMin = 0.0f, outputMax = 0.0f;
  // quantized
  std::vector<int16_t> packedQuant;
  std::vector<int32_t> biasQuant;
  std::vector<kernels::QuantizedMultiplier> multipliers;
  kernels::TransposeConvQuantParams quantParams;  // packed and bias set per run
  bool filterSigned = false;
  int32_t filterZeroPoint = 0;
  // scratch
  size_t packedAt = 0, accAt = 0, accSlotBytes = 0;
};

Result<void> runTranspose(const TransposeState& st, const RunContext& rc) {
  const TransposeConvGeometry& g = st.g;
  if (g.outputRows() == 0) return {};
  uint8_t* scratch = ScratchLayout::base(rc.scratch());
  if (!st.quant) {
    const float* packed = st.packedFloat.data();
    if (!st.filterConstant) {
      auto* runPacked = reinterpret_cast<float*>(scratch + st.packedAt);
      kernels::transposeConvPackFloat(g, rc.input<float>(1), runPacked);
      packed = runPacked;
    }
    const float* bias = !st.hasBias       ? nullptr
                        : st.biasConstant ? st.biasFloat.data()
                                          : rc.input<float>(2);
    const float* input = rc.input<float>(0);
    float* output = rc.output<float>(0);
    rc.parallel().forRange(st.tasks, 1, [&](size_t begin, size_t end) {
      for (size_t t = begin; t < end; ++t) {
        const size_t r0 = std::min(g.outputRows(), t * st.rowsPerTask);
        const size_t r1 = std::min(g.outputRows(), (t + 1) * st.rowsPerTask);
        kernels::transposeConvFloat(g, input, packed, bias, st.outputMin, st.outputMax, r0, r1,
                                    output);
      }
    });
    return {};
  }
  kernels::TransposeConvQuantParams p = st.quantParams;
  p.packed = st.packedQuant.data();
  if (!st.filterConstant) {
    auto* runPacked = reinterpret_cast<int16_t*>(scratch + st.packedAt);
    kernels::transposeConvPackQuant(g, rc.input<uint8_t>(1), st.filterSigned, st.filterZeroPoint,
                                    runPacked);
    p.packed = runPacked;
  }
  p.bias = !st.hasBias ? nullptr : st.biasConstant ? st.biasQuant.data() : rc.input<int32_t>(2);
  const uint8_t* input = rc.input<uint8_t>(0);
  uint8_t* output = rc.output<uint8_t>(0);
  rc.parallel().forRange(st.tasks, 1, [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const size_t r0 = std::min(g.outputRows(), t * st.rowsPerTask);
      const size_t r1 = std::min(g.outputRows(), (t + 1) * st.rowsPerTask);
      auto* acc = reinterpret_cast<uint32_t*>(scratch + st.accAt + t * st.accSlotBytes);
      kernels::transposeConvQuant(g, input, p, r0, r1, acc, output);
    }
  });
  return {};
}

// `shapeIsNchw`: the output shape tensor (implicit form) lists NCHW dimensions although
// input 0 is NHWC here (the NHWC half of an NCHW operation).
PrepareResult prepareTransposeConv(PrepareContext& ctx, bool shapeIsNchw);

PrepareResult prepareTransposeConvFromNchw(PrepareContext& ctx) {
  return prepareTransposeConv(ctx, true);
}

PrepareResult prepareTransposeConv(PrepareContext& ctx, bool shapeIsNchw) {
  using namespace spatial;
  if (ctx.inputCount() != 9 && ctx.inputCount() != 11) {
    return invalidArgument("TRANSPOSE_CONV_2D takes 9 or 11 inputs, got " +
                           std::to_string(ctx.inputCount()));
  }
  NNHAL_TRY(checkConvOperands(ctx));
  NNHAL_ASSIGN_OR_RETURN(TransposeParams p, parseParams(ctx));
  if (p.nchw) return prepareNchwAsNhwc(ctx, p.layoutInput, &prepareTransposeConvFromNchw);

  const OperandType type = ctx.input(0).type;
  const bool quant = isQuant8(type);
  const auto& in = ctx.input(0).dimensions;
  const auto& filter = ctx.input(1).dimensions;
  NNHAL_TRY(checkOhwiFilter(ctx));
  const bool hasBias = ctx.hasInput(2);
  NNHAL_TRY(checkBiasLength(ctx, filter[0]));
  if (p.implicitPadding) {
    const int32_t height = p.outputShape[shapeIsNchw ? 2 : 1];
    const int32_t width = p.outputShape[shapeIsNchw ? 3 : 2];
    if (height <= 0 || width <= 0) {
      return invalidArgument(ctx.where(3) +
                             " (output shape) must have a positive height and "
                             "width, got " +
                             std::to_string(height) + " and " + std::to_string(width));
    }
    implicitPadding(height, p.strideHeight, filter[1], p.paddingCode, &p.padTop, &p.padBottom);
    implicitPadding(width, p.strideWidth, filter[2], p.paddingCode, &p.padLeft, &p.padRight);
  }
  NNHAL_ASSIGN_OR_RETURN(
      const uint32_t outHeight,
      outputSize(ctx, "height", in[1], filter[1], p.strideHeight, p.padTop, p.padBottom));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t outWidth, outputSize(ctx, "width", in[2], filter[2],
                                                             p.strideWidth, p.padLeft, p.padRight));
  NNHAL_TRY(ctx.setOutputShape(0, {in[0], outHeight, outWidth, filter[0]}));

  auto s = std::make_shared<TransposeState>();
  TransposeConvGeometry& g = s->g;
  g.batches = in[0];
  g.inHeight = in[1];
  g.inWidth = in[2];
  g.inDepth = in[3];
  g.filterHeight = filter[1];
  g.filterWidth = filter[2];
  g.outHeight = outHeight;
  g.outWidth = outWidth;
  g.outDepth = filter[0];
  g.padTop = p.padTop;
  g.padLeft = p.padLeft;
  g.strideHeight = static_cast<uint32_t>(p.strideHeight);
  g.strideWidth = static_cast<uint32_t>(p.strideWidth);

  const OperandInfo& f = ctx.input(1);
  s->quant = quant;
  s->hasBias = hasBias;
  s->filterConstant = f.isConstant();
  s->biasConstant = !hasBias || ctx.input(2).isConstant();
  const size_t filterCount = g.filterElements();
  NNHAL_TRY(checkConstantBytes(ctx, 1, filterCount * (quant ? 1 : sizeof(float))));
  if (hasBias) NNHAL_TRY(checkConstantBytes(ctx, 2, size_t{g.outDepth} * 4));

  ScratchLayout layout;
  if (!quant) {
    kernels::activationRangeFloat(p.activation, &s->outputMin, &s->outputMax);
    if (s->filterConstant) {
      std::vector<float> weights(filterCount);
      std::memcpy(weights.data(), f.constantData, filterCount * sizeof(float));
      s->packedFloat.resize(filterCount);
      kernels::transposeConvPackFloat(g, weights.data(), s->packedFloat.data());
    } else {
      s->packedAt = layout.add(filterCount * sizeof(float));
    }
    if (hasBias && s->biasConstant) {
      s->biasFloat.resize(g.outDepth);
      std::memcpy(s->biasFloat.data(), ctx.input(2).constantData, g.outDepth * sizeof(float));
    }
  } else {
    NNHAL_ASSIGN_OR_RETURN(s->multipliers, convMultipliers(ctx, 1, 2, 0, g.outDepth));
    const OperandInfo& out = ctx.output(0);
    const bool perChannel = f.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
    s->filterSigned = f.type != OperandType::TENSOR_QUANT8_ASYMM;
    s->filterZeroPoint = perChannel ? 0 : f.zeroPoint;
    kernels::TransposeConvQuantParams& qp = s->quantParams;
    qp.inputSigned = type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    qp.inputZeroPoint = ctx.input(0).zeroPoint;
    qp.multipliers = s->multipliers.data();
    qp.outputZeroPoint = out.zeroPoint;
    std::tie(qp.outputMin, qp.outputMax) = quantizedActivationRange(out, p.activation);
    if (s->filterConstant) {
      s->packedQuant.resize(filterCount);
      kernels::transposeConvPackQuant(g, f.constantData, s->filterSigned, s->filterZeroPoint,
                                      s->packedQuant.data());
    } else {
      s->packedAt = layout.add(filterCount * sizeof(int16_t));
    }
    if (hasBias && s->biasConstant) {
      s->biasQuant.resize(g.outDepth);
      std::memcpy(s->biasQuant.data(), ctx.input(2).constantData, g.outDepth * sizeof(int32_t));
    }
  }

  const size_t rows = g.outputRows();
  const size_t taps =
      ceilDiv(g.filterHeight, g.strideHeight) * ceilDiv(g.filterWidth, g.strideWidth);
  const size_t work = rows * g.outWidth * taps * g.inDepth * g.outDepth;
  s->tasks = work <= kSerialWork ? 1 : std::min(rows, spatial::kMaxTasks);
  s->tasks = std::max<size_t>(s->tasks, 1);
  s->rowsPerTask = std::max<size_t>(ceilDiv(rows, s->tasks), 1);
  if (quant) {
    s->accSlotBytes = (size_t{g.outDepth} * sizeof(uint32_t) + 63) / 64 * 64;
    s->accAt = layout.add(s->accSlotBytes * s->tasks);
  }
  ctx.requestScratch(layout.total());
  return makeKernel([s = std::shared_ptr<const TransposeState>(std::move(s))](
                        const RunContext& rc) { return runTranspose(*s, rc); });
}

}  // namespace

PrepareResult prepareTransposeConv2D(PrepareContext& ctx) {
  return prepareTransposeConv(ctx, false);
}

}  // namespace nnhal::engine::ops
