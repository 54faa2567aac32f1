// The operations along an axis, the reductions, resizing and quantization (vulkan_planner.h).
#include "backend/vulkan/vulkan_planner.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

#include "kernels/softmax.h"

namespace nnhal::backend::vulkan::planning {

Planned<void> Planner::alongAxis(uint32_t kind) {
  // Inputs: SOFTMAX (x, beta, [axis]); L2_NORMALIZATION (x, [axis]); LOCAL_RESPONSE_
  // NORMALIZATION (x, radius, bias, alpha, beta, [axis]); LOG_SOFTMAX (x, beta, axis).
  const size_t axisAt = kind == 1 ? 1 : kind == 2 ? 5 : 2;
  anyRank_ = true;  // rows of any shape (the product of the dimensions before and after)
  float beta = 1.0f, bias = 0.0f, alpha = 0.0f, lrnBeta = 0.0f;
  int32_t radius = 0;
  if (kind == 0 || kind == 3) {
    NNHAL_PLAN_TRY(b, scalarFloat(1));
    beta = b;
  } else if (kind == 2) {
    NNHAL_PLAN_TRY(r, scalarInt(1));
    NNHAL_PLAN_TRY(b, scalarFloat(2));
    NNHAL_PLAN_TRY(a, scalarFloat(3));
    NNHAL_PLAN_TRY(e, scalarFloat(4));
    if (r < 0) return invalid("a negative radius");
    radius = r;
    bias = b;
    alpha = a;
    lrnBeta = e;
  }
  // SOFTMAX (the shader's op 4, with the CPU device's table) and L2_NORMALIZATION (op 9)
  // also on 8-bit tensors.
  const bool quantized = (kind == 0 || kind == 1) && isQuant8(input(0).type);
  std::optional<uint32_t> table;
  const bool isSigned = quantized && input(0).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  if (quantized) {
    // The HAL fixes the output's quantization: L2_NORMALIZATION's 1/128 around 128 (0 signed),
    // SOFTMAX's 1/256 from 0 (-128 signed).
    const bool l2 = kind == 1;
    const Operand& o = output(0);
    if (o.type != input(0).type || o.scale != (l2 ? 1.0f / 128.0f : 1.0f / 256.0f) ||
        o.zeroPoint != (l2 ? (isSigned ? 0 : 128) : (isSigned ? -128 : 0))) {
      return invalid(l2 ? "the output must have the input's type, scale 1/128 and zero point 128 "
                          "(0 for TENSOR_QUANT8_ASYMM_SIGNED)"
                        : "the output must have the input's type, scale 1/256 and zero point 0 "
                          "(-128 for TENSOR_QUANT8_ASYMM_SIGNED)");
    }
  }
  if (quantized && kind == 1) {
    radius = input(0).zeroPoint;
  } else if (quantized) {
    const kernels::SoftmaxExpTable weights = kernels::makeSoftmaxExpTable(beta, input(0).scale);
    NNHAL_PLAN_TRY(t, floatConstant(std::vector<float>(weights.begin(), weights.end())));
    table = t;
  }
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  const auto& dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  int32_t axis = rank - 1;
  if (op().inputs.size() > axisAt) {
    NNHAL_PLAN_TRY(given, scalarInt(axisAt));
    if (given < -rank || given >= rank) return invalid("the axis is outside the input's rank");
    axis = given < 0 ? given + rank : given;
  }
  NNHAL_PLAN_CHECK(shapeOutput(dims));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  uint32_t inner = 1;
  for (int32_t d = axis + 1; d < rank; ++d) inner *= dims[d];
  const uint32_t axisSize = dims[axis];
  if (axisSize == 0) return invalid("an empty axis");
  // 8-bit L2_NORMALIZATION sums the squares in 32 bits: 65536 * 255^2 < 2^32.
  if (quantized && kind == 1 && axisSize > 65536) return refuse("an axis longer than 65536");
  const uint32_t rows = elementsOf(input(0)) / axisSize;
  dispatch(
      Shader::kSoftmax, rows,
      {rows, axisSize, offsetWord(out), offsetWord(in), floatBits(beta), inner,
       quantized ? (kind == 1 ? 9u : 4u) : kind, static_cast<uint32_t>(radius), floatBits(bias),
       floatBits(alpha), floatBits(lrnBeta), offsetWord(table.value_or(in)), isSigned ? 1u : 0u});
  return {};
}

Planned<void> Planner::instanceNormalization() {
  // Inputs: 0 the tensor [batches, height, width, channels], 1 gamma, 2 beta, 3 epsilon, 4 the
  // layout (handled by withLayout).
  NNHAL_PLAN_TRY(gamma, scalarFloat(1));
  NNHAL_PLAN_TRY(beta, scalarFloat(2));
  NNHAL_PLAN_TRY(epsilon, scalarFloat(3));
  if (!(epsilon > 0.0f)) return invalid("epsilon must be positive");
  NNHAL_PLAN_TRY(in, inputTensor(0));
  const std::vector<uint32_t> dims = input(0).dimensions;
  if (dims.size() != 4) return invalid("the input must have rank 4");
  NNHAL_PLAN_CHECK(shapeOutput(dims));
  NNHAL_PLAN_TRY(out, outputTensor(0));
  const uint32_t spatial = dims[1] * dims[2];
  if (spatial == 0) return invalid("an empty image");
  const uint32_t rows = dims[0] * dims[3];
  dispatch(Shader::kSoftmax, rows,
           {rows, spatial, offsetWord(out), offsetWord(in), floatBits(1.0f), dims[3], 7u, 0u,
            floatBits(beta), floatBits(gamma), floatBits(epsilon), offsetWord(in), 0u});
  return {};
}

Planned<void> Planner::topK() {
  // Inputs: 0 the values, 1 k; outputs: 0 the k largest values of each row (the last axis),
  // 1 their TENSOR_INT32 indices.
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(k, scalarInt(1));
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  const std::vector<uint32_t> dims = input(0).dimensions;
  const uint32_t rowSize = dims.back();
  if (k < 1 || static_cast<uint32_t>(k) > rowSize) return invalid("k is outside [1, row size]");
  if (rowSize > (1u << 24)) return refuse("a row longer than 2^24");
  if (op().outputs.size() != 2 || operand(op().outputs[1]).type != OperandType::TENSOR_INT32) {
    return invalid("the second output must be TENSOR_INT32");
  }
  std::vector<uint32_t> outDims = dims;
  outDims.back() = static_cast<uint32_t>(k);
  NNHAL_PLAN_CHECK(shapeOutput(outDims));
  NNHAL_PLAN_TRY(values, tensor(outputIndex(0), quantized));
  auto indices = asOutput0(op().outputs[1], [&]() -> Planned<uint32_t> {
    NNHAL_PLAN_CHECK(shapeOutput(outDims));
    return tensor(outputIndex(0), false, true);
  });
  if (!indices) return std::unexpected(indices.error());
  const uint32_t rows = elementsOf(input(0)) / rowSize;
  dispatch(Shader::kSoftmax, rows,
           {rows, rowSize, offsetWord(values), offsetWord(in), floatBits(1.0f), 1u, 8u,
            static_cast<uint32_t>(k), 0u, 0u, 0u, offsetWord(*indices), 0u});
  return {};
}

Planned<void> Planner::argExtreme(bool largest) {
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), isQuant8(input(0).type)));
  NNHAL_PLAN_TRY(given, scalarInt(1));
  const std::vector<uint32_t> dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  if (given < -rank || given >= rank) return invalid("the axis is outside the input's rank");
  const auto axis = static_cast<size_t>(given < 0 ? given + rank : given);
  if (output(0).type != OperandType::TENSOR_INT32)
    return invalid("the output must be TENSOR_INT32");
  const uint32_t axisSize = dims[axis];
  if (axisSize == 0) return invalid("an empty axis");
  if (axisSize > (1u << 24)) return refuse("an axis longer than 2^24");
  std::vector<uint32_t> kept;
  uint32_t inner = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (d != axis) kept.push_back(dims[d]);
    if (d > axis) inner *= dims[d];
  }
  if (kept.empty()) return refuse("an index of a rank-1 input (a scalar output) is not supported");
  NNHAL_PLAN_CHECK(shapeOutput(std::move(kept)));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), false, true));
  const uint32_t rows = elementsOf(input(0)) / axisSize;
  dispatch(Shader::kSoftmax, rows,
           {rows, axisSize, offsetWord(out), offsetWord(in), floatBits(1.0f), inner,
            largest ? 5u : 6u, 0u, 0u, 0u, 0u, offsetWord(in), 0u});
  return {};
}

Planned<void> Planner::mean(uint32_t kind) {
  // REDUCE_MAX (2) and REDUCE_MIN (3) also on 8-bit tensors: the output keeps the input's
  // scale and zero point (the HAL's rule), so the extreme stored value is the answer.
  // MEAN (0) of 8-bit tensors requantizes to the output's scale and zero point (op 5).
  bool quantized = false;
  if (kind == 2 || kind == 3) {
    NNHAL_PLAN_TRY(moves, movesQuantized());
    quantized = moves;
  } else if (kind == 0 && isQuant8(input(0).type)) {
    if (output(0).type != input(0).type) return invalid("the output must have the input's type");
    if (!(output(0).scale > 0.0f)) return invalid("the output's scale must be positive");
    quantized = true;
  }
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  NNHAL_PLAN_TRY(axes, constantInts(1));
  // MEAN's keep_dims is an INT32 (> 0: keep); the REDUCE_* operations' a BOOL.
  int32_t keep = 0;
  if (kind == 0) {
    NNHAL_PLAN_TRY(k, scalarInt(2));
    keep = k;
  } else {
    NNHAL_PLAN_TRY(k, scalarBool(2));
    keep = k ? 1 : 0;
  }
  const auto& dims = input(0).dimensions;
  const auto rank = static_cast<int32_t>(dims.size());
  std::array<uint32_t, 4> reduced{};
  for (int32_t a : axes) {
    if (a < -rank || a >= rank) return invalid("an axis is outside the input's rank");
    reduced[4 - rank + (a < 0 ? a + rank : a)] = 1;
  }
  std::vector<uint32_t> kept;
  uint32_t reducedCount = 1;
  for (int32_t d = 0; d < rank; ++d) {
    if (reduced[4 - rank + d] == 0) {
      kept.push_back(dims[d]);
    } else {
      reducedCount *= dims[d];
      if (keep > 0) kept.push_back(1);
    }
  }
  if (kept.empty()) kept.push_back(1);
  NNHAL_PLAN_CHECK(shapeOutput(kept));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  // The int32 sum of 8-bit values is exact up to 2^23 of them.
  if (quantized && kind == 0 && reducedCount > (1u << 23)) {
    return refuse("a mean of more than 2^23 8-bit values");
  }
  const bool requantizes = quantized && kind == 0;
  const auto d4 = rank4(dims);
  dispatch(Shader::kMean, elementsOf(output(0)),
           {elementsOf(output(0)), offsetWord(out), offsetWord(in), reducedCount, d4[0], d4[1],
            d4[2], d4[3], reduced[0], reduced[1], reduced[2], reduced[3], requantizes ? 5u : kind,
            floatBits(requantizes ? static_cast<float>(static_cast<double>(input(0).scale) /
                                                       output(0).scale)
                                  : 1.0f),
            static_cast<uint32_t>(input(0).zeroPoint), static_cast<uint32_t>(output(0).zeroPoint),
            input(0).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ? 1u : 0u});
  return {};
}

Planned<void> Planner::resize(bool bilinear) {
  // Both resizes also on 8-bit tensors (scale and zero point kept): bilinear rounds half
  // away from zero and saturates, as the CPU device does.
  NNHAL_PLAN_TRY(quantized, movesQuantized());
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), quantized));
  const auto& dims = input(0).dimensions;
  if (dims.size() != 4) return invalid("the input must have rank 4");
  const size_t count = op().inputs.size();
  bool nchw = false, alignCorners = false, halfPixel = false;
  if (count > 3) {
    NNHAL_PLAN_TRY(layout, scalarBool(3));
    nchw = layout;
  }
  if (count > 4) {
    NNHAL_PLAN_TRY(align, scalarBool(4));
    alignCorners = align;
  }
  if (count > 5) {
    NNHAL_PLAN_TRY(half, scalarBool(5));
    halfPixel = half;
  }
  if (nchw && !input0_) return refuse("the NCHW layout is not supported here");
  if (alignCorners && halfPixel) return invalid("align_corners with half_pixel_centers");
  // Output width and height: INT32 sizes, or FLOAT32 scales (size = floor(in * scale)).
  const auto size = [&](size_t k, uint32_t inSize) -> Planned<uint32_t> {
    if (input(k).type == OperandType::INT32) {
      NNHAL_PLAN_TRY(n, scalarInt(k));
      if (n < 1) return invalid("an output size below 1");
      return static_cast<uint32_t>(n);
    }
    NNHAL_PLAN_TRY(scale, scalarFloat(k));
    const double n = std::floor(static_cast<double>(inSize) * scale);
    if (!(n >= 1.0 && n <= 65536.0)) return invalid("an output size outside [1, 65536]");
    return static_cast<uint32_t>(n);
  };
  NNHAL_PLAN_TRY(outW, size(1, dims[2]));
  NNHAL_PLAN_TRY(outH, size(2, dims[1]));
  NNHAL_PLAN_CHECK(shapeOutput({dims[0], outH, outW, dims[3]}));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantized));
  const bool isSigned = input(0).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  const auto scale = [&](uint32_t from, uint32_t to) {
    if (alignCorners && to > 1) return static_cast<float>(from - 1) / static_cast<float>(to - 1);
    return static_cast<float>(from) / static_cast<float>(to);
  };
  dispatch(
      Shader::kResize, elementsOf(output(0)),
      {elementsOf(output(0)), bilinear ? 0u : 1u, offsetWord(out), offsetWord(in), dims[1], dims[2],
       dims[3], outH, outW, floatBits(scale(dims[1], outH)), floatBits(scale(dims[2], outW)),
       alignCorners ? 1u : 0u, halfPixel ? 1u : 0u, quantized ? 1u : 0u,
       floatBits(isSigned ? -128.0f : 0.0f), floatBits(isSigned ? 127.0f : 255.0f)});
  return {};
}

Planned<void> Planner::quantization(bool quantize) {
  if (!quantize && input(0).type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    return perChannelDequantization();
  }
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), !quantize));
  const Operand& q = quantize ? output(0) : input(0);
  if (quantize && q.type != OperandType::TENSOR_QUANT8_ASYMM &&
      q.type != OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    return refuse("QUANTIZE to " + std::string(toString(q.type)) + " is not supported");
  }
  NNHAL_PLAN_CHECK(shapeOutput(input(0).dimensions));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), quantize));
  const bool isSigned = q.type != OperandType::TENSOR_QUANT8_ASYMM;
  dispatch(Shader::kQuantize, elementsOf(output(0)),
           {elementsOf(output(0)), quantize ? 1u : 0u, offsetWord(out), offsetWord(in),
            floatBits(q.scale), floatBits(static_cast<float>(q.zeroPoint)),
            floatBits(isSigned ? -128.0f : 0.0f), floatBits(isSigned ? 127.0f : 255.0f),
            offsetWord(in), 1u, 1u});
  return {};
}

Planned<void> Planner::perChannelDequantization() {
  const Operand& q = input(0);
  const auto* params = std::get_if<SymmPerChannelQuantParams>(&q.extraParams);
  if (params == nullptr) return invalid("a per-channel quantized tensor without its scales");
  if (params->channelDim >= q.dimensions.size() ||
      params->scales.size() != q.dimensions[params->channelDim]) {
    return invalid("the per-channel scales do not match the channel dimension");
  }
  uint32_t inner = 1;
  for (size_t d = params->channelDim + 1; d < q.dimensions.size(); ++d) inner *= q.dimensions[d];
  const auto channels = static_cast<uint32_t>(params->scales.size());
  // Copied first: a constant of the plan's own may move the operands `q` refers to.
  const std::vector<float> perChannel = params->scales;
  NNHAL_PLAN_TRY(scales, floatConstant(perChannel));
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), true));
  NNHAL_PLAN_CHECK(shapeOutput(input(0).dimensions));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0)));
  dispatch(
      Shader::kQuantize, elementsOf(output(0)),
      {elementsOf(output(0)), 2u, offsetWord(out), offsetWord(in), floatBits(1.0f), floatBits(0.0f),
       floatBits(0.0f), floatBits(0.0f), offsetWord(scales), std::max(inner, 1u), channels});
  return {};
}

}  // namespace nnhal::backend::vulkan::planning
