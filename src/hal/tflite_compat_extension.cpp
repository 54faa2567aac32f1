// The names and getSupportedExtensions entry of the org.nnhal.tflite_compat extension
// (nnhal/tflite_compat_extension.h).
#include "nnhal/tflite_compat_extension.h"

#include <string>

namespace nnhal::tflite_compat {

std::string_view operationName(uint16_t type) {
  switch (static_cast<Operation>(type)) {
    case Operation::FLOOR_DIV:
      return "FLOOR_DIV";
    case Operation::GATHER_ND:
      return "GATHER_ND";
    case Operation::RESHAPE:
      return "RESHAPE";
    case Operation::CONCATENATION:
      return "CONCATENATION";
  }
  return {};
}

Extension describe() { return Extension{.name = std::string(kExtensionName), .operandTypes = {}}; }

}  // namespace nnhal::tflite_compat
