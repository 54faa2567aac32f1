#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"
#include "kernels/fully_connected.h"
#include "kernels/quantization.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::runKernel;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;

OpBuilder floatFc(std::vector<uint32_t> inputDims, uint32_t units, uint32_t inputSize) {
  static const std::vector<float> weights(64 * 64, 0.5f);
  static const std::vector<float> bias(64, 1.0f);
  OpBuilder b(OperationType::FULLY_CONNECTED);
  b.tensor(kF32, std::move(inputDims))
      .constTensor(kF32, {units, inputSize}, weights)
      .constTensor(kF32, {units}, bias)
      .int32(0)
      .output(kF32);
  return b;
}

TEST(FullyConnectedPrepareTest, FlattensInput) {
  auto b = floatFc({2, 3, 4}, 5, 12);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareFullyConnected(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{2, 5}));
  auto c = floatFc({3, 2, 2, 2}, 7, 4);
  PrepareContext ctx2 = c.context();
  ASSERT_TRUE(ops::prepareFullyConnected(ctx2).has_value());
  EXPECT_EQ(ctx2.output(0).dimensions, (std::vector<uint32_t>{6, 7}));
}

TEST(FullyConnectedPrepareTest, Rejections) {
  {
    auto b = floatFc({2, 5}, 3, 4);
    expectRejected(b, ops::prepareFullyConnected,
                   "FULLY_CONNECTED input 0 has 10 elements, not a multiple of the input size 4");
  }
  {
    auto b = floatFc({8}, 3, 4);
    expectRejected(b, ops::prepareFullyConnected, "input 0 must have rank 2 to 4, got 1");
  }
  {
    auto b = floatFc({2, 4}, 3, 4);
    b.input(1).dimensions = {3, 4, 1};
    expectRejected(b, ops::prepareFullyConnected, "input 1 must have rank 2");
  }
  {
    auto b = floatFc({2, 4}, 3, 4);
    b.input(2).dimensions = {4};
    expectRejected(b, ops::prepareFullyConnected, "(bias) has 4 values for 3 units");
  }
  {
    auto b = floatFc({2, 4}, 3, 4);
    b.input(1).dimensions = {0, 4};
    expectRejected(b, ops::prepareFullyConnected, "(weights) must have non-zero dimensions");
  }
  {
    auto b = floatFc({2, 4}, 3, 4);
    b.int32(0);
    expectRejected(b, ops::prepareFullyConnected, "FULLY_CONNECTED takes 4 inputs, got 5");
  }
  {
    auto b = floatFc({2, 4}, 3, 4);
    b.input(1).type = kQ8S;
    expectRejected(b, ops::prepareFullyConnected, "FULLY_CONNECTED input 1 must be TENSOR_FLOAT32");
  }
  {
    auto b = floatFc({2, 4}, 3, 4);
    b.input(3).constantData = nullptr;
    expectRejected(b, ops::prepareFullyConnected, "FULLY_CONNECTED input 3 must be a constant");
  }
}

TEST(FullyConnectedQuantTest, Int8MatchesReferenceConstantAndRuntime) {
  std::mt19937 rng(12);
  std::uniform_int_distribution<int> value(-128, 127);
  const uint32_t batches = 3, inputSize = 37, units = 21;
  std::vector<int8_t> input(batches * inputSize), weights(units * inputSize);
  for (auto& v : input) v = static_cast<int8_t>(value(rng));
  for (auto& v : weights) v = static_cast<int8_t>(value(rng));
  std::vector<int32_t> bias(units);
  for (auto& v : bias) v = value(rng) * 30;
  kernels::QuantizedMultiplier m;
  ASSERT_TRUE(kernels::quantizeMultiplier(double{0.1f * 0.02f} / 0.05, &m));
  int32_t lo = 0, hi = 0;
  kernels::activationRangeQuantized(FusedActivationFunc::RELU1, 0.05f, -10, -128, 127, &lo, &hi);
  std::vector<int8_t> expected(batches * units);
  kernels::fullyConnectedQuantReference<int8_t>(input.data(), batches, inputSize, weights.data(),
                                                units, 5, -7, bias.data(), m, -10, lo, hi,
                                                expected.data());
  for (bool constant : {true, false}) {
    SCOPED_TRACE(constant);
    OpBuilder b(OperationType::FULLY_CONNECTED);
    b.tensor(kQ8S, {batches, inputSize}, 0.1f, 5);
    if (constant) {
      b.constTensor(kQ8S, {units, inputSize}, weights, 0.02f, -7)
          .constTensor(kI32, {units}, bias, 0.1f * 0.02f, 0);
    } else {
      b.tensor(kQ8S, {units, inputSize}, 0.02f, -7).tensor(kI32, {units}, 0.1f * 0.02f, 0);
    }
    b.int32(2).output(kQ8S, {}, 0.05f, -10);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareFullyConnected(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    std::vector<int8_t> out(batches * units);
    ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), weights.data(), bias.data()}, {out.data()})
                    .has_value());
    EXPECT_EQ(out, expected);
  }
}

// Packing large constant weights lets more urgent work in between steps of about 64 KiB
// (PrepareContext::yieldPoint), and the kernel computes the same as with no yield point.
TEST(FullyConnectedQuantTest, PackingLargeWeightsYieldsBetweenSteps) {
  struct CountingYield final : YieldPoint {
    void yield() override { ++calls; }
    int calls = 0;
  };
  const uint32_t inputSize = 1024, units = 256;  // 256 KiB of weights: 4 steps
  std::vector<int8_t> weights(units * inputSize);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<int8_t>(i * 7 % 251);
  std::vector<int32_t> bias(units, 3);
  std::vector<int8_t> input(inputSize);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<int8_t>(i % 13);
  std::vector<std::vector<int8_t>> outputs;
  for (bool yielding : {false, true}) {
    OpBuilder b(OperationType::FULLY_CONNECTED);
    b.tensor(kQ8S, {1, inputSize}, 0.1f, 0)
        .constTensor(kQ8S, {units, inputSize}, weights, 0.02f, 0)
        .constTensor(kI32, {units}, bias, 0.1f * 0.02f, 0)
        .int32(0)
        .output(kQ8S, {}, 2.0f, 0);
    PrepareContext ctx = b.context();
    CountingYield counter;
    if (yielding) ctx.bindYield(&counter);
    auto kernel = ops::prepareFullyConnected(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    if (yielding) {
      EXPECT_EQ(counter.calls, 3);
    }
    std::vector<int8_t> out(units);
    ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), weights.data(), bias.data()}, {out.data()})
                    .has_value());
    outputs.push_back(out);
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

}  // namespace
}  // namespace nnhal::engine
