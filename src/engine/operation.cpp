#include "engine/operation.h"

#include <string>

#include "hal/operand_utils.h"

namespace nnhal::engine {

size_t OperandInfo::elementCount() const {
  size_t count = 1;
  for (uint32_t d : dimensions) count *= d;
  return count;
}

std::unique_ptr<Kernel> checkedKernel() {
  return makeKernel([](const RunContext&) -> Result<void> {
    return fail(ErrorStatus::GENERAL_FAILURE, "a kernel prepared only to check the model ran");
  });
}

std::string PrepareContext::name() const {
  return name_.empty() ? std::string(toString(type_)) : name_;
}

std::string PrepareContext::where(size_t input) const {
  return name() + " input " + std::to_string(input);
}

Result<void> PrepareContext::setOutputShape(size_t i, std::vector<uint32_t> dimensions) {
  if (i >= outputs_.size()) {
    return invalidArgument(name() + " has no output " + std::to_string(i));
  }
  OperandInfo& out = outputs_[i];
  const auto& declared = out.dimensions;
  if (!declared.empty()) {
    if (declared.size() != dimensions.size()) {
      return invalidArgument(name() + " output " + std::to_string(i) + ": model declares rank " +
                             std::to_string(declared.size()) + " but the operation produces rank " +
                             std::to_string(dimensions.size()));
    }
    for (size_t d = 0; d < declared.size(); ++d) {
      if (declared[d] != 0 && declared[d] != dimensions[d]) {
        return invalidArgument(name() + " output " + std::to_string(i) +
                               ": model declares dimension " + std::to_string(d) + " = " +
                               std::to_string(declared[d]) + " but the operation produces " +
                               std::to_string(dimensions[d]));
      }
    }
  }
  // Inferred shapes are checked like declared ones: an operand holds at most 2^32 - 1 bytes,
  // so every later size computation fits (a broadcast of [65536, 1] and [1, 65536] floats
  // would otherwise wrap to a small buffer).
  if (hal::isTensorType(out.type) && !hal::byteSize(out.type, dimensions)) {
    return invalidArgument(name() + " output " + std::to_string(i) +
                           ": the inferred shape holds more than 2^32 - 1 bytes");
  }
  out.dimensions = std::move(dimensions);
  return {};
}

}  // namespace nnhal::engine
