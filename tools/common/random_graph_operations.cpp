// The random-graph generator's operations (tools/common/random_graph_generator.h).
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "tools/common/random_graph_generator.h"

namespace nnhal::tools::random_graph_internal {

bool Generator::addOperation() {
  switch (uniform(0, 17)) {
    case 0:
      return binary(OperationType::ADD);
    case 1:
      return binary(OperationType::SUB);
    case 2:
      return binary(OperationType::MUL);
    case 3:
      return binary(chance(0.5) ? OperationType::MAXIMUM : OperationType::MINIMUM);
    case 4:
      return isFloatGraph() && binary(OperationType::DIV);
    case 5: {
      static const std::vector<OperationType> kUnary = {
          OperationType::RELU,     OperationType::RELU1,     OperationType::RELU6,
          OperationType::LOGISTIC, OperationType::TANH,      OperationType::ABS,
          OperationType::NEG,      OperationType::HARD_SWISH};
      return unary(choose(kUnary));
    }
    case 6:
      return fullyConnected();
    case 7:
      return convolution(false);
    case 8:
      return convolution(true);
    case 9:
      return pool(chance(0.5) ? OperationType::AVERAGE_POOL_2D : OperationType::MAX_POOL_2D);
    case 10:
      return concatenation();
    case 11:
      return chance(0.5) ? reshape() : transpose();
    case 12:
      return softmax();
    case 13:
      return mean();
    case 14:
      return pad();
    case 15:
      return comparison() || select();
    case 16:
      return argMax();
    default:
      return changeType();
  }
}

bool Generator::binary(OperationType type) {
  const uint32_t a = pickMain();
  const std::vector<uint32_t> shape = dims(a);
  std::optional<uint32_t> b;
  if (type != OperationType::DIV && chance(0.5)) b = pickMainShaped(shape, a, false);
  if (!b) {
    if (type == OperationType::DIV) {  // divisors away from 0
      std::vector<uint32_t> bShape = broadcastShape(shape);
      std::vector<uint8_t> bytes = randomBytes(type_, elementCount(bShape), 0.5f, 2.0f);
      b = constant(type_, std::move(bShape), 0.0f, 0, bytes);
    } else {
      b = mainConstant(broadcastShape(shape));
    }
  }
  std::vector<uint32_t> inputs = {a, *b};
  const bool fusedActivation = type != OperationType::MAXIMUM && type != OperationType::MINIMUM;
  if (fusedActivation) inputs.push_back(int32Scalar(uniformInt(0, 3)));
  const bool exact = allExact({a, *b});
  if (type == OperationType::MUL && !isFloatGraph()) {
    // Output scale above the product of the input scales (the HAL 1.0 rule).
    const float scale = operand(a).scale * operand(*b).scale * std::exp2(uniformReal(0.5f, 8.0f));
    const int32_t zeroPoint = quantParams(type_).second;
    result(type, inputs, type_, shape, scale, zeroPoint, exact);
    return true;
  }
  newScaleResult(type, inputs, shape, exact);
  return true;
}

bool Generator::unary(OperationType type) {
  const uint32_t a = pickMain();
  const bool exact = isExact(a);
  switch (type) {
    case OperationType::ABS:
    case OperationType::NEG:
      if (!isFloatGraph()) return false;
      sameScaleResult(type, {a}, a, dims(a), exact);
      return true;
    case OperationType::LOGISTIC:
    case OperationType::TANH: {
      if (isFloatGraph()) {
        sameScaleResult(type, {a}, a, dims(a), false);
        return true;
      }
      const bool unsignedType = type_ == OperandType::TENSOR_QUANT8_ASYMM;
      const bool logistic = type == OperationType::LOGISTIC;
      const float scale = logistic ? 1.0f / 256 : 1.0f / 128;
      const int32_t zeroPoint = logistic ? (unsignedType ? 0 : -128) : (unsignedType ? 128 : 0);
      result(type, {a}, type_, dims(a), scale, zeroPoint, exact);
      return true;
    }
    case OperationType::HARD_SWISH:
      if (isFloatGraph()) {
        sameScaleResult(type, {a}, a, dims(a), false);
      } else {
        newScaleResult(type, {a}, dims(a), exact);
      }
      return true;
    default:  // RELU, RELU1, RELU6
      sameScaleResult(type, {a}, a, dims(a), exact);
      return true;
  }
}

uint32_t Generator::bias(uint32_t input, uint32_t filter, uint32_t channels) {
  if (isFloatGraph()) return mainConstant({channels});
  const float scale = operand(filter).type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL
                          ? 0.0f
                          : operand(input).scale * operand(filter).scale;
  return constant(OperandType::TENSOR_INT32, {channels}, scale, 0,
                  randomBytes(OperandType::TENSOR_INT32, channels));
}

uint32_t Generator::filter(std::vector<uint32_t> shape, uint32_t channelDim, bool perChannel) {
  const size_t count = elementCount(shape);
  if (isFloatGraph()) return mainConstant(std::move(shape));
  if (perChannel) {
    SymmPerChannelQuantParams params;
    params.channelDim = channelDim;
    for (uint32_t c = 0; c < shape[channelDim]; ++c) {
      params.scales.push_back(std::exp2(uniformReal(-9.0f, -4.0f)));
    }
    const uint32_t index =
        constant(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, std::move(shape), 0.0f, 0,
                 randomBytes(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, count));
    operand(index).extraParams = std::move(params);
    return index;
  }
  const float scale = std::exp2(uniformReal(-9.0f, -4.0f));
  const int32_t zeroPoint = type_ == OperandType::TENSOR_QUANT8_ASYMM ? uniformInt(100, 156) : 0;
  return constant(type_, std::move(shape), scale, zeroPoint, randomBytes(type_, count));
}

std::pair<float, int32_t> Generator::sumParams(uint32_t input, uint32_t filterIndex, size_t terms) {
  if (isFloatGraph()) return {0.0f, 0};
  const Operand& f = operand(filterIndex);
  const float filterScale = f.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL
                                ? std::get<SymmPerChannelQuantParams>(f.extraParams).scales[0]
                                : f.scale;
  const float scale = operand(input).scale * filterScale * std::sqrt(static_cast<float>(terms)) *
                      uniformReal(10.0f, 80.0f);
  return {scale, quantParams(type_).second};
}

bool Generator::fullyConnected() {
  const uint32_t a = pickMain();
  if (dims(a).size() != 2) return false;
  const uint32_t batch = dims(a)[0];
  const uint32_t depth = dims(a)[1];
  const uint32_t units = uniform(1, 8);
  const uint32_t weights = filter({units, depth}, 0, false);
  const uint32_t b = bias(a, weights, units);
  const auto [scale, zeroPoint] = sumParams(a, weights, depth);
  result(OperationType::FULLY_CONNECTED, {a, weights, b, int32Scalar(uniformInt(0, 3))}, type_,
         {batch, units}, scale, zeroPoint, !isFloatGraph() && isExact(a));
  return true;
}

std::optional<Generator::Window> Generator::window(uint32_t a) {
  if (dims(a).size() != 4) return std::nullopt;
  Window w{};
  w.nchw = chance(0.3);
  const auto& d = dims(a);
  w.batch = d[0];
  w.height = w.nchw ? d[2] : d[1];
  w.width = w.nchw ? d[3] : d[2];
  w.channels = w.nchw ? d[1] : d[3];
  w.filterH = uniform(1, 3);
  w.filterW = uniform(1, 3);
  w.strideH = uniform(1, 2);
  w.strideW = uniform(1, 2);
  w.scheme = chance(0.5) ? 1 : 2;
  w.outH = windowExtent(w.height, w.filterH, w.strideH, w.scheme);
  w.outW = windowExtent(w.width, w.filterW, w.strideW, w.scheme);
  if (w.outH == 0 || w.outW == 0) return std::nullopt;
  return w;
}

std::vector<uint32_t> Generator::outShape(const Window& w, uint32_t channels) {
  if (w.nchw) return {w.batch, channels, w.outH, w.outW};
  return {w.batch, w.outH, w.outW, channels};
}

bool Generator::convolution(bool depthwise) {
  const uint32_t a = pickMain();
  const auto w = window(a);
  if (!w) return false;
  const bool perChannel = !isFloatGraph() && chance(0.5);
  const uint32_t multiplier = depthwise ? uniform(1, 2) : 1;
  const uint32_t outChannels = depthwise ? w->channels * multiplier : uniform(1, 8);
  const uint32_t f =
      depthwise ? filter({1, w->filterH, w->filterW, outChannels}, 3, perChannel)
                : filter({outChannels, w->filterH, w->filterW, w->channels}, 0, perChannel);
  const uint32_t b = bias(a, f, outChannels);
  std::vector<uint32_t> inputs = {a,
                                  f,
                                  b,
                                  int32Scalar(w->scheme),
                                  int32Scalar(static_cast<int32_t>(w->strideW)),
                                  int32Scalar(static_cast<int32_t>(w->strideH))};
  if (depthwise) inputs.push_back(int32Scalar(static_cast<int32_t>(multiplier)));
  inputs.push_back(int32Scalar(uniformInt(0, 3)));
  if (w->nchw) inputs.push_back(boolScalar(true));
  const size_t terms = size_t{w->filterH} * w->filterW * (depthwise ? 1 : w->channels);
  const auto [scale, zeroPoint] = sumParams(a, f, terms);
  result(depthwise ? OperationType::DEPTHWISE_CONV_2D : OperationType::CONV_2D, inputs, type_,
         outShape(*w, outChannels), scale, zeroPoint, !isFloatGraph() && isExact(a));
  return true;
}

bool Generator::pool(OperationType type) {
  const uint32_t a = pickMain();
  const auto w = window(a);
  if (!w) return false;
  std::vector<uint32_t> inputs = {a,
                                  int32Scalar(w->scheme),
                                  int32Scalar(static_cast<int32_t>(w->strideW)),
                                  int32Scalar(static_cast<int32_t>(w->strideH)),
                                  int32Scalar(static_cast<int32_t>(w->filterW)),
                                  int32Scalar(static_cast<int32_t>(w->filterH)),
                                  int32Scalar(uniformInt(0, 3))};
  if (w->nchw) inputs.push_back(boolScalar(true));
  const bool exact = isExact(a) && (type == OperationType::MAX_POOL_2D || !isFloatGraph());
  sameScaleResult(type, inputs, a, outShape(*w, w->channels), exact);
  return true;
}

bool Generator::concatenation() {
  const uint32_t a = pickMain();
  const std::vector<uint32_t> shape = dims(a);
  const uint32_t axis = uniform(0, static_cast<uint32_t>(shape.size() - 1));
  std::vector<uint32_t> inputs = {a};
  std::vector<uint32_t> out = shape;
  const unsigned others = uniform(1, 2);
  for (unsigned k = 0; k < others; ++k) {
    std::optional<uint32_t> other;
    if (chance(0.5)) {
      std::vector<uint32_t> candidates;
      for (uint32_t t : main_) {
        const auto& d = dims(t);
        bool fits = d.size() == shape.size();
        for (size_t i = 0; fits && i < d.size(); ++i) fits = i == axis || d[i] == shape[i];
        if (fits) candidates.push_back(t);
      }
      other = choose(candidates);  // a itself always fits
    } else {
      std::vector<uint32_t> constantShape = shape;
      constantShape[axis] = uniform(1, 3);
      other = mainConstant(constantShape);
    }
    out[axis] += dims(*other)[axis];
    inputs.push_back(*other);
  }
  const bool exact = allExact(inputs);
  inputs.push_back(int32Scalar(static_cast<int32_t>(axis)));
  newScaleResult(OperationType::CONCATENATION, inputs, out, exact);
  return true;
}

bool Generator::reshape() {
  const uint32_t a = pickMain();
  const auto n = static_cast<uint32_t>(elementCount(dims(a)));
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= n; ++d) {
    if (n % d == 0) divisors.push_back(d);
  }
  const uint32_t d = choose(divisors);
  std::vector<uint32_t> out =
      chance(0.3) ? std::vector<uint32_t>{n} : std::vector<uint32_t>{d, n / d};
  std::vector<int32_t> target(out.begin(), out.end());
  if (chance(0.3)) target[uniform(0, static_cast<uint32_t>(target.size() - 1))] = -1;
  const uint32_t shape = int32Tensor(target, {static_cast<uint32_t>(target.size())});
  sameScaleResult(OperationType::RESHAPE, {a, shape}, a, out, isExact(a));
  return true;
}

bool Generator::transpose() {
  const uint32_t a = pickMain();
  const std::vector<uint32_t> shape = dims(a);
  std::vector<int32_t> permutation(shape.size());
  std::iota(permutation.begin(), permutation.end(), 0);
  std::shuffle(permutation.begin(), permutation.end(), random_);
  std::vector<uint32_t> out;
  for (int32_t p : permutation) out.push_back(shape[static_cast<size_t>(p)]);
  const uint32_t perm = int32Tensor(permutation, {static_cast<uint32_t>(shape.size())});
  sameScaleResult(OperationType::TRANSPOSE, {a, perm}, a, out, isExact(a));
  return true;
}

bool Generator::softmax() {
  const uint32_t a = pickMain();
  static const std::vector<float> kBetas = {0.5f, 1.0f, 2.0f};
  std::vector<uint32_t> inputs = {a, floatScalar(choose(kBetas))};
  const auto rank = static_cast<int32_t>(dims(a).size());
  if (chance(0.3)) inputs.push_back(int32Scalar(uniformInt(-rank, rank - 1)));
  if (isFloatGraph()) {
    sameScaleResult(OperationType::SOFTMAX, inputs, a, dims(a), false);
  } else {
    const int32_t zeroPoint = type_ == OperandType::TENSOR_QUANT8_ASYMM ? 0 : -128;
    result(OperationType::SOFTMAX, inputs, type_, dims(a), 1.0f / 256, zeroPoint, isExact(a));
  }
  return true;
}

bool Generator::mean() {
  const uint32_t a = pickMain();
  const std::vector<uint32_t> shape = dims(a);
  std::vector<int32_t> axes;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (chance(0.5)) axes.push_back(static_cast<int32_t>(i));
  }
  if (axes.empty()) {
    axes.push_back(static_cast<int32_t>(uniform(0, static_cast<uint32_t>(shape.size() - 1))));
  }
  bool keepDims = chance(0.5) || axes.size() == shape.size();
  std::vector<uint32_t> out;
  for (size_t i = 0; i < shape.size(); ++i) {
    const bool reduced = std::ranges::find(axes, static_cast<int32_t>(i)) != axes.end();
    if (!reduced) {
      out.push_back(shape[i]);
    } else if (keepDims) {
      out.push_back(1);
    }
  }
  const uint32_t axesTensor = int32Tensor(axes, {static_cast<uint32_t>(axes.size())});
  newScaleResult(OperationType::MEAN, {a, axesTensor, int32Scalar(keepDims ? 1 : 0)}, out,
                 !isFloatGraph() && isExact(a));
  return true;
}

bool Generator::pad() {
  const uint32_t a = pickMain();
  const std::vector<uint32_t> shape = dims(a);
  std::vector<int32_t> paddings;
  std::vector<uint32_t> out;
  for (uint32_t d : shape) {
    const auto before = static_cast<int32_t>(uniform(0, 2));
    const auto after = static_cast<int32_t>(uniform(0, 2));
    paddings.insert(paddings.end(), {before, after});
    out.push_back(d + static_cast<uint32_t>(before + after));
  }
  const uint32_t p = int32Tensor(paddings, {static_cast<uint32_t>(shape.size()), 2});
  sameScaleResult(OperationType::PAD, {a, p}, a, out, isExact(a));
  return true;
}

bool Generator::comparison() {
  if (!bools_.empty() && chance(0.5)) return false;  // leave room for SELECT
  std::vector<uint32_t> exactOnes;
  for (uint32_t t : main_) {
    if (isExact(t)) exactOnes.push_back(t);
  }
  if (exactOnes.empty()) return false;
  const uint32_t a = choose(exactOnes);
  const std::vector<uint32_t> shape = dims(a);
  std::optional<uint32_t> b = chance(0.5) ? pickMainShaped(shape, a, true) : std::nullopt;
  if (!b) b = mainConstant(broadcastShape(shape));
  static const std::vector<OperationType> kComparisons = {
      OperationType::LESS, OperationType::GREATER, OperationType::LESS_EQUAL,
      OperationType::GREATER_EQUAL, OperationType::NOT_EQUAL};
  const uint32_t condition =
      result(choose(kComparisons), {a, *b}, OperandType::TENSOR_BOOL8, shape, 0.0f, 0, true);
  if (chance(0.3)) {
    result(OperationType::LOGICAL_NOT, {condition}, OperandType::TENSOR_BOOL8, shape, 0.0f, 0,
           true);
  }
  return true;
}

bool Generator::select() {
  if (bools_.empty()) return false;
  const uint32_t condition = choose(bools_);
  const std::vector<uint32_t> shape = dims(condition);
  const auto x = pickMainShaped(shape, condition, false);
  if (!x) return false;
  const float scale = operand(*x).scale;
  const int32_t zeroPoint = operand(*x).zeroPoint;
  const uint32_t y =
      constant(type_, shape, scale, zeroPoint, randomBytes(type_, elementCount(shape)));
  const bool exact = allExact({condition, *x});
  std::vector<uint32_t> inputs = {condition, *x, y};
  if (chance(0.5)) std::swap(inputs[1], inputs[2]);
  sameScaleResult(OperationType::SELECT, inputs, *x, shape, exact);
  return true;
}

bool Generator::argMax() {
  const uint32_t a = pickMain();
  const std::vector<uint32_t> shape = dims(a);
  if (!isExact(a) || shape.size() < 2) return false;
  const uint32_t axis = uniform(0, static_cast<uint32_t>(shape.size() - 1));
  std::vector<uint32_t> out = shape;
  out.erase(out.begin() + axis);
  result(chance(0.5) ? OperationType::ARGMAX : OperationType::ARGMIN,
         {a, int32Scalar(static_cast<int32_t>(axis))}, OperandType::TENSOR_INT32, out, 0.0f, 0,
         true);
  return true;
}

bool Generator::changeType() {
  const uint32_t a = pickMain();
  if (!isExact(a)) return false;
  if (isFloatGraph()) {
    const OperandType to =
        chance(0.5) ? OperandType::TENSOR_QUANT8_ASYMM : OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    const auto [scale, zeroPoint] = quantParams(to);
    result(OperationType::QUANTIZE, {a}, to, dims(a), scale, zeroPoint, true);
  } else {
    const OperandType to = chance(0.7) ? OperandType::TENSOR_FLOAT32 : OperandType::TENSOR_FLOAT16;
    result(OperationType::DEQUANTIZE, {a}, to, dims(a), 0.0f, 0, true);
  }
  return true;
}

}  // namespace nnhal::tools::random_graph_internal
