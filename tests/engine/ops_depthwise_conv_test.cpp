#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"
#include "kernels/depthwise_conv.h"
#include "kernels/quantization.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::runKernel;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;
constexpr auto kPerChannel = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;

const std::vector<float> kFilter(64 * 9, 0.25f);
const std::vector<float> kBias(64, 1.0f);

// Float depthwise conv: input [1, h, w, c], filter [1, 3, 3, c * m], implicit padding.
OpBuilder implicitBuilder(uint32_t h, uint32_t w, uint32_t c, int32_t m, int32_t code,
                          int32_t stride) {
  OpBuilder b(OperationType::DEPTHWISE_CONV_2D);
  b.tensor(kF32, {1, h, w, c})
      .constTensor(kF32, {1, 3, 3, c * m}, kFilter)
      .constTensor(kF32, {c * m}, kBias)
      .int32(code)
      .int32(stride)
      .int32(stride)
      .int32(m)
      .int32(0)
      .output(kF32);
  return b;
}

OpBuilder explicitBuilder(uint32_t h, uint32_t w, uint32_t c, int32_t m, int32_t pad) {
  OpBuilder b(OperationType::DEPTHWISE_CONV_2D);
  b.tensor(kF32, {1, h, w, c})
      .constTensor(kF32, {1, 3, 3, c * m}, kFilter)
      .constTensor(kF32, {c * m}, kBias)
      .int32(pad)
      .int32(pad)
      .int32(pad)
      .int32(pad)
      .int32(1)
      .int32(1)
      .int32(m)
      .int32(0)
      .output(kF32);
  return b;
}

std::vector<uint32_t> shapeOf(OpBuilder& b) {
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareDepthwiseConv2D(ctx);
  EXPECT_TRUE(kernel.has_value()) << kernel.error().message;
  return ctx.output(0).dimensions;
}

TEST(DepthwiseConv2DPrepareTest, Shapes) {
  auto same = implicitBuilder(9, 8, 4, 2, 1, 2);
  EXPECT_EQ(shapeOf(same), (std::vector<uint32_t>{1, 5, 4, 8}));
  auto valid = implicitBuilder(9, 8, 4, 1, 2, 1);
  EXPECT_EQ(shapeOf(valid), (std::vector<uint32_t>{1, 7, 6, 4}));
  auto padded = explicitBuilder(5, 5, 3, 1, 1);
  EXPECT_EQ(shapeOf(padded), (std::vector<uint32_t>{1, 5, 5, 3}));
  auto dilated = implicitBuilder(9, 9, 4, 1, 2, 1);
  dilated.boolean(false).int32(2).int32(3);  // 11 inputs, input 8 BOOL: implicit
  EXPECT_EQ(shapeOf(dilated), (std::vector<uint32_t>{1, 3, 5, 4}));
  auto explicitDilated = explicitBuilder(9, 9, 4, 1, 0);
  explicitDilated.boolean(false).int32(3).int32(2);  // 14 inputs
  EXPECT_EQ(shapeOf(explicitDilated), (std::vector<uint32_t>{1, 5, 3, 4}));
}

TEST(DepthwiseConv2DPrepareTest, Rejections) {
  {
    auto b = implicitBuilder(5, 5, 4, 2, 1, 1);
    b.input(1).dimensions = {1, 3, 3, 6};
    b.input(2).dimensions = {6};
    expectRejected(b, ops::prepareDepthwiseConv2D,
                   "(depth multiplier 2) times the input depth 4 must equal the filter depth 6");
  }
  {
    auto b = implicitBuilder(5, 5, 4, 0, 1, 1);
    b.input(1).dimensions = {1, 3, 3, 4};
    b.input(2).dimensions = {4};
    expectRejected(b, ops::prepareDepthwiseConv2D,
                   "DEPTHWISE_CONV_2D input 6 (depth multiplier 0)");
  }
  {
    auto b = implicitBuilder(5, 5, 4, 1, 1, 1);
    b.input(1).dimensions = {2, 3, 3, 4};
    expectRejected(b, ops::prepareDepthwiseConv2D, "(filter) dimension 0 must be 1, got 2");
  }
  {
    auto b = implicitBuilder(5, 5, 4, 1, 1, 1);
    b.input(2).dimensions = {5};
    expectRejected(b, ops::prepareDepthwiseConv2D, "(bias) has 5 values for 4 output channels");
  }
  {
    auto b = implicitBuilder(5, 5, 4, 1, 1, 1);
    b.boolean(true);  // NCHW: input 0 is read as [1, 5(C), 5(H), 4(W)]: depth 5 != 4
    expectRejected(b, ops::prepareDepthwiseConv2D, "times the input depth 5");
  }
  {
    auto b = implicitBuilder(5, 5, 4, 1, 1, 1);
    b.boolean(false).int32(1);  // 10 inputs
    expectRejected(b, ops::prepareDepthwiseConv2D, "takes 8, 9, 11, 12, 14 inputs, got 10");
  }
  {
    auto b = explicitBuilder(5, 5, 4, 1, 3);
    expectRejected(b, ops::prepareDepthwiseConv2D, "must be smaller than the effective filter");
  }
  {
    auto b = implicitBuilder(5, 5, 4, 1, 1, 1);
    b.input(1).type = kQ8;
    expectRejected(b, ops::prepareDepthwiseConv2D, "(filter) has type TENSOR_QUANT8_ASYMM");
  }
  {
    auto b = implicitBuilder(5, 5, 4, 1, 1, 1);
    b.input(0).dimensions = {1, 5, 5, 4, 1};
    expectRejected(b, ops::prepareDepthwiseConv2D, "input 0 must have rank 4");
  }
}

// Quantized, per-channel and runtime-filter variants against the kernel reference.
TEST(DepthwiseConv2DQuantTest, MatchesReference) {
  std::mt19937 rng(9);
  std::uniform_int_distribution<int> byte(0, 255);
  const uint32_t h = 10, w = 9, c = 24, m = 2, cout = c * m;
  std::vector<uint8_t> input(h * w * c), filter(9 * cout);
  for (auto& v : input) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : filter) v = static_cast<uint8_t>(byte(rng));
  std::vector<int32_t> bias(cout);
  for (auto& v : bias) v = byte(rng) * 8 - 1000;
  kernels::DepthwiseGeometry g;
  g.inHeight = h;
  g.inWidth = w;
  g.inDepth = c;
  g.depthMultiplier = m;
  g.outDepth = cout;
  g.filterHeight = g.filterWidth = 3;
  g.strideHeight = g.strideWidth = 2;
  g.outHeight = 5;  // SAME, stride 2: ceil(10/2), pad total 1 -> top 0
  g.outWidth = 5;   // ceil(9/2) = 5, pad total 2 -> left 1
  g.padTop = 0;
  g.padLeft = 1;

  for (int variant = 0; variant < 3; ++variant) {
    SCOPED_TRACE(variant);
    const bool perChannel = variant == 2, constant = variant != 1;
    std::vector<int8_t> signedFilter(filter.size());
    for (size_t i = 0; i < filter.size(); ++i) signedFilter[i] = static_cast<int8_t>(filter[i]);
    std::vector<float> scales(cout);
    for (uint32_t i = 0; i < cout; ++i) scales[i] = 0.001f * static_cast<float>(i + 1);
    OpBuilder b(OperationType::DEPTHWISE_CONV_2D);
    b.tensor(kQ8, {1, h, w, c}, 0.05f, 128);
    if (perChannel) {
      b.constTensor(kPerChannel, {1, 3, 3, cout}, signedFilter)
          .perChannel(scales, 3)
          .constTensor(kI32, {cout}, bias);
    } else if (constant) {
      b.constTensor(kQ8, {1, 3, 3, cout}, filter, 0.01f, 100)
          .constTensor(kI32, {cout}, bias, 0.05f * 0.01f, 0);
    } else {
      b.tensor(kQ8, {1, 3, 3, cout}, 0.01f, 100).tensor(kI32, {cout}, 0.05f * 0.01f, 0);
    }
    b.int32(1).int32(2).int32(2).int32(static_cast<int32_t>(m)).int32(1).output(kQ8, {}, 0.1f, 60);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareDepthwiseConv2D(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    ASSERT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 5, 5, cout}));
    std::vector<kernels::QuantizedMultiplier> ms(cout);
    for (uint32_t i = 0; i < cout; ++i) {
      const float fs = perChannel ? scales[i] : 0.01f;
      ASSERT_TRUE(kernels::quantizeMultiplier(double{0.05f * fs} / double{0.1f}, &ms[i]));
    }
    int32_t lo = 0, hi = 0;
    kernels::activationRangeQuantized(FusedActivationFunc::RELU, 0.1f, 60, 0, 255, &lo, &hi);
    std::vector<uint8_t> expected(25 * cout), out(25 * cout);
    if (perChannel) {
      kernels::depthwiseQuantReference<uint8_t, int8_t>(g, input.data(), 128, signedFilter.data(),
                                                        0, bias.data(), ms.data(), 60, lo, hi,
                                                        expected.data());
    } else {
      kernels::depthwiseQuantReference<uint8_t, uint8_t>(g, input.data(), 128, filter.data(), 100,
                                                         bias.data(), ms.data(), 60, lo, hi,
                                                         expected.data());
    }
    ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), filter.data(), bias.data()}, {out.data()})
                    .has_value());
    EXPECT_EQ(out, expected);
  }
}

TEST(DepthwiseConv2DQuantTest, RejectsPerChannelAlongWrongDimension) {
  const std::vector<int8_t> filter(9 * 4, 1);
  const std::vector<int32_t> bias(4, 0);
  OpBuilder b(OperationType::DEPTHWISE_CONV_2D);
  b.tensor(kQ8S, {1, 5, 5, 4}, 0.5f, 0)
      .constTensor(kPerChannel, {1, 3, 3, 4}, filter)
      .perChannel({0.1f, 0.1f, 0.1f, 0.1f}, 0)
      .constTensor(kI32, {4}, bias)
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(0)
      .output(kQ8S, {}, 1.0f, 0);
  expectRejected(b, ops::prepareDepthwiseConv2D, "must be quantized along dimension 3");
}

TEST(DepthwiseConv2DFloatTest, NchwLayout) {
  // Input NCHW [1, 2, 2, 2]: channel 0 = {1, 2, 3, 4}, channel 1 = {5, 6, 7, 8}.
  const std::vector<float> filter{1, 1, 10, 10, 100, 100, 1000, 1000};
  const std::vector<float> bias{0.5f, -0.5f};
  OpBuilder b(OperationType::DEPTHWISE_CONV_2D);
  b.tensor(kF32, {1, 2, 2, 2})
      .constTensor(kF32, {1, 2, 2, 2}, filter)
      .constTensor(kF32, {2}, bias)
      .int32(2)
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(0)
      .boolean(true)
      .output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareDepthwiseConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 2, 1, 1}));
  const std::vector<float> input{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<float> out(2);
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), nullptr, nullptr}, {out.data()}).has_value());
  EXPECT_FLOAT_EQ(out[0], 1 + 20 + 300 + 4000 + 0.5f);
  EXPECT_FLOAT_EQ(out[1], 5 + 60 + 700 + 8000 - 0.5f);
}

TEST(DepthwiseConv2DFloatTest, RuntimeFilterAndBias) {
  OpBuilder b(OperationType::DEPTHWISE_CONV_2D);
  b.tensor(kF32, {1, 2, 2, 2})
      .tensor(kF32, {1, 2, 2, 2})
      .tensor(kF32, {2})
      .int32(2)
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(0)
      .output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareDepthwiseConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  const std::vector<float> input{1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> filter{1, 1, 10, 10, 100, 100, 1000, 1000};
  const std::vector<float> bias{0.5f, -0.5f};
  std::vector<float> out(2);
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), filter.data(), bias.data()}, {out.data()})
                  .has_value());
  EXPECT_FLOAT_EQ(out[0], 1 + 30 + 500 + 7000 + 0.5f);
  EXPECT_FLOAT_EQ(out[1], 2 + 40 + 600 + 8000 - 0.5f);
}

}  // namespace
}  // namespace nnhal::engine
