// GROUPED_CONV_2D prepare + kernel: results against a direct loop reference, layouts,
// weights given at execution, and every rejection.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"
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

struct Geometry {
  uint32_t batches = 1, height = 4, width = 5, depthIn = 4, depthOut = 6, groups = 2;
  uint32_t filterHeight = 3, filterWidth = 2;
  int32_t padLeft = 1, padRight = 0, padTop = 1, padBottom = 1;
  int32_t strideWidth = 1, strideHeight = 2;
  uint32_t outHeight() const {
    return (height + padTop + padBottom - filterHeight) / strideHeight + 1;
  }
  uint32_t outWidth() const { return (width + padLeft + padRight - filterWidth) / strideWidth + 1; }
};

// Sums of the grouped convolution (NHWC), in double: input and filter already minus their
// zero points.
std::vector<double> referenceSums(const Geometry& g, const std::vector<double>& input,
                                  const std::vector<double>& filter) {
  const uint32_t oh = g.outHeight(), ow = g.outWidth();
  const uint32_t groupIn = g.depthIn / g.groups, groupOut = g.depthOut / g.groups;
  std::vector<double> out(size_t{g.batches} * oh * ow * g.depthOut, 0.0);
  for (uint32_t b = 0; b < g.batches; ++b) {
    for (uint32_t y = 0; y < oh; ++y) {
      for (uint32_t x = 0; x < ow; ++x) {
        for (uint32_t k = 0; k < g.depthOut; ++k) {
          const uint32_t group = k / groupOut;
          double sum = 0.0;
          for (uint32_t i = 0; i < g.filterHeight; ++i) {
            for (uint32_t j = 0; j < g.filterWidth; ++j) {
              const int64_t iy = int64_t{y} * g.strideHeight - g.padTop + i;
              const int64_t ix = int64_t{x} * g.strideWidth - g.padLeft + j;
              if (iy < 0 || iy >= g.height || ix < 0 || ix >= g.width) continue;
              for (uint32_t d = 0; d < groupIn; ++d) {
                sum +=
                    input[((b * g.height + iy) * g.width + ix) * g.depthIn + group * groupIn + d] *
                    filter[((k * g.filterHeight + i) * g.filterWidth + j) * groupIn + d];
              }
            }
          }
          out[((size_t{b} * oh + y) * ow + x) * g.depthOut + k] = sum;
        }
      }
    }
  }
  return out;
}

// Appends the scalars of the explicit form (12 inputs).
void explicitScalars(OpBuilder& b, const Geometry& g, int32_t activation, bool nchw) {
  b.int32(g.padLeft)
      .int32(g.padRight)
      .int32(g.padTop)
      .int32(g.padBottom)
      .int32(g.strideWidth)
      .int32(g.strideHeight)
      .int32(static_cast<int32_t>(g.groups))
      .int32(activation)
      .boolean(nchw);
}

std::vector<float> ramp(size_t count, float scale, int mod) {
  std::vector<float> v(count);
  for (size_t i = 0; i < count; ++i)
    v[i] = scale * static_cast<float>(static_cast<int>(i % mod) - mod / 2);
  return v;
}

TEST(GroupedConv2DTest, FloatMatchesReference) {
  const Geometry g;
  const auto input = ramp(size_t{g.batches} * g.height * g.width * g.depthIn, 0.25f, 7);
  const auto filter =
      ramp(size_t{g.depthOut} * g.filterHeight * g.filterWidth * (g.depthIn / g.groups), 0.5f, 5);
  const std::vector<float> bias{0.5f, -1.0f, 2.0f, 0.0f, 1.5f, -0.25f};
  for (const bool constantWeights : {true, false}) {
    OpBuilder b(OperationType::GROUPED_CONV_2D);
    b.tensor(kF32, {g.batches, g.height, g.width, g.depthIn});
    const std::vector<uint32_t> filterDims{g.depthOut, g.filterHeight, g.filterWidth,
                                           g.depthIn / g.groups};
    if (constantWeights) {
      b.constTensor(kF32, filterDims, filter).constTensor(kF32, {g.depthOut}, bias);
    } else {
      b.tensor(kF32, filterDims).tensor(kF32, {g.depthOut});
    }
    explicitScalars(b, g, 0, false);
    b.output(kF32);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareGroupedConv2D(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    ASSERT_EQ(ctx.output(0).dimensions,
              (std::vector<uint32_t>{g.batches, g.outHeight(), g.outWidth(), g.depthOut}));
    std::vector<float> out(g.outHeight() * g.outWidth() * g.depthOut);
    ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), filter.data(), bias.data()}, {out.data()})
                    .has_value());
    const auto sums = referenceSums(g, std::vector<double>(input.begin(), input.end()),
                                    std::vector<double>(filter.begin(), filter.end()));
    for (size_t e = 0; e < out.size(); ++e) {
      EXPECT_NEAR(out[e], sums[e] + bias[e % g.depthOut], 1e-4) << "element " << e;
    }
  }
}

// Quantized (uint8 filter, int8 filter or per-channel) against the reference arithmetic.
template <typename T>
void checkQuantized(bool perChannel) {
  Geometry g;
  g.batches = 2;
  g.groups = 3;
  g.depthIn = 6;
  g.depthOut = 9;
  constexpr bool kSigned = std::is_signed_v<T>;
  const OperandType type = kSigned ? kQ8S : kQ8;
  const int32_t inputZero = kSigned ? -3 : 120, filterZero = perChannel ? 0 : (kSigned ? 2 : 130);
  const int32_t outputZero = kSigned ? 5 : 100;
  const float inputScale = 0.5f, outputScale = 64.0f;  // keeps most results unclamped
  std::mt19937 rng(5);
  const size_t inCount = size_t{g.batches} * g.height * g.width * g.depthIn;
  const size_t filterCount = size_t{g.depthOut} * g.filterHeight * g.filterWidth * 2;
  std::vector<T> input(inCount);
  std::vector<uint8_t> filter(filterCount);
  std::uniform_int_distribution<int> inDist(kSigned ? -128 : 0, kSigned ? 127 : 255);
  std::uniform_int_distribution<int> fDist(perChannel || kSigned ? -127 : 0,
                                           perChannel || kSigned ? 127 : 255);
  for (T& v : input) v = static_cast<T>(inDist(rng));
  for (uint8_t& v : filter) v = static_cast<uint8_t>(fDist(rng));
  std::vector<float> scales(g.depthOut);
  for (uint32_t k = 0; k < g.depthOut; ++k) scales[k] = perChannel ? 0.05f * (k + 1) : 0.25f;
  std::vector<int32_t> bias(g.depthOut);
  for (uint32_t k = 0; k < g.depthOut; ++k) bias[k] = static_cast<int32_t>(k * 37) - 150;

  OpBuilder b(OperationType::GROUPED_CONV_2D);
  b.tensor(type, {g.batches, g.height, g.width, g.depthIn}, inputScale, inputZero);
  b.constTensor(perChannel ? kPerChannel : type, {g.depthOut, g.filterHeight, g.filterWidth, 2},
                filter, perChannel ? 0.0f : 0.25f, filterZero);
  if (perChannel) b.perChannel(scales, 0);
  b.constTensor(kI32, {g.depthOut}, bias, perChannel ? 0.0f : inputScale * 0.25f, 0);
  explicitScalars(b, g, 1, false);
  b.output(type, {}, outputScale, outputZero);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareGroupedConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  std::vector<T> out(size_t{g.batches} * g.outHeight() * g.outWidth() * g.depthOut);
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data()}, {out.data()}).has_value());

  std::vector<double> inValues(inCount), fValues(filterCount);
  for (size_t e = 0; e < inCount; ++e) inValues[e] = int32_t{input[e]} - inputZero;
  for (size_t e = 0; e < filterCount; ++e) {
    const int32_t raw =
        (perChannel || kSigned) ? int32_t{static_cast<int8_t>(filter[e])} : int32_t{filter[e]};
    fValues[e] = raw - filterZero;
  }
  const auto sums = referenceSums(g, inValues, fValues);
  const int32_t qmin = kSigned ? -128 : 0, qmax = kSigned ? 127 : 255;
  size_t unclamped = 0;
  for (size_t e = 0; e < out.size(); ++e) {
    const size_t k = e % g.depthOut;
    kernels::QuantizedMultiplier m;
    ASSERT_TRUE(
        kernels::quantizeMultiplier(static_cast<double>(inputScale * scales[k]) / outputScale, &m));
    int32_t v = kernels::multiplyByQuantizedMultiplier(static_cast<int32_t>(sums[e]) + bias[k], m);
    const int32_t lo = std::max(qmin, outputZero);  // RELU
    unclamped += v + outputZero > lo && v + outputZero < qmax;
    v = std::clamp(v + outputZero, lo, qmax);
    EXPECT_EQ(int32_t{out[e]}, v) << "element " << e;
  }
  EXPECT_GT(unclamped, out.size() / 4);
}

TEST(GroupedConv2DTest, Uint8MatchesReference) { checkQuantized<uint8_t>(false); }
TEST(GroupedConv2DTest, Int8MatchesReference) { checkQuantized<int8_t>(false); }
TEST(GroupedConv2DTest, Uint8PerChannelMatchesReference) { checkQuantized<uint8_t>(true); }
TEST(GroupedConv2DTest, Int8PerChannelMatchesReference) { checkQuantized<int8_t>(true); }

// The CTS example grouped_conv2d_nhwc_none (implicit VALID, stride 1, 2 groups) in NCHW.
TEST(GroupedConv2DTest, ImplicitNchw) {
  const std::vector<float> input{1,  2, 3, 4, 5, 6, 7, 8, 9,   // channel 0
                                 -1, 0, 1, 2, 3, 4, 5, 6, 7};  // channel 1
  const std::vector<float> filter{1, 2, 3, 4, 1, 0, 0, 1};     // [2, 2, 2, 1]
  const std::vector<float> bias{10, -10};
  OpBuilder b(OperationType::GROUPED_CONV_2D);
  b.tensor(kF32, {1, 2, 3, 3})
      .constTensor(kF32, {2, 2, 2, 1}, filter)
      .constTensor(kF32, {2}, bias)
      .int32(2)  // VALID
      .int32(1)
      .int32(1)
      .int32(2)  // groups
      .int32(0)
      .boolean(true)
      .output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareGroupedConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 2, 2, 2}));
  std::vector<float> out(8);
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data()}, {out.data()}).has_value());
  // Channel 0: 1*a + 2*b + 3*d + 4*e over channel 0 windows, + 10.
  // Channel 1: a + e over channel 1 windows, - 10.
  const std::vector<float> expected{1 + 4 + 12 + 20 + 10,
                                    2 + 6 + 15 + 24 + 10,
                                    4 + 10 + 21 + 32 + 10,
                                    5 + 12 + 24 + 36 + 10,
                                    -1 + 3 - 10,
                                    0 + 4 - 10,
                                    2 + 6 - 10,
                                    3 + 7 - 10};
  EXPECT_EQ(out, expected);
}

TEST(GroupedConv2DTest, ZeroBatchRuns) {
  const Geometry g;
  const std::vector<float> filter(size_t{g.depthOut} * g.filterHeight * g.filterWidth * 2, 1.0f);
  OpBuilder b(OperationType::GROUPED_CONV_2D);
  b.tensor(kF32, {0, g.height, g.width, g.depthIn})
      .constTensor(kF32, {g.depthOut, g.filterHeight, g.filterWidth, 2}, filter)
      .omitted(kF32);
  explicitScalars(b, g, 0, false);
  b.output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareGroupedConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(ctx.output(0).dimensions[0], 0u);
  EXPECT_TRUE(runKernel(**kernel, ctx, {nullptr}, {nullptr}).has_value());
}

// A valid float operation to break in the rejection tests.
OpBuilder validFloat(const Geometry& g, const std::vector<float>& filter,
                     const std::vector<float>& bias) {
  OpBuilder b(OperationType::GROUPED_CONV_2D);
  b.tensor(kF32, {g.batches, g.height, g.width, g.depthIn})
      .constTensor(kF32, {g.depthOut, g.filterHeight, g.filterWidth, g.depthIn / g.groups}, filter)
      .constTensor(kF32, {g.depthOut}, bias);
  explicitScalars(b, g, 0, false);
  b.output(kF32);
  return b;
}

template <typename Mutate>
void expectRejected(Mutate mutate, const std::string& fragment) {
  const Geometry g;
  const std::vector<float> filter(200, 1.0f), bias(6, 0.0f);
  OpBuilder b = validFloat(g, filter, bias);
  mutate(b);
  expectRejected(b, ops::prepareGroupedConv2D, fragment);
}

TEST(GroupedConv2DTest, Rejections) {
  expectRejected([](OpBuilder& b) { b.int32(0); }, "GROUPED_CONV_2D takes 9 or 12 inputs, got 13");
  expectRejected([](OpBuilder& b) { b.setInt32(9, 0); },
                 "GROUPED_CONV_2D input 9 (numGroups) must be > 0, got 0");
  expectRejected([](OpBuilder& b) { b.setInt32(9, 3); },
                 "times numGroups 3 does not match the input depth 4");
  expectRejected(
      [](OpBuilder& b) {
        b.input(1).dimensions = {5, 3, 2, 2};
      },
      "output depth 5 is not a multiple of numGroups 2");
  expectRejected([](OpBuilder& b) { b.input(2).dimensions = {4}; },
                 "GROUPED_CONV_2D input 2 (bias) has 4 values for 6 output channels");
  expectRejected([](OpBuilder& b) { b.setInt32(3, 2); }, "width padding (2, 0) must be smaller");
  expectRejected([](OpBuilder& b) { b.setInt32(7, 0); },
                 "GROUPED_CONV_2D input 7 (stride) must be > 0");
  expectRejected([](OpBuilder& b) { b.setInt32(10, 4); },
                 "GROUPED_CONV_2D input 10 (fused activation) must be 0..3");
  expectRejected(
      [](OpBuilder& b) {
        b.input(0).dimensions = {1, 4, 5};
      },
      "GROUPED_CONV_2D input 0 must have rank 4, got 3");
  expectRejected([](OpBuilder& b) { b.input(1).type = kQ8; },
                 "GROUPED_CONV_2D input 1 (filter) has type TENSOR_QUANT8_ASYMM");
  expectRejected([](OpBuilder& b) { b.input(2).type = kI32; },
                 "GROUPED_CONV_2D input 2 must be TENSOR_FLOAT32");
  expectRejected([](OpBuilder& b) { b.input(0).type = kI32; },
                 "GROUPED_CONV_2D input 0 has type TENSOR_INT32, not supported");
  expectRejected([](OpBuilder& b) { b.input(1).constantLength = 8; },
                 "GROUPED_CONV_2D input 1 holds 8 bytes");
}

TEST(GroupedConv2DTest, RejectsBadQuantization) {
  const std::vector<uint8_t> filter(2 * 2 * 2 * 1, 1);
  const std::vector<int32_t> bias(2, 0);
  auto build = [&](OperandType filterType, float biasScale, uint32_t channelDim) {
    OpBuilder b(OperationType::GROUPED_CONV_2D);
    b.tensor(kQ8, {1, 3, 3, 2}, 0.5f, 0).constTensor(filterType, {2, 2, 2, 1}, filter, 0.25f, 0);
    if (filterType == kPerChannel) b.perChannel({0.1f, 0.2f}, channelDim);
    b.constTensor(kI32, {2}, bias, biasScale, 0)
        .int32(2)
        .int32(1)
        .int32(1)
        .int32(2)
        .int32(0)
        .boolean(false)
        .output(kQ8, {}, 1.0f, 0);
    return b;
  };
  {
    OpBuilder b = build(kQ8, 0.3f, 0);
    expectRejected(b, ops::prepareGroupedConv2D, "input 2 scale");
  }
  {
    OpBuilder b = build(kPerChannel, 0.0f, 3);
    expectRejected(b, ops::prepareGroupedConv2D, "must be quantized along dimension 0, got 3");
  }
  {
    OpBuilder b = build(kQ8, 0.125f, 0);
    b.input(0).scale = 0.0f;
    expectRejected(b, ops::prepareGroupedConv2D, "GROUPED_CONV_2D input 0 must have a positive");
  }
}

}  // namespace
}  // namespace nnhal::engine
