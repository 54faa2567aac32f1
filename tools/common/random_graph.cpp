#include "tools/common/random_graph.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <set>

#include "hal/tflite/model_builder.h"

namespace nnhal::tools {
namespace {

constexpr OutputTolerance kExact{0.0, 0.0};
constexpr OutputTolerance kFloat32Sums{1e-4, 1e-4};
constexpr OutputTolerance kFloat16Sums{1e-2, 1e-2};

bool isQuant8(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

size_t elementCount(const std::vector<uint32_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), size_t{1}, std::multiplies<>());
}

/// Output extent of a window of `filter` with `stride` over `size` (padding SAME = 1,
/// VALID = 2); 0 when VALID does not fit.
uint32_t windowExtent(uint32_t size, uint32_t filter, uint32_t stride, int32_t scheme) {
  if (scheme == 1) return (size + stride - 1) / stride;
  return size >= filter ? (size - filter) / stride + 1 : 0;
}

class Generator {
 public:
  Generator(uint64_t seed, const RandomGraphOptions& options) : random_(seed), options_(options) {}

  Result<CtsModel> build(uint64_t seed) {
    static constexpr OperandType kMainTypes[] = {
        OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16, OperandType::TENSOR_QUANT8_ASYMM,
        OperandType::TENSOR_QUANT8_ASYMM_SIGNED};
    type_ = kMainTypes[uniform(0, 3)];
    addInputs();
    const unsigned operations = uniform(1, std::max(1u, options_.maxOperations));
    for (unsigned i = 0; i < operations; ++i) {
      bool added = false;
      for (int attempt = 0; attempt < 32 && !added; ++attempt) added = addOperation();
      if (!added) unary(OperationType::RELU);  // always applies
    }
    return finish(seed);
  }

 private:
  // --- random choices ------------------------------------------------------------------
  uint32_t uniform(uint32_t low, uint32_t high) {
    return std::uniform_int_distribution<uint32_t>(low, high)(random_);
  }
  int32_t uniformInt(int32_t low, int32_t high) {
    return std::uniform_int_distribution<int32_t>(low, high)(random_);
  }
  float uniformReal(float low, float high) {
    return std::uniform_real_distribution<float>(low, high)(random_);
  }
  bool chance(double p) { return std::bernoulli_distribution(p)(random_); }
  template <typename T>
  const T& choose(const std::vector<T>& values) {
    return values[uniform(0, static_cast<uint32_t>(values.size() - 1))];
  }

  // --- operands --------------------------------------------------------------------------
  Operand& operand(uint32_t index) { return builder_.operand(index); }
  const std::vector<uint32_t>& dims(uint32_t index) { return operand(index).dimensions; }

  uint32_t addOperand(OperandType type, std::vector<uint32_t> dimensions, float scale,
                      int32_t zeroPoint, OperandLifeTime lifetime, bool exact) {
    Operand op;
    op.type = type;
    op.dimensions = std::move(dimensions);
    op.scale = scale;
    op.zeroPoint = zeroPoint;
    op.lifetime = lifetime;
    const uint32_t index = builder_.addOperand(std::move(op));
    exact_.resize(index + 1, true);  // the builder's own scalars are constants: exact
    exact_[index] = exact;
    return index;
  }

  /// A scale and zero point for a new quantized tensor of `type` (float types: 0, 0).
  std::pair<float, int32_t> quantParams(OperandType type) {
    if (!isQuant8(type)) return {0.0f, 0};
    const float scale = std::exp2(uniformReal(-8.0f, -1.0f));
    const int32_t zeroPoint =
        type == OperandType::TENSOR_QUANT8_ASYMM ? uniformInt(0, 255) : uniformInt(-128, 127);
    return {scale, zeroPoint};
  }

  std::vector<uint8_t> randomBytes(OperandType type, size_t count, float low = -1.0f,
                                   float high = 1.0f) {
    std::vector<uint8_t> bytes;
    auto put = [&bytes](const auto& value) {
      const auto* p = reinterpret_cast<const uint8_t*>(&value);
      bytes.insert(bytes.end(), p, p + sizeof(value));
    };
    for (size_t i = 0; i < count; ++i) {
      switch (type) {
        case OperandType::TENSOR_FLOAT32:
          put(uniformReal(low, high));
          break;
        case OperandType::TENSOR_FLOAT16:
          put(static_cast<_Float16>(uniformReal(low, high)));
          break;
        case OperandType::TENSOR_QUANT8_ASYMM:
          put(static_cast<uint8_t>(uniform(0, 255)));
          break;
        case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
          put(static_cast<int8_t>(uniformInt(-128, 127)));
          break;
        case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
          put(static_cast<int8_t>(uniformInt(-127, 127)));
          break;
        case OperandType::TENSOR_BOOL8:
          put(static_cast<uint8_t>(uniform(0, 1)));
          break;
        default:
          put(static_cast<int32_t>(uniformInt(-500, 500)));
          break;
      }
    }
    return bytes;
  }

  uint32_t constant(OperandType type, std::vector<uint32_t> dimensions, float scale,
                    int32_t zeroPoint, std::vector<uint8_t> bytes) {
    const uint32_t index = addOperand(type, std::move(dimensions), scale, zeroPoint,
                                      OperandLifeTime::CONSTANT_COPY, true);
    builder_.setConstantOwned(index, std::move(bytes));  // large ones go to the pool
    return index;
  }
  uint32_t int32Scalar(int32_t value) { return builder_.addInt32Scalar(value); }
  uint32_t boolScalar(bool value) { return builder_.addBoolScalar(value); }
  /// A FLOAT32 scalar, or FLOAT16 in a float16 graph (beta of SOFTMAX).
  uint32_t floatScalar(float value) {
    return type_ == OperandType::TENSOR_FLOAT16 ? builder_.addFloat16Scalar(value)
                                                : builder_.addFloat32Scalar(value);
  }
  uint32_t int32Tensor(const std::vector<int32_t>& values, std::vector<uint32_t> dimensions) {
    std::vector<uint8_t> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return constant(OperandType::TENSOR_INT32, std::move(dimensions), 0.0f, 0, bytes);
  }
  /// A constant of the main type with its own quantization.
  uint32_t mainConstant(std::vector<uint32_t> dimensions, float low = -1.0f, float high = 1.0f) {
    const auto [scale, zeroPoint] = quantParams(type_);
    const size_t count = elementCount(dimensions);
    return constant(type_, std::move(dimensions), scale, zeroPoint,
                    randomBytes(type_, count, low, high));
  }

  std::vector<uint32_t> randomShape() {
    if (chance(0.6)) return {uniform(1, 2), uniform(1, 8), uniform(1, 8), uniform(1, 6)};
    std::vector<uint32_t> shape(uniform(1, 3));
    for (uint32_t& d : shape) d = uniform(1, 6);
    return shape;
  }

  void addInputs() {
    const unsigned inputs = uniform(1, std::max(1u, options_.maxInputs));
    std::vector<uint32_t> first;
    for (unsigned i = 0; i < inputs; ++i) {
      std::vector<uint32_t> shape = i > 0 && chance(0.5) ? first : randomShape();
      if (i == 0) first = shape;
      const auto [scale, zeroPoint] = quantParams(type_);
      const size_t count = elementCount(shape);
      const uint32_t index = addOperand(type_, std::move(shape), scale, zeroPoint,
                                        OperandLifeTime::SUBGRAPH_INPUT, true);
      inputIndexes_.push_back(index);
      inputs_.push_back(randomBytes(type_, count, -2.0f, 2.0f));
      main_.push_back(index);
    }
  }

  /// Adds `type` reading `inputs`, with one output; main-type results join the tensors
  /// later operations read, BOOL8 results the conditions SELECT reads.
  uint32_t result(OperationType type, const std::vector<uint32_t>& inputs, OperandType outType,
                  std::vector<uint32_t> outDims, float scale, int32_t zeroPoint, bool exact) {
    const uint32_t out = addOperand(outType, std::move(outDims), scale, zeroPoint,
                                    OperandLifeTime::TEMPORARY_VARIABLE, exact);
    for (uint32_t i : inputs) consumed_.insert(i);
    builder_.addOperation(type, inputs, {out});
    if (outType == type_) main_.push_back(out);
    if (outType == OperandType::TENSOR_BOOL8) bools_.push_back(out);
    return out;
  }
  /// A result of the main type with `like`'s quantization (operations that move values).
  uint32_t sameScaleResult(OperationType type, const std::vector<uint32_t>& inputs, uint32_t like,
                           std::vector<uint32_t> outDims, bool exact) {
    const float scale = operand(like).scale;
    const int32_t zeroPoint = operand(like).zeroPoint;
    return result(type, inputs, type_, std::move(outDims), scale, zeroPoint, exact);
  }
  uint32_t newScaleResult(OperationType type, const std::vector<uint32_t>& inputs,
                          std::vector<uint32_t> outDims, bool exact) {
    const auto [scale, zeroPoint] = quantParams(type_);
    return result(type, inputs, type_, std::move(outDims), scale, zeroPoint, exact);
  }

  bool isFloatGraph() const {
    return type_ == OperandType::TENSOR_FLOAT32 || type_ == OperandType::TENSOR_FLOAT16;
  }
  bool isExact(uint32_t t) const { return t >= exact_.size() || exact_[t]; }
  bool allExact(const std::vector<uint32_t>& tensors) {
    return std::ranges::all_of(tensors, [this](uint32_t t) { return isExact(t); });
  }
  uint32_t pickMain() { return choose(main_); }
  /// Another main-type tensor of the given shape (and exact when asked), or none.
  std::optional<uint32_t> pickMainShaped(const std::vector<uint32_t>& shape, uint32_t not_,
                                         bool mustBeExact) {
    std::vector<uint32_t> candidates;
    for (uint32_t t : main_) {
      if (t != not_ && dims(t) == shape && (!mustBeExact || isExact(t))) candidates.push_back(t);
    }
    if (candidates.empty()) return std::nullopt;
    return choose(candidates);
  }
  /// `shape` with some dimensions broadcast (1) and maybe leading ones dropped.
  std::vector<uint32_t> broadcastShape(std::vector<uint32_t> shape) {
    for (uint32_t& d : shape) {
      if (chance(0.4)) d = 1;
    }
    while (shape.size() > 1 && chance(0.3)) shape.erase(shape.begin());
    return shape;
  }

  // --- operations ------------------------------------------------------------------------
  bool addOperation() {
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

  bool binary(OperationType type) {
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

  bool unary(OperationType type) {
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

  /// Bias of a float or per-tensor quantized filter: float values, or INT32 at scale
  /// input scale x filter scale.
  uint32_t bias(uint32_t input, uint32_t filter, uint32_t channels) {
    if (isFloatGraph()) return mainConstant({channels});
    const float scale = operand(filter).type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL
                            ? 0.0f
                            : operand(input).scale * operand(filter).scale;
    return constant(OperandType::TENSOR_INT32, {channels}, scale, 0,
                    randomBytes(OperandType::TENSOR_INT32, channels));
  }
  /// A filter of the main type (int8 filters symmetric, as TFLite makes them), or with a
  /// scale per output channel along `channelDim`.
  uint32_t filter(std::vector<uint32_t> shape, uint32_t channelDim, bool perChannel) {
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
  /// A quantized sum's output scale: about 1/50 of the range of `terms` products.
  std::pair<float, int32_t> sumParams(uint32_t input, uint32_t filterIndex, size_t terms) {
    if (isFloatGraph()) return {0.0f, 0};
    const Operand& f = operand(filterIndex);
    const float filterScale = f.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL
                                  ? std::get<SymmPerChannelQuantParams>(f.extraParams).scales[0]
                                  : f.scale;
    const float scale = operand(input).scale * filterScale * std::sqrt(static_cast<float>(terms)) *
                        uniformReal(10.0f, 80.0f);
    return {scale, quantParams(type_).second};
  }

  bool fullyConnected() {
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

  /// Window geometry shared by CONV_2D, DEPTHWISE_CONV_2D and the pools: implicit padding,
  /// strides, and the layout (NCHW when `nchw`).
  struct Window {
    uint32_t batch, height, width, channels;
    uint32_t filterH, filterW, strideH, strideW;
    int32_t scheme;
    bool nchw;
    uint32_t outH, outW;
  };
  std::optional<Window> window(uint32_t a) {
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
  std::vector<uint32_t> outShape(const Window& w, uint32_t channels) {
    if (w.nchw) return {w.batch, channels, w.outH, w.outW};
    return {w.batch, w.outH, w.outW, channels};
  }

  bool convolution(bool depthwise) {
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

  bool pool(OperationType type) {
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

  bool concatenation() {
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

  bool reshape() {
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

  bool transpose() {
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

  bool softmax() {
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

  bool mean() {
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

  bool pad() {
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

  bool comparison() {
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

  bool select() {
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

  bool argMax() {
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

  /// DEQUANTIZE of a quantized tensor, QUANTIZE of an exact float one: a side output.
  bool changeType() {
    const uint32_t a = pickMain();
    if (!isExact(a)) return false;
    if (isFloatGraph()) {
      const OperandType to =
          chance(0.5) ? OperandType::TENSOR_QUANT8_ASYMM : OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
      const auto [scale, zeroPoint] = quantParams(to);
      result(OperationType::QUANTIZE, {a}, to, dims(a), scale, zeroPoint, true);
    } else {
      const OperandType to =
          chance(0.7) ? OperandType::TENSOR_FLOAT32 : OperandType::TENSOR_FLOAT16;
      result(OperationType::DEQUANTIZE, {a}, to, dims(a), 0.0f, 0, true);
    }
    return true;
  }

  Result<CtsModel> finish(uint64_t seed) {
    std::vector<uint32_t> outputs;
    for (uint32_t t = 0; t < builder_.operandCount(); ++t) {
      Operand& op = operand(t);
      if (op.lifetime == OperandLifeTime::TEMPORARY_VARIABLE && !consumed_.contains(t)) {
        op.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
        outputs.push_back(t);
      }
    }
    CtsModel cts;
    cts.name = "random_graph_" + std::to_string(seed);
    cts.spec = "random_graph";
    cts.version = "V1_3";
    for (uint32_t t : outputs) {
      const OperandType type = operand(t).type;
      OutputTolerance tolerance = kExact;
      if (!isExact(t)) {
        tolerance = type == OperandType::TENSOR_FLOAT16   ? kFloat16Sums
                    : type == OperandType::TENSOR_FLOAT32 ? kFloat32Sums
                                                          : OutputTolerance{1.0, 0.0};
      }
      cts.outputTolerances.push_back(tolerance);
      cts.outputIgnored.push_back(false);
      cts.outputs.emplace_back();
    }
    NNHAL_ASSIGN_OR_RETURN(cts.model,
                           std::move(builder_).finish(std::move(inputIndexes_), outputs));
    cts.inputs = std::move(inputs_);
    return cts;
  }

  std::mt19937_64 random_;
  RandomGraphOptions options_;
  OperandType type_ = OperandType::TENSOR_FLOAT32;
  hal::tfl::ModelBuilder builder_;
  std::vector<uint32_t> inputIndexes_;
  std::set<uint32_t> consumed_;  ///< operands some operation reads
  std::vector<bool> exact_;      ///< per operand (operands past its end are exact)
  std::vector<uint32_t> main_;
  std::vector<uint32_t> bools_;
  std::vector<std::vector<uint8_t>> inputs_;
};

}  // namespace

Result<CtsModel> generateRandomGraph(uint64_t seed, const RandomGraphOptions& options) {
  return Generator(seed, options).build(seed);
}

std::string describeRandomGraph(const CtsModel& graph) {
  const Subgraph& main = graph.model.main;
  std::string text = main.inputIndexes.empty()
                         ? std::string("?")
                         : std::string(toString(main.operands[main.inputIndexes[0]].type));
  text += ":";
  for (const Operation& op : main.operations) {
    text += " ";
    text += toString(op.type);
  }
  return text;
}

}  // namespace nnhal::tools
