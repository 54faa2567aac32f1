#include "tools/common/dequantize_model.h"

#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace nnhal::tools {
namespace {

/// Same thresholds as the TFLite import (hal/tflite/model_builder.h): values of at most
/// this many bytes are copied into operandValues, larger ones are referenced from a pool.
constexpr size_t kMaxImmediateBytes = 128;
constexpr size_t kOperandValueAlignment = 4;
constexpr size_t kPoolAlignment = 64;

bool isQuant8(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
      return true;
    default:
      return false;
  }
}

/// Operand types that have no float32 form here (or whose float form would change what
/// the operations using them mean).
bool isUnconvertible(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::FLOAT16:
    case OperandType::SUBGRAPH:
    case OperandType::OEM:
    case OperandType::TENSOR_OEM_BYTE:
      return true;
    default:
      return false;
  }
}

/// Operations whose inputs and outputs mean the same real values in float32 as in their
/// quantized form, with the same scalar parameters (rounding aside).
bool keepsMeaningInFloat(OperationType type) {
  switch (type) {
    case OperationType::ADD:
    case OperationType::SUB:
    case OperationType::MUL:
    case OperationType::AVERAGE_POOL_2D:
    case OperationType::MAX_POOL_2D:
    case OperationType::L2_POOL_2D:
    case OperationType::CONCATENATION:
    case OperationType::CONV_2D:
    case OperationType::DEPTHWISE_CONV_2D:
    case OperationType::FULLY_CONNECTED:
    case OperationType::RESHAPE:
    case OperationType::SQUEEZE:
    case OperationType::SOFTMAX:
    case OperationType::RELU:
    case OperationType::RELU1:
    case OperationType::RELU6:
    case OperationType::LOGISTIC:
    case OperationType::TANH:
    case OperationType::HARD_SWISH:
    case OperationType::MEAN:
    case OperationType::PAD:
    case OperationType::RESIZE_BILINEAR:
    case OperationType::RESIZE_NEAREST_NEIGHBOR:
    case OperationType::TRANSPOSE:
    case OperationType::SPACE_TO_DEPTH:
    case OperationType::DEPTH_TO_SPACE:
    case OperationType::MAXIMUM:
    case OperationType::MINIMUM:
    case OperationType::STRIDED_SLICE:
    case OperationType::SLICE:
    case OperationType::ARGMAX:
    case OperationType::ARGMIN:
      return true;
    default:
      return false;
  }
}

bool hasBiasInput(OperationType type) {
  return type == OperationType::CONV_2D || type == OperationType::DEPTHWISE_CONV_2D ||
         type == OperationType::FULLY_CONNECTED;
}

size_t elementCount(const Operand& operand) {
  size_t count = 1;
  for (const uint32_t d : operand.dimensions) count *= d;
  return count;
}

std::string operandName(uint32_t index) { return "operand " + std::to_string(index); }

/// The stored bytes of a CONSTANT_COPY or CONSTANT_REFERENCE operand.
Result<std::span<const uint8_t>> constantBytes(const Model& model, uint32_t index) {
  const Operand& operand = model.main.operands[index];
  const DataLocation& at = operand.location;
  const uint64_t end = uint64_t{at.offset} + at.length;
  if (operand.lifetime == OperandLifeTime::CONSTANT_COPY) {
    if (end > model.operandValues.size()) {
      return invalidArgument(operandName(index) + " lies outside operandValues");
    }
    return std::span<const uint8_t>(model.operandValues).subspan(at.offset, at.length);
  }
  if (at.poolIndex >= model.pools.size() || end > model.pools[at.poolIndex].size()) {
    return invalidArgument(operandName(index) + " lies outside its pool");
  }
  return std::span<const uint8_t>(model.pools[at.poolIndex].bytes()).subspan(at.offset, at.length);
}

/// Per-channel scale of element `i` of a TENSOR_QUANT8_SYMM_PER_CHANNEL operand.
float channelScale(const Operand& operand, const SymmPerChannelQuantParams& params, size_t i) {
  size_t inner = 1;
  for (size_t d = params.channelDim + 1; d < operand.dimensions.size(); ++d) {
    inner *= operand.dimensions[d];
  }
  return params.scales[(i / inner) % operand.dimensions[params.channelDim]];
}

/// Real values of a quantized 8-bit constant: (q - zeroPoint) * scale.
Result<std::vector<float>> dequantizeValues(const Operand& operand, uint32_t index,
                                            std::span<const uint8_t> bytes) {
  const size_t count = elementCount(operand);
  if (bytes.size() != count) {
    return invalidArgument(operandName(index) + " holds " + std::to_string(bytes.size()) +
                           " bytes for " + std::to_string(count) + " elements");
  }
  const bool isSigned = operand.type != OperandType::TENSOR_QUANT8_ASYMM;
  const auto* perChannel = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams);
  if (operand.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL &&
      (perChannel == nullptr || perChannel->channelDim >= operand.dimensions.size() ||
       perChannel->scales.size() != operand.dimensions[perChannel->channelDim])) {
    return invalidArgument(operandName(index) + " lacks valid per-channel scales");
  }
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    const int32_t q = isSigned ? static_cast<int8_t>(bytes[i]) : bytes[i];
    if (operand.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
      values[i] = static_cast<float>(q) * channelScale(operand, *perChannel, i);
    } else {
      values[i] = static_cast<float>(q - operand.zeroPoint) * operand.scale;
    }
  }
  return values;
}

/// Real values of an INT32 bias: q * bias scale, or q * input scale * filter scale[c] when
/// the filter is quantized per channel (the bias operand then has scale 0).
Result<std::vector<float>> dequantizeBias(const Model& model, uint32_t index,
                                          std::span<const uint8_t> bytes, float inputScale,
                                          uint32_t filterIndex) {
  const Operand& bias = model.main.operands[index];
  const Operand& filter = model.main.operands[filterIndex];
  const size_t count = elementCount(bias);
  if (bytes.size() != count * sizeof(int32_t)) {
    return invalidArgument(operandName(index) + " holds " + std::to_string(bytes.size()) +
                           " bytes for " + std::to_string(count) + " INT32 elements");
  }
  const auto* perChannel = std::get_if<SymmPerChannelQuantParams>(&filter.extraParams);
  if (perChannel != nullptr && perChannel->scales.size() != count) {
    return invalidArgument(operandName(index) + " has " + std::to_string(count) + " elements for " +
                           std::to_string(perChannel->scales.size()) + " filter channels");
  }
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) {
    int32_t q = 0;
    std::memcpy(&q, bytes.data() + i * sizeof(int32_t), sizeof(int32_t));
    const float scale = perChannel != nullptr ? inputScale * perChannel->scales[i]
                        : bias.scale > 0.0f   ? bias.scale
                                              : inputScale * filter.scale;
    values[i] = static_cast<float>(q) * scale;
  }
  return values;
}

/// Where a bias gets its scale from: the input's scale and the filter operand.
struct BiasSource {
  float inputScale = 0.0f;
  uint32_t filter = 0;
};

/// Checks every operation and finds the INT32 biases that become float.
Result<std::vector<std::optional<BiasSource>>> findBiases(const Model& model) {
  const Subgraph& graph = model.main;
  std::vector<std::optional<BiasSource>> biases(graph.operands.size());
  for (size_t i = 0; i < graph.operations.size(); ++i) {
    const Operation& operation = graph.operations[i];
    const std::string name =
        "operation " + std::to_string(i) + " (" + std::string(toString(operation.type)) + ")";
    if (!keepsMeaningInFloat(operation.type)) {
      return invalidArgument(name + " has no float32 form with the same parameters");
    }
    for (const uint32_t operand : operation.inputs) {
      if (operand >= graph.operands.size()) {
        return invalidArgument(name + " reads missing " + operandName(operand));
      }
    }
    if (!hasBiasInput(operation.type) || operation.inputs.size() < 3) continue;
    const Operand& input = graph.operands[operation.inputs[0]];
    const uint32_t bias = operation.inputs[2];
    if (!isQuant8(input.type) || graph.operands[bias].type != OperandType::TENSOR_INT32) continue;
    biases[bias] = BiasSource{input.scale, operation.inputs[1]};
  }
  return biases;
}

uint32_t appendAligned(std::vector<uint8_t>& bytes, size_t alignment,
                       std::span<const uint8_t> value) {
  bytes.resize((bytes.size() + alignment - 1) / alignment * alignment);
  const auto offset = static_cast<uint32_t>(bytes.size());
  bytes.insert(bytes.end(), value.begin(), value.end());
  return offset;
}

std::span<const uint8_t> asBytes(const std::vector<float>& values) {
  return {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)};
}

}  // namespace

Result<Model> dequantizeModel(const Model& model) {
  if (!model.referenced.empty()) {
    return invalidArgument("models with referenced subgraphs (IF/WHILE) cannot be dequantized");
  }
  NNHAL_ASSIGN_OR_RETURN(const auto biases, findBiases(model));

  Model out;
  out.main = model.main;
  out.relaxComputationFloat32toFloat16 = model.relaxComputationFloat32toFloat16;
  out.extensionNameToPrefix = model.extensionNameToPrefix;

  // New constants: CONSTANT_COPY values are rebuilt into out.operandValues; converted large
  // values gather in newPool, whose index is only known once the kept pools are counted.
  std::vector<uint8_t> newPool;
  std::vector<bool> inNewPool(out.main.operands.size(), false);
  std::vector<bool> poolKept(model.pools.size(), false);
  for (uint32_t i = 0; i < out.main.operands.size(); ++i) {
    Operand& operand = out.main.operands[i];
    if (isUnconvertible(operand.type)) {
      return invalidArgument(operandName(i) + " has type " + std::string(toString(operand.type)) +
                             ", which has no float32 form here");
    }
    const bool convert = isQuant8(operand.type) || biases[i].has_value();
    const bool constant = operand.lifetime == OperandLifeTime::CONSTANT_COPY ||
                          operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
    std::optional<std::vector<float>> values;
    if (constant) {
      NNHAL_ASSIGN_OR_RETURN(const auto bytes, constantBytes(model, i));
      if (convert && biases[i]) {
        NNHAL_ASSIGN_OR_RETURN(
            values, dequantizeBias(model, i, bytes, biases[i]->inputScale, biases[i]->filter));
      } else if (convert) {
        NNHAL_ASSIGN_OR_RETURN(values, dequantizeValues(model.main.operands[i], i, bytes));
      } else if (operand.lifetime == OperandLifeTime::CONSTANT_COPY) {
        operand.location.offset = appendAligned(out.operandValues, kOperandValueAlignment, bytes);
      } else {
        poolKept[operand.location.poolIndex] = true;
      }
    }
    if (!convert) continue;
    operand.type = OperandType::TENSOR_FLOAT32;
    operand.scale = 0.0f;
    operand.zeroPoint = 0;
    operand.extraParams = std::monostate{};
    if (!values) continue;
    const auto bytes = asBytes(*values);
    operand.location.length = static_cast<uint32_t>(bytes.size());
    if (bytes.size() <= kMaxImmediateBytes) {
      operand.lifetime = OperandLifeTime::CONSTANT_COPY;
      operand.location.poolIndex = 0;
      operand.location.offset = appendAligned(out.operandValues, kOperandValueAlignment, bytes);
    } else {
      operand.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
      operand.location.offset = appendAligned(newPool, kPoolAlignment, bytes);
      inNewPool[i] = true;
    }
  }

  // Keep only the pools unconverted constants still refer to, renumbered in order.
  std::vector<uint32_t> poolIndex(model.pools.size(), 0);
  for (size_t p = 0; p < model.pools.size(); ++p) {
    if (!poolKept[p]) continue;
    poolIndex[p] = static_cast<uint32_t>(out.pools.size());
    out.pools.push_back(model.pools[p]);
  }
  for (uint32_t i = 0; i < out.main.operands.size(); ++i) {
    Operand& operand = out.main.operands[i];
    if (operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE && !inNewPool[i]) {
      operand.location.poolIndex = poolIndex[operand.location.poolIndex];
    }
  }
  if (!newPool.empty()) {
    NNHAL_ASSIGN_OR_RETURN(Memory pool,
                           Memory::createSealed(newPool.size(), [&](std::span<uint8_t> content) {
                             std::memcpy(content.data(), newPool.data(), newPool.size());
                           }));
    for (uint32_t i = 0; i < out.main.operands.size(); ++i) {
      if (inNewPool[i])
        out.main.operands[i].location.poolIndex = static_cast<uint32_t>(out.pools.size());
    }
    out.pools.push_back(std::move(pool));
  }
  return out;
}

}  // namespace nnhal::tools
