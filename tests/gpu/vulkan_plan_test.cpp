// nnhal-vulkan's plan (backend/vulkan/vulkan_plan.h) without a GPU: which operations it
// takes and why it refuses the others, the models it finds invalid, the buffer layout and
// the folding of wide dispatches.
#include <gtest/gtest.h>

#include <bit>
#include <cstring>

#include <string>
#include <vector>

#include "backend/vulkan/vulkan_plan.h"
#include "cache/cache_test_util.h"
#include "common/hostile_models.h"
#include "gpu/gpu_test_models.h"
#include "hal/model_constants.h"

namespace nnhal::backend::vulkan {
namespace {

using cachetest::buildModel;
using testing::broadcastAddModel;

TEST(VulkanPlanTest, RunsTheFloatTestModel) {
  const Model model = buildModel(OperandType::TENSOR_FLOAT32, 1);
  auto reasons = explainSupport(model);
  ASSERT_TRUE(reasons) << reasons.error().message;
  for (const std::string& reason : *reasons) EXPECT_EQ(reason, "");
  auto plan = buildPlan(model);
  ASSERT_TRUE(plan) << plan.error().message;
  // CONV_2D, DEPTHWISE_CONV_2D, ADD, FULLY_CONNECTED: one dispatch each, in model order.
  ASSERT_EQ(plan->dispatches.size(), 4u);
  EXPECT_EQ(plan->dispatches[0].shader, Shader::kConv2d);
  EXPECT_EQ(plan->dispatches[1].shader, Shader::kConv2d);
  EXPECT_EQ(plan->dispatches[2].shader, Shader::kBinary);
  EXPECT_EQ(plan->dispatches[3].shader, Shader::kFullyConnected);
  EXPECT_EQ(plan->dispatches[0].invocations, 4u * 4 * 3);
  // Every push block fits the 128 bytes every device allows.
  for (const Dispatch& d : plan->dispatches) EXPECT_LE(d.push.size(), kMaxPushWords);
  // Constants first, each range 64-byte aligned, inputs and outputs after them.
  ASSERT_EQ(plan->inputs.size(), 2u);
  ASSERT_EQ(plan->outputs.size(), 1u);
  EXPECT_EQ(plan->inputs[0].elements, 32u);
  EXPECT_EQ(plan->inputs[1].elements, 48u);
  EXPECT_EQ(plan->outputs[0].elements, cachetest::kOutputUnits);
  EXPECT_EQ(plan->outputDimensions[0], (std::vector<uint32_t>{1, cachetest::kOutputUnits}));
  for (const TensorRange& r : {plan->inputs[0], plan->inputs[1], plan->outputs[0]}) {
    EXPECT_EQ(r.offset % 16, 0u);
    EXPECT_GE(r.offset, plan->constantImage.size());
    EXPECT_LE(uint64_t{r.offset} + r.elements, plan->bufferElements);
  }
  // The first filter value is the model's, at the start of the constant image.
  const Operand& filter = model.main.operands[model.main.operations[0].inputs[1]];
  const uint8_t* bytes = filter.lifetime == OperandLifeTime::CONSTANT_REFERENCE
                             ? model.pools[filter.location.poolIndex].data()
                             : model.operandValues.data();
  float first = 0;
  std::memcpy(&first, bytes + filter.location.offset, sizeof first);
  EXPECT_EQ(plan->constantImage.at(plan->dispatches[0].push[3]), first);
}

TEST(VulkanPlanTest, RefusesOtherOperandTypesWithTheReason) {
  auto reasons = explainSupport(gputest::int32AddModel());
  ASSERT_TRUE(reasons) << reasons.error().message;
  ASSERT_EQ(reasons->size(), 1u);
  EXPECT_NE((*reasons)[0].find("TENSOR_INT32 is not supported"), std::string::npos)
      << (*reasons)[0];
  auto plan = buildPlan(gputest::int32AddModel());
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(plan.error().message.find("operation 0 (ADD) is not supported by nnhal-vulkan"),
            std::string::npos)
      << plan.error().message;
}

// The quantized test model (CONV_2D, DEPTHWISE_CONV_2D, ADD, FULLY_CONNECTED on
// TENSOR_QUANT8_ASYMM) plans whole: biases and the per-channel (multiplier, shift) pairs are
// raw int32 words in the constant image, and every dispatch is a quantized one.
TEST(VulkanPlanTest, PlansTheQuantizedOperations) {
  const Model model = buildModel(OperandType::TENSOR_QUANT8_ASYMM, 1);
  auto plan = buildPlan(model);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->dispatches.size(), 4u);
  EXPECT_EQ(plan->dispatches[0].shader, Shader::kConvQuant);
  EXPECT_EQ(plan->dispatches[1].shader, Shader::kConvQuant);
  EXPECT_EQ(plan->dispatches[2].shader, Shader::kBinary);
  EXPECT_EQ(plan->dispatches[2].push[1], 7u) << "the quantized ADD";
  EXPECT_EQ(plan->dispatches[3].shader, Shader::kConvQuant);
  // The first convolution's bias, as raw words at its offset (push word 4).
  const Operation& conv = model.main.operations[0];
  const Operand& bias = model.main.operands[conv.inputs[2]];
  std::vector<int32_t> expected(bias.dimensions[0]);
  std::memcpy(expected.data(), hal::constantBytes(model, bias), expected.size() * 4);
  const uint32_t at = plan->dispatches[0].push[4];
  for (size_t c = 0; c < expected.size(); ++c) {
    EXPECT_EQ(std::bit_cast<int32_t>(plan->constantImage.at(at + c)), expected[c]) << c;
  }
  EXPECT_EQ(plan->inputs[0].storage, Storage::kUint8);
  EXPECT_EQ(plan->outputs[0].storage, Storage::kUint8);
}

/// One 8-bit operation on a TENSOR_QUANT8_ASYMM input of `dims` (scale 0.5, zero point 0):
/// SOFTMAX (beta 1) to an output of `outScale`, or AVERAGE_POOL_2D (VALID, stride 1) with a
/// window of the whole input.
Model quantizedOperationModel(OperationType type, std::vector<uint32_t> dims, float outScale) {
  cachetest::ModelBuilder b;
  const OperandType q = OperandType::TENSOR_QUANT8_ASYMM;
  const uint32_t x = b.tensor(q, dims, 0.5f, 0, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t y = b.tensor(q, {}, outScale, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
  if (type == OperationType::SOFTMAX) {
    Operand beta;
    beta.type = OperandType::FLOAT32;
    beta.lifetime = OperandLifeTime::CONSTANT_COPY;
    beta.location = {0, static_cast<uint32_t>(b.model.operandValues.size()), 4};
    const float one = 1.0f;
    b.model.operandValues.resize(b.model.operandValues.size() + 4);
    std::memcpy(b.model.operandValues.data() + beta.location.offset, &one, 4);
    b.operation(type, {x, b.add(beta)}, {y});
  } else {
    b.operation(type,
                {x, b.scalar(2), b.scalar(1), b.scalar(1), b.scalar(static_cast<int32_t>(dims[2])),
                 b.scalar(static_cast<int32_t>(dims[1])), b.scalar(0)},
                {y});
  }
  b.model.main.inputIndexes = {x};
  b.model.main.outputIndexes = {y};
  return std::move(b.model);
}

// 8-bit operations whose quantization breaks the HAL's rules are invalid (as on the CPU
// device); those beyond what the shaders compute exactly are unsupported, with the reason.
TEST(VulkanPlanTest, RefusesQuantizedOperationsThatDoNotFit) {
  Model badBias = buildModel(OperandType::TENSOR_QUANT8_ASYMM, 1);
  const uint32_t bias = badBias.main.operations[0].inputs[2];
  badBias.main.operands[bias].scale *= 2.0f;
  auto reasons = explainSupport(badBias);
  ASSERT_FALSE(reasons);
  EXPECT_NE(reasons.error().message.find("bias scale"), std::string::npos)
      << reasons.error().message;

  auto softmax = explainSupport(quantizedOperationModel(OperationType::SOFTMAX, {1, 4}, 0.01f));
  ASSERT_FALSE(softmax);
  EXPECT_NE(softmax.error().message.find("scale 1/256"), std::string::npos)
      << softmax.error().message;
  ASSERT_TRUE(
      explainSupport(quantizedOperationModel(OperationType::SOFTMAX, {1, 4}, 1.0f / 256.0f)));

  auto pool = explainSupport(
      quantizedOperationModel(OperationType::AVERAGE_POOL_2D, {1, 300, 300, 1}, 0.5f));
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_NE((*pool)[0].find("more than 65,536 taps"), std::string::npos) << (*pool)[0];
  auto small =
      explainSupport(quantizedOperationModel(OperationType::AVERAGE_POOL_2D, {1, 16, 16, 1}, 0.5f));
  ASSERT_TRUE(small) << small.error().message;
  EXPECT_EQ((*small)[0], "");
}

TEST(VulkanPlanTest, RunsNchwBetweenTwoTransposesAndRefusesUnknownInputs) {
  auto plan = buildPlan(gputest::nchwConvModel());
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->dispatches.size(), 3u);
  EXPECT_EQ(plan->dispatches[0].shader, Shader::kGather);  // [1, 2, 4, 4] -> [1, 4, 4, 2]
  EXPECT_EQ(plan->dispatches[1].shader, Shader::kConv2d);
  EXPECT_EQ(plan->dispatches[2].shader, Shader::kGather);  // [1, 4, 4, 3] -> [1, 3, 4, 4]
  EXPECT_EQ(plan->outputDimensions[0], (std::vector<uint32_t>{1, 3, 4, 4}));
  // The first gather reads input (n, c, h, w) for its output (n, h, w, c).
  const std::vector<uint32_t>& p = plan->dispatches[0].push;
  // Push words: 4 of the header, then rank-6 view dims, befores, bounds, strides, base.
  EXPECT_EQ(std::vector<uint32_t>(p.begin() + 6, p.begin() + 10),
            (std::vector<uint32_t>{1, 4, 4, 2}));
  EXPECT_EQ(std::vector<uint32_t>(p.begin() + 24, p.begin() + 28),
            (std::vector<uint32_t>{32, 4, 1, 16}));

  // An input whose size only the request gives.
  Model open = broadcastAddModel(2, 3, {2, 3});
  open.main.operands[0].dimensions = {0, 1};
  auto unknown = explainSupport(open);
  ASSERT_TRUE(unknown) << unknown.error().message;
  EXPECT_NE((*unknown)[0].find("dimensions the model leaves unknown"), std::string::npos);
}

TEST(VulkanPlanTest, FindsTheOutputShapesTheModelLeavesOpen) {
  // ADD's output {0, 0}: the broadcast shape [2, 3].
  auto plan = buildPlan(broadcastAddModel(2, 3));
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->outputDimensions[0], (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(plan->outputs[0].elements, 6u);
  // Every temporary and the output of the test model of unknown shape (rank unknown too).
  Model model = buildModel(OperandType::TENSOR_FLOAT32, 1);
  for (const Operation& operation : model.main.operations) {
    model.main.operands[operation.outputs[0]].dimensions.clear();
  }
  auto open = buildPlan(model);
  ASSERT_TRUE(open) << open.error().message;
  EXPECT_EQ(open->outputDimensions[0], (std::vector<uint32_t>{1, cachetest::kOutputUnits}));
  // A partly given shape must agree with the found one.
  Model wrong = buildModel(OperandType::TENSOR_FLOAT32, 1);
  wrong.main.operands[wrong.main.operations[0].outputs[0]].dimensions = {1, 0, 5, 0};
  auto refused = buildPlan(wrong);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("the output's shape is not the operation's [1, 4, 4, 3]"),
            std::string::npos)
      << refused.error().message;
}

TEST(VulkanPlanTest, ShapesThatDoNotFitMakeTheModelInvalid) {
  // [2, 1] + [1, 3] broadcasts to [2, 3], not to [2, 4].
  auto reasons = explainSupport(broadcastAddModel(2, 3, {2, 4}));
  ASSERT_FALSE(reasons);
  EXPECT_EQ(reasons.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(reasons.error().message.find("the output's shape is not the operation's [2, 3]"),
            std::string::npos)
      << reasons.error().message;
  // [2, 1] + [3, 1]: 2 and 3 do not broadcast.
  Model mismatched = broadcastAddModel(2, 3, {2, 3});
  mismatched.main.operands[1].dimensions = {3, 1};
  auto noBroadcast = explainSupport(mismatched);
  ASSERT_FALSE(noBroadcast);
  EXPECT_NE(noBroadcast.error().message.find("do not broadcast"), std::string::npos);
  auto plan = buildPlan(broadcastAddModel(2, 3, {2, 4}));
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("is invalid"), std::string::npos) << plan.error().message;
  // The depthwise output's channels (4) differ from the filter's (3).
  Model model = buildModel(OperandType::TENSOR_FLOAT32, 1);
  const uint32_t t2 = model.main.operations[1].outputs[0];
  model.main.operands[t2].dimensions = {1, 4, 4, 4};
  EXPECT_FALSE(explainSupport(model));
}

TEST(VulkanPlanTest, BroadcastStridesAreZeroAlongBroadcastDimensions) {
  auto plan = buildPlan(broadcastAddModel(2, 3, {2, 3}));
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->dispatches.size(), 1u);
  const std::vector<uint32_t>& p = plan->dispatches[0].push;
  // dims [1, 1, 2, 3]; a [2, 1]: strides (.., 1, 0); b [1, 3]: strides (.., 0, 1).
  EXPECT_EQ(std::vector<uint32_t>(p.begin() + 8, p.begin() + 12),
            (std::vector<uint32_t>{1, 1, 2, 3}));
  EXPECT_EQ(p[14], 1u);
  EXPECT_EQ(p[15], 0u);
  EXPECT_EQ(p[18], 0u);
  EXPECT_EQ(p[19], 1u);
}

// Elementwise unary operations, SELECT and the operations along an axis read their tensors
// flat or as rows: any rank. The others index rank-4 views: a rank-5 tensor reaching one of
// them is refused there, with the reason.
TEST(VulkanPlanTest, FlatOperationsTakeAnyRankAndTheOthersRankFour) {
  const auto chain = [](OperationType second) {
    cachetest::ModelBuilder b;
    const OperandType f = OperandType::TENSOR_FLOAT32;
    const std::vector<uint32_t> dims = {2, 1, 3, 1, 4};
    const uint32_t in = b.tensor(f, dims, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t mid = b.tensor(f, dims, 0.0f, 0, OperandLifeTime::TEMPORARY_VARIABLE);
    const uint32_t out = b.tensor(f, dims, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
    b.operation(OperationType::ABS, {in}, {mid});
    if (second == OperationType::ADD) {
      const uint32_t none = b.scalar(0);
      b.operation(second, {mid, mid, none}, {out});
    } else {
      const uint32_t axis = b.scalar(2);
      Operand beta;
      beta.type = OperandType::FLOAT32;
      beta.lifetime = OperandLifeTime::CONSTANT_COPY;
      const float one = 1.0f;
      beta.location = {0, static_cast<uint32_t>(b.model.operandValues.size()), 4};
      b.model.operandValues.resize(b.model.operandValues.size() + 4);
      std::memcpy(b.model.operandValues.data() + beta.location.offset, &one, 4);
      const uint32_t betaIndex = b.add(std::move(beta));
      b.operation(second, {mid, betaIndex, axis}, {out});
    }
    b.model.main.inputIndexes = {in};
    b.model.main.outputIndexes = {out};
    return std::move(b.model);
  };
  auto flat = buildPlan(chain(OperationType::LOG_SOFTMAX));
  ASSERT_TRUE(flat) << flat.error().message;
  EXPECT_EQ(flat->outputDimensions[0], (std::vector<uint32_t>{2, 1, 3, 1, 4}));
  auto reasons = explainSupport(chain(OperationType::ADD));
  ASSERT_TRUE(reasons) << reasons.error().message;
  ASSERT_EQ(reasons->size(), 2u);
  EXPECT_EQ((*reasons)[0], "");
  EXPECT_NE((*reasons)[1].find("rank 1 to 4"), std::string::npos) << (*reasons)[1];
}

// The bounds of the 8-bit axis operations and SPACE_TO_BATCH_ND's paddings: refused (the
// reason given per operation) where the shader's arithmetic would not be exact, invalid where
// the model contradicts the operation.
TEST(VulkanPlanTest, EightBitAxisBoundsAndPaddingsAreChecked) {
  const OperandType u8 = OperandType::TENSOR_QUANT8_ASYMM;
  const auto l2 = [&](uint32_t axisSize, float outScale) {
    cachetest::ModelBuilder b;
    const uint32_t in = b.tensor(u8, {1, axisSize}, 0.5f, 3, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t out =
        b.tensor(u8, {1, axisSize}, outScale, 128, OperandLifeTime::SUBGRAPH_OUTPUT);
    b.operation(OperationType::L2_NORMALIZATION, {in}, {out});
    b.model.main.inputIndexes = {in};
    b.model.main.outputIndexes = {out};
    return std::move(b.model);
  };
  auto longAxis = explainSupport(l2(65537, 1.0f / 128.0f));
  ASSERT_TRUE(longAxis) << longAxis.error().message;
  EXPECT_NE(longAxis->at(0).find("an axis longer than 65536"), std::string::npos);
  EXPECT_TRUE(buildPlan(l2(65536, 1.0f / 128.0f)));
  auto wrongScale = explainSupport(l2(8, 1.0f / 256.0f));
  ASSERT_FALSE(wrongScale);
  EXPECT_EQ(wrongScale.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(wrongScale.error().message.find("scale 1/128"), std::string::npos);

  cachetest::ModelBuilder mean;
  const uint32_t values =
      mean.tensor(u8, {1, (1u << 23) + 1}, 0.5f, 3, OperandLifeTime::SUBGRAPH_INPUT);
  const int32_t axis = 1;
  const uint32_t axes = mean.constant(OperandType::TENSOR_INT32, {1}, 0.0f, 0, &axis, 4);
  const uint32_t keep = mean.scalar(0);
  const uint32_t averaged = mean.tensor(u8, {1}, 0.5f, 3, OperandLifeTime::SUBGRAPH_OUTPUT);
  mean.operation(OperationType::MEAN, {values, axes, keep}, {averaged});
  mean.model.main.inputIndexes = {values};
  mean.model.main.outputIndexes = {averaged};
  auto tooMany = explainSupport(mean.finish());
  ASSERT_TRUE(tooMany) << tooMany.error().message;
  EXPECT_NE(tooMany->at(0).find("more than 2^23"), std::string::npos) << tooMany->at(0);

  cachetest::ModelBuilder s2b;
  const OperandType f = OperandType::TENSOR_FLOAT32;
  const uint32_t image = s2b.tensor(f, {1, 4, 4, 1}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
  const std::vector<int32_t> block = {2, 2};
  const std::vector<int32_t> paddings = {1, -1, 0, 0};
  const uint32_t blockIndex =
      s2b.constant(OperandType::TENSOR_INT32, {2}, 0.0f, 0, block.data(), 8);
  const uint32_t padIndex =
      s2b.constant(OperandType::TENSOR_INT32, {2, 2}, 0.0f, 0, paddings.data(), 16);
  const uint32_t moved = s2b.tensor(f, {4, 2, 2, 1}, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
  s2b.operation(OperationType::SPACE_TO_BATCH_ND, {image, blockIndex, padIndex}, {moved});
  s2b.model.main.inputIndexes = {image};
  s2b.model.main.outputIndexes = {moved};
  auto negative = explainSupport(s2b.finish());
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(negative.error().message.find("negative padding"), std::string::npos)
      << negative.error().message;
}

// A hostile broadcast ([65536, 1] + [1, 65536] into an output of open shape) would make 2^32
// elements: refused, not wrapped to a small buffer.
TEST(VulkanPlanTest, ShapesBeyondTheBufferAreRefused) {
  auto reasons = explainSupport(broadcastAddModel());
  ASSERT_TRUE(reasons) << reasons.error().message;
  EXPECT_NE((*reasons)[0].find("exceeds the execution buffer"), std::string::npos) << (*reasons)[0];
  auto checked = checkPlan(broadcastAddModel());
  ASSERT_FALSE(checked);
  EXPECT_EQ(checked.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_TRUE(checkPlan(buildModel(OperandType::TENSOR_FLOAT32, 1)));
}

TEST(VulkanPlanTest, WideDispatchesFoldIntoTwoDimensions) {
  EXPECT_EQ(workgroupCounts(0), (std::pair<uint32_t, uint32_t>{1, 1}));
  EXPECT_EQ(workgroupCounts(64), (std::pair<uint32_t, uint32_t>{1, 1}));
  EXPECT_EQ(workgroupCounts(65), (std::pair<uint32_t, uint32_t>{2, 1}));
  EXPECT_EQ(workgroupCounts(64 * kMaxWorkgroupsX),
            (std::pair<uint32_t, uint32_t>{kMaxWorkgroupsX, 1}));
  EXPECT_EQ(workgroupCounts(64 * kMaxWorkgroupsX + 1),
            (std::pair<uint32_t, uint32_t>{kMaxWorkgroupsX, 2}));
}

}  // namespace
}  // namespace nnhal::backend::vulkan
