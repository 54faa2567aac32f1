#include "hal/tflite/mapping_helpers.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "hal/operand_utils.h"

namespace nnhal::hal::tfl {
namespace {

/// The float value of IEEE 754 binary16 `bits`.
float halfBitsToFloat(uint16_t bits) {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) {  // infinity or NaN
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/// The bytes of constant `operand`, or an error naming `what`.
Result<std::span<const uint8_t>> constantOf(const OperatorContext& c, uint32_t operand,
                                            std::string_view what) {
  const auto bytes = c.builder().constantBytes(operand);
  if (!bytes) {
    return c.error("the " + std::string(what) +
                   " tensor must be a constant (NNAPI takes it as a parameter)");
  }
  return *bytes;
}

}  // namespace

bool isQuant8(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

Result<void> expectPositive(const OperatorContext& c, int32_t value, std::string_view field) {
  if (value < 1) {
    return c.error(std::string(field) + " is " + std::to_string(value) + "; it must be >= 1");
  }
  return {};
}

uint32_t addFloatScalarFor(ModelBuilder& b, OperandType tensorType, float value) {
  return tensorType == OperandType::TENSOR_FLOAT16 ? b.addFloat16Scalar(value)
                                                   : b.addFloat32Scalar(value);
}

uint32_t addTemporaryLike(ModelBuilder& b, uint32_t like, std::vector<uint32_t> dimensions) {
  Operand operand = b.operand(like);
  operand.dimensions = std::move(dimensions);
  operand.numberOfConsumers = 0;
  operand.lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  operand.location = {};
  return b.addOperand(std::move(operand));
}

uint32_t dequantizedForFloatInput(OperatorContext& c, uint32_t input, uint32_t operand) {
  const OperandType inputType = c.operand(input).type;
  const OperandType type = c.operand(operand).type;
  const bool floatInput =
      inputType == OperandType::TENSOR_FLOAT32 || inputType == OperandType::TENSOR_FLOAT16;
  const bool quantized = isQuant8(type) || type == OperandType::TENSOR_QUANT8_SYMM ||
                         type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  if (!floatInput || !quantized) return operand;
  ModelBuilder& b = c.builder();
  Operand real;
  real.type = inputType;
  real.dimensions = c.operand(operand).dimensions;
  real.lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  const uint32_t result = b.addOperand(std::move(real));
  c.addOperation(OperationType::DEQUANTIZE, {operand}, {result});
  return result;
}

Result<std::vector<int32_t>> constantInt32s(const OperatorContext& c, uint32_t operand,
                                            std::string_view what) {
  if (c.operand(operand).type != OperandType::TENSOR_INT32) {
    return c.error("the " + std::string(what) + " tensor must be INT32, not " +
                   std::string(toString(c.operand(operand).type)));
  }
  NNHAL_ASSIGN_OR_RETURN(const std::span<const uint8_t> bytes, constantOf(c, operand, what));
  std::vector<int32_t> values(bytes.size() / sizeof(int32_t));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(int32_t));
  return values;
}

Result<int32_t> constantInt32(const OperatorContext& c, uint32_t operand, std::string_view what) {
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> values, constantInt32s(c, operand, what));
  if (values.size() != 1) {
    return c.error("the " + std::string(what) + " tensor must hold one value, not " +
                   std::to_string(values.size()));
  }
  return values[0];
}

Result<double> constantReal(const OperatorContext& c, uint32_t operand, std::string_view what) {
  const Operand& o = c.operand(operand);
  NNHAL_ASSIGN_OR_RETURN(const std::span<const uint8_t> bytes, constantOf(c, operand, what));
  const size_t element = sizeOfElement(o.type);
  if (element == 0 || bytes.size() != element) {
    return c.error("the " + std::string(what) + " tensor must hold one value");
  }
  switch (o.type) {
    case OperandType::TENSOR_FLOAT32: {
      float value = 0;
      std::memcpy(&value, bytes.data(), sizeof(value));
      return value;
    }
    case OperandType::TENSOR_FLOAT16: {
      uint16_t bits = 0;
      std::memcpy(&bits, bytes.data(), sizeof(bits));
      return halfBitsToFloat(bits);
    }
    case OperandType::TENSOR_INT32: {
      int32_t value = 0;
      std::memcpy(&value, bytes.data(), sizeof(value));
      return value;
    }
    case OperandType::TENSOR_QUANT8_ASYMM:
      return o.scale * (static_cast<double>(bytes[0]) - o.zeroPoint);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return o.scale * (static_cast<double>(static_cast<int8_t>(bytes[0])) - o.zeroPoint);
    default:
      break;
  }
  return c.error("the " + std::string(what) + " tensor has type " + std::string(toString(o.type)) +
                 ", which gives no scalar parameter");
}

Result<uint32_t> biasOperand(OperatorContext& c, uint32_t input, uint32_t filter, size_t biasInput,
                             size_t channelDim) {
  uint32_t bias = 0;
  if (const auto given = c.optionalInput(biasInput)) {
    bias = *given;
  } else {
    const Operand& f = c.operand(filter);
    if (f.dimensions.size() <= channelDim || f.dimensions[channelDim] == 0) {
      return c.error("the bias is omitted and the filter shape does not give the channel count");
    }
    const uint32_t channels = f.dimensions[channelDim];
    const OperandType inType = c.operand(input).type;
    const OperandType type = isQuant8(inType) ? OperandType::TENSOR_INT32 : inType;
    const size_t elementBytes = type == OperandType::TENSOR_FLOAT16 ? 2 : 4;
    bias = c.builder().addOperand(type, {channels});
    c.builder().setConstantOwned(bias, std::vector<uint8_t>(channels * elementBytes, 0));
  }
  const Operand& in = c.operand(input);
  if (!isQuant8(in.type)) return bias;
  Operand& b = c.builder().operand(bias);
  if (b.type != OperandType::TENSOR_INT32) {
    return c.error(std::string("the bias of a quantized operator must be INT32, not ") +
                   std::string(toString(b.type)));
  }
  const Operand& f = c.operand(filter);
  b.scale = f.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL ? 0.0f : in.scale * f.scale;
  b.zeroPoint = 0;
  return bias;
}

Result<int32_t> recurrentActivation(const OperatorContext& c,
                                    ::tflite::ActivationFunctionType activation) {
  switch (activation) {
    case ::tflite::ActivationFunctionType_NONE:
    case ::tflite::ActivationFunctionType_RELU:
    case ::tflite::ActivationFunctionType_RELU_N1_TO_1:
    case ::tflite::ActivationFunctionType_RELU6:
    case ::tflite::ActivationFunctionType_TANH:
      return static_cast<int32_t>(activation);
    case ::tflite::ActivationFunctionType_SIGN_BIT:
      return c.error("activation SIGN_BIT has no NNAPI equivalent");
  }
  return c.error("unknown activation code " + std::to_string(static_cast<int>(activation)));
}

Result<std::vector<uint32_t>> inputsOrOmitted(OperatorContext& c, size_t first, size_t count,
                                              OperandType omittedType) {
  std::vector<uint32_t> operands;
  operands.reserve(count);
  for (size_t i = first; i < first + count; ++i) {
    if (const auto operand = c.optionalInput(i)) {
      operands.push_back(*operand);
    } else {
      operands.push_back(c.builder().addOmitted(omittedType));
    }
  }
  return operands;
}

Result<int32_t> normalizeAxis(const OperatorContext& c, int32_t axis, size_t rank,
                              std::string_view field) {
  const auto n = static_cast<int64_t>(rank);
  if (axis < -n || axis >= n) {
    return c.error(std::string(field) + " " + std::to_string(axis) + " is outside [" +
                   std::to_string(-n) + ", " + std::to_string(n) + ") for rank " +
                   std::to_string(rank));
  }
  return static_cast<int32_t>(axis < 0 ? axis + n : axis);
}

}  // namespace nnhal::hal::tfl
