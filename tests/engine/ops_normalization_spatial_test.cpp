// RESIZE_BILINEAR, RESIZE_NEAREST_NEIGHBOR and L2_POOL_2D prepare functions: output shapes
// (sizes and scales, both layouts), execution, and every rejection.
#include <gtest/gtest.h>

#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::Prepared;
using testing::run;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kBool = OperandType::BOOL;

/// Runs `p` on `input` (its other inputs are constants) and expects it to succeed.
template <typename T>
std::vector<T> runOk(const Prepared& p, const void* input) {
  EXPECT_TRUE(p.kernel) << p.kernel.error().message;
  if (!p.kernel) return {};
  const auto out = run<T>(p, {input});
  EXPECT_TRUE(out) << out.error().message;
  return out ? *out : std::vector<T>{};
}

TEST(OpsResizeTest, BilinearSizesNhwcAndNchw) {
  const std::vector<float> x{1, 2, 3, 4};
  OpBuilder nhwc(OperationType::RESIZE_BILINEAR);
  nhwc.tensor(kF32, {1, 2, 2, 1}).int32(3).int32(3).output(kF32);
  const auto p = prepare(nhwc, ops::prepareResizeBilinear);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{1, 3, 3, 1}));
  const auto a = runOk<float>(p, x.data());
  OpBuilder nchw(OperationType::RESIZE_BILINEAR);
  nchw.tensor(kF32, {1, 1, 2, 2}).int32(3).int32(3).scalar<uint8_t>(kBool, 1).output(kF32);
  const auto q = prepare(nchw, ops::prepareResizeBilinear);
  ASSERT_TRUE(q.kernel) << q.kernel.error().message;
  EXPECT_EQ(q.outputDims(), (std::vector<uint32_t>{1, 1, 3, 3}));
  EXPECT_EQ(runOk<float>(q, x.data()), a);  // one channel: same bytes
  EXPECT_FLOAT_EQ(a[4], 1.0f + 2.0f);       // centre: 1 + 3 * (2/3)
}

TEST(OpsResizeTest, ScalesAndAlignCorners) {
  OpBuilder b(OperationType::RESIZE_BILINEAR);
  b.tensor(kQ8, {2, 2, 2, 3}, 0.5f, 7)
      .float32(1.6f)
      .float32(1.8f)
      .scalar<uint8_t>(kBool, 0)
      .scalar<uint8_t>(kBool, 1)
      .scalar<uint8_t>(kBool, 0)
      .output(kQ8, {}, 0.5f, 7);
  const auto p = prepare(b, ops::prepareResizeBilinear);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 3, 3, 3}));  // floor(2*1.8), floor(2*1.6)
  std::vector<uint8_t> x(24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(10 * i);
  const auto y = runOk<uint8_t>(p, x.data());
  EXPECT_EQ(y[0], x[0]);  // corners are kept
  EXPECT_EQ(y[(2 * 3 + 2) * 3 + 2], x[(1 * 2 + 1) * 3 + 2]);
}

TEST(OpsResizeTest, NearestNeighborNchwQuantSigned) {
  // [1, 2, 1, 2] NCHW -> output width 4, height 1.
  const std::vector<int8_t> x{1, 2, -3, -4};
  OpBuilder b(OperationType::RESIZE_NEAREST_NEIGHBOR);
  b.tensor(kQ8S, {1, 2, 1, 2}, 0.25f, -1)
      .int32(4)
      .int32(1)
      .scalar<uint8_t>(kBool, 1)
      .output(kQ8S, {}, 0.25f, -1);
  const auto p = prepare(b, ops::prepareResizeNearestNeighbor);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{1, 2, 1, 4}));
  EXPECT_EQ(runOk<int8_t>(p, x.data()), (std::vector<int8_t>{1, 1, 2, 2, -3, -3, -4, -4}));
}

TEST(OpsResizeTest, ZeroBatch) {
  OpBuilder b(OperationType::RESIZE_NEAREST_NEIGHBOR);
  b.tensor(kF32, {0, 1, 2, 2}).int32(3).int32(3).scalar<uint8_t>(kBool, 1).output(kF32);
  const auto p = prepare(b, ops::prepareResizeNearestNeighbor);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{0, 1, 3, 3}));
  EXPECT_TRUE(runOk<float>(p, nullptr).empty());
}

TEST(OpsResizeTest, Rejections) {
  const auto resize = [](OperationType type) {
    OpBuilder b(type);
    b.tensor(kF32, {1, 2, 2, 1});
    return b;
  };
  OpBuilder layoutMissing = resize(OperationType::RESIZE_NEAREST_NEIGHBOR);
  layoutMissing.int32(3).int32(3).output(kF32);
  expectRejected(layoutMissing, ops::prepareResizeNearestNeighbor,
                 "RESIZE_NEAREST_NEIGHBOR takes 4 to 6 inputs, got 3");
  OpBuilder both = resize(OperationType::RESIZE_BILINEAR);
  both.int32(3).int32(3).scalar<uint8_t>(kBool, 0).scalar<uint8_t>(kBool, 1).scalar<uint8_t>(kBool,
                                                                                             1);
  both.output(kF32);
  expectRejected(both, ops::prepareResizeBilinear,
                 "RESIZE_BILINEAR input 5 (half_pixel_centers) cannot be true together");
  OpBuilder size = resize(OperationType::RESIZE_BILINEAR);
  size.int32(0).int32(3).output(kF32);
  expectRejected(size, ops::prepareResizeBilinear,
                 "RESIZE_BILINEAR input 1 (output width) must be > 0");
  OpBuilder scale = resize(OperationType::RESIZE_BILINEAR);
  scale.float32(1.0f).float32(0.2f).output(kF32);
  expectRejected(scale, ops::prepareResizeBilinear, "RESIZE_BILINEAR input 2 (height scale");
  OpBuilder mixed = resize(OperationType::RESIZE_BILINEAR);
  mixed.float32(1.0f).int32(3).output(kF32);
  expectRejected(mixed, ops::prepareResizeBilinear,
                 "RESIZE_BILINEAR input 1 has unsupported type FLOAT32 (expected INT32)");
  OpBuilder layoutType = resize(OperationType::RESIZE_BILINEAR);
  layoutType.int32(3).int32(3).int32(0).output(kF32);
  expectRejected(layoutType, ops::prepareResizeBilinear,
                 "RESIZE_BILINEAR input 3 has unsupported type INT32");
  OpBuilder rank(OperationType::RESIZE_BILINEAR);
  rank.tensor(kF32, {2, 2, 1}).int32(3).int32(3).output(kF32);
  expectRejected(rank, ops::prepareResizeBilinear, "RESIZE_BILINEAR input 0 has rank 3");
  OpBuilder empty(OperationType::RESIZE_BILINEAR);
  empty.tensor(kF32, {1, 0, 2, 1}).int32(3).int32(3).output(kF32);
  expectRejected(empty, ops::prepareResizeBilinear, "must have non-zero height, width and depth");
  OpBuilder quant(OperationType::RESIZE_BILINEAR);
  quant.tensor(kQ8, {1, 2, 2, 1}, 0.5f, 1).int32(3).int32(3).output(kQ8, {}, 0.5f, 2);
  expectRejected(quant, ops::prepareResizeBilinear,
                 "RESIZE_BILINEAR output 0 must have the scale and zeroPoint of input 0");
  OpBuilder type(OperationType::RESIZE_BILINEAR);
  type.tensor(OperandType::TENSOR_INT32, {1, 2, 2, 1})
      .int32(3)
      .int32(3)
      .output(OperandType::TENSOR_INT32);
  expectRejected(type, ops::prepareResizeBilinear, "RESIZE_BILINEAR input 0 has unsupported type");
}

OpBuilder l2Pool(std::vector<uint32_t> dims, int32_t filter, int32_t activation) {
  OpBuilder b(OperationType::L2_POOL_2D);
  // Implicit padding VALID, strides 1, filter filter x filter.
  b.tensor(kF32, std::move(dims)).int32(2).int32(1).int32(1).int32(filter).int32(filter);
  b.int32(activation);
  return b;
}

TEST(OpsL2PoolTest, ImplicitPaddingAndNchw) {
  const std::vector<float> x{3, 4, 0, 0};  // [1, 2, 2, 1]
  OpBuilder b = l2Pool({1, 2, 2, 1}, 2, 0);
  b.output(kF32);
  const auto p = prepare(b, ops::prepareL2Pool2D);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(runOk<float>(p, x.data()), (std::vector<float>{2.5f}));  // sqrt(25 / 4)
  OpBuilder relu1 = l2Pool({1, 1, 2, 2}, 2, 2);
  relu1.scalar<uint8_t>(kBool, 1).output(kF32);
  const auto q = prepare(relu1, ops::prepareL2Pool2D);
  ASSERT_TRUE(q.kernel) << q.kernel.error().message;
  EXPECT_EQ(q.outputDims(), (std::vector<uint32_t>{1, 1, 1, 1}));
  EXPECT_EQ(runOk<float>(q, x.data()), (std::vector<float>{1.0f}));  // RELU1 clamp
}

TEST(OpsL2PoolTest, Rejections) {
  OpBuilder type(OperationType::L2_POOL_2D);
  type.tensor(kQ8, {1, 2, 2, 1}, 1.0f, 0).int32(2).int32(1).int32(1).int32(2).int32(2).int32(0);
  type.output(kQ8, {}, 1.0f, 0);
  expectRejected(type, ops::prepareL2Pool2D, "L2_POOL_2D input 0 must be TENSOR_FLOAT32");
  OpBuilder filter = l2Pool({1, 2, 2, 1}, 0, 0);
  filter.output(kF32);
  expectRejected(filter, ops::prepareL2Pool2D, "L2_POOL_2D input 4 (filter size 0x0)");
  OpBuilder activation = l2Pool({1, 2, 2, 1}, 2, 4);
  activation.output(kF32);
  expectRejected(activation, ops::prepareL2Pool2D, "L2_POOL_2D input 6 (fused activation)");
  OpBuilder rank = l2Pool({2, 2, 1}, 2, 0);
  rank.output(kF32);
  expectRejected(rank, ops::prepareL2Pool2D, "L2_POOL_2D input 0 must have rank 4");
  OpBuilder count(OperationType::L2_POOL_2D);
  count.tensor(kF32, {1, 2, 2, 1}).int32(2).int32(1).output(kF32);
  expectRejected(count, ops::prepareL2Pool2D, "L2_POOL_2D takes 7, 8, 10, 11 inputs, got 3");
  OpBuilder out = l2Pool({1, 2, 2, 1}, 2, 0);
  out.output(kQ8, {}, 1.0f, 0);
  expectRejected(out, ops::prepareL2Pool2D, "L2_POOL_2D output 0 must be TENSOR_FLOAT32");
}

}  // namespace
}  // namespace nnhal::engine
