// validateModel / validateRequest: the ValidateHal rules of NN HAL 1.3 (see validation.h).
#include "hal/validation.h"

#include <fmt/format.h>

#include "common/vlog.h"
#include "hal/internal/validation_detail.h"
#include "hal/operand_utils.h"

namespace nnhal::hal {
namespace detail {

std::string subgraphName(size_t index) {
  return index == 0 ? std::string("main") : fmt::format("referenced[{}]", index - 1);
}

const Subgraph& subgraphAt(const Model& model, size_t index) {
  return index == 0 ? model.main : model.referenced[index - 1];
}

std::string operandTypeName(OperandType type) {
  if (isFundamentalType(type) || type == OperandType::OEM || type == OperandType::TENSOR_OEM_BYTE) {
    return std::string(toString(type));
  }
  return fmt::format("OperandType({})", static_cast<uint32_t>(type));
}

std::string operationTypeName(OperationType type) {
  const auto code = static_cast<int32_t>(type);
  if ((code >= 0 && code <= kOperationTypeFundamentalMax) || type == OperationType::OEM_OPERATION) {
    return std::string(toString(type));
  }
  return fmt::format("OperationType({})", static_cast<uint32_t>(type));
}

}  // namespace detail

namespace {

Result<void> validateArgument(const RequestArgument& argument, const Operand& operand,
                              const std::vector<RequestMemoryPool>& pools, bool input,
                              const std::string& field) {
  const DataLocation& location = argument.location;
  if (argument.hasNoValue) {
    if (location != DataLocation{}) {
      return invalidArgument(field + ".location: must be all zero when hasNoValue is set");
    }
    if (!argument.dimensions.empty()) {
      return invalidArgument(field + ".dimensions: must be empty when hasNoValue is set");
    }
    return {};
  }
  if (location.poolIndex >= pools.size()) {
    return invalidArgument(fmt::format("{}.location: poolIndex {} is out of range ({} pools)",
                                       field, location.poolIndex, pools.size()));
  }
  const bool driverManaged = std::holds_alternative<MemoryDomainToken>(pools[location.poolIndex]);
  if (const auto* memory = std::get_if<Memory>(&pools[location.poolIndex])) {
    const uint64_t size = memory->valid() ? memory->size() : 0;
    if (uint64_t{location.offset} + location.length > size) {
      return invalidArgument(
          fmt::format("{}.location: range [{}, {}) is outside pools[{}] ({} "
                      "bytes)",
                      field, location.offset, uint64_t{location.offset} + location.length,
                      location.poolIndex, size));
    }
    if (!input && memory->valid() && !memory->writable()) {
      return invalidArgument(
          fmt::format("{}.location: pools[{}] is read-only", field, location.poolIndex));
    }
  }

  // Dimensions: empty (use the model's) or agreeing with every known model dimension.
  const std::vector<uint32_t>& dims = argument.dimensions;
  if (!dims.empty()) {
    if (isScalarType(operand.type)) {
      return invalidArgument(
          fmt::format("{}.dimensions: the operand is a scalar ({}) and takes "
                      "no dimensions",
                      field, detail::operandTypeName(operand.type)));
    }
    if (!operand.dimensions.empty()) {
      if (dims.size() != operand.dimensions.size()) {
        return invalidArgument(
            fmt::format("{}.dimensions: rank {} differs from the model "
                        "operand's rank {}",
                        field, dims.size(), operand.dimensions.size()));
      }
      for (size_t d = 0; d < dims.size(); ++d) {
        if (operand.dimensions[d] != 0 && dims[d] != operand.dimensions[d]) {
          return invalidArgument(
              fmt::format("{}.dimensions[{}]: {} differs from the model "
                          "operand's {}",
                          field, d, dims[d], operand.dimensions[d]));
        }
      }
    }
  }

  // Inputs are read in full: the shape must be known and the buffer exactly its size.
  // (Driver-managed buffers are sized by the driver; extension element sizes are unknown.)
  if (input && isFundamentalType(operand.type) && !driverManaged) {
    const std::vector<uint32_t>& shape = dims.empty() ? operand.dimensions : dims;
    if (!hasFullySpecifiedShape(operand.type, shape)) {
      return invalidArgument(
          fmt::format("{}.dimensions: the input shape is not fully specified "
                      "by the model or the request",
                      field));
    }
    const auto expected = byteSize(operand.type, shape);
    if (!expected) {
      return invalidArgument(field + ".dimensions: the input size overflows 32 bits");
    }
    if (location.length != *expected) {
      return invalidArgument(
          fmt::format("{}.location: length {} does not match the {} bytes of "
                      "the input",
                      field, location.length, *expected));
    }
  }
  return {};
}

Result<void> validateArguments(const std::vector<RequestArgument>& arguments,
                               const std::vector<uint32_t>& indexes, const Subgraph& main,
                               const std::vector<RequestMemoryPool>& pools, bool input) {
  const char* kind = input ? "inputs" : "outputs";
  if (arguments.size() != indexes.size()) {
    return invalidArgument(fmt::format("request.{}: {} arguments, but the model has {} {}", kind,
                                       arguments.size(), indexes.size(), kind));
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (indexes[i] >= main.operands.size()) {
      return invalidArgument(fmt::format("main.{}Indexes[{}]: operand {} is out of range",
                                         input ? "input" : "output", i, indexes[i]));
    }
    NNHAL_TRY(validateArgument(arguments[i], main.operands[indexes[i]], pools, input,
                               fmt::format("request.{}[{}]", kind, i)));
  }
  return {};
}

Result<void> validateModelChecks(const Model& model) {
  NNHAL_TRY(detail::validateExtensionNames(model));
  for (size_t i = 0; i < model.pools.size(); ++i) {
    if (!model.pools[i].valid() || model.pools[i].size() == 0) {
      return invalidArgument(fmt::format("pools[{}]: not a valid memory", i));
    }
  }
  const size_t subgraphs = model.referenced.size() + 1;
  // Operands and input/output lists of every subgraph first: the operation checks of one
  // subgraph look into the subgraphs its IF/WHILE operations call.
  for (size_t s = 0; s < subgraphs; ++s) {
    NNHAL_TRY(detail::validateOperands(model, s));
    NNHAL_TRY(detail::validateInputsOutputs(model, s));
  }
  for (size_t s = 0; s < subgraphs; ++s) {
    NNHAL_TRY(detail::validateOperations(model, s));
  }
  return detail::validateSubgraphReferences(model);
}

Result<void> validateRequestChecks(const Request& request, const Model& model) {
  for (size_t i = 0; i < request.pools.size(); ++i) {
    const RequestMemoryPool& pool = request.pools[i];
    if (const auto* memory = std::get_if<Memory>(&pool)) {
      if (!memory->valid() || memory->size() == 0) {
        return invalidArgument(fmt::format("request.pools[{}]: not a valid memory", i));
      }
    } else if (std::get<MemoryDomainToken>(pool).value == 0) {
      return invalidArgument(
          fmt::format("request.pools[{}]: token 0 is not a driver-managed buffer", i));
    }
  }
  NNHAL_TRY(validateArguments(request.inputs, model.main.inputIndexes, model.main, request.pools,
                              /*input=*/true));
  NNHAL_TRY(validateArguments(request.outputs, model.main.outputIndexes, model.main, request.pools,
                              /*input=*/false));
  return {};
}

}  // namespace

Result<void> validateModel(const Model& model) {
  Result<void> valid = validateModelChecks(model);
  if (valid) {
    NNHAL_VLOG(Model, "model valid: {} operands, {} operations in main, {} referenced subgraphs",
               model.main.operands.size(), model.main.operations.size(), model.referenced.size());
  } else {
    NNHAL_VLOG(Model, "model rejected: {}", valid.error().message);
  }
  return valid;
}

Result<void> validateRequest(const Request& request, const Model& model) {
  Result<void> valid = validateRequestChecks(request, model);
  if (!valid) NNHAL_VLOG(Model, "request rejected: {}", valid.error().message);
  return valid;
}

}  // namespace nnhal::hal
