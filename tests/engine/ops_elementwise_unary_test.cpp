// Unary elementwise ops (ABS ... SQRT, TANH, HARD_SWISH, ELU, LOGICAL_NOT): prepare (shapes,
// validation) and execution.
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
constexpr auto kI32 = OperandType::TENSOR_INT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kBool = OperandType::TENSOR_BOOL8;

OpBuilder unary(OperationType type, OperandType t, std::vector<uint32_t> dims) {
  OpBuilder op(type);
  op.tensor(t, std::move(dims)).output(t);
  return op;
}

TEST(OpsElementwiseUnaryTest, FloatMathKeepsShape) {
  const std::vector<float> in{0.25f, 1.0f, 4.0f, 9.0f, 16.0f, 2.5f};
  const auto sqrt = prepare(unary(OperationType::SQRT, kF32, {1, 2, 3}), ops::prepareSqrt);
  ASSERT_TRUE(sqrt.kernel) << sqrt.kernel.error().message;
  EXPECT_EQ(sqrt.outputDims(), (std::vector<uint32_t>{1, 2, 3}));
  const auto out = run<float>(sqrt, {in.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{0.5f, 1.0f, 2.0f, 3.0f, 4.0f, std::sqrt(2.5f)}));

  const auto rsqrt =
      run<float>(prepare(unary(OperationType::RSQRT, kF32, {6}), ops::prepareRsqrt), {in.data()});
  ASSERT_TRUE(rsqrt);
  EXPECT_FLOAT_EQ((*rsqrt)[2], 0.5f);
  const auto floor =
      run<float>(prepare(unary(OperationType::FLOOR, kF32, {6}), ops::prepareFloor), {in.data()});
  ASSERT_TRUE(floor);
  EXPECT_EQ((*floor)[5], 2.0f);
  using PrepareFnPtr = ops::PrepareResult (*)(PrepareContext&);
  const std::vector<std::pair<OperationType, PrepareFnPtr>> math{
      {OperationType::EXP, ops::prepareExp},
      {OperationType::LOG, ops::prepareLog},
      {OperationType::SIN, ops::prepareSin}};
  for (const auto& [type, fn] : math) {
    const auto out2 = run<float>(prepare(unary(type, kF32, {6}), fn), {in.data()});
    ASSERT_TRUE(out2) << toString(type);
    const float expected = type == OperationType::EXP   ? std::exp(4.0f)
                           : type == OperationType::LOG ? std::log(4.0f)
                                                        : std::sin(4.0f);
    EXPECT_FLOAT_EQ((*out2)[2], expected) << toString(type);
  }
}

TEST(OpsElementwiseUnaryTest, AbsAndNegOnInt32) {
  const std::vector<int32_t> in{-3, 0, 5};
  const auto abs =
      run<int32_t>(prepare(unary(OperationType::ABS, kI32, {3}), ops::prepareAbs), {in.data()});
  const auto neg =
      run<int32_t>(prepare(unary(OperationType::NEG, kI32, {3}), ops::prepareNeg), {in.data()});
  ASSERT_TRUE(abs && neg);
  EXPECT_EQ(*abs, (std::vector<int32_t>{3, 0, 5}));
  EXPECT_EQ(*neg, (std::vector<int32_t>{3, 0, -5}));
}

TEST(OpsElementwiseUnaryTest, TanhQuantizedUsesFixedOutputScale) {
  OpBuilder op(OperationType::TANH);
  op.tensor(kQ8, {3}, 0.5f, 128).output(kQ8, {3}, 1.0f / 128.0f, 128);
  const auto p = prepare(op, ops::prepareTanh);
  const std::vector<uint8_t> in{128, 129, 0};  // 0, 0.5, -64
  const auto out = run<uint8_t>(p, {in.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ((*out)[0], 128);
  EXPECT_EQ((*out)[1], static_cast<uint8_t>(128 + std::round(std::tanh(0.5) * 128)));
  EXPECT_EQ((*out)[2], 0);
}

TEST(OpsElementwiseUnaryTest, HardSwishSignedRequantizesToOutput) {
  OpBuilder op(OperationType::HARD_SWISH);
  op.tensor(kQ8S, {2}, 0.1f, 0).output(kQ8S, {2}, 0.05f, -10);
  const std::vector<int8_t> in{30, 0};  // 3.0, 0.0
  const auto out = run<int8_t>(prepare(op, ops::prepareHardSwish), {in.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<int8_t>{50, -10}));  // 3 / 0.05 - 10, 0 -> zero point
}

TEST(OpsElementwiseUnaryTest, EluReadsAlpha) {
  OpBuilder op(OperationType::ELU);
  op.tensor(kF32, {2}).float32(2.0f).output(kF32);
  const std::vector<float> in{-1.0f, 1.0f};
  const auto out = run<float>(prepare(op, ops::prepareElu), {in.data(), nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_FLOAT_EQ((*out)[0], 2.0f * (std::exp(-1.0f) - 1.0f));
  EXPECT_EQ((*out)[1], 1.0f);
}

TEST(OpsElementwiseUnaryTest, LogicalNot) {
  const std::vector<uint8_t> in{1, 0};
  const auto out = run<uint8_t>(
      prepare(unary(OperationType::LOGICAL_NOT, kBool, {2}), ops::prepareLogicalNot), {in.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<uint8_t>{0, 1}));
}

TEST(OpsElementwiseUnaryTest, Rejections) {
  {
    OpBuilder op(OperationType::ABS);
    op.tensor(kF32, {2}).tensor(kF32, {2}).output(kF32);
    expectRejected(op, ops::prepareAbs, "ABS takes 1 inputs, got 2");
  }
  expectRejected(unary(OperationType::EXP, kI32, {2}), ops::prepareExp,
                 "EXP input 0 has unsupported type TENSOR_INT32");
  expectRejected(unary(OperationType::FLOOR, kF32, {1, 1, 1, 1, 2}), ops::prepareFloor,
                 "FLOOR input 0 has rank 5");
  {
    OpBuilder op(OperationType::NEG);
    op.tensor(kF32, {2}).output(kI32);
    expectRejected(op, ops::prepareNeg, "NEG output 0 has type TENSOR_INT32");
  }
  {
    OpBuilder op(OperationType::TANH);
    op.tensor(kQ8, {2}, 0.5f, 128).output(kQ8, {2}, 1.0f / 256.0f, 0);
    expectRejected(op, ops::prepareTanh, "TANH output 0 must have scale 1/128 and zeroPoint 128");
  }
  expectRejected(unary(OperationType::TANH, kF32, {1, 1, 1, 1, 2}), ops::prepareTanh,
                 "TANH input 0 has rank 5");
  {
    OpBuilder op(OperationType::HARD_SWISH);
    op.tensor(kQ8, {2}, 0.0f, 0).output(kQ8, {2}, 0.5f, 0);
    expectRejected(op, ops::prepareHardSwish, "HARD_SWISH input 0 must have a positive finite");
  }
  {
    OpBuilder op(OperationType::ELU);
    op.tensor(kF32, {2}).int32(1).output(kF32);
    expectRejected(op, ops::prepareElu, "ELU input 1 has unsupported type INT32");
  }
  {
    OpBuilder op(OperationType::ELU);
    op.tensor(kF32, {2}).tensor(OperandType::FLOAT32, {}).output(kF32);
    expectRejected(op, ops::prepareElu, "ELU input 1 must be a constant");
  }
  expectRejected(unary(OperationType::LOGICAL_NOT, kF32, {2}), ops::prepareLogicalNot,
                 "LOGICAL_NOT input 0 has unsupported type TENSOR_FLOAT32");
  {
    OpBuilder op(OperationType::SQRT);
    op.tensor(kF32, {2, 3}).output(kF32, {3, 2});
    expectRejected(op, ops::prepareSqrt, "SQRT output 0: model declares dimension 0 = 3");
  }
}

}  // namespace
}  // namespace nnhal::engine
