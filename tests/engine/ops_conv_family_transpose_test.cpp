// TRANSPOSE_CONV_2D prepare + kernel: output shapes of both padding forms, results against
// a scatter reference, NCHW, deferred output shape, weights at execution, rejections.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"
#include "kernels/quantization.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::runKernel;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;
constexpr auto kPerChannel = OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;

// Operands of the CTS example transpose_conv2d_nhwc_none: input [1, 2, 2, 1], filter
// [2, 3, 3, 1], bias [2].
const std::vector<float> kInput{1, 2, 3, 4};
const std::vector<float> kFilter{1, 3, 5, 7, 9,  11, 13, 15, 17,  //
                                 2, 4, 6, 8, 10, 12, 14, 16, 18};
const std::vector<float> kBias{-1.5f, -2.0f};

// Scatter form, NHWC, double.
std::vector<double> scatter(uint32_t batches, uint32_t h, uint32_t w, uint32_t cin, uint32_t fh,
                            uint32_t fw, uint32_t cout, uint32_t oh, uint32_t ow, int32_t padTop,
                            int32_t padLeft, int32_t sh, int32_t sw,
                            const std::vector<double>& input, const std::vector<double>& filter) {
  std::vector<double> out(size_t{batches} * oh * ow * cout, 0.0);
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t y = 0; y < h; ++y) {
      for (uint32_t x = 0; x < w; ++x) {
        for (uint32_t k = 0; k < cout; ++k) {
          for (uint32_t i = 0; i < fh; ++i) {
            for (uint32_t j = 0; j < fw; ++j) {
              const int64_t oy = int64_t{y} * sh - padTop + i, ox = int64_t{x} * sw - padLeft + j;
              if (oy < 0 || oy >= oh || ox < 0 || ox >= ow) continue;
              for (uint32_t d = 0; d < cin; ++d) {
                out[((size_t{b} * oh + oy) * ow + ox) * cout + k] +=
                    input[((size_t{b} * h + y) * w + x) * cin + d] *
                    filter[((size_t{k} * fh + i) * fw + j) * cin + d];
              }
            }
          }
        }
      }
    }
  }
  return out;
}

OpBuilder implicitFloat(std::vector<uint32_t> inDims, std::vector<int32_t> outputShape,
                        int32_t code, int32_t stride, bool nchw) {
  OpBuilder b(OperationType::TRANSPOSE_CONV_2D);
  b.tensor(kF32, std::move(inDims))
      .constTensor(kF32, {2, 3, 3, 1}, kFilter)
      .constTensor(kF32, {2}, kBias)
      .constTensor(kI32, {4}, outputShape)
      .int32(code)
      .int32(stride)
      .int32(stride)
      .int32(0)
      .boolean(nchw)
      .output(kF32);
  return b;
}

std::vector<double> expectedNhwc(uint32_t oh, uint32_t ow, int32_t padTop, int32_t padLeft,
                                 int32_t stride) {
  auto out = scatter(1, 2, 2, 1, 3, 3, 2, oh, ow, padTop, padLeft, stride, stride,
                     std::vector<double>(kInput.begin(), kInput.end()),
                     std::vector<double>(kFilter.begin(), kFilter.end()));
  for (size_t e = 0; e < out.size(); ++e) out[e] += kBias[e % 2];
  return out;
}

TEST(TransposeConv2DTest, ImplicitSameMatchesScatter) {
  // out 4 x 4, stride 2, filter 3: ceil(4/2)=2, needed (2-1)*2+3 = 5, total 1: head 0, tail 1.
  OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, 4, 4, 2}, 1, 2, false);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareTransposeConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 4, 4, 2}));
  std::vector<float> out(32);
  ASSERT_TRUE(runKernel(**kernel, ctx, {kInput.data()}, {out.data()}).has_value());
  const auto expected = expectedNhwc(4, 4, 0, 0, 2);
  for (size_t e = 0; e < out.size(); ++e) EXPECT_FLOAT_EQ(out[e], expected[e]) << e;
}

TEST(TransposeConv2DTest, ImplicitPaddingShapes) {
  // Input 2, filter 3. SAME: in' = ceil(out / stride), total = (in' - 1) * stride + 3 - out,
  // head = max(total, 0) / 2, tail = total - head; output (2 - 1) * stride + 3 - total.
  //   stride 3, out 5: total 1 -> 5;  out 6: total 0 -> 6;  out 4: total 2 -> 4;
  //   stride 3, out 2: in' 1, total 1 -> 5 (the size follows the input, not the request);
  //   stride 4, out 8: total -1 (negative tail) -> 8.
  struct Case {
    int32_t requested, stride;
    uint32_t produced;
  };
  for (const Case& c : std::vector<Case>{{5, 3, 5}, {6, 3, 6}, {4, 3, 4}, {2, 3, 5}, {8, 4, 8}}) {
    OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, c.requested, c.requested, 2}, 1, c.stride, false);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareTransposeConv2D(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    EXPECT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, c.produced, c.produced, 2}))
        << "requested " << c.requested << " stride " << c.stride;
  }
  // VALID: no padding: (2 - 1) * 2 + 3 = 5.
  OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, 1, 1, 2}, 2, 2, false);
  PrepareContext ctx = b.context();
  ASSERT_TRUE(ops::prepareTransposeConv2D(ctx).has_value());
  EXPECT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 5, 5, 2}));
}

TEST(TransposeConv2DTest, ImplicitNchwReadsTheShapeTensorInNchw) {
  // NCHW output shape {1, 2, 4, 4}: height 4, width 4 as in the NHWC test.
  OpBuilder b = implicitFloat({1, 1, 2, 2}, {1, 2, 4, 4}, 1, 2, true);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareTransposeConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 2, 4, 4}));
  std::vector<float> out(32);
  ASSERT_TRUE(runKernel(**kernel, ctx, {kInput.data()}, {out.data()}).has_value());
  const auto nhwc = expectedNhwc(4, 4, 0, 0, 2);
  for (uint32_t c = 0; c < 2; ++c) {
    for (uint32_t p = 0; p < 16; ++p) EXPECT_FLOAT_EQ(out[c * 16 + p], nhwc[p * 2 + c]);
  }
}

TEST(TransposeConv2DTest, ExplicitWithNegativeTailAndWeightsAtExecution) {
  // Paddings left 1, right -1, top 0, bottom 1, stride 2: width (2-1)*2+3-1+1 = 5, height
  // (2-1)*2+3-0-1 = 4.
  OpBuilder b(OperationType::TRANSPOSE_CONV_2D);
  b.tensor(kF32, {1, 2, 2, 1})
      .tensor(kF32, {2, 3, 3, 1})
      .tensor(kF32, {2})
      .int32(1)
      .int32(-1)
      .int32(0)
      .int32(1)
      .int32(2)
      .int32(2)
      .int32(1)  // RELU
      .boolean(false)
      .output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareTransposeConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 4, 5, 2}));
  std::vector<float> out(40);
  ASSERT_TRUE(runKernel(**kernel, ctx, {kInput.data(), kFilter.data(), kBias.data()}, {out.data()})
                  .has_value());
  const auto sums = scatter(1, 2, 2, 1, 3, 3, 2, 4, 5, 0, 1, 2, 2,
                            std::vector<double>(kInput.begin(), kInput.end()),
                            std::vector<double>(kFilter.begin(), kFilter.end()));
  for (size_t e = 0; e < out.size(); ++e) {
    EXPECT_FLOAT_EQ(out[e], std::max(0.0, sums[e] + kBias[e % 2])) << e;
  }
}

template <typename T>
void checkQuantized(bool perChannel, bool nchw) {
  constexpr bool kSigned = std::is_signed_v<T>;
  const OperandType type = kSigned ? kQ8S : kQ8;
  const uint32_t h = 3, w = 2, cin = 2, cout = 3, fh = 3, fw = 2;
  const int32_t inputZero = kSigned ? -10 : 128, filterZero = perChannel ? 0 : (kSigned ? 1 : 127);
  const int32_t outputZero = kSigned ? 0 : 80;
  std::vector<T> input(h * w * cin);
  for (size_t e = 0; e < input.size(); ++e) {
    input[e] = static_cast<T>(static_cast<int32_t>(e * 23 % 200) + (kSigned ? -100 : 30));
  }
  std::vector<uint8_t> filter(cout * fh * fw * cin);
  for (size_t e = 0; e < filter.size(); ++e) {
    const int32_t v = static_cast<int32_t>(e * 13 % 90) - 45 + ((perChannel || kSigned) ? 0 : 128);
    filter[e] = static_cast<uint8_t>(v);
  }
  const std::vector<int32_t> bias{100, -200, 0};
  const std::vector<float> scales{0.5f, 0.25f, 0.125f};
  OpBuilder b(OperationType::TRANSPOSE_CONV_2D);
  b.tensor(type, nchw ? std::vector<uint32_t>{1, cin, h, w} : std::vector<uint32_t>{1, h, w, cin},
           0.5f, inputZero);
  b.constTensor(perChannel ? kPerChannel : type, {cout, fh, fw, cin}, filter, 0.25f, filterZero);
  if (perChannel) b.perChannel(scales, 0);
  b.constTensor(kI32, {cout}, bias, 0.125f, 0)
      .int32(1)
      .int32(0)
      .int32(2)
      .int32(-1)
      .int32(2)
      .int32(1)
      .int32(0)
      .boolean(nchw)
      .output(type, {}, 48.0f, outputZero);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareTransposeConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  // Height (3-1)*1+3-2+1 = 4; width (2-1)*2+2-1-0 = 3.
  const uint32_t oh = 4, ow = 3;
  const std::vector<uint32_t> expectedDims =
      nchw ? std::vector<uint32_t>{1, cout, oh, ow} : std::vector<uint32_t>{1, oh, ow, cout};
  ASSERT_EQ(ctx.output(0).dimensions, expectedDims);
  std::vector<T> nchwInput(input.size());
  for (uint32_t c = 0; c < cin; ++c) {
    for (uint32_t p = 0; p < h * w; ++p) nchwInput[c * h * w + p] = input[p * cin + c];
  }
  std::vector<T> out(oh * ow * cout);
  ASSERT_TRUE(
      runKernel(**kernel, ctx, {nchw ? nchwInput.data() : input.data()}, {out.data()}).has_value());
  std::vector<double> inValues(input.size()), fValues(filter.size());
  for (size_t e = 0; e < input.size(); ++e) inValues[e] = int32_t{input[e]} - inputZero;
  for (size_t e = 0; e < filter.size(); ++e) {
    const int32_t raw =
        (perChannel || kSigned) ? int32_t{static_cast<int8_t>(filter[e])} : int32_t{filter[e]};
    fValues[e] = raw - filterZero;
  }
  const auto sums = scatter(1, h, w, cin, fh, fw, cout, oh, ow, 2, 1, 1, 2, inValues, fValues);
  size_t unclamped = 0;
  for (uint32_t p = 0; p < oh * ow; ++p) {
    for (uint32_t k = 0; k < cout; ++k) {
      kernels::QuantizedMultiplier m;
      ASSERT_TRUE(kernels::quantizeMultiplier(
          static_cast<double>(0.5f * (perChannel ? scales[k] : 0.25f)) / 48.0, &m));
      int32_t v = kernels::multiplyByQuantizedMultiplier(
          static_cast<int32_t>(sums[p * cout + k]) + bias[k], m);
      unclamped += v + outputZero > (kSigned ? -128 : 0) && v + outputZero < (kSigned ? 127 : 255);
      v = std::clamp(v + outputZero, kSigned ? -128 : 0, kSigned ? 127 : 255);
      const T actual = nchw ? out[k * oh * ow + p] : out[p * cout + k];
      EXPECT_EQ(int32_t{actual}, v) << "pixel " << p << " channel " << k;
    }
  }
  EXPECT_GT(unclamped, out.size() / 2);
}

TEST(TransposeConv2DTest, Uint8MatchesScatter) { checkQuantized<uint8_t>(false, false); }
TEST(TransposeConv2DTest, Int8MatchesScatter) { checkQuantized<int8_t>(false, false); }
TEST(TransposeConv2DTest, Uint8PerChannelNchwMatchesScatter) {
  checkQuantized<uint8_t>(true, true);
}
TEST(TransposeConv2DTest, Int8PerChannelMatchesScatter) { checkQuantized<int8_t>(true, false); }

TEST(TransposeConv2DTest, OutputShapeGivenAtExecutionDefersPrepare) {
  OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, 4, 4, 2}, 1, 2, false);
  b.input(3).constantData = nullptr;
  b.input(3).constantLength = 0;
  const auto p = prepare(b, ops::prepareTransposeConv2D);
  expectRejected(p, "TRANSPOSE_CONV_2D input 3 must be a constant");
  EXPECT_TRUE(p.ctx->valuesMissing());
  // The same through the NCHW path.
  OpBuilder c = implicitFloat({1, 1, 2, 2}, {1, 2, 4, 4}, 1, 2, true);
  c.input(3).constantData = nullptr;
  c.input(3).constantLength = 0;
  PrepareContext ctx2 = c.context();
  EXPECT_FALSE(ops::prepareTransposeConv2D(ctx2).has_value());
  EXPECT_TRUE(ctx2.valuesMissing());
}

TEST(TransposeConv2DTest, ZeroBatchRuns) {
  OpBuilder b = implicitFloat({0, 2, 2, 1}, {0, 4, 4, 2}, 1, 2, false);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareTransposeConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{0, 4, 4, 2}));
  EXPECT_TRUE(runKernel(**kernel, ctx, {nullptr}, {nullptr}).has_value());
}

template <typename Mutate>
void expectRejected(Mutate mutate, const std::string& fragment) {
  OpBuilder b(OperationType::TRANSPOSE_CONV_2D);
  b.tensor(kF32, {1, 2, 2, 1})
      .constTensor(kF32, {2, 3, 3, 1}, kFilter)
      .constTensor(kF32, {2}, kBias)
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(2)
      .int32(2)
      .int32(0)
      .boolean(false)
      .output(kF32);
  mutate(b);
  expectRejected(b, ops::prepareTransposeConv2D, fragment);
}

TEST(TransposeConv2DTest, Rejections) {
  expectRejected([](OpBuilder& b) { b.int32(0); },
                 "TRANSPOSE_CONV_2D takes 9 or 11 inputs, got 12");
  expectRejected([](OpBuilder& b) { b.setInt32(3, -1); },
                 "TRANSPOSE_CONV_2D input 3 (left padding) must be >= 0, got -1");
  expectRejected([](OpBuilder& b) { b.setInt32(5, -2); },
                 "TRANSPOSE_CONV_2D input 5 (top padding) must be >= 0, got -2");
  expectRejected([](OpBuilder& b) { b.setInt32(8, 0); },
                 "TRANSPOSE_CONV_2D input 8 (stride) must be > 0, got 0");
  expectRejected([](OpBuilder& b) { b.setInt32(9, 7); },
                 "TRANSPOSE_CONV_2D input 9 (fused activation) must be 0..3");
  expectRejected([](OpBuilder& b) { b.setInt32(4, 6); },
                 "TRANSPOSE_CONV_2D: output width -2 (from input width 2, filter 3, stride 2, "
                 "paddings 1 and 6) must be positive");
  expectRejected(
      [](OpBuilder& b) {
        b.input(1).dimensions = {2, 3, 3, 2};
      },
      "(filter) depth 2 does not match the input depth 1");
  expectRejected([](OpBuilder& b) { b.input(2).dimensions = {3}; },
                 "TRANSPOSE_CONV_2D input 2 (bias) has 3 values for 2 output channels");
  expectRejected(
      [](OpBuilder& b) {
        b.input(1).dimensions = {2, 3, 3};
      },
      "TRANSPOSE_CONV_2D input 1 must have rank 4, got 3");
  expectRejected([](OpBuilder& b) { b.input(10).type = OperandType::INT32; },
                 "TRANSPOSE_CONV_2D input 10 must be BOOL");
  expectRejected([](OpBuilder& b) { b.input(2).type = kI32; },
                 "TRANSPOSE_CONV_2D input 2 must be TENSOR_FLOAT32");
  expectRejected(
      [](OpBuilder& b) {
        b.input(0).dimensions = {1, 0, 2, 1};
      },
      "must have non-zero height, width and depth");
}

TEST(TransposeConv2DTest, ImplicitRejections) {
  {
    OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, 4, 4, 2}, 3, 2, false);
    expectRejected(b, ops::prepareTransposeConv2D,
                   "TRANSPOSE_CONV_2D input 4 (implicit padding) must be 1 (SAME) or 2 (VALID)");
  }
  {
    OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, 4, 4, 2}, 1, 2, false);
    b.input(3).dimensions = {3};
    expectRejected(b, ops::prepareTransposeConv2D,
                   "TRANSPOSE_CONV_2D input 3 (output shape) must have 4 values, got 3");
  }
  {
    OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, 0, 4, 2}, 1, 2, false);
    expectRejected(b, ops::prepareTransposeConv2D,
                   "(output shape) must have a positive height and width, got 0 and 4");
  }
  {
    OpBuilder b = implicitFloat({1, 2, 2, 1}, {1, 4, 4, 2}, 1, 2, false);
    b.input(3).type = kF32;
    expectRejected(b, ops::prepareTransposeConv2D,
                   "TRANSPOSE_CONV_2D input 3 must be TENSOR_INT32");
  }
}

TEST(TransposeConv2DTest, RejectsBadQuantization) {
  const std::vector<uint8_t> filter(2 * 3 * 3, 1);
  const std::vector<int32_t> bias(2, 0);
  auto build = [&](OperandType filterType, float biasScale, uint32_t channelDim, size_t scales) {
    OpBuilder b(OperationType::TRANSPOSE_CONV_2D);
    b.tensor(kQ8, {1, 2, 2, 1}, 0.5f, 0).constTensor(filterType, {2, 3, 3, 1}, filter, 0.25f, 0);
    if (filterType == kPerChannel) b.perChannel(std::vector<float>(scales, 0.1f), channelDim);
    b.constTensor(kI32, {2}, bias, biasScale, 0)
        .int32(0)
        .int32(0)
        .int32(0)
        .int32(0)
        .int32(1)
        .int32(1)
        .int32(0)
        .boolean(false)
        .output(kQ8, {}, 1.0f, 0);
    return b;
  };
  {
    OpBuilder b = build(kQ8, 0.5f, 0, 0);
    expectRejected(b, ops::prepareTransposeConv2D, "TRANSPOSE_CONV_2D input 2 scale");
  }
  {
    OpBuilder b = build(kPerChannel, 0.0f, 1, 2);
    expectRejected(b, ops::prepareTransposeConv2D, "must be quantized along dimension 0, got 1");
  }
  {
    OpBuilder b = build(kPerChannel, 0.0f, 0, 3);
    expectRejected(b, ops::prepareTransposeConv2D, "has 3 channel scales for 2 channels");
  }
  {
    OpBuilder b = build(kQ8S, 0.125f, 0, 0);
    expectRejected(b, ops::prepareTransposeConv2D,
                   "input 1 (filter) has type TENSOR_QUANT8_ASYMM_SIGNED, expected "
                   "TENSOR_QUANT8_ASYMM or TENSOR_QUANT8_SYMM_PER_CHANNEL");
  }
  {
    OpBuilder b = build(kQ8, 0.125f, 0, 0);
    b.input(0).zeroPoint = 300;
    expectRejected(b, ops::prepareTransposeConv2D, "input 0 zero point 300 is outside [0, 255]");
  }
}

}  // namespace
}  // namespace nnhal::engine
