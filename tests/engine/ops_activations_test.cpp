// RELU, RELU1, RELU6, LOGISTIC and SOFTMAX: prepare (shapes, validation) and execution.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/op_test_harness.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::run;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;

TEST(OpsActivationsTest, ReluFamilyFloat) {
  const std::vector<float> x{-7.0f, -0.5f, 0.5f, 3.0f, 8.0f};
  struct Case {
    OperationType type;
    ops::PrepareResult (*fn)(PrepareContext&);
    std::vector<float> expected;
  };
  const Case cases[] = {
      {OperationType::RELU, ops::prepareRelu, {0.0f, 0.0f, 0.5f, 3.0f, 8.0f}},
      {OperationType::RELU1, ops::prepareRelu1, {-1.0f, -0.5f, 0.5f, 1.0f, 1.0f}},
      {OperationType::RELU6, ops::prepareRelu6, {0.0f, 0.0f, 0.5f, 3.0f, 6.0f}},
  };
  for (const Case& c : cases) {
    OpBuilder op(c.type);
    op.tensor(kF32, {5}).output(kF32);
    const auto p = prepare(op, c.fn);
    ASSERT_TRUE(p.kernel) << p.kernel.error().message;
    EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{5}));
    const auto out = run<float>(p, {x.data()});
    ASSERT_TRUE(out);
    EXPECT_EQ(*out, c.expected) << toString(c.type);
  }
}

TEST(OpsActivationsTest, Relu6QuantUsesRealBounds) {
  // Scale 0.1, zero point 50: real 0 is 50, real 6 is 110.
  OpBuilder op(OperationType::RELU6);
  op.tensor(kQ8, {1, 4}, 0.1f, 50).output(kQ8, {1, 4}, 0.1f, 50);
  const std::vector<uint8_t> x{0, 60, 110, 255};
  const auto out = run<uint8_t>(prepare(op, ops::prepareRelu6), {x.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<uint8_t>{50, 60, 110, 110}));
  OpBuilder relu1(OperationType::RELU1);
  relu1.tensor(kQ8S, {3}, 0.5f, 0).output(kQ8S, {3}, 0.5f, 0);
  const std::vector<int8_t> y{-100, 1, 100};
  const auto out1 = run<int8_t>(prepare(relu1, ops::prepareRelu1), {y.data()});
  ASSERT_TRUE(out1);
  EXPECT_EQ(*out1, (std::vector<int8_t>{-2, 1, 2}));
}

TEST(OpsActivationsTest, ReluRejectsChangedQuantizationAndBadOperands) {
  OpBuilder changed(OperationType::RELU);
  changed.tensor(kQ8, {2}, 0.1f, 50).output(kQ8, {2}, 0.2f, 50);
  expectRejected(changed, ops::prepareRelu, "RELU output 0 must have the scale and zeroPoint");
  OpBuilder int32(OperationType::RELU1);
  int32.tensor(OperandType::TENSOR_INT32, {2}).output(OperandType::TENSOR_INT32);
  expectRejected(int32, ops::prepareRelu1, "RELU1 input 0 has unsupported type TENSOR_INT32");
  OpBuilder rank5(OperationType::RELU6);
  rank5.tensor(kF32, {1, 1, 1, 1, 1}).output(kF32);
  expectRejected(rank5, ops::prepareRelu6, "RELU6 input 0 has rank 5");
  OpBuilder extra(OperationType::RELU);
  extra.tensor(kF32, {1}).tensor(kF32, {1}).output(kF32);
  expectRejected(extra, ops::prepareRelu, "RELU takes 1 inputs, got 2");
  OpBuilder outType(OperationType::RELU);
  outType.tensor(kF32, {1}).output(kQ8, {}, 1.0f, 0);
  expectRejected(outType, ops::prepareRelu, "RELU output 0 has type TENSOR_QUANT8_ASYMM");
}

TEST(OpsActivationsTest, LogisticFloatAndQuant) {
  OpBuilder f(OperationType::LOGISTIC);
  f.tensor(kF32, {3}).output(kF32);
  const std::vector<float> x{-1.0f, 0.0f, 2.0f};
  const auto out = run<float>(prepare(f, ops::prepareLogistic), {x.data()});
  ASSERT_TRUE(out);
  EXPECT_NEAR((*out)[0], 0.26894142, 1e-6);
  EXPECT_EQ((*out)[1], 0.5f);
  EXPECT_NEAR((*out)[2], 0.88079708, 1e-6);

  OpBuilder q(OperationType::LOGISTIC);
  q.tensor(kQ8, {3}, 0.5f, 128).output(kQ8, {3}, 1.0f / 256, 0);
  const std::vector<uint8_t> qx{126, 128, 132};  // -1, 0, 2
  const auto qout = run<uint8_t>(prepare(q, ops::prepareLogistic), {qx.data()});
  ASSERT_TRUE(qout) << qout.error().message;
  EXPECT_EQ(*qout, (std::vector<uint8_t>{69, 128, 225}));  // 68.85, 128, 225.48

  OpBuilder s(OperationType::LOGISTIC);
  s.tensor(kQ8S, {2}, 0.5f, 0).output(kQ8S, {2}, 1.0f / 256, -128);
  const std::vector<int8_t> sx{0, 4};
  const auto sout = run<int8_t>(prepare(s, ops::prepareLogistic), {sx.data()});
  ASSERT_TRUE(sout);
  EXPECT_EQ(*sout, (std::vector<int8_t>{0, 97}));  // 128 - 128, 225.48 -> 225 - 128
}

TEST(OpsActivationsTest, LogisticRejectsWrongOutputQuantization) {
  OpBuilder scale(OperationType::LOGISTIC);
  scale.tensor(kQ8, {2}, 0.5f, 128).output(kQ8, {2}, 1.0f / 128, 0);
  expectRejected(scale, ops::prepareLogistic,
                 "LOGISTIC output 0 must have scale 1/256 and zeroPoint 0");
  OpBuilder zp(OperationType::LOGISTIC);
  zp.tensor(kQ8S, {2}, 0.5f, 0).output(kQ8S, {2}, 1.0f / 256, 0);
  expectRejected(zp, ops::prepareLogistic, "scale 1/256 and zeroPoint -128");
  OpBuilder badInput(OperationType::LOGISTIC);
  badInput.tensor(kQ8, {2}, 0.0f, 0).output(kQ8, {2}, 1.0f / 256, 0);
  expectRejected(badInput, ops::prepareLogistic, "LOGISTIC input 0 must have a positive");
}

TEST(OpsActivationsTest, SoftmaxFloatDefaultAndExplicitAxis) {
  OpBuilder last(OperationType::SOFTMAX);
  last.tensor(kF32, {2, 2}).float32(1.0f).output(kF32);
  const std::vector<float> x{0.0f, 0.0f, 0.0f, std::log(3.0f)};
  const auto out = run<float>(prepare(last, ops::prepareSoftmax), {x.data(), nullptr});
  ASSERT_TRUE(out);
  EXPECT_NEAR((*out)[0], 0.5, 1e-6);
  EXPECT_NEAR((*out)[2], 0.25, 1e-6);
  EXPECT_NEAR((*out)[3], 0.75, 1e-6);

  OpBuilder axis0(OperationType::SOFTMAX);
  axis0.tensor(kF32, {2, 2}).float32(1.0f).int32(-2).output(kF32);
  const auto p = prepare(axis0, ops::prepareSoftmax);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const auto out0 = run<float>(p, {x.data(), nullptr, nullptr});
  ASSERT_TRUE(out0);
  EXPECT_NEAR((*out0)[0], 0.5, 1e-6);   // column 0: equal
  EXPECT_NEAR((*out0)[1], 0.25, 1e-6);  // column 1: 1 vs 3
  EXPECT_NEAR((*out0)[3], 0.75, 1e-6);

  OpBuilder omitted(OperationType::SOFTMAX);
  omitted.tensor(kF32, {4}).float32(2.0f).omitted(OperandType::INT32).output(kF32);
  const std::vector<float> y{1.0f, 1.0f, 1.0f, 1.0f};
  const auto outOmitted = run<float>(prepare(omitted, ops::prepareSoftmax), {y.data()});
  ASSERT_TRUE(outOmitted) << outOmitted.error().message;
  EXPECT_EQ(*outOmitted, (std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f}));
}

TEST(OpsActivationsTest, SoftmaxQuant) {
  OpBuilder op(OperationType::SOFTMAX);
  op.tensor(kQ8, {1, 4}, 0.5f, 100).float32(1.0f).output(kQ8, {1, 4}, 1.0f / 256, 0);
  const std::vector<uint8_t> x{100, 100, 100, 100};
  const auto out = run<uint8_t>(prepare(op, ops::prepareSoftmax), {x.data(), nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<uint8_t>{64, 64, 64, 64}));

  OpBuilder s(OperationType::SOFTMAX);
  s.tensor(kQ8S, {2}, 1.0f, 0).float32(1.0f).output(kQ8S, {2}, 1.0f / 256, -128);
  const std::vector<int8_t> y{0, 1};  // e^0 / (1 + e) = 0.2689 -> 69; 0.7311 -> 187
  const auto sout = run<int8_t>(prepare(s, ops::prepareSoftmax), {y.data(), nullptr});
  ASSERT_TRUE(sout);
  EXPECT_EQ(*sout, (std::vector<int8_t>{69 - 128, 187 - 128}));
}

TEST(OpsActivationsTest, SoftmaxRejections) {
  OpBuilder beta(OperationType::SOFTMAX);
  beta.tensor(kF32, {2}).float32(0.0f).output(kF32);
  expectRejected(beta, ops::prepareSoftmax, "SOFTMAX input 1 (beta) must be positive");
  OpBuilder nanBeta(OperationType::SOFTMAX);
  nanBeta.tensor(kF32, {2}).float32(std::nanf("")).output(kF32);
  expectRejected(nanBeta, ops::prepareSoftmax, "(beta) must be positive and finite");
  OpBuilder intBeta(OperationType::SOFTMAX);
  intBeta.tensor(kF32, {2}).int32(1).output(kF32);
  expectRejected(intBeta, ops::prepareSoftmax, "SOFTMAX input 1 has unsupported type INT32");
  OpBuilder axis(OperationType::SOFTMAX);
  axis.tensor(kF32, {2, 3}).float32(1.0f).int32(2).output(kF32);
  expectRejected(axis, ops::prepareSoftmax, "SOFTMAX input 2 (axis) is 2, outside [-2, 2)");
  OpBuilder rank0(OperationType::SOFTMAX);
  rank0.tensor(kF32, {}).float32(1.0f).output(kF32);
  expectRejected(rank0, ops::prepareSoftmax, "SOFTMAX input 0 has rank 0");
  OpBuilder rank5(OperationType::SOFTMAX);
  rank5.tensor(kF32, {1, 1, 1, 1, 2}).float32(1.0f).output(kF32);
  expectRejected(rank5, ops::prepareSoftmax, "has rank 5");
  OpBuilder outQuant(OperationType::SOFTMAX);
  outQuant.tensor(kQ8, {2}, 1.0f, 0).float32(1.0f).output(kQ8, {2}, 1.0f / 256, 128);
  expectRejected(outQuant, ops::prepareSoftmax, "SOFTMAX output 0 must have scale 1/256");
  OpBuilder count(OperationType::SOFTMAX);
  count.tensor(kF32, {2}).output(kF32);
  expectRejected(count, ops::prepareSoftmax, "SOFTMAX takes 2 to 3 inputs, got 1");
}

}  // namespace
}  // namespace nnhal::engine
