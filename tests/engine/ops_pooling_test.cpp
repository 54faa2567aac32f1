#include <gtest/gtest.h>

#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::runKernel;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

OpBuilder implicitPool(OperationType op, OperandType type, uint32_t h, uint32_t w, int32_t code,
                       int32_t stride, int32_t filter, int32_t activation = 0) {
  OpBuilder b(op);
  b.tensor(type, {1, h, w, 3}, 0.5f, type == kQ8S ? -3 : 3)
      .int32(code)
      .int32(stride)
      .int32(stride)
      .int32(filter)
      .int32(filter)
      .int32(activation)
      .output(type, {}, 0.5f, type == kQ8S ? -3 : 3);
  return b;
}

OpBuilder explicitPool(OperationType op, uint32_t h, uint32_t w, int32_t pad, int32_t stride,
                       int32_t fw, int32_t fh) {
  OpBuilder b(op);
  b.tensor(kF32, {2, h, w, 3})
      .int32(pad)
      .int32(pad)
      .int32(pad)
      .int32(pad)
      .int32(stride)
      .int32(stride)
      .int32(fw)
      .int32(fh)
      .int32(0)
      .output(kF32);
  return b;
}

std::vector<uint32_t> shapeOf(OpBuilder& b, OperationType op) {
  PrepareContext ctx = b.context();
  auto kernel = op == OperationType::MAX_POOL_2D ? ops::prepareMaxPool2D(ctx)
                                                 : ops::prepareAveragePool2D(ctx);
  EXPECT_TRUE(kernel.has_value()) << kernel.error().message;
  return ctx.output(0).dimensions;
}

TEST(PoolingPrepareTest, Shapes) {
  for (auto op : {OperationType::AVERAGE_POOL_2D, OperationType::MAX_POOL_2D}) {
    auto same = implicitPool(op, kF32, 7, 6, 1, 2, 3);
    EXPECT_EQ(shapeOf(same, op), (std::vector<uint32_t>{1, 4, 3, 3}));
    auto valid = implicitPool(op, kF32, 7, 6, 2, 2, 3);
    EXPECT_EQ(shapeOf(valid, op), (std::vector<uint32_t>{1, 3, 2, 3}));
    auto withLayout = implicitPool(op, kQ8, 7, 7, 2, 1, 7);
    withLayout.boolean(false);
    EXPECT_EQ(shapeOf(withLayout, op), (std::vector<uint32_t>{1, 1, 1, 3}));
    auto explicitForm = explicitPool(op, 5, 4, 1, 1, 3, 2);
    EXPECT_EQ(shapeOf(explicitForm, op), (std::vector<uint32_t>{2, 6, 4, 3}));
  }
}

TEST(PoolingPrepareTest, Rejections) {
  const auto op = OperationType::AVERAGE_POOL_2D;
  {
    auto b = explicitPool(op, 5, 5, 0, 1, 0, 2);
    expectRejected(b, ops::prepareAveragePool2D, "AVERAGE_POOL_2D input 7 (filter size 0x2)");
  }
  {
    auto b = explicitPool(op, 5, 5, 2, 1, 2, 2);
    expectRejected(b, ops::prepareAveragePool2D, "padding (2, 2) must be smaller");
  }
  {
    auto b = implicitPool(op, kF32, 5, 5, 0, 1, 2);
    expectRejected(b, ops::prepareAveragePool2D, "(implicit padding) must be 1 (SAME) or 2");
  }
  {
    auto b = implicitPool(op, kF32, 5, 5, 2, 1, 4);
    b.boolean(true);  // NCHW: input [1, 5, 5, 3] is 5 channels of 5 x 3: filter 4 > width 3
    expectRejected(b, ops::prepareAveragePool2D, "exceeds the padded input width 3");
  }
  {
    auto b = implicitPool(op, kF32, 5, 5, 1, 1, 2);
    b.int32(1);  // 8 inputs, input 7 INT32
    expectRejected(b, ops::prepareAveragePool2D, "explicit padding takes 10, 11 inputs, got 8");
  }
  {
    auto b = implicitPool(op, kF32, 5, 5, 2, 1, 6);
    expectRejected(b, ops::prepareAveragePool2D, "exceeds the padded input height");
  }
  {
    auto b = implicitPool(op, kF32, 5, 5, 1, 1, 2);
    b.input(0).dimensions = {5, 5, 3};
    expectRejected(b, ops::prepareMaxPool2D, "input 0 must have rank 4");
  }
  {
    auto b = implicitPool(op, OperandType::TENSOR_INT32, 5, 5, 1, 1, 2);
    expectRejected(b, ops::prepareMaxPool2D, "has type TENSOR_INT32, not supported");
  }
  {
    auto b = implicitPool(op, kQ8, 5, 5, 1, 1, 2);
    b.input(0).scale = -1.0f;
    expectRejected(b, ops::prepareMaxPool2D, "must have a positive finite scale");
  }
}

TEST(PoolingRunTest, QuantAverageAndMaxWithActivation) {
  // Input 2x2x3 (zero point 3, scale 0.5), 2x2 window, VALID: one output pixel.
  const std::vector<uint8_t> input{0, 10, 200, 1, 20, 201, 2, 30, 202, 4, 41, 203};
  {
    auto b = implicitPool(OperationType::AVERAGE_POOL_2D, kQ8, 2, 2, 2, 1, 2, 3);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareAveragePool2D(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    std::vector<uint8_t> out(3);
    ASSERT_TRUE(runKernel(**kernel, ctx, {input.data()}, {out.data()}).has_value());
    // averages 7/4 -> 2, 101/4 -> 25, 806/4 -> 202; RELU6 in scale 0.5 zp 3: [3, 15].
    EXPECT_EQ(out, (std::vector<uint8_t>{3, 15, 15}));
  }
  {
    auto b = implicitPool(OperationType::MAX_POOL_2D, kQ8, 2, 2, 2, 1, 2, 0);
    PrepareContext ctx = b.context();
    auto kernel = ops::prepareMaxPool2D(ctx);
    ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
    std::vector<uint8_t> out(3);
    ASSERT_TRUE(runKernel(**kernel, ctx, {input.data()}, {out.data()}).has_value());
    EXPECT_EQ(out, (std::vector<uint8_t>{4, 41, 203}));
  }
}

TEST(PoolingRunTest, Int8AverageRoundsAwayFromZero) {
  OpBuilder c(OperationType::AVERAGE_POOL_2D);
  c.tensor(kQ8S, {1, 1, 2, 3}, 0.5f, 0)
      .int32(2)
      .int32(1)
      .int32(1)
      .int32(2)  // filter width
      .int32(1)  // filter height
      .int32(0)
      .output(kQ8S, {}, 0.5f, 0);
  PrepareContext ctx = c.context();
  auto kernel = ops::prepareAveragePool2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  const std::vector<int8_t> input{-1, 1, -128, -2, 2, -127};
  std::vector<int8_t> out(3);
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data()}, {out.data()}).has_value());
  // -3/2 = -1.5 -> -2; 3/2 -> 2; -255/2 = -127.5 -> -128.
  EXPECT_EQ(out, (std::vector<int8_t>{-2, 2, -128}));
}

TEST(PoolingRunTest, NchwMaxPool) {
  OpBuilder b(OperationType::MAX_POOL_2D);
  b.tensor(kF32, {1, 2, 2, 2})  // NCHW: 2 channels of 2 x 2
      .int32(2)
      .int32(1)
      .int32(1)
      .int32(2)
      .int32(1)  // 2 wide, 1 high
      .int32(0)
      .boolean(true)
      .output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareMaxPool2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 2, 2, 1}));
  const std::vector<float> input{1, 5, 7, 3, -1, -2, 9, 8};
  std::vector<float> out(4);
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data()}, {out.data()}).has_value());
  EXPECT_EQ(out, (std::vector<float>{5, 7, -1, 9}));
}

TEST(PoolingRunTest, FloatAverageIgnoresPadding) {
  OpBuilder b(OperationType::AVERAGE_POOL_2D);
  b.tensor(kF32, {1, 2, 2, 1})
      .int32(1)  // paddings
      .int32(1)
      .int32(1)
      .int32(1)
      .int32(1)  // strides
      .int32(1)
      .int32(2)  // filter
      .int32(2)
      .int32(0)
      .output(kF32);
  PrepareContext ctx = b.context();
  auto kernel = ops::prepareAveragePool2D(ctx);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().message;
  ASSERT_EQ(ctx.output(0).dimensions, (std::vector<uint32_t>{1, 3, 3, 1}));
  const std::vector<float> input{1, 2, 3, 4};
  std::vector<float> out(9);
  ASSERT_TRUE(runKernel(**kernel, ctx, {input.data()}, {out.data()}).has_value());
  EXPECT_EQ(out, (std::vector<float>{1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4}));
}

}  // namespace
}  // namespace nnhal::engine
