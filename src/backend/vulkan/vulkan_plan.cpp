#include "backend/vulkan/vulkan_plan.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "backend/vulkan/vulkan_planner.h"
#include "hal/model_constants.h"
#include "kernels/quantization.h"

namespace nnhal::backend::vulkan {
namespace planning {

const uint8_t* Planner::constantBytes(const Operand& o) const {
  return hal::constantBytes(model_, o);
}

const uint8_t* Planner::constantAt(uint32_t index) const {
  if (auto own = ownConstants_.find(index); own != ownConstants_.end()) return own->second.data();
  return index < model_.main.operands.size() ? constantBytes(operand(index)) : nullptr;
}

uint32_t Planner::ownConstant(std::vector<int32_t> values) {
  Operand o;
  o.type = OperandType::TENSOR_INT32;
  o.dimensions = {static_cast<uint32_t>(values.size())};
  o.lifetime = OperandLifeTime::CONSTANT_COPY;
  operands_.push_back(std::move(o));
  ranges_.emplace_back();
  const auto index = static_cast<uint32_t>(operands_.size() - 1);
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  ownConstants_.emplace(index, std::move(bytes));
  return index;
}

Planned<uint32_t> Planner::floatConstant(const std::vector<float>& values) {
  std::vector<int32_t> bits;
  bits.reserve(values.size());
  for (float v : values) bits.push_back(std::bit_cast<int32_t>(v));
  const uint32_t index = ownConstant(std::move(bits));
  NNHAL_PLAN_CHECK(tensor(index, true));
  return index;
}

Planned<uint32_t> Planner::tensor(uint32_t operandIndex, bool quantized, bool indices) {
  const Operand& o = operand(operandIndex);
  if (indices && o.type == OperandType::TENSOR_INT32) {
    // Indices, whole and small: exact as floats.
  } else if (quantized && o.type == OperandType::TENSOR_INT32) {
    // Held as raw words: constants, or model inputs copied as they are (Storage::kWords).
    if (constantAt(operandIndex) == nullptr) {
      if (o.lifetime != OperandLifeTime::SUBGRAPH_INPUT) {
        return refuse(
            "a TENSOR_INT32 input of a quantized operation must be constant or a "
            "model input");
      }
      rawWords_.insert(operandIndex);
    }
  } else if (quantized && (isQuant8(o.type) || o.type == OperandType::TENSOR_BOOL8)) {
    // The quantized operations, DEQUANTIZE's input and QUANTIZE's output; the comparisons'
    // BOOL8 tensors (one byte each, 0 or 1, held as floats).
  } else if (o.type != OperandType::TENSOR_FLOAT32 && o.type != OperandType::TENSOR_FLOAT16) {
    return refuse("operand type " + std::string(toString(o.type)) +
                  " is not supported here (TENSOR_FLOAT32 and TENSOR_FLOAT16; the 8-bit types "
                  "in the operations docs/GPU.md lists)");
  }
  if (o.dimensions.empty()) return refuse("tensors of rank 0 are not supported");
  if (!anyRank_ && o.dimensions.size() > 4) return refuse("tensors of rank 1 to 4 only");
  if (std::find(o.dimensions.begin(), o.dimensions.end(), 0u) != o.dimensions.end()) {
    return refuse("tensors whose dimensions the model leaves unknown are not supported");
  }
  if (o.lifetime == OperandLifeTime::NO_VALUE) return refuse("omitted tensors are not supported");
  // Counted in 64 bits and bounded dimension by dimension: a hostile shape (or one found from
  // hostile inputs, [65536, 1] + [1, 65536]) must not wrap elementsOf's 32 bits.
  uint64_t elements = 1;
  for (uint32_t d : o.dimensions) {
    elements *= d;
    if (elements > kMaxBufferElements) {
      return refuse("a tensor of more than 2^29 elements exceeds the execution buffer");
    }
  }
  Assigned& a = ranges_[operandIndex];
  if (!a.known) {
    a.known = true;
    a.constant = constantAt(operandIndex) != nullptr;
    uint64_t& region = a.constant ? constantElements_ : otherElements_;
    a.offset = region;
    region = alignUp(region + elementsOf(o));
    if (constantElements_ + otherElements_ > kMaxBufferElements) {
      return refuse("the model's tensors exceed the execution buffer's 2^29 elements");
    }
  }
  return operandIndex;  // resolved to an offset in finish(); see offsetWord below
}

Planned<void> Planner::shapeOutput(std::vector<uint32_t> expected) {
  std::vector<uint32_t>& dims = operands_[outputIndex(0)].dimensions;
  bool fits = dims.empty() || dims.size() == expected.size();
  for (size_t d = 0; fits && d < dims.size(); ++d) fits = dims[d] == 0 || dims[d] == expected[d];
  if (!fits) {
    std::string text;
    for (uint32_t d : expected) text += (text.empty() ? "" : ", ") + std::to_string(d);
    return invalid("the output's shape is not the operation's [" + text + "]");
  }
  dims = std::move(expected);
  return {};
}

Planned<int32_t> Planner::scalarInt(size_t k) const {
  const Operand& o = input(k);
  const uint8_t* bytes = constantBytes(o);
  if (o.type != OperandType::INT32 || bytes == nullptr) {
    return refuse("input " + std::to_string(k) + " must be a constant INT32");
  }
  int32_t value = 0;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

Planned<float> Planner::scalarFloat(size_t k) const {
  const Operand& o = input(k);
  const uint8_t* bytes = constantBytes(o);
  if (bytes != nullptr && o.type == OperandType::FLOAT16) {
    _Float16 half{};
    std::memcpy(&half, bytes, sizeof half);
    return static_cast<float>(half);
  }
  if (o.type != OperandType::FLOAT32 || bytes == nullptr) {
    return refuse("input " + std::to_string(k) + " must be a constant FLOAT32 or FLOAT16");
  }
  float value = 0;
  std::memcpy(&value, bytes, sizeof value);
  return value;
}

Planned<bool> Planner::scalarBool(size_t k) const {
  const Operand& o = input(k);
  const uint8_t* bytes = constantBytes(o);
  if (o.type != OperandType::BOOL || bytes == nullptr) {
    return refuse("input " + std::to_string(k) + " must be a constant BOOL");
  }
  return bytes[0] != 0;
}

Planned<std::pair<int32_t, int32_t>> Planner::quantizedActivation(size_t k) const {
  NNHAL_PLAN_TRY(code, scalarInt(k));
  if (code < 0 || code > 3)
    return refuse("fused activation " + std::to_string(code) + " is unknown");
  const Operand& o = output(0);
  const bool isSigned = o.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  std::pair<int32_t, int32_t> range;
  kernels::activationRangeQuantized(static_cast<FusedActivationFunc>(code), o.scale, o.zeroPoint,
                                    isSigned ? -128 : 0, isSigned ? 127 : 255, &range.first,
                                    &range.second);
  return range;
}

Planned<std::pair<float, float>> Planner::activation(size_t k) const {
  auto code = scalarInt(k);
  if (!code) return std::unexpected(code.error());
  switch (*code) {
    case 0:
      return std::pair{-kInfinity, kInfinity};
    case 1:
      return std::pair{0.0f, kInfinity};
    case 2:
      return std::pair{-1.0f, 1.0f};
    case 3:
      return std::pair{0.0f, 6.0f};
    default:
      return refuse("fused activation " + std::to_string(*code) + " is not supported");
  }
}

namespace {

// The shaders' Params blocks list offsets at these word positions (kept in step with
// shaders/*.comp).
std::vector<size_t> offsetWords(Shader shader) {
  switch (shader) {
    case Shader::kBinary:
      return {2, 3, 4, 29};
    case Shader::kUnary:
      return {2, 3, 5};
    case Shader::kConv2d:
      return {1, 2, 3, 4};
    case Shader::kPool:
      return {2, 3};
    case Shader::kSoftmax:
      return {2, 3, 11};
    case Shader::kFullyConnected:
      return {1, 2, 3, 4};
    case Shader::kConcat:
      return {4, 5};
    case Shader::kGather:
      return {1, 2};
    case Shader::kGatherAxis:
      return {1, 2, 3};
    case Shader::kMean:
      return {1, 2};
    case Shader::kResize:
      return {2, 3};
    case Shader::kQuantize:
      return {2, 3, 8};
    case Shader::kTransposeConv:
      return {1, 2, 3, 4};
    case Shader::kConvQuant:
    case Shader::kTransposeConvQuant:
    case Shader::kSelect:
      return {1, 2, 3, 4, 5};
  }
  return {};
}

}  // namespace

uint32_t Planner::temporary(const Operand& like, std::vector<uint32_t> dims) {
  Operand o;
  o.type = like.type;
  o.scale = like.scale;
  o.zeroPoint = like.zeroPoint;
  o.dimensions = std::move(dims);
  o.lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  operands_.push_back(std::move(o));
  ranges_.emplace_back();
  return static_cast<uint32_t>(operands_.size() - 1);
}

Planned<bool> Planner::nchwLayout(size_t layoutAt) const {
  if (op().inputs.size() <= layoutAt) return false;
  return scalarBool(layoutAt);
}

size_t Planner::layoutInput(size_t implicitAt, size_t explicitAt, bool exactlyOneMore) const {
  const size_t count = op().inputs.size();
  const bool implicit =
      count == implicitAt || ((exactlyOneMore ? count == implicitAt + 1 : count > implicitAt) &&
                              input(implicitAt).type == OperandType::BOOL);
  return implicit ? implicitAt : explicitAt;
}

template <typename Run>
Planned<void> Planner::withLayout(size_t layoutAt, Run run) {
  NNHAL_PLAN_TRY(nchw, nchwLayout(layoutAt));
  if (!nchw) return run();
  // [N, C, H, W] -> [N, H, W, C]: the gather reads input element (n, c, h, w) for output
  // (n, h, w, c).
  NNHAL_PLAN_TRY(in, tensor(inputIndex(0), isQuant8(input(0).type)));
  const std::vector<uint32_t> d = input(0).dimensions;
  if (d.size() != 4) return invalid("the input must have rank 4");
  const uint32_t nhwcIn = temporary(input(0), {d[0], d[2], d[3], d[1]});
  const uint32_t nhwcOut = temporary(output(0), {});
  const bool quantized = isQuant8(input(0).type);
  const uint32_t nchwOut = outputIndex(0);
  input0_ = nhwcIn;
  output0_ = nhwcIn;  // the gather below writes the stand-in input
  NNHAL_PLAN_TRY(inTemp, tensor(nhwcIn, quantized));
  gather(inTemp, in,
         plainView({static_cast<int32_t>(d[1] * d[2] * d[3]), static_cast<int32_t>(d[3]), 1,
                    static_cast<int32_t>(d[2] * d[3])}));
  output0_ = nhwcOut;
  auto ran = run();
  input0_.reset();
  output0_.reset();
  if (!ran) return ran;
  // [N, H, W, C] -> [N, C, H, W].
  const std::vector<uint32_t> o = operand(nhwcOut).dimensions;
  // Every wrapped operation shapes its stand-in output as rank 4; checked, not trusted.
  if (o.size() != 4) return invalid("the NHWC output must have rank 4");
  NNHAL_PLAN_CHECK(shapeOutput({o[0], o[3], o[1], o[2]}));
  NNHAL_PLAN_TRY(outTemp, tensor(nhwcOut, quantized));
  NNHAL_PLAN_TRY(out, tensor(nchwOut, quantized));
  gather(out, outTemp,
         plainView({static_cast<int32_t>(o[1] * o[2] * o[3]), 1, static_cast<int32_t>(o[2] * o[3]),
                    static_cast<int32_t>(o[3])}));
  return {};
}

namespace {

/// The operations of the binary and unary shaders, with the op code each shader reads
/// (shaders/binary.comp, shaders/unary.comp) and whether a fused activation input follows.
struct ElementwiseOperation {
  OperationType type;
  bool binary;
  uint32_t code;
  bool fusedActivation;
};

constexpr ElementwiseOperation kElementwise[] = {
    {OperationType::ADD, true, 0, true},       {OperationType::MUL, true, 1, true},
    {OperationType::SUB, true, 2, true},       {OperationType::DIV, true, 3, true},
    {OperationType::MAXIMUM, true, 4, false},  {OperationType::MINIMUM, true, 5, false},
    {OperationType::PRELU, true, 6, false},    {OperationType::POW, true, 24, false},
    {OperationType::EQUAL, true, 11, false},   {OperationType::NOT_EQUAL, true, 12, false},
    {OperationType::GREATER, true, 13, false}, {OperationType::GREATER_EQUAL, true, 14, false},
    {OperationType::LESS, true, 15, false},    {OperationType::LESS_EQUAL, true, 16, false},
    {OperationType::RELU, false, 0, false},    {OperationType::RELU1, false, 1, false},
    {OperationType::RELU6, false, 2, false},   {OperationType::LOGISTIC, false, 3, false},
    {OperationType::TANH, false, 4, false},    {OperationType::HARD_SWISH, false, 5, false},
    {OperationType::RESHAPE, false, 6, false}, {OperationType::ABS, false, 7, false},
    {OperationType::EXP, false, 8, false},     {OperationType::LOG, false, 9, false},
    {OperationType::NEG, false, 10, false},    {OperationType::RSQRT, false, 11, false},
    {OperationType::SQRT, false, 12, false},   {OperationType::SIN, false, 13, false},
    {OperationType::FLOOR, false, 14, false},  {OperationType::ELU, false, 15, false},
};

}  // namespace

Planned<void> Planner::operation(uint32_t index) {
  current_ = index;
  anyRank_ = false;
  for (const ElementwiseOperation& e : kElementwise) {
    if (e.type != op().type) continue;
    return e.binary ? binary(e.code, e.fusedActivation) : unary(e.code);
  }
  switch (op().type) {
    case OperationType::SELECT:
      return select();
    case OperationType::GATHER:
      return gatherAlongAxis();
    case OperationType::EMBEDDING_LOOKUP:
      return embeddingLookup();
    case OperationType::TILE:
      return tile();
    case OperationType::TOPK_V2:
      return topK();
    case OperationType::INSTANCE_NORMALIZATION:
      return withLayout(4, [this] { return instanceNormalization(); });
    case OperationType::SPLIT:
      return split();
    case OperationType::CAST:
      return cast();
    case OperationType::CONV_2D:
      return withLayout(layoutInput(7, 10, false), [this] { return convolution(ConvKind::kConv); });
    case OperationType::DEPTHWISE_CONV_2D:
      return withLayout(layoutInput(8, 11, false),
                        [this] { return convolution(ConvKind::kDepthwise); });
    case OperationType::GROUPED_CONV_2D:
      return withLayout(layoutInput(8, 11, false),
                        [this] { return convolution(ConvKind::kGrouped); });
    case OperationType::AVERAGE_POOL_2D:
      return withLayout(layoutInput(7, 10, true), [this] { return pooling(0); });
    case OperationType::MAX_POOL_2D:
      return withLayout(layoutInput(7, 10, true), [this] { return pooling(1); });
    case OperationType::TRANSPOSE_CONV_2D:
      return withLayout(op().inputs.size() == 9 ? 8 : 10, [this] { return transposeConv(); });
    case OperationType::L2_POOL_2D:
      return withLayout(layoutInput(7, 10, true), [this] { return pooling(2); });
    case OperationType::L2_NORMALIZATION:
      return alongAxis(1);
    case OperationType::LOCAL_RESPONSE_NORMALIZATION:
      return alongAxis(2);
    case OperationType::LOG_SOFTMAX:
      return alongAxis(3);
    case OperationType::SLICE:
      return slice(false);
    case OperationType::STRIDED_SLICE:
      return slice(true);
    case OperationType::CHANNEL_SHUFFLE:
      return channelShuffle();
    case OperationType::DEPTH_TO_SPACE:
      return withLayout(2, [this] { return depthToSpace(true); });
    case OperationType::SPACE_TO_DEPTH:
      return withLayout(2, [this] { return depthToSpace(false); });
    case OperationType::BATCH_TO_SPACE_ND:
      return withLayout(2, [this] { return batchToSpace(true); });
    case OperationType::SPACE_TO_BATCH_ND:
      return withLayout(3, [this] { return batchToSpace(false); });
    case OperationType::SQUEEZE:
      return squeeze();
    case OperationType::EXPAND_DIMS:
      return expandDims();
    case OperationType::REDUCE_SUM:
      return mean(1);
    case OperationType::REDUCE_MAX:
      return mean(2);
    case OperationType::REDUCE_MIN:
      return mean(3);
    case OperationType::REDUCE_PROD:
      return mean(4);
    case OperationType::SOFTMAX:
      return alongAxis(0);
    case OperationType::FULLY_CONNECTED:
      return fullyConnected();
    case OperationType::CONCATENATION:
      return concatenation();
    case OperationType::PAD:
      return pad(false);
    case OperationType::PAD_V2:
      return pad(true);
    case OperationType::TRANSPOSE:
      return transpose();
    case OperationType::MEAN:
      return mean();
    case OperationType::ARGMAX:
      return argExtreme(true);
    case OperationType::ARGMIN:
      return argExtreme(false);
    case OperationType::DEQUANTIZE:
      return quantization(false);
    case OperationType::QUANTIZE:
      return quantization(true);
    case OperationType::RESIZE_BILINEAR:
      return withLayout(3, [this] { return resize(true); });
    case OperationType::RESIZE_NEAREST_NEIGHBOR:
      return withLayout(3, [this] { return resize(false); });
    default:
      return refuse("the operation is not supported by nnhal-vulkan");
  }
}

Result<Plan> Planner::finish() {
  // Model outputs are written by an operation, so they have their range; a model input no
  // operation reads gets one if it is a float32 tensor, and is ignored otherwise.
  std::vector<bool> ignored(ranges_.size(), false);
  for (uint32_t index : model_.main.inputIndexes) {
    if (!ranges_[index].known && !tensor(index)) ignored[index] = true;
  }
  Plan plan;
  plan.indexChecks = std::move(indexChecks_);
  plan.bufferElements = constantElements_ + otherElements_;
  const auto offsetOf = [&](uint32_t operandIndex) -> uint32_t {
    const Assigned& a = ranges_[operandIndex];
    return static_cast<uint32_t>(a.constant ? a.offset : constantElements_ + a.offset);
  };
  plan.constantImage.assign(constantElements_, 0.0f);
  for (uint32_t k = 0; k < ranges_.size(); ++k) {
    if (!ranges_[k].known || !ranges_[k].constant) continue;
    float* to = plan.constantImage.data() + ranges_[k].offset;
    const uint8_t* from = constantAt(k);
    const size_t n = elementsOf(operand(k));
    const OperandType type = operand(k).type;
    if (type == OperandType::TENSOR_FLOAT16) {
      for (size_t e = 0; e < n; ++e) {
        _Float16 half{};
        std::memcpy(&half, from + e * sizeof half, sizeof half);
        to[e] = static_cast<float>(half);
      }
    } else if (type == OperandType::TENSOR_INT32) {
      std::memcpy(to, from, n * sizeof(int32_t));  // raw words (conv2d_quant.comp)
    } else if (type == OperandType::TENSOR_QUANT8_ASYMM) {
      for (size_t e = 0; e < n; ++e) to[e] = static_cast<float>(from[e]);
    } else if (type != OperandType::TENSOR_FLOAT32) {  // the signed 8-bit types
      for (size_t e = 0; e < n; ++e) to[e] = static_cast<float>(static_cast<int8_t>(from[e]));
    } else {
      std::memcpy(to, from, n * sizeof(float));
    }
  }
  for (Dispatch& d : dispatches_) {
    for (size_t word : offsetWords(d.shader)) d.push[word] = offsetOf(d.push[word] & ~kOperandTag);
  }
  plan.dispatches = std::move(dispatches_);
  const auto rangeOf = [&](uint32_t index) {
    const OperandType type = operand(index).type;
    const Storage storage = type == OperandType::TENSOR_FLOAT16        ? Storage::kFloat16
                            : type == OperandType::TENSOR_QUANT8_ASYMM ? Storage::kUint8
                            : type == OperandType::TENSOR_FLOAT32      ? Storage::kFloat32
                            : rawWords_.contains(index)                ? Storage::kWords
                            : type == OperandType::TENSOR_INT32        ? Storage::kInt32
                                                                       : Storage::kInt8;
    return TensorRange{offsetOf(index), elementsOf(operand(index)), storage};
  };
  for (uint32_t index : model_.main.inputIndexes) {
    plan.inputs.push_back(ignored[index] ? TensorRange{} : rangeOf(index));
  }
  for (uint32_t index : model_.main.outputIndexes) {
    plan.outputs.push_back(rangeOf(index));
    plan.outputDimensions.push_back(operand(index).dimensions);
  }
  return plan;
}

}  // namespace planning

using planning::Planner;

std::pair<uint32_t, uint32_t> workgroupCounts(uint32_t invocations) {
  const uint32_t groups = (invocations + kWorkgroupSize - 1) / kWorkgroupSize;
  if (groups <= kMaxWorkgroupsX) return {std::max(groups, 1u), 1};
  return {kMaxWorkgroupsX, (groups + kMaxWorkgroupsX - 1) / kMaxWorkgroupsX};
}

Result<std::vector<std::string>> explainSupport(const Model& model) {
  std::vector<std::string> reasons;
  // One planner for all: an operation's output shapes, found from its inputs, are the next
  // operations' input shapes.
  Planner planner(model);
  for (uint32_t k = 0; k < model.main.operations.size(); ++k) {
    auto planned = planner.operation(k);
    const std::string name(toString(model.main.operations[k].type));
    if (!planned && planned.error().invalid) {
      return invalidArgument("operation " + std::to_string(k) + " (" + name +
                             ") is invalid: " + planned.error().reason);
    }
    reasons.push_back(planned ? std::string() : name + ": " + planned.error().reason);
  }
  return reasons;
}

namespace {

/// Plans every operation of `model` in order; the first refusal as INVALID_ARGUMENT.
Result<void> planOperations(Planner& planner, const Model& model) {
  for (uint32_t k = 0; k < model.main.operations.size(); ++k) {
    auto planned = planner.operation(k);
    if (!planned) {
      return invalidArgument(
          "operation " + std::to_string(k) + " (" +
          std::string(toString(model.main.operations[k].type)) + ") is " +
          (planned.error().invalid ? "invalid: " : "not supported by nnhal-vulkan: ") +
          planned.error().reason);
    }
  }
  return {};
}

}  // namespace

Result<void> checkPlan(const Model& model) {
  Planner planner(model);
  return planOperations(planner, model);
}

Result<Plan> buildPlan(const Model& model) {
  Planner planner(model);
  NNHAL_TRY(planOperations(planner, model));
  return planner.finish();
}

}  // namespace nnhal::backend::vulkan
