// compliantWith / convertTo (nnhal/version_compliance.h): which HAL version expresses a
// Model or Request. The version facts come from hardware/interfaces/neuralnetworks/1.x/
// types.hal; the way they are applied (operands by type and lifetime, then each main
// operation by its signature at that version, then model-wide features) follows Android
// NN's compliantWith in nn/common/Utils.cpp.
#include "nnhal/version_compliance.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>

#include "hal/operand_utils.h"

namespace nnhal {
namespace {

constexpr int32_t kExtensionTypeBits = 16;

bool isExtensionCode(int32_t code) { return code >= (1 << kExtensionTypeBits); }

/// A signature that an operation older than `version` gained in `version`: the operation
/// with input 0 of `primaryType` (when `primaryType` is set) or with more than `maxInputs`
/// inputs (when maxInputs >= 0), or with input `scaleInput` of a float scalar type.
struct SignatureChange {
  OperationType operation;
  HalVersion version;
  const char* what;
  std::optional<OperandType> primaryType = std::nullopt;
  int32_t maxInputs = -1;
  int32_t floatScalarInput = -1;
};

// types.hal 1.2 and 1.3: new signatures of operations that older versions define. Layout flags
// (1.2) are BOOL operands and refused by their type, so they need no entry here.
const std::array<SignatureChange, 16> kSignatureChanges{{
    {OperationType::SOFTMAX, HalVersion::V1_2, "the axis input", std::nullopt, 2},
    {OperationType::L2_NORMALIZATION, HalVersion::V1_2, "the axis input", std::nullopt, 1},
    {OperationType::LOCAL_RESPONSE_NORMALIZATION, HalVersion::V1_2, "the axis input", std::nullopt,
     5},
    {OperationType::LSTM, HalVersion::V1_2, "layer normalization (27 inputs)", std::nullopt, 23},
    {OperationType::RESIZE_BILINEAR, HalVersion::V1_2, "output size given by scales", std::nullopt,
     -1, 1},
    {OperationType::TANH, HalVersion::V1_2, "TENSOR_QUANT8_ASYMM input",
     OperandType::TENSOR_QUANT8_ASYMM},
    {OperationType::L2_NORMALIZATION, HalVersion::V1_2, "TENSOR_QUANT8_ASYMM input",
     OperandType::TENSOR_QUANT8_ASYMM},
    {OperationType::RESIZE_BILINEAR, HalVersion::V1_2, "TENSOR_QUANT8_ASYMM input",
     OperandType::TENSOR_QUANT8_ASYMM},
    {OperationType::SUB, HalVersion::V1_2, "TENSOR_QUANT8_ASYMM input",
     OperandType::TENSOR_QUANT8_ASYMM},
    {OperationType::ADD, HalVersion::V1_3, "TENSOR_INT32 input", OperandType::TENSOR_INT32},
    {OperationType::MUL, HalVersion::V1_3, "TENSOR_INT32 input", OperandType::TENSOR_INT32},
    {OperationType::SUB, HalVersion::V1_3, "TENSOR_INT32 input", OperandType::TENSOR_INT32},
    {OperationType::DIV, HalVersion::V1_3, "TENSOR_INT32 input", OperandType::TENSOR_INT32},
    {OperationType::ABS, HalVersion::V1_3, "TENSOR_INT32 input", OperandType::TENSOR_INT32},
    {OperationType::RESIZE_BILINEAR, HalVersion::V1_3, "align_corners / half_pixel_centers",
     std::nullopt, 4},
    {OperationType::RESIZE_NEAREST_NEIGHBOR, HalVersion::V1_3, "align_corners / half_pixel_centers",
     std::nullopt, 4},
}};

std::string operandTypeText(OperandType type) {
  const auto code = static_cast<int32_t>(type);
  if (isExtensionCode(code)) return fmt::format("extension type {:#x}", code);
  return std::string(toString(type));
}

std::string operationTypeText(OperationType type) {
  const auto code = static_cast<int32_t>(type);
  if (isExtensionCode(code)) return fmt::format("extension operation {:#x}", code);
  return std::string(toString(type));
}

/// What `operand` uses that `version` lacks, or an empty string.
std::string operandLoss(HalVersion version, const Model& model, const Operand& operand) {
  if (introducedIn(operand.type) > version) {
    return fmt::format("type {} (added in {})", operandTypeText(operand.type),
                       toString(introducedIn(operand.type)));
  }
  if (operand.lifetime == OperandLifeTime::SUBGRAPH && version < HalVersion::V1_3) {
    return "lifetime SUBGRAPH (added in 1.3)";
  }
  if (version < HalVersion::V1_2 && hal::isTensorType(operand.type) && operand.dimensions.empty()) {
    return "a tensor of unknown rank (allowed from 1.2)";
  }
  if (version < HalVersion::V1_2 && operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE &&
      operand.location.poolIndex < model.pools.size() &&
      model.pools[operand.location.poolIndex].kind() == MemoryKind::HARDWARE_BUFFER_BLOB) {
    return "a value in hardware_buffer_blob memory (allowed from 1.2)";
  }
  return {};
}

/// What `operation` (of main) needs that `version` lacks, or an empty string.
std::string operationLoss(HalVersion version, const Subgraph& main,
                          const std::vector<bool>& operandCompliant, const Operation& operation) {
  if (introducedIn(operation.type) > version) {
    return fmt::format("operation type added in {}", toString(introducedIn(operation.type)));
  }
  const auto badOperand = [&](const std::vector<uint32_t>& list, const char* kind) -> std::string {
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i] >= main.operands.size()) {
        return fmt::format("{} {} names operand {}, which main lacks", kind, i, list[i]);
      }
      if (!operandCompliant[list[i]]) {
        return fmt::format("{} {} is operand {}, which {} cannot express", kind, i, list[i],
                           toString(version));
      }
    }
    return {};
  };
  if (std::string bad = badOperand(operation.inputs, "input"); !bad.empty()) return bad;
  if (std::string bad = badOperand(operation.outputs, "output"); !bad.empty()) return bad;
  for (const SignatureChange& change : kSignatureChanges) {
    if (change.operation != operation.type || change.version <= version) continue;
    bool uses = false;
    if (change.primaryType && !operation.inputs.empty()) {
      uses = main.operands[operation.inputs[0]].type == *change.primaryType;
    }
    if (change.maxInputs >= 0) {
      uses |= operation.inputs.size() > static_cast<size_t>(change.maxInputs);
    }
    if (change.floatScalarInput >= 0 &&
        operation.inputs.size() > static_cast<size_t>(change.floatScalarInput)) {
      const OperandType type = main.operands[operation.inputs[change.floatScalarInput]].type;
      uses |= type == OperandType::FLOAT32 || type == OperandType::FLOAT16;
    }
    if (uses) return fmt::format("{} (added in {})", change.what, toString(change.version));
  }
  return {};
}

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) {
    if (!text.empty()) text += "; ";
    text += line;
  }
  return text;
}

}  // namespace

HalVersion introducedIn(OperandType type) {
  const auto code = static_cast<int32_t>(type);
  if (type == OperandType::OEM || type == OperandType::TENSOR_OEM_BYTE) return HalVersion::V1_0;
  if (isExtensionCode(code)) return HalVersion::V1_2;
  if (code >= 0 && code <= 5) return HalVersion::V1_0;
  if (code >= 6 && code <= 13) return HalVersion::V1_2;
  return HalVersion::V1_3;
}

HalVersion introducedIn(OperationType type) {
  const auto code = static_cast<int32_t>(type);
  if (type == OperationType::OEM_OPERATION) return HalVersion::V1_0;
  if (isExtensionCode(code)) return HalVersion::V1_2;
  if (code >= 0 && code <= 28) return HalVersion::V1_0;
  if (code >= 29 && code <= 37) return HalVersion::V1_1;
  if (code >= 38 && code <= 94) return HalVersion::V1_2;
  return HalVersion::V1_3;
}

Compliance compliantWith(HalVersion version, const Model& model) {
  Compliance result;
  if (version >= HalVersion::V1_3) return result;
  if (version < HalVersion::V1_1 && model.relaxComputationFloat32toFloat16) {
    result.losses.push_back(
        "relaxComputationFloat32toFloat16 = true (added in 1.1; 1.0 computes float32 at full "
        "precision)");
  }
  if (version < HalVersion::V1_2 && !model.extensionNameToPrefix.empty()) {
    result.losses.push_back(fmt::format("extensionNameToPrefix lists {} extensions (added in 1.2)",
                                        model.extensionNameToPrefix.size()));
  }
  if (!model.referenced.empty()) {
    result.losses.push_back(fmt::format("referenced holds {} subgraphs for IF/WHILE (added in 1.3)",
                                        model.referenced.size()));
  }
  for (size_t i = 0; i < model.pools.size(); ++i) {
    if (version < HalVersion::V1_2 && model.pools[i].kind() == MemoryKind::HARDWARE_BUFFER_BLOB) {
      result.losses.push_back(
          fmt::format("pools[{}]: hardware_buffer_blob memory (added in 1.2)", i));
    }
  }
  const Subgraph& main = model.main;
  std::vector<bool> operandCompliant(main.operands.size(), true);
  for (size_t k = 0; k < main.operands.size(); ++k) {
    const std::string loss = operandLoss(version, model, main.operands[k]);
    if (loss.empty()) continue;
    operandCompliant[k] = false;
    result.losses.push_back(fmt::format("main.operands[{}]: {}", k, loss));
  }
  for (size_t k = 0; k < main.operations.size(); ++k) {
    const Operation& operation = main.operations[k];
    const std::string loss = operationLoss(version, main, operandCompliant, operation);
    if (loss.empty()) continue;
    result.noncompliantOperations.push_back(static_cast<uint32_t>(k));
    result.losses.push_back(
        fmt::format("main operation {} ({}): {}", k, operationTypeText(operation.type), loss));
  }
  return result;
}

Compliance compliantWith(HalVersion version, const Request& request) {
  Compliance result;
  for (size_t i = 0; i < request.pools.size(); ++i) {
    const RequestMemoryPool& pool = request.pools[i];
    if (std::holds_alternative<MemoryDomainToken>(pool)) {
      if (version < HalVersion::V1_3) {
        result.losses.push_back(fmt::format(
            "request.pools[{}]: a memory domain token (driver-managed buffer, added in 1.3)", i));
      }
    } else if (version < HalVersion::V1_2 &&
               std::get<Memory>(pool).kind() == MemoryKind::HARDWARE_BUFFER_BLOB) {
      result.losses.push_back(
          fmt::format("request.pools[{}]: hardware_buffer_blob memory (added in 1.2)", i));
    }
  }
  return result;
}

Result<Model> convertTo(HalVersion version, const Model& model) {
  const Compliance compliance = compliantWith(version, model);
  if (!compliance) {
    return invalidArgument(fmt::format("cannot express the model in NN HAL {}: {}",
                                       toString(version), joined(compliance.losses)));
  }
  return model;
}

Result<Request> convertTo(HalVersion version, const Request& request) {
  const Compliance compliance = compliantWith(version, request);
  if (!compliance) {
    return invalidArgument(fmt::format("cannot express the request in NN HAL {}: {}",
                                       toString(version), joined(compliance.losses)));
  }
  return request;
}

}  // namespace nnhal
