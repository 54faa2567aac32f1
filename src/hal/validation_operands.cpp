// Operand-level ValidateHal rules: types, dimensions, quantization parameters, extraParams,
// lifetimes and data locations.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "hal/internal/validation_detail.h"
#include "hal/operand_utils.h"

namespace nnhal::hal::detail {
namespace {

bool isValidExtensionName(std::string_view name) {
  if (name.find('.') == std::string_view::npos) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
    if (!ok) return false;
  }
  return true;
}

bool isValidLifetime(OperandLifeTime lifetime) {
  const auto code = static_cast<int32_t>(lifetime);
  return code >= static_cast<int32_t>(OperandLifeTime::TEMPORARY_VARIABLE) &&
         code <= static_cast<int32_t>(OperandLifeTime::SUBGRAPH);
}

Result<void> validateType(const Operand& operand, const Model& model, const std::string& field) {
  const auto code = static_cast<uint32_t>(operand.type);
  if (isFundamentalType(operand.type)) return {};
  if (operand.type == OperandType::OEM || operand.type == OperandType::TENSOR_OEM_BYTE) {
    return invalidArgument(fmt::format("{}.type: {} is deprecated and not supported", field,
                                       operandTypeName(operand.type)));
  }
  if (code > kBaseMax) {
    if (isKnownExtension(code, model)) return {};
    return invalidArgument(fmt::format(
        "{}.type: extension type {:#x} has prefix {:#x}, which extensionNameToPrefix does not "
        "list",
        field, code, code >> 16));
  }
  return invalidArgument(
      fmt::format("{}.type: {} is not a valid operand type", field, operandTypeName(operand.type)));
}

Result<void> validateDimensions(const Operand& operand, const std::string& field) {
  if (isScalarType(operand.type) || operand.type == OperandType::SUBGRAPH) {
    if (!operand.dimensions.empty()) {
      return invalidArgument(
          fmt::format("{}.dimensions: scalar type {} must have no dimensions, "
                      "has rank {}",
                      field, operandTypeName(operand.type), operand.dimensions.size()));
    }
    return {};
  }
  if (!isTensorType(operand.type)) return {};  // extension: shape rules unknown here
  const bool constant = operand.lifetime == OperandLifeTime::CONSTANT_COPY ||
                        operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE;
  if (constant && !hasFullySpecifiedShape(operand.type, operand.dimensions)) {
    return invalidArgument(fmt::format(
        "{}.dimensions: a {} operand must have a fully specified shape (known rank, no 0 "
        "dimension)",
        field, toString(operand.lifetime)));
  }
  // The known dimensions alone must leave room for an operand of at most 2^32 - 1 bytes
  // (the HAL's DataLocation limit); sizes are computed in 64 bits so nothing wraps.
  uint64_t bytes = sizeOfElement(operand.type);
  for (uint32_t d : operand.dimensions) {
    bytes *= std::max<uint32_t>(d, 1);
    if (bytes > std::numeric_limits<uint32_t>::max()) {
      return invalidArgument(
          fmt::format("{}.dimensions: the operand size overflows 32 bits", field));
    }
  }
  return {};
}

Result<void> checkScaleZero(const Operand& operand, const std::string& field) {
  if (operand.scale != 0.0f) {
    return invalidArgument(fmt::format("{}.scale: {} must be 0 for {}", field, operand.scale,
                                       operandTypeName(operand.type)));
  }
  if (operand.zeroPoint != 0) {
    return invalidArgument(fmt::format("{}.zeroPoint: {} must be 0 for {}", field,
                                       operand.zeroPoint, operandTypeName(operand.type)));
  }
  return {};
}

Result<void> checkQuantized(const Operand& operand, const std::string& field, int64_t minZeroPoint,
                            int64_t maxZeroPoint) {
  if (!(operand.scale > 0.0f) || !std::isfinite(operand.scale)) {
    return invalidArgument(fmt::format("{}.scale: {} must be positive and finite for {}", field,
                                       operand.scale, operandTypeName(operand.type)));
  }
  if (operand.zeroPoint < minZeroPoint || operand.zeroPoint > maxZeroPoint) {
    return invalidArgument(fmt::format("{}.zeroPoint: {} is outside [{}, {}] for {}", field,
                                       operand.zeroPoint, minZeroPoint, maxZeroPoint,
                                       operandTypeName(operand.type)));
  }
  return {};
}

Result<void> validateQuantization(const Operand& operand, const std::string& field) {
  switch (operand.type) {
    case OperandType::FLOAT32:
    case OperandType::INT32:
    case OperandType::UINT32:
    case OperandType::BOOL:
    case OperandType::FLOAT16:
    case OperandType::SUBGRAPH:
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_BOOL8:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:  // scales live in extraParams
      return checkScaleZero(operand, field);
    case OperandType::TENSOR_INT32:
      // A bias: scale = input scale * filter scale (or 0 when per-channel / unquantized).
      if (!(operand.scale >= 0.0f) || !std::isfinite(operand.scale)) {
        return invalidArgument(
            fmt::format("{}.scale: {} must be >= 0 and finite for "
                        "TENSOR_INT32",
                        field, operand.scale));
      }
      if (operand.zeroPoint != 0) {
        return invalidArgument(
            fmt::format("{}.zeroPoint: {} must be 0 for TENSOR_INT32", field, operand.zeroPoint));
      }
      return {};
    case OperandType::TENSOR_QUANT8_ASYMM:
      return checkQuantized(operand, field, 0, 255);
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return checkQuantized(operand, field, -128, 127);
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
      return checkQuantized(operand, field, 0, 0);
    case OperandType::TENSOR_QUANT16_ASYMM:
      return checkQuantized(operand, field, 0, 65535);
    default:
      return {};  // extension types define their own parameters
  }
}

Result<void> validateExtraParams(const Operand& operand, const std::string& field) {
  if (operand.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    const auto* params = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams);
    if (params == nullptr) {
      return invalidArgument(fmt::format(
          "{}.extraParams: TENSOR_QUANT8_SYMM_PER_CHANNEL needs channelQuant parameters", field));
    }
    const size_t rank = operand.dimensions.size();
    if (params->channelDim >= rank) {
      return invalidArgument(
          fmt::format("{}.extraParams.channelQuant.channelDim: {} is not below "
                      "the rank {}",
                      field, params->channelDim, rank));
    }
    const uint32_t channels = operand.dimensions[params->channelDim];
    if (channels != 0 && params->scales.size() != channels) {
      return invalidArgument(
          fmt::format("{}.extraParams.channelQuant.scales: {} scales for {} "
                      "channels (dimension {})",
                      field, params->scales.size(), channels, params->channelDim));
    }
    for (size_t i = 0; i < params->scales.size(); ++i) {
      const float scale = params->scales[i];
      if (!(scale > 0.0f) || !std::isfinite(scale)) {
        return invalidArgument(
            fmt::format("{}.extraParams.channelQuant.scales[{}]: {} must be "
                        "positive and finite",
                        field, i, scale));
      }
    }
    return {};
  }
  if (std::holds_alternative<std::monostate>(operand.extraParams)) return {};
  if (static_cast<uint32_t>(operand.type) > kBaseMax &&
      std::holds_alternative<std::vector<uint8_t>>(operand.extraParams)) {
    return {};  // extension parameters are opaque bytes
  }
  return invalidArgument(fmt::format("{}.extraParams: {} takes no extra parameters", field,
                                     operandTypeName(operand.type)));
}

// Checks that [offset, offset + length) lies inside `size` bytes, without overflow.
bool rangeInside(const DataLocation& location, uint64_t size) {
  return uint64_t{location.offset} + uint64_t{location.length} <= size;
}

Result<void> checkConstantLength(const Operand& operand, const std::string& field) {
  if (!isFundamentalType(operand.type)) return {};  // extension element sizes are unknown
  const auto expected = byteSize(operand.type, operand.dimensions);
  if (!expected) {
    return invalidArgument(fmt::format("{}.dimensions: the operand size overflows 32 bits", field));
  }
  if (operand.location.length != *expected) {
    return invalidArgument(
        fmt::format("{}.location: length {} does not match the {} bytes of {} "
                    "with these dimensions",
                    field, operand.location.length, *expected, operandTypeName(operand.type)));
  }
  return {};
}

Result<void> validateLocation(const Operand& operand, const Model& model,
                              const std::string& field) {
  const DataLocation& location = operand.location;
  switch (operand.lifetime) {
    case OperandLifeTime::TEMPORARY_VARIABLE:
    case OperandLifeTime::SUBGRAPH_INPUT:
    case OperandLifeTime::SUBGRAPH_OUTPUT:
    case OperandLifeTime::NO_VALUE:
      if (location != DataLocation{}) {
        return invalidArgument(fmt::format(
            "{}.location: must be all zero for a {} operand, is {{poolIndex {}, offset {}, "
            "length {}}}",
            field, toString(operand.lifetime), location.poolIndex, location.offset,
            location.length));
      }
      return {};
    case OperandLifeTime::CONSTANT_COPY:
      if (location.poolIndex != 0) {
        return invalidArgument(fmt::format("{}.location: poolIndex {} must be 0 for CONSTANT_COPY",
                                           field, location.poolIndex));
      }
      if (!rangeInside(location, model.operandValues.size())) {
        return invalidArgument(
            fmt::format("{}.location: CONSTANT_COPY range [{}, {}) is outside "
                        "operandValues ({} bytes)",
                        field, location.offset, uint64_t{location.offset} + location.length,
                        model.operandValues.size()));
      }
      return checkConstantLength(operand, field);
    case OperandLifeTime::CONSTANT_REFERENCE: {
      if (location.poolIndex >= model.pools.size()) {
        return invalidArgument(fmt::format("{}.location: poolIndex {} is out of range ({} pools)",
                                           field, location.poolIndex, model.pools.size()));
      }
      const Memory& pool = model.pools[location.poolIndex];
      const uint64_t size = pool.valid() ? pool.size() : 0;
      if (!rangeInside(location, size)) {
        return invalidArgument(
            fmt::format("{}.location: CONSTANT_REFERENCE range [{}, {}) is "
                        "outside pools[{}] ({} bytes)",
                        field, location.offset, uint64_t{location.offset} + location.length,
                        location.poolIndex, size));
      }
      return checkConstantLength(operand, field);
    }
    case OperandLifeTime::SUBGRAPH:
      // HAL 1.3: location.offset is the index into Model::referenced.
      if (location.poolIndex != 0 || location.length != 0) {
        return invalidArgument(
            fmt::format("{}.location: poolIndex and length must be 0 for a "
                        "SUBGRAPH operand, are {} and {}",
                        field, location.poolIndex, location.length));
      }
      if (location.offset >= model.referenced.size()) {
        return invalidArgument(fmt::format(
            "{}.location: offset {} names no referenced subgraph ({} referenced subgraphs)", field,
            location.offset, model.referenced.size()));
      }
      return {};
  }
  return {};
}

}  // namespace

bool isKnownExtension(uint32_t code, const Model& model) {
  if (code <= kBaseMax) return false;
  const auto prefix = static_cast<uint16_t>(code >> 16);
  for (const auto& entry : model.extensionNameToPrefix) {
    if (entry.prefix == prefix) return true;
  }
  return false;
}

Result<void> validateExtensionNames(const Model& model) {
  std::set<std::string_view> names;
  std::set<uint16_t> prefixes;
  for (size_t i = 0; i < model.extensionNameToPrefix.size(); ++i) {
    const auto& entry = model.extensionNameToPrefix[i];
    if (!isValidExtensionName(entry.name)) {
      return invalidArgument(
          fmt::format("extensionNameToPrefix[{}].name: \"{}\" is not a valid "
                      "extension name (lowercase [a-z0-9_.] with a '.')",
                      i, entry.name));
    }
    // (0 << 16) | type is a base type: prefix 0 can name no extension type.
    if (entry.prefix == 0) {
      return invalidArgument(
          fmt::format("extensionNameToPrefix[{}].prefix: 0 is reserved for the base types "
                      "(\"{}\" needs a prefix from 1 to 0xffff)",
                      i, entry.name));
    }
    if (!names.insert(entry.name).second) {
      return invalidArgument(
          fmt::format("extensionNameToPrefix[{}].name: \"{}\" is listed twice", i, entry.name));
    }
    if (!prefixes.insert(entry.prefix).second) {
      return invalidArgument(
          fmt::format("extensionNameToPrefix[{}].prefix: {:#x} is listed twice", i, entry.prefix));
    }
  }
  return {};
}

namespace {

/// Checks one operand; `field` names it in messages.
Result<void> validateOperand(const Operand& operand, const Model& model, const std::string& field) {
  NNHAL_TRY(validateType(operand, model, field));
  if (!isValidLifetime(operand.lifetime)) {
    return invalidArgument(fmt::format("{}.lifetime: {} is not a valid lifetime", field,
                                       static_cast<int32_t>(operand.lifetime)));
  }
  const bool subgraphType = operand.type == OperandType::SUBGRAPH;
  const bool subgraphLifetime = operand.lifetime == OperandLifeTime::SUBGRAPH;
  if (subgraphType != subgraphLifetime) {
    return invalidArgument(
        fmt::format("{}: type {} with lifetime {}; type SUBGRAPH goes with "
                    "lifetime SUBGRAPH and only with it",
                    field, operandTypeName(operand.type), toString(operand.lifetime)));
  }
  NNHAL_TRY(validateDimensions(operand, field));
  NNHAL_TRY(validateQuantization(operand, field));
  NNHAL_TRY(validateExtraParams(operand, field));
  NNHAL_TRY(validateLocation(operand, model, field));
  return {};
}

}  // namespace

Result<void> validateOperands(const Model& model, size_t subgraph) {
  const Subgraph& graph = subgraphAt(model, subgraph);
  // Operand names are formatted only for a failing operand (checked again with its name):
  // validation runs on every preparation and the checks are deterministic.
  const std::string unnamed = "operand";
  for (size_t i = 0; i < graph.operands.size(); ++i) {
    if (validateOperand(graph.operands[i], model, unnamed)) continue;
    const std::string field = fmt::format("{}.operands[{}]", subgraphName(subgraph), i);
    return validateOperand(graph.operands[i], model, field);
  }
  return {};
}

}  // namespace nnhal::hal::detail
