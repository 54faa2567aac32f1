// The engine's one operation table (engine/operation_registry.h): sorted, one entry per
// type, every fundamental operation of types.hal but IF and WHILE, and the extension
// operations found through the prefix each model gives their extension.
#include "engine/operation_registry.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

#include "hal/operation_signatures.h"
#include "nnhal/tflite_compat_extension.h"

namespace nnhal::engine {
namespace {

TEST(OperationRegistry, OneEntryPerTypeSortedByCodeEachWithAPrepareFunction) {
  const auto table = implementedOperations();
  ASSERT_FALSE(table.empty());
  std::set<int32_t> seen;
  for (size_t i = 0; i < table.size(); ++i) {
    const auto code = static_cast<int32_t>(table[i].type);
    EXPECT_TRUE(seen.insert(code).second) << toString(table[i].type) << " twice";
    if (i > 0) {
      EXPECT_LT(static_cast<int32_t>(table[i - 1].type), code);
    }
    EXPECT_NE(table[i].prepare, nullptr) << toString(table[i].type);
    EXPECT_EQ(findOperation(table[i].type), &table[i]) << toString(table[i].type);
  }
}

TEST(OperationRegistry, ImplementsEveryFundamentalOperationButTheControlFlow) {
  for (int32_t code = 0; code <= kOperationTypeFundamentalMax; ++code) {
    const auto type = static_cast<OperationType>(code);
    ASSERT_NE(hal::findSignature(type), nullptr) << code;
    if (type == OperationType::IF || type == OperationType::WHILE) {
      EXPECT_EQ(findOperation(type), nullptr) << "the interpreter runs " << toString(type);
    } else {
      EXPECT_NE(findOperation(type), nullptr) << toString(type);
    }
  }
  EXPECT_EQ(implementedOperations().size(), size_t{kOperationTypeFundamentalMax + 1 - 2});
}

TEST(OperationRegistry, CodesOutsideTheTableAreNotFound) {
  for (int32_t code : {-1, kOperationTypeFundamentalMax + 1, 1000, 10000}) {
    EXPECT_EQ(findOperation(static_cast<OperationType>(code)), nullptr) << code;
  }
  Model model;
  EXPECT_EQ(findOperation(OperationType::OEM_OPERATION, model), nullptr);
  EXPECT_NE(unsupportedReason(OperationType::OEM_OPERATION, model), "");
  EXPECT_EQ(unsupportedReason(OperationType::CONV_2D, model), "");
}

OperationType extensionCode(uint16_t prefix, tflite_compat::Operation operation) {
  return static_cast<OperationType>((uint32_t{prefix} << 16) | static_cast<uint16_t>(operation));
}

TEST(OperationRegistry, ExtensionOperationsAreFoundThroughTheModelsPrefix) {
  Model model;
  model.extensionNameToPrefix = {{std::string(tflite_compat::kExtensionName), 7}};
  const OperationType floorDiv = extensionCode(7, tflite_compat::Operation::FLOOR_DIV);
  const OperationType gatherNd = extensionCode(7, tflite_compat::Operation::GATHER_ND);
  ASSERT_NE(findOperation(floorDiv, model), nullptr);
  ASSERT_NE(findOperation(gatherNd, model), nullptr);
  EXPECT_NE(findOperation(floorDiv, model)->prepare, findOperation(gatherNd, model)->prepare);
  EXPECT_EQ(operationName(floorDiv, model), "FLOOR_DIV");
  EXPECT_EQ(unsupportedReason(floorDiv, model), "");
  // By code alone an extension operation is never found: the prefix means nothing without
  // the model.
  EXPECT_EQ(findOperation(floorDiv), nullptr);
  // Another prefix, one the model does not list.
  const OperationType unlisted = extensionCode(8, tflite_compat::Operation::FLOOR_DIV);
  EXPECT_EQ(findOperation(unlisted, model), nullptr);
  EXPECT_NE(operationName(unlisted, model).find("prefix not in extensionNameToPrefix"),
            std::string::npos);
  // A type the extension does not define.
  const auto undefined = static_cast<OperationType>((uint32_t{7} << 16) | 0xFFF0u);
  EXPECT_EQ(findOperation(undefined, model), nullptr);
  EXPECT_NE(unsupportedReason(undefined, model).find("no implementation of type"),
            std::string::npos);
  // An extension this driver does not support.
  Model other;
  other.extensionNameToPrefix = {{"com.example.unknown", 7}};
  EXPECT_EQ(findOperation(floorDiv, other), nullptr);
  EXPECT_NE(
      unsupportedReason(floorDiv, other).find("does not support extension com.example.unknown"),
      std::string::npos);
}

TEST(OperationRegistry, ListsTheExtensionsItImplements) {
  const auto extensions = supportedExtensions();
  ASSERT_EQ(extensions.size(), 1u);
  EXPECT_EQ(extensions[0].name, tflite_compat::kExtensionName);
}

}  // namespace
}  // namespace nnhal::engine
