// VTS BasicTests and CycleTest (../shared/VTS_CATALOGUE.md, "BasicTests") on the embedded
// driver and through nnhald.
#include <gtest/gtest.h>

#include <algorithm>

#include "vts/vts_targets.h"

namespace nnhal::testing {
namespace {

class BasicTest : public ::testing::TestWithParam<Target> {
 protected:
  void SetUp() override {
    device_ = deviceFor(GetParam());
    ASSERT_NE(device_, nullptr);
  }
  std::shared_ptr<Device> device_;
};

void expectPositive(const PerformanceInfo& info, const std::string& what) {
  EXPECT_GT(info.execTime, 0.0f) << what << ".execTime";
  EXPECT_GT(info.powerUsage, 0.0f) << what << ".powerUsage";
}

TEST_P(BasicTest, GetCapabilitiesTest) {
  const Capabilities caps = device_->getCapabilities();
  expectPositive(caps.relaxedFloat32toFloat16PerformanceScalar, "relaxed scalar");
  expectPositive(caps.relaxedFloat32toFloat16PerformanceTensor, "relaxed tensor");
  expectPositive(caps.ifPerformance, "ifPerformance");
  expectPositive(caps.whilePerformance, "whilePerformance");
  ASSERT_FALSE(caps.operandPerformance.empty());
  for (const OperandPerformance& entry : caps.operandPerformance) {
    expectPositive(entry.info, "operandPerformance[" + std::string(toString(entry.type)) + "]");
    EXPECT_NE(entry.type, OperandType::SUBGRAPH) << "SUBGRAPH has no performance entry";
  }
  EXPECT_TRUE(std::is_sorted(caps.operandPerformance.begin(), caps.operandPerformance.end(),
                             [](const OperandPerformance& a, const OperandPerformance& b) {
                               return static_cast<int32_t>(a.type) < static_cast<int32_t>(b.type);
                             }))
      << "operandPerformance must be sorted by type";
}

TEST_P(BasicTest, GetDeviceVersionStringTest) { EXPECT_FALSE(device_->getVersionString().empty()); }

TEST_P(BasicTest, GetDeviceTypeTest) {
  const DeviceType type = device_->getType();
  EXPECT_TRUE(type == DeviceType::OTHER || type == DeviceType::CPU || type == DeviceType::GPU ||
              type == DeviceType::ACCELERATOR)
      << static_cast<int32_t>(type);
}

TEST_P(BasicTest, GetDeviceNameTest) {
  // The instance name is `<vendor>-<device>`: exactly one '-', not at either end.
  const std::string name = device_->getName();
  ASSERT_FALSE(name.empty());
  EXPECT_EQ(std::count(name.begin(), name.end(), '-'), 1) << name;
  EXPECT_NE(name.front(), '-') << name;
  EXPECT_NE(name.back(), '-') << name;
}

TEST_P(BasicTest, GetDeviceSupportedExtensionsTest) {
  for (const Extension& extension : device_->getSupportedExtensions()) {
    const std::string& name = extension.name;
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name.find('.'), std::string::npos) << name;
    for (char c : name) {
      EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.') << name;
    }
  }
}

TEST_P(BasicTest, GetNumberOfCacheFilesNeeded) {
  const NumberOfCacheFiles files = device_->getNumberOfCacheFilesNeeded();
  EXPECT_LE(files.modelCache, kMaxNumberOfCacheFiles);
  EXPECT_LE(files.dataCache, kMaxNumberOfCacheFiles);
}

/// The VTS CycleTest model: three ADDs whose operands form a cycle.
///   opnd3 = ADD(opnd0, opnd4, opnd2)
///   opnd4 = ADD(opnd1, opnd3, opnd2)
///   opnd5 = ADD(opnd4, opnd0, opnd2)   (the model output; opnd0..2 are inputs)
Model cycleModel() {
  Model model;
  auto tensor = [](uint32_t consumers, OperandLifeTime lifetime) {
    Operand operand;
    operand.type = OperandType::TENSOR_FLOAT32;
    operand.dimensions = {1};
    operand.numberOfConsumers = consumers;
    operand.lifetime = lifetime;
    return operand;
  };
  auto& ops = model.main.operands;
  ops.push_back(tensor(2, OperandLifeTime::SUBGRAPH_INPUT));
  ops.push_back(tensor(1, OperandLifeTime::SUBGRAPH_INPUT));
  Operand activation;
  activation.type = OperandType::INT32;
  activation.numberOfConsumers = 3;
  activation.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  ops.push_back(activation);
  ops.push_back(tensor(1, OperandLifeTime::TEMPORARY_VARIABLE));
  ops.push_back(tensor(2, OperandLifeTime::TEMPORARY_VARIABLE));
  ops.push_back(tensor(0, OperandLifeTime::SUBGRAPH_OUTPUT));
  model.main.operations = {{OperationType::ADD, {0, 4, 2}, {3}},
                           {OperationType::ADD, {1, 3, 2}, {4}},
                           {OperationType::ADD, {4, 0, 2}, {5}}};
  model.main.inputIndexes = {0, 1, 2};
  model.main.outputIndexes = {5};
  return model;
}

TEST_P(BasicTest, CycleTest) {
  auto supported = device_->getSupportedOperations(cycleModel());
  ASSERT_FALSE(supported);
  EXPECT_EQ(supported.error().status, ErrorStatus::INVALID_ARGUMENT);
  PrepareOutcome outcome = prepareAndWait(*device_, cycleModel(), PrepareOptions{});
  EXPECT_NE(outcome.launch, ErrorStatus::NONE);
  ASSERT_FALSE(outcome.result);
  EXPECT_NE(outcome.result.error().status, ErrorStatus::NONE);
}

INSTANTIATE_TEST_SUITE_P(Embedded, BasicTest, ::testing::Values(Target::kEmbedded));
INSTANTIATE_TEST_SUITE_P(Remote, BasicTest, ::testing::Values(Target::kRemote));

}  // namespace
}  // namespace nnhal::testing
