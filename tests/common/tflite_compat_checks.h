// tests/common/tflite_compat_checks.h — what any nnhal Device (in process or through nnhald)
// must do with the org.nnhal.tflite_compat extension: list it, answer getSupportedOperations,
// prepare and run tfliteCompatModel, and refuse the models the extension rules forbid.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "common/tflite_compat_model.h"
#include "nnhal/device.h"
#include "nnhal/memory.h"

namespace nnhal::testing {

inline void expectListsTfliteCompat(const Device& device) {
  const std::vector<Extension> extensions = device.getSupportedExtensions();
  const auto found = std::find_if(extensions.begin(), extensions.end(), [](const Extension& e) {
    return e.name == tflite_compat::kExtensionName;
  });
  ASSERT_NE(found, extensions.end());
  EXPECT_TRUE(found->operandTypes.empty());
}

/// Runs tfliteCompatModel(prefix) on a = {0, 3, 7, 15} and `b`; returns the output or the error.
inline Result<std::vector<int32_t>> runTfliteCompatModel(Device& device, uint16_t prefix,
                                                         std::vector<int32_t> b) {
  NNHAL_ASSIGN_OR_RETURN(auto prepared, device.prepareModel(tfliteCompatModel(prefix)));
  NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(48));
  const std::vector<int32_t> a{0, 3, 7, 15};
  std::memcpy(pool.data(), a.data(), 16);
  std::memcpy(pool.data() + 16, b.data(), 16);
  Request request;
  request.pools.push_back(pool);
  request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  request.outputs = {{false, {0, 32, 16}, {}}};
  NNHAL_TRY(prepared->executeSynchronously(request));
  std::vector<int32_t> out(4);
  std::memcpy(out.data(), pool.data() + 32, 16);
  return out;
}

inline void expectRunsTfliteCompat(Device& device) {
  for (const uint16_t prefix : {uint16_t{1}, uint16_t{0x7fff}, uint16_t{0xffff}}) {
    const Model model = tfliteCompatModel(prefix);
    const auto supported = device.getSupportedOperations(model);
    ASSERT_TRUE(supported) << supported.error().message;
    EXPECT_EQ(*supported, (std::vector<bool>{true, true})) << "prefix " << prefix;
    const auto out = runTfliteCompatModel(device, prefix, {2, 2, 2, 2});
    ASSERT_TRUE(out) << out.error().message;
    EXPECT_EQ(*out, (std::vector<int32_t>{100, 101, 103, 107})) << "prefix " << prefix;
  }
  // Run-time value errors: a zero divisor; an index past params (15 / 1 = 15 >= 8).
  auto zero = runTfliteCompatModel(device, 3, {2, 0, 2, 2});
  ASSERT_FALSE(zero);
  EXPECT_EQ(zero.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(zero.error().message.find("FLOOR_DIV input 1 (divisor) element 1 is 0"),
            std::string::npos)
      << zero.error().message;
  auto outside = runTfliteCompatModel(device, 3, {1, 1, 1, 1});
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(outside.error().message.find("GATHER_ND input 1 (indices) tuple 3 component 0 is 15, "
                                         "outside [0, 8)"),
            std::string::npos)
      << outside.error().message;
}

/// Models the driver must refuse with INVALID_ARGUMENT, from getSupportedOperations (when
/// `bySupport`) and prepareModel, each with a word of the expected message.
inline void expectRefusesBadTfliteCompatModels(Device& device) {
  struct Case {
    std::string what;
    Model model;
    std::string message;
    bool bySupport;  ///< getSupportedOperations refuses it too (it is an invalid model)
    std::vector<bool> supported = {};  ///< otherwise, what getSupportedOperations answers
  };
  std::vector<Case> cases;
  {
    Model m = tfliteCompatModel(4);
    m.extensionNameToPrefix[0].prefix = 5;  // operations use prefix 4, not listed
    cases.push_back({"prefix not listed", std::move(m),
                     "an operation of an extension in extensionNameToPrefix", true});
  }
  {
    Model m = tfliteCompatModel(4);
    m.extensionNameToPrefix.push_back({"com.example.other", 4});
    cases.push_back({"prefix mapped twice", std::move(m), "0x4 is listed twice", true});
  }
  {
    Model m = tfliteCompatModel(4);
    m.extensionNameToPrefix[0].prefix = 0;
    cases.push_back({"prefix 0", std::move(m), "0 is reserved", true});
  }
  cases.push_back({"unsupported extension name",
                   tfliteCompatModel(4, "com.example.unknown"),
                   "does not support extension com.example.unknown",
                   false,
                   {false, false}});
  {
    Model m = tfliteCompatModel(4);
    m.main.operations[1].type = static_cast<OperationType>((4u << 16) | 77u);
    cases.push_back(
        {"type the extension does not define", std::move(m), "type 77", false, {true, false}});
  }
  {
    Model m = tfliteCompatModel(4);
    m.main.operands[1].type = OperandType::TENSOR_FLOAT32;  // int32 / float32
    cases.push_back({"mixed operand types", std::move(m), "FLOOR_DIV input 1", true});
  }
  {
    Model m = tfliteCompatModel(4);
    m.main.operations[1].inputs = {3, 2, 0};
    m.main.operands[0].numberOfConsumers = 2;
    cases.push_back({"extra input", std::move(m), "GATHER_ND takes 2 inputs, got 3", true});
  }
  for (Case& c : cases) {
    SCOPED_TRACE(c.what);
    if (c.bySupport) {
      const auto supported = device.getSupportedOperations(c.model);
      ASSERT_FALSE(supported);
      EXPECT_EQ(supported.error().status, ErrorStatus::INVALID_ARGUMENT);
      EXPECT_NE(supported.error().message.find(c.message), std::string::npos)
          << supported.error().message;
    } else {
      const auto supported = device.getSupportedOperations(c.model);
      ASSERT_TRUE(supported) << supported.error().message;
      EXPECT_EQ(*supported, c.supported);
    }
    const auto prepared = device.prepareModel(c.model);
    ASSERT_FALSE(prepared);
    EXPECT_EQ(prepared.error().status, ErrorStatus::INVALID_ARGUMENT);
    EXPECT_NE(prepared.error().message.find(c.message), std::string::npos)
        << prepared.error().message;
  }
}

}  // namespace nnhal::testing
