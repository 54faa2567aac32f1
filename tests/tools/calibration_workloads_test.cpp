#include "tools/common/calibration_workloads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "common/one_pool_execution.h"
#include "hal/operand_utils.h"
#include "nnhal/device.h"
#if NNHAL_HAVE_XNNPACK
#include "tools/cpu_reference/xnnpack_baseline.h"
#endif

namespace nnhal::tools {
namespace {

std::map<OperationType, int> operationCounts(const Model& model) {
  std::map<OperationType, int> counts;
  for (const Operation& op : model.main.operations) ++counts[op.type];
  return counts;
}

// The built-in networks have the published models' layers.
TEST(CalibrationWorkloadsTest, HaveTheLayersOfThePublishedMobileNets) {
  auto workloads = builtInCalibrationWorkloads();
  ASSERT_TRUE(workloads) << workloads.error().message;
  ASSERT_EQ(workloads->size(), 3u);
  const Model& v1 = (*workloads)[0].model;
  const Model& v2 = (*workloads)[1].model;
  const Model& v2Float = (*workloads)[2].model;
  EXPECT_EQ(operationCounts(v1)[OperationType::CONV_2D], 15);
  EXPECT_EQ(operationCounts(v1)[OperationType::DEPTHWISE_CONV_2D], 13);
  EXPECT_EQ(operationCounts(v2)[OperationType::CONV_2D], 36);
  EXPECT_EQ(operationCounts(v2)[OperationType::DEPTHWISE_CONV_2D], 17);
  EXPECT_EQ(operationCounts(v2)[OperationType::ADD], 10);
  EXPECT_EQ(v1.main.operands[v1.main.inputIndexes[0]].dimensions,
            (std::vector<uint32_t>{1, 128, 128, 3}));
  EXPECT_EQ(v2.main.operands[v2.main.inputIndexes[0]].dimensions,
            (std::vector<uint32_t>{1, 224, 224, 3}));
  EXPECT_EQ(v2Float.main.operands[v2Float.main.inputIndexes[0]].type, OperandType::TENSOR_FLOAT32);
  EXPECT_TRUE((*workloads)[0].quantized);
  EXPECT_FALSE((*workloads)[2].quantized);
  // Same weights on every call: every machine times the same network.
  auto again = builtInCalibrationWorkloads();
  ASSERT_TRUE(again);
  const Model& v2Again = (*again)[1].model;
  ASSERT_EQ(v2Again.pools.size(), 1u);
  ASSERT_EQ(v2Again.pools[0].size(), v2.pools[0].size());
  EXPECT_EQ(std::memcmp(v2Again.pools[0].data(), v2.pools[0].data(), v2.pools[0].size()), 0);
}

// Runs the float network on the driver and returns its class probabilities.
std::vector<float> runOnDriver(const Model& model, const std::vector<float>& input) {
  auto device = createDevice({});
  EXPECT_TRUE(device);
  auto prepared = (*device)->prepareModel(model);
  EXPECT_TRUE(prepared) << prepared.error().message;
  if (!prepared) return {};
  auto executed = nnhal::testing::executeFloatsOnOnePool(**prepared, input, 1001);
  EXPECT_TRUE(executed) << executed.error().message;
  return executed ? *executed : std::vector<float>(1001);
}

// Every built-in network runs on the driver; the float one gives a real distribution (the
// weights keep activations in range), and XNNPACK computes the same one from the same graph:
// the calibration times the same work on both.
TEST(CalibrationWorkloadsTest, TheDriverAndTheReferenceComputeTheSameFloatNetwork) {
  auto workloads = builtInCalibrationWorkloads();
  ASSERT_TRUE(workloads);
  auto device = createDevice({});
  ASSERT_TRUE(device);
  for (const CalibrationWorkload& w : *workloads) {
    auto prepared = (*device)->prepareModel(w.model);
    EXPECT_TRUE(prepared) << w.name << ": " << prepared.error().message;
  }
  const Model& model = (*workloads)[2].model;
  std::vector<float> input(224 * 224 * 3);
  for (size_t i = 0; i < input.size(); ++i) input[i] = std::sin(static_cast<float>(i) * 0.37f);
  const std::vector<float> driver = runOnDriver(model, input);
  ASSERT_EQ(driver.size(), 1001u);
  double sum = 0;
  for (const float p : driver) {
    ASSERT_TRUE(std::isfinite(p));
    sum += p;
  }
  EXPECT_NEAR(sum, 1.0, 1e-3);
  const auto [low, high] = std::minmax_element(driver.begin(), driver.end());
  EXPECT_GT(*high, 10 * *low) << "the logits collapsed: the activations lost their range";
#if NNHAL_HAVE_XNNPACK
  auto reference = cpu_reference::XnnpackBaseline::create(model, 1);
  ASSERT_TRUE(reference) << reference.error().message;
  std::memcpy((*reference)->input(0).data(), input.data(), input.size() * sizeof(float));
  ASSERT_TRUE((*reference)->run());
  std::vector<float> expected(1001);
  std::memcpy(expected.data(), (*reference)->output(0).data(), expected.size() * sizeof(float));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_NEAR(driver[i], expected[i], 1e-6 + 1e-3 * expected[i]) << i;
  }
#endif
}

}  // namespace
}  // namespace nnhal::tools
