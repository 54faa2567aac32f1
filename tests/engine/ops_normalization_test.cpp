// L2_NORMALIZATION, LOCAL_RESPONSE_NORMALIZATION, LOG_SOFTMAX and INSTANCE_NORMALIZATION
// prepare functions: shapes, execution, and every rejection.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::run;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

TEST(OpsL2NormalizationTest, FloatDefaultAxisAndExplicitAxis) {
  const std::vector<float> x{3, 0, 4, 0, 0, 0};  // [2, 3]
  OpBuilder last(OperationType::L2_NORMALIZATION);
  last.tensor(kF32, {2, 3}).output(kF32);
  auto out = run<float>(prepare(last, ops::prepareL2Normalization), {x.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<float>{0.6f, 0, 0.8f, 0, 0, 0}));
  OpBuilder first(OperationType::L2_NORMALIZATION);
  first.tensor(kF32, {2, 3}).int32(-2).output(kF32);
  out = run<float>(prepare(first, ops::prepareL2Normalization), {x.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{1, 0, 1, 0, 0, 0}));
}

TEST(OpsL2NormalizationTest, Quantized) {
  const std::vector<uint8_t> x{13, 10, 14};  // zero point 10: (3, 0, 4)
  OpBuilder b(OperationType::L2_NORMALIZATION);
  b.tensor(kQ8, {3}, 0.1f, 10).output(kQ8, {}, 1.0f / 128, 128);
  const auto out = run<uint8_t>(prepare(b, ops::prepareL2Normalization), {x.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<uint8_t>{205, 128, 230}));  // 128 + round(76.8), + round(102.4)
  const std::vector<int8_t> s{-1, -4};                     // zero point -4: (3, 0)
  OpBuilder sb(OperationType::L2_NORMALIZATION);
  sb.tensor(kQ8S, {2}, 0.1f, -4).output(kQ8S, {}, 1.0f / 128, 0);
  const auto sout = run<int8_t>(prepare(sb, ops::prepareL2Normalization), {s.data()});
  ASSERT_TRUE(sout);
  EXPECT_EQ(*sout, (std::vector<int8_t>{127, 0}));  // 128 saturates
}

TEST(OpsL2NormalizationTest, Rejections) {
  OpBuilder type(OperationType::L2_NORMALIZATION);
  type.tensor(OperandType::TENSOR_INT32, {3}).output(OperandType::TENSOR_INT32);
  expectRejected(type, ops::prepareL2Normalization,
                 "L2_NORMALIZATION input 0 has unsupported type");
  OpBuilder rank(OperationType::L2_NORMALIZATION);
  rank.tensor(kF32, {1, 1, 1, 1, 3}).output(kF32);
  expectRejected(rank, ops::prepareL2Normalization, "L2_NORMALIZATION input 0 has rank 5");
  OpBuilder axis(OperationType::L2_NORMALIZATION);
  axis.tensor(kF32, {2, 3}).int32(2).output(kF32);
  expectRejected(axis, ops::prepareL2Normalization, "L2_NORMALIZATION input 1 (axis) is 2");
  OpBuilder axisType(OperationType::L2_NORMALIZATION);
  axisType.tensor(kF32, {2, 3}).float32(1.0f).output(kF32);
  expectRejected(axisType, ops::prepareL2Normalization,
                 "L2_NORMALIZATION input 1 has unsupported type FLOAT32");
  OpBuilder scale(OperationType::L2_NORMALIZATION);
  scale.tensor(kQ8, {3}, 0.1f, 10).output(kQ8, {}, 0.5f, 128);
  expectRejected(scale, ops::prepareL2Normalization,
                 "L2_NORMALIZATION output 0 must have scale 1/128 and zeroPoint 128");
  OpBuilder zero(OperationType::L2_NORMALIZATION);
  zero.tensor(kQ8S, {3}, 0.1f, 10).output(kQ8S, {}, 1.0f / 128, 128);
  expectRejected(zero, ops::prepareL2Normalization, "zeroPoint 0");
  OpBuilder out(OperationType::L2_NORMALIZATION);
  out.tensor(kF32, {3}).output(kQ8, {}, 1.0f / 128, 128);
  expectRejected(out, ops::prepareL2Normalization, "L2_NORMALIZATION output 0 has type");
  OpBuilder count(OperationType::L2_NORMALIZATION);
  count.tensor(kF32, {3}).int32(0).int32(0).output(kF32);
  expectRejected(count, ops::prepareL2Normalization, "L2_NORMALIZATION takes 1 to 2 inputs");
}

OpBuilder lrn(std::vector<uint32_t> dims, int32_t radius, float bias, float alpha, float beta) {
  OpBuilder b(OperationType::LOCAL_RESPONSE_NORMALIZATION);
  b.tensor(kF32, std::move(dims)).int32(radius).float32(bias).float32(alpha).float32(beta);
  return b;
}

TEST(OpsLocalResponseNormalizationTest, RunsAlongAxis) {
  const std::vector<float> x{1, 2, 3, 4};  // [2, 2], normalize along axis 0
  OpBuilder b = lrn({2, 2}, 1, 1.0f, 1.0f, 0.5f);
  b.int32(0).output(kF32);
  const auto p = prepare(b, ops::prepareLocalResponseNormalization);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const auto out = run<float>(p, {x.data()});
  ASSERT_TRUE(out);
  const std::vector<float> expected{1 / std::sqrt(11.0f), 2 / std::sqrt(21.0f),
                                    3 / std::sqrt(11.0f), 4 / std::sqrt(21.0f)};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR((*out)[i], expected[i], 1e-6);
}

TEST(OpsLocalResponseNormalizationTest, Rejections) {
  OpBuilder type(OperationType::LOCAL_RESPONSE_NORMALIZATION);
  type.tensor(kQ8, {4}, 0.5f, 0).int32(1).float32(1).float32(1).float32(1).output(kQ8, {}, 0.5f, 0);
  expectRejected(type, ops::prepareLocalResponseNormalization,
                 "LOCAL_RESPONSE_NORMALIZATION input 0 has unsupported type");
  OpBuilder radius = lrn({4}, -1, 1, 1, 1);
  radius.output(kF32);
  expectRejected(radius, ops::prepareLocalResponseNormalization,
                 "LOCAL_RESPONSE_NORMALIZATION input 1 (radius) must be >= 0");
  OpBuilder biasType(OperationType::LOCAL_RESPONSE_NORMALIZATION);
  biasType.tensor(kF32, {4}).int32(1).int32(1).float32(1).float32(1).output(kF32);
  expectRejected(biasType, ops::prepareLocalResponseNormalization,
                 "LOCAL_RESPONSE_NORMALIZATION input 2 has unsupported type INT32");
  OpBuilder axis = lrn({4}, 1, 1, 1, 1);
  axis.int32(1).output(kF32);
  expectRejected(axis, ops::prepareLocalResponseNormalization,
                 "LOCAL_RESPONSE_NORMALIZATION input 5 (axis) is 1");
  OpBuilder rank = lrn({1, 1, 1, 1, 4}, 1, 1, 1, 1);
  rank.output(kF32);
  expectRejected(rank, ops::prepareLocalResponseNormalization, "input 0 has rank 5");
  OpBuilder count(OperationType::LOCAL_RESPONSE_NORMALIZATION);
  count.tensor(kF32, {4}).int32(1).output(kF32);
  expectRejected(count, ops::prepareLocalResponseNormalization,
                 "LOCAL_RESPONSE_NORMALIZATION takes 5 to 6 inputs, got 2");
}

TEST(OpsLogSoftmaxTest, RunsAndRejects) {
  const std::vector<float> x{0, 0, 1, 1};  // [2, 2] along axis 0
  OpBuilder b(OperationType::LOG_SOFTMAX);
  b.tensor(kF32, {2, 2}).float32(1.0f).int32(0).output(kF32);
  const auto out = run<float>(prepare(b, ops::prepareLogSoftmax), {x.data()});
  ASSERT_TRUE(out) << out.error().message;
  const float lo = -std::log(1 + std::exp(1.0f)), hi = 1 + lo;
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR((*out)[i], i < 2 ? lo : hi, 1e-6);

  OpBuilder beta(OperationType::LOG_SOFTMAX);
  beta.tensor(kF32, {2}).float32(0.0f).int32(0).output(kF32);
  expectRejected(beta, ops::prepareLogSoftmax, "LOG_SOFTMAX input 1 (beta) must be positive");
  OpBuilder axis(OperationType::LOG_SOFTMAX);
  axis.tensor(kF32, {2}).float32(1.0f).int32(-2).output(kF32);
  expectRejected(axis, ops::prepareLogSoftmax, "LOG_SOFTMAX input 2 (axis) is -2");
  OpBuilder scalar(OperationType::LOG_SOFTMAX);
  scalar.tensor(kF32, {}).float32(1.0f).int32(0).output(kF32);
  expectRejected(scalar, ops::prepareLogSoftmax, "LOG_SOFTMAX input 0 must have rank >= 1");
  OpBuilder type(OperationType::LOG_SOFTMAX);
  type.tensor(kQ8, {2}, 1.0f, 0).float32(1.0f).int32(0).output(kQ8, {}, 1.0f, 0);
  expectRejected(type, ops::prepareLogSoftmax, "LOG_SOFTMAX input 0 has unsupported type");
  OpBuilder count(OperationType::LOG_SOFTMAX);
  count.tensor(kF32, {2}).float32(1.0f).output(kF32);
  expectRejected(count, ops::prepareLogSoftmax, "LOG_SOFTMAX takes 3 inputs, got 2");
}

OpBuilder instanceNorm(std::vector<uint32_t> dims, float epsilon, bool nchw) {
  OpBuilder b(OperationType::INSTANCE_NORMALIZATION);
  b.tensor(kF32, std::move(dims))
      .float32(2.0f)
      .float32(1.0f)
      .float32(epsilon)
      .scalar<uint8_t>(OperandType::BOOL, nchw ? 1 : 0);
  return b;
}

TEST(OpsInstanceNormalizationTest, BothLayouts) {
  // One batch, two channels, 2 pixels: channel 0 = {1, 3}, channel 1 = {5, 5}.
  const std::vector<float> nhwc{1, 5, 3, 5};
  OpBuilder b = instanceNorm({1, 1, 2, 2}, 1e-6f, false);
  b.output(kF32);
  auto out = run<float>(prepare(b, ops::prepareInstanceNormalization), {nhwc.data()});
  ASSERT_TRUE(out) << out.error().message;
  const float unit = 1.0f / std::sqrt(1.0f + 1e-6f);
  EXPECT_NEAR((*out)[0], 1 - 2 * unit, 1e-6);
  EXPECT_NEAR((*out)[1], 1, 1e-6);
  EXPECT_NEAR((*out)[2], 1 + 2 * unit, 1e-6);
  EXPECT_NEAR((*out)[3], 1, 1e-6);
  const std::vector<float> nchw{1, 3, 5, 5};
  OpBuilder c = instanceNorm({1, 2, 1, 2}, 1e-6f, true);
  c.output(kF32);
  out = run<float>(prepare(c, ops::prepareInstanceNormalization), {nchw.data()});
  ASSERT_TRUE(out);
  EXPECT_NEAR((*out)[0], 1 - 2 * unit, 1e-6);
  EXPECT_NEAR((*out)[1], 1 + 2 * unit, 1e-6);
}

TEST(OpsInstanceNormalizationTest, Rejections) {
  OpBuilder rank = instanceNorm({2, 2, 2}, 1e-4f, false);
  rank.output(kF32);
  expectRejected(rank, ops::prepareInstanceNormalization,
                 "INSTANCE_NORMALIZATION input 0 has rank 3");
  OpBuilder eps = instanceNorm({1, 2, 2, 1}, 0.0f, false);
  eps.output(kF32);
  expectRejected(eps, ops::prepareInstanceNormalization,
                 "INSTANCE_NORMALIZATION input 3 (epsilon) must be positive");
  OpBuilder layout(OperationType::INSTANCE_NORMALIZATION);
  layout.tensor(kF32, {1, 2, 2, 1}).float32(1).float32(0).float32(1e-4f).int32(0).output(kF32);
  expectRejected(layout, ops::prepareInstanceNormalization,
                 "INSTANCE_NORMALIZATION input 4 has unsupported type INT32");
  OpBuilder gamma(OperationType::INSTANCE_NORMALIZATION);
  gamma.tensor(kF32, {1, 2, 2, 1})
      .float32(INFINITY)
      .float32(0)
      .float32(1e-4f)
      .scalar<uint8_t>(OperandType::BOOL, 0)
      .output(kF32);
  expectRejected(gamma, ops::prepareInstanceNormalization,
                 "INSTANCE_NORMALIZATION input 1 must be finite");
  OpBuilder type(OperationType::INSTANCE_NORMALIZATION);
  type.tensor(kQ8, {1, 2, 2, 1}, 1.0f, 0)
      .float32(1)
      .float32(0)
      .float32(1e-4f)
      .scalar<uint8_t>(OperandType::BOOL, 0)
      .output(kQ8, {}, 1.0f, 0);
  expectRejected(type, ops::prepareInstanceNormalization,
                 "INSTANCE_NORMALIZATION input 0 has unsupported type");
  OpBuilder count = instanceNorm({1, 2, 2, 1}, 1e-4f, false);
  count.int32(0).output(kF32);
  expectRejected(count, ops::prepareInstanceNormalization,
                 "INSTANCE_NORMALIZATION takes 5 inputs, got 6");
}

}  // namespace
}  // namespace nnhal::engine
