#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"
#include "kernels/conv.h"
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

// A float conv over input [1, h, w, 2] with a [3, fh, fw, 2] filter, explicit padding.
OpBuilder floatExplicit(uint32_t h, uint32_t w, uint32_t fh, uint32_t fw, int32_t pl, int32_t pr,
                        int32_t pt, int32_t pb, int32_t sw, int32_t sh) {
  OpBuilder b(OperationType::CONV_2D);
  static const std::vector<float> filter(3 * 7 * 7 * 2, 0.5f);
  static const std::vector<float> bias{1.0f, 2.0f, 3.0f};
  b.tensor(kF32, {1, h, w, 2})
      .constTensor(kF32, {3, fh, fw, 2}, filter)
      .constTensor(kF32, {3}, bias)
      .int32(pl)
      .int32(pr)
      .int32(pt)
      .int32(pb)
      .int32(sw)
      .int32(sh)
      .int32(0)
      .output(kF32);
  return b;
}

OpBuilder floatImplicit(uint32_t h, uint32_t w, uint32_t fh, uint32_t fw, int32_t code, int32_t sw,
                        int32_t sh) {
  OpBuilder b(OperationType::CONV_2D);
  static const std::vector<float> filter(3 * 7 * 7 * 2, 0.5f);
  static const std::vector<float> bias{1.0f, 2.0f, 3.0f};
  b.tensor(kF32, {1, h, w, 2})
      .constTensor(kF32, {3, fh, fw, 2}, filter)
      .constTensor(kF32, {3}, bias)
      .int32(code)
      .int32(sw)
      .int32(sh)
      .int32(0)
      .output(kF32);
  return b;
}

std::vector<uint32_t> preparedShape(OpBuilder& b) {
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareConv2D(ctx);
  EXPECT_TRUE(kernel.has_value()) << kernel.error().message;
  return ctx.output(0).dimensions;
}

TEST(Conv2DPrepareTest, ExplicitPaddingShape) {
  auto b = floatExplicit(5, 6, 3, 3, 1, 1, 1, 1, 2, 2);
  EXPECT_EQ(preparedShape(b), (std::vector<uint32_t>{1, 3, 3, 3}));
  auto c = floatExplicit(5, 6, 3, 2, 0, 0, 0, 0, 1, 1);
  EXPECT_EQ(preparedShape(c), (std::vector<uint32_t>{1, 3, 5, 3}));
}

TEST(Conv2DPrepareTest, ImplicitSameAndValidShapes) {
  auto same = floatImplicit(7, 8, 3, 3, 1, 2, 2);  // ceil(7/2)=4, ceil(8/2)=4
  EXPECT_EQ(preparedShape(same), (std::vector<uint32_t>{1, 4, 4, 3}));
  auto valid = floatImplicit(7, 8, 3, 2, 2, 2, 2);  // ceil((7-2)/2)=3, ceil((8-1)/2)=4
  EXPECT_EQ(preparedShape(valid), (std::vector<uint32_t>{1, 3, 4, 3}));
}

TEST(Conv2DPrepareTest, ImplicitWithLayoutAndDilation) {
  auto b = floatImplicit(10, 10, 3, 3, 2, 1, 2);
  b.boolean(false).int32(2).int32(2);  // 10 inputs, input 7 BOOL -> implicit
  // effective filter 5: height ceil((10-4)/2)=3, width 10-4=6.
  EXPECT_EQ(preparedShape(b), (std::vector<uint32_t>{1, 3, 6, 3}));
  auto same = floatImplicit(10, 9, 3, 3, 1, 1, 1);
  same.boolean(false).int32(3).int32(2);
  EXPECT_EQ(preparedShape(same), (std::vector<uint32_t>{1, 10, 9, 3}));
}

TEST(Conv2DPrepareTest, ExplicitWithLayoutAndDilation) {
  auto b = floatExplicit(9, 9, 3, 3, 0, 0, 0, 0, 1, 1);
  b.boolean(false).int32(2).int32(3);  // 13 inputs; dilation w 2, h 3
  // height: 9 - 7 + 1 = 3; width: 9 - 5 + 1 = 5
  EXPECT_EQ(preparedShape(b), (std::vector<uint32_t>{1, 3, 5, 3}));
}

TEST(Conv2DPrepareTest, ZeroBatchGivesEmptyOutputAndRuns) {
  auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
  b.input(0).dimensions = {0, 4, 4, 2};
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{0, 4, 4, 3}));
  EXPECT_TRUE(runKernel(**kernel, ctx, {nullptr, nullptr, nullptr}, {nullptr}).has_value());
}

// The same quantized convolution in NHWC and in NCHW (input and output transposed).
TEST(Conv2DPrepareTest, NchwMatchesNhwc) {
  const uint32_t h = 5, w = 4, cin = 3, cout = 2;
  std::vector<uint8_t> nhwc(h * w * cin), nchw(nhwc.size());
  for (size_t i = 0; i < nhwc.size(); ++i) nhwc[i] = static_cast<uint8_t>(i * 37 % 251);
  for (uint32_t c = 0; c < cin; ++c) {
    for (uint32_t p = 0; p < h * w; ++p) nchw[c * h * w + p] = nhwc[p * cin + c];
  }
  std::vector<uint8_t> filter(cout * 3 * 3 * cin);
  for (size_t i = 0; i < filter.size(); ++i) filter[i] = static_cast<uint8_t>(i * 11 % 256);
  const std::vector<int32_t> bias{50, -50};
  auto build = [&](bool layoutNchw, std::vector<uint32_t> inDims) {
    OpBuilder b(OperationType::CONV_2D);
    b.tensor(kQ8, std::move(inDims), 0.5f, 100)
        .constTensor(kQ8, {cout, 3, 3, cin}, filter, 0.25f, 120)
        .constTensor(kI32, {cout}, bias, 0.125f, 0)
        .int32(1)
        .int32(2)
        .int32(1)
        .int32(0)
        .boolean(layoutNchw)
        .output(kQ8, {}, 4.0f, 128);
    return b;
  };
  OpBuilder nhwcBuilder = build(false, {1, h, w, cin});
  OpBuilder nchwBuilder = build(true, {1, cin, h, w});
  PrepareContext nhwcCtx = nhwcBuilder.context(), nchwCtx = nchwBuilder.context();
  auto nhwcKernel = ops::prepareConv2D(nhwcCtx);
  auto nchwKernel = ops::prepareConv2D(nchwCtx);
  ASSERT_TRUE(nhwcKernel.has_value()) << nhwcKernel.error().message;
  ASSERT_TRUE(nchwKernel.has_value()) << nchwKernel.error().message;
  // SAME, stride (2, 1): out 5 x 2.
  EXPECT_EQ(nhwcCtx.output(0).dimensions, (std::vector<uint32_t>{1, 5, 2, cout}));
  EXPECT_EQ(nchwCtx.output(0).dimensions, (std::vector<uint32_t>{1, cout, 5, 2}));
  std::vector<uint8_t> outNhwc(10 * cout), outNchw(10 * cout);
  ASSERT_TRUE(runKernel(**nhwcKernel, nhwcCtx, {nhwc.data(), nullptr, nullptr}, {outNhwc.data()})
                  .has_value());
  ASSERT_TRUE(runKernel(**nchwKernel, nchwCtx, {nchw.data(), nullptr, nullptr}, {outNchw.data()})
                  .has_value());
  for (uint32_t c = 0; c < cout; ++c) {
    for (uint32_t p = 0; p < 10; ++p) {
      EXPECT_EQ(outNchw[c * 10 + p], outNhwc[p * cout + c]) << "channel " << c << " pixel " << p;
    }
  }
}

TEST(Conv2DPrepareTest, NchwRejectsDeclaredOutputOfWrongRank) {
  auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
  b.boolean(true);
  b.input(0).dimensions = {1, 2, 4, 4};
  PrepareContext probe = b.context();
  OpBuilder c(OperationType::CONV_2D);
  const std::vector<float> filter(18, 1.0f), bias(1, 0.0f);
  c.tensor(kF32, {1, 2, 4, 4})
      .constTensor(kF32, {1, 3, 3, 2}, filter)
      .constTensor(kF32, {1}, bias)
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(0)
      .boolean(true)
      .output(kF32, {1, 16});
  expectRejected(c, ops::prepareConv2D, "CONV_2D output 0 must have rank 4");
  // And the NCHW output shape is reported in NCHW order.
  auto kernel = ops::prepareConv2D(probe);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  EXPECT_EQ(probe.output(0).dimensions, (std::vector<uint32_t>{1, 3, 4, 4}));
}

TEST(Conv2DPrepareTest, RejectsBadInputCounts) {
  auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
  b.boolean(false).int32(1);  // 9 inputs: one dilation factor only
  expectRejected(b, ops::prepareConv2D, "takes 7, 8, 10, 11, 13 inputs, got 9");
  auto c = floatExplicit(4, 4, 3, 3, 0, 0, 0, 0, 1, 1);
  c.boolean(false).int32(1);  // 12 inputs
  expectRejected(c, ops::prepareConv2D, "got 12");
}

TEST(Conv2DPrepareTest, RejectsBadScalars) {
  {
    auto b = floatImplicit(4, 4, 3, 3, 3, 1, 1);
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 3 (implicit padding) must be 1");
  }
  {
    auto b = floatExplicit(4, 4, 3, 3, -1, 0, 0, 0, 1, 1);
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 3 (padding) must be >= 0");
  }
  {
    auto b = floatExplicit(4, 4, 3, 3, 0, 0, 0, 0, 1, 0);
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 8 (stride) must be > 0");
  }
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.boolean(false).int32(1).int32(0);
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 9 (dilation) must be > 0");
  }
  {
    OpBuilder b(OperationType::CONV_2D);
    const std::vector<float> filter(18, 1.0f), bias(1, 0.0f);
    b.tensor(kF32, {1, 4, 4, 2})
        .constTensor(kF32, {1, 3, 3, 2}, filter)
        .constTensor(kF32, {1}, bias)
        .int32(1)
        .int32(1)
        .int32(1)
        .int32(4)
        .output(kF32);
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 6 (fused activation) must be 0..3");
  }
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(4).type = OperandType::FLOAT32;
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 4 must be INT32");
  }
  {
    OpBuilder b(OperationType::CONV_2D);
    const std::vector<float> filter(18, 1.0f), bias(1, 0.0f);
    b.tensor(kF32, {1, 4, 4, 2})
        .constTensor(kF32, {1, 3, 3, 2}, filter)
        .constTensor(kF32, {1}, bias)
        .int32Input()
        .int32(1)
        .int32(1)
        .int32(0)
        .output(kF32);
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 3 must be a constant");
  }
}

TEST(Conv2DPrepareTest, RejectsPaddingNotSmallerThanFilter) {
  auto b = floatExplicit(4, 4, 3, 3, 3, 0, 0, 0, 1, 1);
  expectRejected(b, ops::prepareConv2D, "width padding (3, 0) must be smaller");
}

TEST(Conv2DPrepareTest, RejectsFilterLargerThanInput) {
  auto b = floatExplicit(2, 4, 3, 3, 0, 0, 0, 0, 1, 1);
  expectRejected(b, ops::prepareConv2D, "exceeds the padded input height");
}

TEST(Conv2DPrepareTest, RejectsShapeMismatches) {
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(1).dimensions = {3, 3, 3, 5};
    expectRejected(b, ops::prepareConv2D, "depth 5 does not match the input depth 2");
  }
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(2).dimensions = {4};
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 2 (bias) has 4 values for 3");
  }
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(0).dimensions = {4, 4, 2};
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 0 must have rank 4");
  }
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(0).dimensions = {1, 4, 0, 2};
    expectRejected(b, ops::prepareConv2D, "non-zero height, width and depth");
  }
}

TEST(Conv2DPrepareTest, RejectsDeclaredOutputShapeMismatch) {
  OpBuilder b(OperationType::CONV_2D);
  const std::vector<float> filter(18, 1.0f), bias(1, 0.0f);
  b.tensor(kF32, {1, 4, 4, 2})
      .constTensor(kF32, {1, 3, 3, 2}, filter)
      .constTensor(kF32, {1}, bias)
      .int32(2)
      .int32(1)
      .int32(1)
      .int32(0)
      .output(kF32, {1, 4, 4, 1});  // VALID gives 2x2
  expectRejected(b, ops::prepareConv2D, "CONV_2D output 0");
}

TEST(Conv2DPrepareTest, RejectsTypeMismatches) {
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(0).type = OperandType::TENSOR_FLOAT16;
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 0 has type TENSOR_FLOAT16, not supported");
  }
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(1).type = kQ8;
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 1 (filter) has type TENSOR_QUANT8_ASYMM");
  }
  {
    auto b = floatImplicit(4, 4, 3, 3, 1, 1, 1);
    b.input(2).type = kI32;
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 2 must be TENSOR_FLOAT32");
  }
  {
    OpBuilder b(OperationType::CONV_2D);
    const std::vector<float> filter(18, 1.0f), bias(1, 0.0f);
    b.tensor(kF32, {1, 4, 4, 2})
        .constTensor(kF32, {1, 3, 3, 2}, filter)
        .constTensor(kF32, {1}, bias)
        .int32(1)
        .int32(1)
        .int32(1)
        .int32(0)
        .output(kQ8, {}, 1.0f, 0);
    expectRejected(b, ops::prepareConv2D, "CONV_2D output 0 has type TENSOR_QUANT8_ASYMM");
  }
}

// --- quantized ----------------------------------------------------------------------------

struct QuantConv {
  OperandType type = kQ8;
  std::vector<uint8_t> input, filter;
  std::vector<int32_t> bias;
  float inScale = 0.5f, filterScale = 0.25f, outScale = 2.0f;
  int32_t inZero = 3, filterZero = 5, outZero = 7;
};

OpBuilder quantBuilder(const QuantConv& q, bool constantWeights) {
  OpBuilder b(OperationType::CONV_2D);
  b.tensor(q.type, {1, 3, 3, 2}, q.inScale, q.inZero);
  if (constantWeights) {
    b.constTensor(q.type, {2, 2, 2, 2}, q.filter, q.filterScale, q.filterZero)
        .constTensor(kI32, {2}, q.bias, q.inScale * q.filterScale, 0);
  } else {
    b.tensor(q.type, {2, 2, 2, 2}, q.filterScale, q.filterZero)
        .tensor(kI32, {2}, q.inScale * q.filterScale, 0);
  }
  b.int32(2).int32(1).int32(1).int32(0).output(q.type, {}, q.outScale, q.outZero);
  return b;
}

TEST(Conv2DQuantTest, RunsAndMatchesReferenceWithConstantAndRuntimeWeights) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  QuantConv q;
  q.input.resize(18);
  q.filter.resize(16);
  for (auto& v : q.input) v = static_cast<uint8_t>(byte(rng));
  for (auto& v : q.filter) v = static_cast<uint8_t>(byte(rng));
  q.bias = {100, -250};
  kernels::QuantizedMultiplier m;
  ASSERT_TRUE(kernels::quantizeMultiplier(0.5 * 0.25 / 2.0, &m));
  const std::vector<kernels::QuantizedMultiplier> ms{m, m};
  kernels::ConvGeometry g;
  g.inHeight = g.inWidth = 3;
  g.inDepth = 2;
  g.filterHeight = g.filterWidth = 2;
  g.outHeight = g.outWidth = 2;
  g.outDepth = 2;
  std::vector<uint8_t> expected(8);
  kernels::convQuantReference<uint8_t, uint8_t>(g, q.input.data(), 3, q.filter.data(), 5,
                                                q.bias.data(), ms.data(), 7, 0, 255,
                                                expected.data());
  size_t constantScratch = 0;
  for (bool constant : {true, false}) {
    SCOPED_TRACE(constant);
    OpBuilder b = quantBuilder(q, constant);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareConv2D(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    EXPECT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 2, 2, 2}));
    // Runtime weights are packed into scratch, on top of the im2col slots.
    if (constant) {
      constantScratch = ctx.scratchBytes();
    } else {
      EXPECT_GT(ctx.scratchBytes(), constantScratch);
    }
    std::vector<uint8_t> out(8, 0xEE);
    ASSERT_TRUE(
        runKernel(**kernel, ctx, {q.input.data(), q.filter.data(), q.bias.data()}, {out.data()})
            .has_value());
    EXPECT_EQ(out, expected);
  }
}

TEST(Conv2DQuantTest, RejectsBiasScaleMismatch) {
  QuantConv q;
  q.filter.assign(16, 1);
  q.bias = {0, 0};
  OpBuilder b = quantBuilder(q, true);
  b.input(2).scale = 0.2f;
  expectRejected(b, ops::prepareConv2D, "CONV_2D input 2 scale");
}

TEST(Conv2DQuantTest, RejectsBadQuantization) {
  QuantConv q;
  q.filter.assign(16, 1);
  q.bias = {0, 0};
  {
    OpBuilder b = quantBuilder(q, true);
    b.input(0).scale = 0.0f;
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 0 must have a positive finite scale");
  }
  {
    OpBuilder b = quantBuilder(q, true);
    b.input(0).zeroPoint = 256;
    expectRejected(b, ops::prepareConv2D, "zero point 256 is outside [0, 255]");
  }
  {
    OpBuilder b = quantBuilder(q, true);
    b.input(2).type = kF32;
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 2 must be TENSOR_INT32");
  }
  {
    OpBuilder b = quantBuilder(q, true);
    b.input(1).type = kQ8S;
    expectRejected(b, ops::prepareConv2D, "or TENSOR_QUANT8_SYMM_PER_CHANNEL");
  }
  {
    OpBuilder b = quantBuilder(q, true);
    b.input(1).constantLength = 3;
    expectRejected(b, ops::prepareConv2D, "CONV_2D input 1 holds 3 bytes, needs 16");
  }
}

OpBuilder perChannelBuilder(const std::vector<int8_t>& filter, const std::vector<int32_t>& bias,
                            std::vector<float> scales, uint32_t channelDim) {
  OpBuilder b(OperationType::CONV_2D);
  b.tensor(kQ8, {1, 3, 3, 2}, 0.5f, 3)
      .constTensor(kPerChannel, {2, 2, 2, 2}, filter)
      .perChannel(std::move(scales), channelDim)
      .constTensor(kI32, {2}, bias)
      .int32(2)
      .int32(1)
      .int32(1)
      .int32(1)
      .output(kQ8, {}, 1.0f, 100);
  return b;
}

TEST(Conv2DQuantTest, PerChannelFilterMatchesReference) {
  std::vector<int8_t> filter(16);
  for (size_t i = 0; i < filter.size(); ++i) filter[i] = static_cast<int8_t>(i * 13 - 100);
  const std::vector<int32_t> bias{40, -70};
  std::vector<uint8_t> input(18);
  for (size_t i = 0; i < input.size(); ++i) input[i] = static_cast<uint8_t>(i * 11);
  OpBuilder b = perChannelBuilder(filter, bias, {0.1f, 0.02f}, 0);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  std::vector<kernels::QuantizedMultiplier> ms(2);
  ASSERT_TRUE(kernels::quantizeMultiplier(double{0.5f * 0.1f}, &ms[0]));
  ASSERT_TRUE(kernels::quantizeMultiplier(double{0.5f * 0.02f}, &ms[1]));
  kernels::ConvGeometry g;
  g.inHeight = g.inWidth = 3;
  g.inDepth = 2;
  g.filterHeight = g.filterWidth = 2;
  g.outHeight = g.outWidth = 2;
  g.outDepth = 2;
  int32_t lo = 0, hi = 0;
  kernels::activationRangeQuantized(FusedActivationFunc::RELU, 1.0f, 100, 0, 255, &lo, &hi);
  std::vector<uint8_t> expected(8), out(8);
  kernels::convQuantReference<uint8_t, int8_t>(g, input.data(), 3, filter.data(), 0, bias.data(),
                                               ms.data(), 100, lo, hi, expected.data());
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), nullptr, nullptr}, {out.data()}).has_value());
  EXPECT_EQ(out, expected);
}

TEST(Conv2DQuantTest, RejectsBadPerChannelParams) {
  const std::vector<int8_t> filter(16, 1);
  const std::vector<int32_t> bias{0, 0};
  {
    OpBuilder b = perChannelBuilder(filter, bias, {0.1f, 0.2f}, 3);
    expectRejected(b, ops::prepareConv2D, "must be quantized along dimension 0");
  }
  {
    OpBuilder b = perChannelBuilder(filter, bias, {0.1f, 0.2f, 0.3f}, 0);
    expectRejected(b, ops::prepareConv2D, "has 3 channel scales for 2 channels");
  }
  {
    OpBuilder b = perChannelBuilder(filter, bias, {0.1f, -0.2f}, 0);
    expectRejected(b, ops::prepareConv2D, "channel scale that is not positive");
  }
  {
    OpBuilder b = perChannelBuilder(filter, bias, {0.1f, 0.2f}, 0);
    b.input(1).channelQuant = nullptr;
    expectRejected(b, ops::prepareConv2D, "has no channel scales");
  }
}

// Larger random layers through the whole engine path (tiling, threads, scratch slots).
TEST(Conv2DQuantTest, LargeLayersMatchReferenceOnTwoThreads) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> byte(0, 255);
  struct Case {
    uint32_t h, w, cin, cout, f, stride;
    int32_t code;
  };
  for (const Case& c : {Case{28, 28, 32, 40, 1, 1, 2}, Case{15, 17, 12, 33, 3, 2, 1},
                        Case{7, 7, 160, 960, 1, 1, 2}}) {
    std::vector<uint8_t> input(c.h * c.w * c.cin), filter(c.cout * c.f * c.f * c.cin);
    for (auto& v : input) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : filter) v = static_cast<uint8_t>(byte(rng));
    std::vector<int32_t> bias(c.cout);
    for (auto& v : bias) v = byte(rng) * 10 - 1280;
    const float inScale = 0.02f, filterScale = 0.005f, outScale = 0.3f;
    OpBuilder b(OperationType::CONV_2D);
    b.tensor(kQ8, {1, c.h, c.w, c.cin}, inScale, 120)
        .constTensor(kQ8, {c.cout, c.f, c.f, c.cin}, filter, filterScale, 130)
        .constTensor(kI32, {c.cout}, bias, inScale * filterScale, 0)
        .int32(c.code)
        .int32(c.stride)
        .int32(c.stride)
        .int32(3)
        .output(kQ8, {}, outScale, 20);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareConv2D(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    const auto& od = ctx.output(0).dimensions;
    kernels::ConvGeometry g;
    g.inHeight = c.h;
    g.inWidth = c.w;
    g.inDepth = c.cin;
    g.filterHeight = g.filterWidth = c.f;
    g.strideHeight = g.strideWidth = c.stride;
    g.outHeight = od[1];
    g.outWidth = od[2];
    g.outDepth = c.cout;
    if (c.code == 1) {
      g.padTop = static_cast<int32_t>(((od[1] - 1) * c.stride + c.f - c.h) / 2);
      g.padLeft = static_cast<int32_t>(((od[2] - 1) * c.stride + c.f - c.w) / 2);
    }
    kernels::QuantizedMultiplier m;
    ASSERT_TRUE(kernels::quantizeMultiplier(double{inScale * filterScale} / outScale, &m));
    const std::vector<kernels::QuantizedMultiplier> ms(c.cout, m);
    int32_t lo = 0, hi = 0;
    kernels::activationRangeQuantized(FusedActivationFunc::RELU6, outScale, 20, 0, 255, &lo, &hi);
    std::vector<uint8_t> expected(g.outputRows() * c.cout), out(expected.size());
    kernels::convQuantReference<uint8_t, uint8_t>(g, input.data(), 120, filter.data(), 130,
                                                  bias.data(), ms.data(), 20, lo, hi,
                                                  expected.data());
    ASSERT_TRUE(
        runKernel(**kernel, ctx, {input.data(), nullptr, nullptr}, {out.data()}).has_value());
    EXPECT_EQ(out, expected) << c.h << "x" << c.w << "x" << c.cin << " -> " << c.cout;
  }
}

TEST(Conv2DFloatTest, RuntimeWeightsAndOmittedBias) {
  OpBuilder b(OperationType::CONV_2D);
  b.tensor(kF32, {1, 2, 2, 1})
      .tensor(kF32, {1, 2, 2, 1})
      .omitted(kF32)
      .int32(2)
      .int32(1)
      .int32(1)
      .int32(0)
      .output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareConv2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  const std::vector<float> input{1, 2, 3, 4}, filter{1, 10, 100, 1000};
  float out = 0;
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data(), filter.data(), nullptr}, {&out}).has_value());
  EXPECT_FLOAT_EQ(out, 4321.0f);
}

}  // namespace
}  // namespace nnhal::engine
