// tools/common/random_graph_generator.h — the generator behind tools/common/random_graph.h:
// its random choices, operands and the HAL's quantization rules here; one generator per
// operation type in random_graph_operations.cpp. Internal to the tools.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/model_builder.h"
#include "tools/common/random_graph.h"

namespace nnhal::tools::random_graph_internal {

inline constexpr OutputTolerance kExact{0.0, 0.0};
inline constexpr OutputTolerance kFloat32Sums{1e-4, 1e-4};
inline constexpr OutputTolerance kFloat16Sums{1e-2, 1e-2};

inline bool isQuant8(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

inline size_t elementCount(const std::vector<uint32_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), size_t{1}, std::multiplies<>());
}

/// Output extent of a window of `filter` with `stride` over `size` (padding SAME = 1,
/// VALID = 2); 0 when VALID does not fit.
inline uint32_t windowExtent(uint32_t size, uint32_t filter, uint32_t stride, int32_t scheme) {
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

  // --- operations (random_graph_operations.cpp): each adds one operation of its type, or
  // returns false when the graph so far offers no valid input for it ---------------------
  /// Window geometry shared by CONV_2D, DEPTHWISE_CONV_2D and the pools: implicit padding,
  /// strides, and the layout (NCHW when `nchw`).
  struct Window {
    uint32_t batch, height, width, channels;
    uint32_t filterH, filterW, strideH, strideW;
    int32_t scheme;
    bool nchw;
    uint32_t outH, outW;
  };
  bool addOperation();
  bool binary(OperationType type);
  bool unary(OperationType type);
  /// Bias of a float or per-tensor quantized filter: float values, or INT32 at scale
  /// input scale x filter scale.
  uint32_t bias(uint32_t input, uint32_t filter, uint32_t channels);
  /// A filter of the main type (int8 filters symmetric, as TFLite makes them), or with a
  /// scale per output channel along `channelDim`.
  uint32_t filter(std::vector<uint32_t> shape, uint32_t channelDim, bool perChannel);
  /// A quantized sum's output scale: about 1/50 of the range of `terms` products.
  std::pair<float, int32_t> sumParams(uint32_t input, uint32_t filterIndex, size_t terms);
  bool fullyConnected();
  std::optional<Window> window(uint32_t a);
  std::vector<uint32_t> outShape(const Window& w, uint32_t channels);
  bool convolution(bool depthwise);
  bool pool(OperationType type);
  bool concatenation();
  bool reshape();
  bool transpose();
  bool softmax();
  bool mean();
  bool pad();
  bool comparison();
  bool select();
  bool argMax();
  /// DEQUANTIZE of a quantized tensor, QUANTIZE of an exact float one: a side output.
  bool changeType();

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

}  // namespace nnhal::tools::random_graph_internal
