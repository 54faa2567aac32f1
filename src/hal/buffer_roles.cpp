#include "hal/buffer_roles.h"

#include <fmt/format.h>

#include <cmath>
#include <string>

#include "hal/internal/validation_detail.h"
#include "hal/operand_utils.h"

namespace nnhal::hal {

std::optional<std::vector<uint32_t>> combineDimensions(const std::vector<uint32_t>& a,
                                                       const std::vector<uint32_t>& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  if (a.size() != b.size()) return std::nullopt;
  std::vector<uint32_t> combined(a.size());
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] != 0 && b[d] != 0 && a[d] != b[d]) return std::nullopt;
    combined[d] = a[d] != 0 ? a[d] : b[d];
  }
  return combined;
}

namespace {

std::string dimsText(const std::vector<uint32_t>& dims) {
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

}  // namespace

Result<BufferShape> validateBufferRoles(const BufferDesc& desc, std::span<const BufferModel> models,
                                        const std::vector<BufferRole>& inputRoles,
                                        const std::vector<BufferRole>& outputRoles) {
  if (models.empty()) return invalidArgument("preparedModels: allocate needs at least one");
  if (inputRoles.empty() && outputRoles.empty()) {
    return invalidArgument("inputRoles, outputRoles: allocate needs at least one role");
  }
  BufferShape shape;
  const Operand* first = nullptr;
  std::string firstName;
  std::optional<std::vector<uint32_t>> dims = desc.dimensions;
  for (const bool input : {true, false}) {
    const std::vector<BufferRole>& roles = input ? inputRoles : outputRoles;
    const char* kind = input ? "inputRoles" : "outputRoles";
    for (size_t r = 0; r < roles.size(); ++r) {
      const BufferRole& role = roles[r];
      const std::string name = fmt::format("{}[{}]", kind, r);
      if (role.modelIndex >= models.size()) {
        return invalidArgument(fmt::format("{}.modelIndex: {} is out of range ({} prepared models)",
                                           name, role.modelIndex, models.size()));
      }
      const Model& model = *models[role.modelIndex].model;
      const std::vector<uint32_t>& io = input ? model.main.inputIndexes : model.main.outputIndexes;
      if (role.ioIndex >= io.size()) {
        return invalidArgument(fmt::format("{}.ioIndex: {} is out of range (the model has {} {})",
                                           name, role.ioIndex, io.size(),
                                           input ? "inputs" : "outputs"));
      }
      if (!(role.frequency > 0.0f && role.frequency <= 1.0f)) {
        return invalidArgument(
            fmt::format("{}.frequency: {} is outside (0, 1]", name, role.frequency));
      }
      const ResolvedRole resolved{models[role.modelIndex].id, input, role.ioIndex};
      for (const ResolvedRole& seen : shape.roles) {
        if (seen == resolved) {
          return invalidArgument(
              fmt::format("{}: the same role (prepared model, {} {}) is given twice", name,
                          input ? "input" : "output", role.ioIndex));
        }
      }
      shape.roles.push_back(resolved);
      const Operand& operand = model.main.operands[io[role.ioIndex]];
      if (first == nullptr) {
        if (!isFundamentalType(operand.type) || sizeOfElement(operand.type) == 0) {
          return fail(ErrorStatus::GENERAL_FAILURE,
                      fmt::format("{}: operands of type {} cannot be kept in a driver-managed "
                                  "buffer",
                                  name, detail::operandTypeName(operand.type)));
        }
        first = &operand;
        firstName = name;
        shape.type = operand.type;
        shape.scale = operand.scale;
        shape.zeroPoint = operand.zeroPoint;
        shape.extraParams = operand.extraParams;
      } else {
        if (operand.type != first->type) {
          return invalidArgument(fmt::format("{}: operand type {} conflicts with {} of {}", name,
                                             detail::operandTypeName(operand.type),
                                             detail::operandTypeName(first->type), firstName));
        }
        if (operand.scale != first->scale) {
          return invalidArgument(fmt::format("{}: scale {} conflicts with {} of {}", name,
                                             operand.scale, first->scale, firstName));
        }
        if (operand.zeroPoint != first->zeroPoint) {
          return invalidArgument(fmt::format("{}: zeroPoint {} conflicts with {} of {}", name,
                                             operand.zeroPoint, first->zeroPoint, firstName));
        }
        if (!(operand.extraParams == first->extraParams)) {
          return invalidArgument(
              fmt::format("{}: extraParams conflict with those of {}", name, firstName));
        }
      }
      if (isScalarType(operand.type)) {
        if (!desc.dimensions.empty()) {
          return invalidArgument(fmt::format("desc.dimensions: {} given for {}, a scalar ({})",
                                             dimsText(desc.dimensions), name,
                                             detail::operandTypeName(operand.type)));
        }
        continue;
      }
      dims = combineDimensions(*dims, operand.dimensions);
      if (!dims) {
        return invalidArgument(
            fmt::format("{}: dimensions {} conflict with those of the descriptor and the other "
                        "roles",
                        name, dimsText(operand.dimensions)));
      }
    }
  }
  shape.dimensions = std::move(*dims);
  if (!byteSize(shape.type, shape.dimensions)) {
    return invalidArgument(fmt::format("desc.dimensions: a buffer of {} {} overflows 32 bits",
                                       detail::operandTypeName(shape.type),
                                       dimsText(shape.dimensions)));
  }
  return shape;
}

}  // namespace nnhal::hal
