// The operations of the org.nnhal.tflite_compat extension: registry entries (see families.h).
#include <array>

#include "engine/ops/families.h"
#include "engine/ops/tflite_compat_ops.h"
#include "nnhal/tflite_compat_extension.h"

namespace nnhal::engine::ops {

std::span<const ExtensionOperationDef> tfliteCompatOperations() {
  using tflite_compat::Operation;
  static constexpr auto entry = [](Operation operation, std::string_view name, PrepareFn prepare) {
    return ExtensionOperationDef{tflite_compat::kExtensionName, static_cast<uint16_t>(operation),
                                 name, OperationDef{OperationType::OEM_OPERATION, prepare}};
  };
  static constexpr std::array kOperations{
      entry(Operation::FLOOR_DIV, "FLOOR_DIV", prepareFloorDiv),
      entry(Operation::GATHER_ND, "GATHER_ND", prepareGatherNd),
      entry(Operation::RESHAPE, "RESHAPE", prepareTfliteCompatReshape),
      entry(Operation::CONCATENATION, "CONCATENATION", prepareTfliteCompatConcatenation),
  };
  return kOperations;
}

}  // namespace nnhal::engine::ops
