#include "tools/cpu_reference/nnapi_params.h"

#include <cstring>
#include <string>
#include <vector>

namespace nnhal::cpu_reference {
namespace {

constexpr int32_t kPaddingSame = 1;
constexpr int32_t kPaddingValid = 2;

std::string operandName(uint32_t operand) { return "operand " + std::to_string(operand); }

template <typename T>
Result<T> scalar(const Model& model, uint32_t operand, OperandType type) {
  if (operand >= model.main.operands.size()) {
    return invalidArgument(operandName(operand) + " does not exist");
  }
  if (model.main.operands[operand].type != type) {
    return invalidArgument(operandName(operand) + " is " +
                           std::string(toString(model.main.operands[operand].type)) + ", not " +
                           std::string(toString(type)));
  }
  NNHAL_ASSIGN_OR_RETURN(const auto bytes, constantBytes(model, operand));
  if (bytes.size() != sizeof(T)) {
    return invalidArgument(operandName(operand) + " holds " + std::to_string(bytes.size()) +
                           " bytes");
  }
  T value{};
  std::memcpy(&value, bytes.data(), sizeof(T));
  return value;
}

Result<uint32_t> positive(const Model& model, uint32_t operand) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t value, int32Scalar(model, operand));
  if (value <= 0) return invalidArgument(operandName(operand) + " must be positive");
  return static_cast<uint32_t>(value);
}

Result<uint32_t> nonNegative(const Model& model, uint32_t operand) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t value, int32Scalar(model, operand));
  if (value < 0) return invalidArgument(operandName(operand) + " must not be negative");
  return static_cast<uint32_t>(value);
}

/// Refuses the NCHW layout when the optional layout operand is present.
Result<void> expectNhwc(const Model& model, const Operation& operation, size_t index) {
  if (operation.inputs.size() <= index) return {};
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, boolScalar(model, operation.inputs[index]));
  if (nchw) return invalidArgument("the NCHW layout is not supported");
  return {};
}

Result<void> expectRank4(const Model& model, uint32_t operand) {
  if (model.main.operands[operand].dimensions.size() != 4) {
    return invalidArgument(operandName(operand) + " is not 4-D");
  }
  return {};
}

/// Reads pads [first, first + 4) in the order left, right, top, bottom.
Result<void> readExplicitPads(const Model& model, const Operation& operation, size_t first,
                              Window2d& window) {
  NNHAL_ASSIGN_OR_RETURN(window.padLeft, nonNegative(model, operation.inputs[first]));
  NNHAL_ASSIGN_OR_RETURN(window.padRight, nonNegative(model, operation.inputs[first + 1]));
  NNHAL_ASSIGN_OR_RETURN(window.padTop, nonNegative(model, operation.inputs[first + 2]));
  NNHAL_ASSIGN_OR_RETURN(window.padBottom, nonNegative(model, operation.inputs[first + 3]));
  return {};
}

/// Fills the pads of `window` (whose filter, strides and dilations are set) from an
/// implicit padding code and the NHWC input dimensions.
Result<void> applyImplicitPadding(int32_t code, const std::vector<uint32_t>& input,
                                  Window2d& window) {
  if (code != kPaddingSame && code != kPaddingValid) {
    return invalidArgument("implicit padding code " + std::to_string(code) + " is not defined");
  }
  const Pads rows = explicitPadding(code, input[1], window.strideHeight, window.filterHeight,
                                    window.dilationHeight);
  const Pads columns =
      explicitPadding(code, input[2], window.strideWidth, window.filterWidth, window.dilationWidth);
  window.padTop = rows.front;
  window.padBottom = rows.back;
  window.padLeft = columns.front;
  window.padRight = columns.back;
  return {};
}

}  // namespace

Result<std::span<const uint8_t>> constantBytes(const Model& model, uint32_t operand) {
  if (operand >= model.main.operands.size()) {
    return invalidArgument(operandName(operand) + " does not exist");
  }
  const Operand& o = model.main.operands[operand];
  const uint64_t end = uint64_t{o.location.offset} + o.location.length;
  if (o.lifetime == OperandLifeTime::CONSTANT_COPY) {
    if (end > model.operandValues.size()) {
      return invalidArgument(operandName(operand) + " lies outside operandValues");
    }
    return std::span<const uint8_t>(model.operandValues)
        .subspan(o.location.offset, o.location.length);
  }
  if (o.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
    if (o.location.poolIndex >= model.pools.size() ||
        end > model.pools[o.location.poolIndex].size()) {
      return invalidArgument(operandName(operand) + " lies outside its pool");
    }
    return std::span<const uint8_t>(model.pools[o.location.poolIndex].bytes())
        .subspan(o.location.offset, o.location.length);
  }
  return invalidArgument(operandName(operand) + " is not a constant");
}

Result<int32_t> int32Scalar(const Model& model, uint32_t operand) {
  return scalar<int32_t>(model, operand, OperandType::INT32);
}

Result<float> float32Scalar(const Model& model, uint32_t operand) {
  return scalar<float>(model, operand, OperandType::FLOAT32);
}

Result<bool> boolScalar(const Model& model, uint32_t operand) {
  NNHAL_ASSIGN_OR_RETURN(const uint8_t value, scalar<uint8_t>(model, operand, OperandType::BOOL));
  return value != 0;
}

Result<FusedActivationFunc> fusedActivation(const Model& model, uint32_t operand) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t code, int32Scalar(model, operand));
  if (code < 0 || code > static_cast<int32_t>(FusedActivationFunc::RELU6)) {
    return invalidArgument("fused activation " + std::to_string(code) + " is not defined");
  }
  return static_cast<FusedActivationFunc>(code);
}

Pads explicitPadding(int32_t code, uint32_t inSize, uint32_t stride, uint32_t filter,
                     uint32_t dilation) {
  if (code != kPaddingSame) return {};
  const int64_t effectiveFilter = int64_t{filter - 1} * dilation + 1;
  const int64_t outSize = (int64_t{inSize} + stride - 1) / stride;
  const int64_t total = (outSize - 1) * stride + effectiveFilter - inSize;
  if (total <= 0) return {};
  const auto front = static_cast<uint32_t>(total / 2);
  return {front, static_cast<uint32_t>(total) - front};
}

Result<Window2d> readConvolution(const Model& model, const Operation& operation) {
  const bool depthwise = operation.type == OperationType::DEPTHWISE_CONV_2D;
  if (!depthwise && operation.type != OperationType::CONV_2D) {
    return invalidArgument(std::string(toString(operation.type)) + " is not a convolution");
  }
  const auto& in = operation.inputs;
  // The explicit form has 4 pads where the implicit one has 1 code; the implicit form's
  // optional tail starts with the BOOL layout where the explicit form has an INT32.
  const size_t explicitCount = depthwise ? 11 : 10;
  const bool isExplicit = in.size() >= explicitCount &&
                          model.main.operands[in[explicitCount - 3]].type == OperandType::INT32;
  const size_t minimum = isExplicit ? explicitCount : explicitCount - 3;
  if (in.size() < minimum) {
    return invalidArgument(std::string(toString(operation.type)) + " has " +
                           std::to_string(in.size()) + " inputs");
  }
  NNHAL_TRY(expectRank4(model, in[0]));
  NNHAL_TRY(expectRank4(model, in[1]));
  Window2d window;
  const auto& filter = model.main.operands[in[1]].dimensions;
  window.filterHeight = filter[1];
  window.filterWidth = filter[2];
  size_t next = 3;
  int32_t paddingCode = 0;
  if (isExplicit) {
    NNHAL_TRY(readExplicitPads(model, operation, next, window));
    next += 4;
  } else {
    NNHAL_ASSIGN_OR_RETURN(paddingCode, int32Scalar(model, in[next]));
    next += 1;
  }
  NNHAL_ASSIGN_OR_RETURN(window.strideWidth, positive(model, in[next]));
  NNHAL_ASSIGN_OR_RETURN(window.strideHeight, positive(model, in[next + 1]));
  next += 2;
  if (depthwise) {
    NNHAL_ASSIGN_OR_RETURN(window.depthMultiplier, positive(model, in[next]));
    next += 1;
  }
  NNHAL_ASSIGN_OR_RETURN(window.activation, fusedActivation(model, in[next]));
  next += 1;
  NNHAL_TRY(expectNhwc(model, operation, next));
  if (in.size() >= next + 3) {
    NNHAL_ASSIGN_OR_RETURN(window.dilationWidth, positive(model, in[next + 1]));
    NNHAL_ASSIGN_OR_RETURN(window.dilationHeight, positive(model, in[next + 2]));
  }
  if (!isExplicit) {
    NNHAL_TRY(applyImplicitPadding(paddingCode, model.main.operands[in[0]].dimensions, window));
  }
  return window;
}

Result<Window2d> readPooling(const Model& model, const Operation& operation) {
  const auto& in = operation.inputs;
  const bool isExplicit = in.size() >= 10;
  if (in.size() < 7) {
    return invalidArgument(std::string(toString(operation.type)) + " has " +
                           std::to_string(in.size()) + " inputs");
  }
  NNHAL_TRY(expectRank4(model, in[0]));
  Window2d window;
  size_t next = 1;
  int32_t paddingCode = 0;
  if (isExplicit) {
    NNHAL_TRY(readExplicitPads(model, operation, next, window));
    next += 4;
  } else {
    NNHAL_ASSIGN_OR_RETURN(paddingCode, int32Scalar(model, in[next]));
    next += 1;
  }
  NNHAL_ASSIGN_OR_RETURN(window.strideWidth, positive(model, in[next]));
  NNHAL_ASSIGN_OR_RETURN(window.strideHeight, positive(model, in[next + 1]));
  NNHAL_ASSIGN_OR_RETURN(window.filterWidth, positive(model, in[next + 2]));
  NNHAL_ASSIGN_OR_RETURN(window.filterHeight, positive(model, in[next + 3]));
  NNHAL_ASSIGN_OR_RETURN(window.activation, fusedActivation(model, in[next + 4]));
  NNHAL_TRY(expectNhwc(model, operation, next + 5));
  if (!isExplicit) {
    NNHAL_TRY(applyImplicitPadding(paddingCode, model.main.operands[in[0]].dimensions, window));
  }
  return window;
}

uint32_t windowOutputSize(uint32_t inSize, uint32_t padFront, uint32_t padBack, uint32_t filter,
                          uint32_t stride, uint32_t dilation) {
  const int64_t effectiveFilter = int64_t{filter - 1} * dilation + 1;
  const int64_t padded = int64_t{inSize} + padFront + padBack;
  if (padded < effectiveFilter) return 0;
  return static_cast<uint32_t>((padded - effectiveFilter) / stride + 1);
}

size_t elementCount(const Operand& operand) {
  size_t count = 1;
  for (const uint32_t d : operand.dimensions) count *= d;
  return count;
}

bool isConstant(const Operand& operand) {
  return operand.lifetime == OperandLifeTime::CONSTANT_COPY ||
         operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
}

bool isAlias(OperationType type) {
  return type == OperationType::RESHAPE || type == OperationType::SQUEEZE;
}

Result<void> checkAlias(const Model& model, const Operation& operation) {
  if (operation.inputs.empty() || operation.outputs.size() != 1) {
    return invalidArgument("expected an input and one output");
  }
  const Operand& input = model.main.operands[operation.inputs[0]];
  const Operand& output = model.main.operands[operation.outputs[0]];
  if (input.type != output.type || input.scale != output.scale ||
      input.zeroPoint != output.zeroPoint || elementCount(input) != elementCount(output)) {
    return invalidArgument("the output is not a reinterpretation of the input");
  }
  return {};
}

}  // namespace nnhal::cpu_reference
