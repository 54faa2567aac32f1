// TFLite builtin operators that import as operations of a vendor extension, used only when
// the device reports the extension (ImportOptions::extensions): FLOOR_DIV and GATHER_ND as
// org.nnhal.tflite_compat FLOOR_DIV and GATHER_ND (nnhal/tflite_compat_extension.h,
// docs/EXTENSIONS.md), whose NNAPI inputs are the operator's two tensors, unchanged: the
// extension keeps TFLite's semantics. RESHAPE and CONCATENATION (also PACK's) of TENSOR_INT32
// tensors, which the base operations refuse, become the extension's RESHAPE and CONCATENATION
// (int32Variant). The model maps the extension to the prefix
// ModelBuilder::extensionPrefix gives it (1 when it is the first extension used).
#include <algorithm>
#include <array>

#include "hal/tflite/operator_mapping.h"
#include "nnhal/tflite_compat_extension.h"

namespace nnhal::hal::tfl {
namespace {

namespace lite = ::tflite;

/// An operator whose two input tensors and one output map onto `operation`.
template <tflite_compat::Operation kOperation>
Result<void> mapTfliteCompatBinary(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t first, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t second, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const uint16_t prefix = c.builder().extensionPrefix(tflite_compat::kExtensionName);
  c.addOperation(tflite_compat::operationType(prefix, kOperation), {first, second}, {output});
  return {};
}

struct ExtensionMapping {
  lite::BuiltinOperator code;
  std::string_view extension;
  OperatorMapping mapping;
};

constexpr std::array kExtensionMappings{
    ExtensionMapping{lite::BuiltinOperator_FLOOR_DIV, tflite_compat::kExtensionName,
                     &mapTfliteCompatBinary<tflite_compat::Operation::FLOOR_DIV>},
    ExtensionMapping{lite::BuiltinOperator_GATHER_ND, tflite_compat::kExtensionName,
                     &mapTfliteCompatBinary<tflite_compat::Operation::GATHER_ND>},
};

const ExtensionMapping* findEntry(int32_t builtinCode) {
  for (const ExtensionMapping& entry : kExtensionMappings) {
    if (static_cast<int32_t>(entry.code) == builtinCode) return &entry;
  }
  return nullptr;
}

}  // namespace

OperationType int32Variant(OperatorContext& c, OperationType base, uint32_t input) {
  if (c.operand(input).type != OperandType::TENSOR_INT32 ||
      !c.builder().hasExtension(tflite_compat::kExtensionName)) {
    return base;
  }
  const uint16_t prefix = c.builder().extensionPrefix(tflite_compat::kExtensionName);
  switch (base) {
    case OperationType::RESHAPE:
      return tflite_compat::operationType(prefix, tflite_compat::Operation::RESHAPE);
    case OperationType::CONCATENATION:
      return tflite_compat::operationType(prefix, tflite_compat::Operation::CONCATENATION);
    default:
      return base;
  }
}

OperatorMapping findExtensionMapping(int32_t builtinCode, std::span<const Extension> extensions) {
  const ExtensionMapping* entry = findEntry(builtinCode);
  if (entry == nullptr) return nullptr;
  const bool reported = std::any_of(extensions.begin(), extensions.end(),
                                    [&](const Extension& e) { return e.name == entry->extension; });
  return reported ? entry->mapping : nullptr;
}

std::string_view extensionFor(int32_t builtinCode) {
  const ExtensionMapping* entry = findEntry(builtinCode);
  return entry != nullptr ? entry->extension : std::string_view();
}

}  // namespace nnhal::hal::tfl
