#include "engine/operation_registry.h"

#include <array>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "engine/ops/families.h"
#include "nnhal/tflite_compat_extension.h"

namespace nnhal::engine {
namespace {

/// Index by operation code for the fundamental operations, built once.
class Registry {
 public:
  Registry() {
    for (auto family :
         {ops::coreOperations(), ops::elementwiseOperations(), ops::dataMovementOperations(),
          ops::normalizationOperations(), ops::convolutionOperations(), ops::sequenceOperations(),
          ops::detectionOperations()}) {
      for (const OperationDef& def : family) {
        const auto code = static_cast<int32_t>(def.type);
        if (code >= 0 && code <= kOperationTypeFundamentalMax) byCode_[code] = &def;
      }
    }
  }
  const OperationDef* find(OperationType type) const {
    const auto code = static_cast<int32_t>(type);
    if (code < 0 || code > kOperationTypeFundamentalMax) return nullptr;
    return byCode_[code];
  }

 private:
  std::array<const OperationDef*, kOperationTypeFundamentalMax + 1> byCode_{};
};

const Registry& registry() {
  static const Registry instance;
  return instance;
}

bool isExtensionCode(OperationType type) { return static_cast<uint32_t>(type) > 0xFFFFu; }

/// The name `model` gives the prefix of extension code `type`; nullopt when it lists none.
std::optional<std::string_view> extensionNameOf(OperationType type, const Model& model) {
  const uint16_t prefix = extensionPrefixOf(static_cast<uint32_t>(type));
  for (const ExtensionNameAndPrefix& entry : model.extensionNameToPrefix) {
    if (entry.prefix == prefix) return std::string_view(entry.name);
  }
  return std::nullopt;
}

const ops::ExtensionOperationDef* findExtensionOperation(OperationType type, const Model& model) {
  const auto name = extensionNameOf(type, model);
  if (!name) return nullptr;
  const uint16_t low = extensionTypeOf(static_cast<uint32_t>(type));
  for (const ops::ExtensionOperationDef& def : ops::tfliteCompatOperations()) {
    if (def.extension == *name && def.type == low) return &def;
  }
  return nullptr;
}

bool isSupportedExtension(std::string_view name) { return name == tflite_compat::kExtensionName; }

}  // namespace

const OperationDef* findOperation(OperationType type) { return registry().find(type); }

const OperationDef* findOperation(OperationType type, const Model& model) {
  if (!isExtensionCode(type)) return registry().find(type);
  const ops::ExtensionOperationDef* def = findExtensionOperation(type, model);
  return def != nullptr ? &def->def : nullptr;
}

std::string operationName(OperationType type, const Model& model) {
  if (!isExtensionCode(type)) return std::string(toString(type));
  if (const ops::ExtensionOperationDef* def = findExtensionOperation(type, model)) {
    return std::string(def->name);
  }
  const auto name = extensionNameOf(type, model);
  return fmt::format("extension operation {:#x} ({})", static_cast<uint32_t>(type),
                     name ? *name : std::string_view("prefix not in extensionNameToPrefix"));
}

std::string unsupportedReason(OperationType type, const Model& model) {
  if (findOperation(type, model) != nullptr) return {};
  if (!isExtensionCode(type)) return "no implementation of " + std::string(toString(type));
  const auto name = extensionNameOf(type, model);
  if (name && isSupportedExtension(*name)) {
    return fmt::format("no implementation of type {} of extension {}",
                       extensionTypeOf(static_cast<uint32_t>(type)), *name);
  }
  return fmt::format("no implementation of {}: this driver does not support extension {}",
                     operationName(type, model),
                     name ? *name : std::string_view("(prefix not listed)"));
}

std::vector<Extension> supportedExtensions() { return {tflite_compat::describe()}; }

}  // namespace nnhal::engine
