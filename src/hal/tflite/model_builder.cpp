#include "hal/tflite/model_builder.h"

#include <bit>
#include <cstring>
#include <limits>
#include <map>
#include <utility>

#include "nnhal/memory.h"

namespace nnhal::hal::tfl {
namespace {

size_t alignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

template <typename T>
std::span<const uint8_t> bytesOf(const T& value) {
  return {reinterpret_cast<const uint8_t*>(&value), sizeof(T)};
}

}  // namespace

uint16_t floatToHalfBits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t exponent = (bits >> 23) & 0xffu;
  uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xffu) {  // infinity or NaN (NaN keeps a quiet payload bit)
    return static_cast<uint16_t>(sign | 0x7c00u | (mantissa != 0 ? 0x200u : 0u));
  }
  const int32_t halfExponent = static_cast<int32_t>(exponent) - 127 + 15;
  if (halfExponent >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (halfExponent <= 0) {
    // Subnormal half (or zero): shift the mantissa with its implicit bit into place.
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - halfExponent);
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u) != 0)) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(halfExponent) << 10) | (mantissa >> 13);
  const uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u) != 0)) ++half;  // may carry into inf
  return static_cast<uint16_t>(sign | half);
}

uint32_t ModelBuilder::addOperand(Operand operand) {
  model_.main.operands.push_back(std::move(operand));
  return static_cast<uint32_t>(model_.main.operands.size() - 1);
}

uint32_t ModelBuilder::addOperand(OperandType type, std::vector<uint32_t> dimensions) {
  Operand operand;
  operand.type = type;
  operand.dimensions = std::move(dimensions);
  return addOperand(std::move(operand));
}

void ModelBuilder::copyImmediate(uint32_t index, std::span<const uint8_t> bytes) {
  auto& values = model_.operandValues;
  values.resize(alignUp(values.size(), kOperandValueAlignment), 0);
  Operand& target = operand(index);
  target.lifetime = OperandLifeTime::CONSTANT_COPY;
  target.location = {.poolIndex = 0,
                     .offset = static_cast<uint32_t>(values.size()),
                     .length = static_cast<uint32_t>(bytes.size())};
  values.insert(values.end(), bytes.begin(), bytes.end());
}

void ModelBuilder::setConstantView(uint32_t index, std::span<const uint8_t> bytes) {
  if (bytes.size() <= kMaxImmediateBytes) {
    copyImmediate(index, bytes);
    return;
  }
  operand(index).lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  poolValues_.push_back({.operand = index, .view = bytes, .owned = {}});
}

void ModelBuilder::setConstantOwned(uint32_t index, std::vector<uint8_t> bytes) {
  if (bytes.size() <= kMaxImmediateBytes) {
    copyImmediate(index, bytes);
    return;
  }
  operand(index).lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  poolValues_.push_back({.operand = index, .view = {}, .owned = std::move(bytes)});
}

uint32_t ModelBuilder::addInt32Scalar(int32_t value) {
  const uint32_t index = addOperand(OperandType::INT32);
  copyImmediate(index, bytesOf(value));
  return index;
}

uint32_t ModelBuilder::addFloat32Scalar(float value) {
  const uint32_t index = addOperand(OperandType::FLOAT32);
  copyImmediate(index, bytesOf(value));
  return index;
}

uint32_t ModelBuilder::addFloat16Scalar(float value) {
  const uint32_t index = addOperand(OperandType::FLOAT16);
  const uint16_t half = floatToHalfBits(value);
  copyImmediate(index, bytesOf(half));
  return index;
}

uint32_t ModelBuilder::addBoolScalar(bool value) {
  const uint32_t index = addOperand(OperandType::BOOL);
  const uint8_t byte = value ? 1 : 0;
  copyImmediate(index, bytesOf(byte));
  return index;
}

uint32_t ModelBuilder::addInt32Vector(std::span<const int32_t> values) {
  const uint32_t index =
      addOperand(OperandType::TENSOR_INT32, {static_cast<uint32_t>(values.size())});
  std::vector<uint8_t> bytes(values.size() * sizeof(int32_t));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  setConstantOwned(index, std::move(bytes));
  return index;
}

uint32_t ModelBuilder::addOmitted(OperandType type) {
  const uint32_t index = addOperand(type);
  operand(index).lifetime = OperandLifeTime::NO_VALUE;
  return index;
}

std::optional<std::span<const uint8_t>> ModelBuilder::constantBytes(uint32_t index) const {
  const Operand& target = operand(index);
  if (target.lifetime == OperandLifeTime::CONSTANT_COPY) {
    return std::span<const uint8_t>(model_.operandValues)
        .subspan(target.location.offset, target.location.length);
  }
  if (target.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
    for (const PoolValue& value : poolValues_) {
      if (value.operand != index) continue;
      return value.view.empty() ? std::span<const uint8_t>(value.owned) : value.view;
    }
  }
  return std::nullopt;
}

void ModelBuilder::addOperation(OperationType type, std::vector<uint32_t> inputs,
                                std::vector<uint32_t> outputs) {
  model_.main.operations.push_back(
      {.type = type, .inputs = std::move(inputs), .outputs = std::move(outputs)});
}

bool ModelBuilder::hasExtension(std::string_view name) const {
  for (const Extension& extension : available_) {
    if (extension.name == name) return true;
  }
  return false;
}

uint16_t ModelBuilder::extensionPrefix(std::string_view name) {
  for (const ExtensionNameAndPrefix& entry : model_.extensionNameToPrefix) {
    if (entry.name == name) return entry.prefix;
  }
  const auto prefix = static_cast<uint16_t>(model_.extensionNameToPrefix.size() + 1);
  model_.extensionNameToPrefix.push_back({std::string(name), prefix});
  return prefix;
}

Result<Model> ModelBuilder::finish(std::vector<uint32_t> inputIndexes,
                                   std::vector<uint32_t> outputIndexes) && {
  model_.main.inputIndexes = std::move(inputIndexes);
  model_.main.outputIndexes = std::move(outputIndexes);

  // Lay out the large constants; values viewed from the same bytes share one copy.
  std::map<std::pair<const uint8_t*, size_t>, size_t> viewOffsets;
  std::vector<size_t> offsets(poolValues_.size());
  size_t poolSize = 0;
  for (size_t i = 0; i < poolValues_.size(); ++i) {
    const PoolValue& value = poolValues_[i];
    const size_t length = value.view.empty() ? value.owned.size() : value.view.size();
    if (!value.view.empty()) {
      const auto key = std::make_pair(value.view.data(), value.view.size());
      if (const auto found = viewOffsets.find(key); found != viewOffsets.end()) {
        offsets[i] = found->second;
        continue;
      }
      viewOffsets.emplace(key, alignUp(poolSize, kPoolAlignment));
    }
    offsets[i] = alignUp(poolSize, kPoolAlignment);
    poolSize = offsets[i] + length;
  }
  if (poolSize > std::numeric_limits<uint32_t>::max()) {
    return invalidArgument("TFLite model constants need " + std::to_string(poolSize) +
                           " bytes; at most 4 GiB fit in one pool");
  }

  if (poolSize > 0) {
    // Sealed: nnhald then uses the weights in place instead of copying them.
    NNHAL_ASSIGN_OR_RETURN(
        Memory pool, Memory::createSealed(poolSize, [&](std::span<uint8_t> content) {
          for (size_t i = 0; i < poolValues_.size(); ++i) {
            const PoolValue& value = poolValues_[i];
            const std::span<const uint8_t> bytes =
                value.view.empty() ? std::span<const uint8_t>(value.owned) : value.view;
            std::memcpy(content.data() + offsets[i], bytes.data(), bytes.size());
          }
        }));
    for (size_t i = 0; i < poolValues_.size(); ++i) {
      const PoolValue& value = poolValues_[i];
      const size_t length = value.view.empty() ? value.owned.size() : value.view.size();
      operand(value.operand).location = {.poolIndex = 0,
                                         .offset = static_cast<uint32_t>(offsets[i]),
                                         .length = static_cast<uint32_t>(length)};
    }
    model_.pools.push_back(std::move(pool));
  }
  poolValues_.clear();

  for (Operand& operand : model_.main.operands) operand.numberOfConsumers = 0;
  for (const Operation& operation : model_.main.operations) {
    for (const uint32_t input : operation.inputs) ++model_.main.operands[input].numberOfConsumers;
  }
  return std::move(model_);
}

}  // namespace nnhal::hal::tfl
