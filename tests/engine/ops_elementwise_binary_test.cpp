// Broadcasting binary elementwise ops (SUB, DIV, POW, MAXIMUM, MINIMUM, PRELU, LOGICAL_AND,
// LOGICAL_OR): prepare (shapes, validation) and execution.
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

OpBuilder withActivation(OperationType type, OperandType t, std::vector<uint32_t> a,
                         std::vector<uint32_t> b, int32_t activation = 0) {
  OpBuilder op(type);
  op.tensor(t, std::move(a)).tensor(t, std::move(b)).int32(activation).output(t);
  return op;
}

OpBuilder twoInputs(OperationType type, OperandType t, std::vector<uint32_t> a,
                    std::vector<uint32_t> b, OperandType out) {
  OpBuilder op(type);
  op.tensor(t, std::move(a)).tensor(t, std::move(b)).output(out);
  return op;
}

TEST(OpsElementwiseBinaryTest, SubFloatBroadcastsWithRelu) {
  const auto p = prepare(withActivation(OperationType::SUB, kF32, {2, 1}, {3}, 1), ops::prepareSub);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 3}));
  const std::vector<float> a{1.0f, 10.0f};
  const std::vector<float> b{0.5f, 2.0f, 20.0f};
  const auto out = run<float>(p, {a.data(), b.data(), nullptr});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{0.5f, 0.0f, 0.0f, 9.5f, 8.0f, 0.0f}));
}

TEST(OpsElementwiseBinaryTest, SubInt32AndQuant) {
  const std::vector<int32_t> a{5, -2};
  const std::vector<int32_t> b{7};
  const auto i32 =
      run<int32_t>(prepare(withActivation(OperationType::SUB, kI32, {2}, {1}), ops::prepareSub),
                   {a.data(), b.data(), nullptr});
  ASSERT_TRUE(i32) << i32.error().message;
  EXPECT_EQ(*i32, (std::vector<int32_t>{-2, -9}));

  OpBuilder op(OperationType::SUB);
  op.tensor(kQ8S, {2}, 0.5f, 0).tensor(kQ8S, {2}, 0.25f, 10).int32(0).output(kQ8S, {2}, 1.0f, -5);
  const std::vector<int8_t> qa{20, -20};  // 10, -10
  const std::vector<int8_t> qb{30, 2};    // 5, -2
  const auto q = run<int8_t>(prepare(op, ops::prepareSub), {qa.data(), qb.data(), nullptr});
  ASSERT_TRUE(q) << q.error().message;
  EXPECT_EQ(*q, (std::vector<int8_t>{0, -13}));  // 5 - 5, -8 - 5
}

TEST(OpsElementwiseBinaryTest, DivFloatAndFloorDivInt32) {
  const std::vector<float> a{1.0f, -6.0f};
  const std::vector<float> b{4.0f};
  const auto f =
      run<float>(prepare(withActivation(OperationType::DIV, kF32, {2}, {1}), ops::prepareDiv),
                 {a.data(), b.data(), nullptr});
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, (std::vector<float>{0.25f, -1.5f}));

  const auto div = prepare(withActivation(OperationType::DIV, kI32, {2}, {1}), ops::prepareDiv);
  const std::vector<int32_t> ia{7, -7};
  const std::vector<int32_t> ib{2};
  const auto i = run<int32_t>(div, {ia.data(), ib.data(), nullptr});
  ASSERT_TRUE(i);
  EXPECT_EQ(*i, (std::vector<int32_t>{3, -4}));
  const std::vector<int32_t> zero{0};
  const auto z = run<int32_t>(div, {ia.data(), zero.data(), nullptr});
  ASSERT_TRUE(z);
  EXPECT_EQ(*z, (std::vector<int32_t>{0, 0}));  // division by zero gives 0, as the reference
}

TEST(OpsElementwiseBinaryTest, PowMaximumMinimum) {
  const std::vector<float> a{2.0f, 3.0f};
  const std::vector<float> b{3.0f, 0.5f};
  const auto pow =
      run<float>(prepare(twoInputs(OperationType::POW, kF32, {2}, {2}, kF32), ops::preparePow),
                 {a.data(), b.data()});
  ASSERT_TRUE(pow);
  EXPECT_FLOAT_EQ((*pow)[0], 8.0f);
  EXPECT_FLOAT_EQ((*pow)[1], std::sqrt(3.0f));
  const auto mx = run<float>(
      prepare(twoInputs(OperationType::MAXIMUM, kF32, {2}, {2}, kF32), ops::prepareMaximum),
      {a.data(), b.data()});
  const auto mn = run<float>(
      prepare(twoInputs(OperationType::MINIMUM, kF32, {2}, {2}, kF32), ops::prepareMinimum),
      {a.data(), b.data()});
  ASSERT_TRUE(mx && mn);
  EXPECT_EQ(*mx, (std::vector<float>{3.0f, 3.0f}));
  EXPECT_EQ(*mn, (std::vector<float>{2.0f, 0.5f}));

  OpBuilder q(OperationType::MAXIMUM);
  q.tensor(kQ8, {2}, 1.0f, 0).tensor(kQ8, {1}, 2.0f, 0).output(kQ8, {2}, 0.5f, 0);
  const std::vector<uint8_t> qa{3, 10};
  const std::vector<uint8_t> qb{4};  // real 8
  const auto qm = run<uint8_t>(prepare(q, ops::prepareMaximum), {qa.data(), qb.data()});
  ASSERT_TRUE(qm) << qm.error().message;
  EXPECT_EQ(*qm, (std::vector<uint8_t>{16, 20}));
}

TEST(OpsElementwiseBinaryTest, PreluFloatAndQuant) {
  const std::vector<float> x{-2.0f, 3.0f, -1.0f, 0.0f};
  const std::vector<float> alpha{0.5f, 0.25f};
  const auto f = run<float>(
      prepare(twoInputs(OperationType::PRELU, kF32, {2, 2}, {2}, kF32), ops::preparePrelu),
      {x.data(), alpha.data()});
  ASSERT_TRUE(f);
  EXPECT_EQ(*f, (std::vector<float>{-1.0f, 3.0f, -0.5f, 0.0f}));

  OpBuilder q(OperationType::PRELU);
  q.tensor(kQ8, {2}, 0.5f, 100).tensor(kQ8, {1}, 0.25f, 0).output(kQ8, {2}, 0.5f, 100);
  const std::vector<uint8_t> qx{90, 110};  // -5, 5
  const std::vector<uint8_t> qa{2};        // 0.5
  const auto qo = run<uint8_t>(prepare(q, ops::preparePrelu), {qx.data(), qa.data()});
  ASSERT_TRUE(qo) << qo.error().message;
  EXPECT_EQ(*qo, (std::vector<uint8_t>{95, 110}));  // -2.5 -> -5 steps, 5 -> 10 steps
}

TEST(OpsElementwiseBinaryTest, LogicalAndOr) {
  const std::vector<uint8_t> a{1, 0, 1};
  const std::vector<uint8_t> b{1};
  const auto land =
      run<uint8_t>(prepare(twoInputs(OperationType::LOGICAL_AND, kBool, {3}, {1}, kBool),
                           ops::prepareLogicalAnd),
                   {a.data(), b.data()});
  const std::vector<uint8_t> zero{0};
  const auto lor = run<uint8_t>(
      prepare(twoInputs(OperationType::LOGICAL_OR, kBool, {3}, {1}, kBool), ops::prepareLogicalOr),
      {a.data(), zero.data()});
  ASSERT_TRUE(land && lor);
  EXPECT_EQ(*land, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(*lor, (std::vector<uint8_t>{1, 0, 1}));
}

TEST(OpsElementwiseBinaryTest, Rejections) {
  {
    OpBuilder op(OperationType::SUB);
    op.tensor(kF32, {2}).tensor(kI32, {2}).int32(0).output(kF32);
    expectRejected(op, ops::prepareSub, "SUB input 1 has unsupported type TENSOR_INT32");
  }
  expectRejected(withActivation(OperationType::SUB, kI32, {2}, {2}, 1), ops::prepareSub,
                 "SUB input 2 (fused activation) must be NONE for TENSOR_INT32");
  expectRejected(withActivation(OperationType::SUB, kF32, {2}, {2}, 4), ops::prepareSub,
                 "SUB input 2 (fused activation) must be 0..3");
  expectRejected(withActivation(OperationType::SUB, kF32, {1, 1, 1, 1, 2}, {2}), ops::prepareSub,
                 "SUB input 0 has rank 5");
  expectRejected(withActivation(OperationType::SUB, kF32, {2, 3}, {2}), ops::prepareSub,
                 "SUB input 1 dimensions [2] cannot be broadcast");
  {
    OpBuilder op(OperationType::SUB);
    op.tensor(kQ8, {2}, 0.5f, 300).tensor(kQ8, {2}, 0.5f, 0).int32(0).output(kQ8, {2}, 1.0f, 0);
    expectRejected(op, ops::prepareSub, "SUB input 0 has zeroPoint 300 outside [0, 255]");
  }
  {
    OpBuilder op(OperationType::SUB);
    op.tensor(kF32, {2}).tensor(kF32, {2}).int32Input().output(kF32);
    expectRejected(op, ops::prepareSub, "SUB input 2 must be a constant");
  }
  expectRejected(withActivation(OperationType::DIV, kQ8, {2}, {2}), ops::prepareDiv,
                 "DIV input 0 has unsupported type TENSOR_QUANT8_ASYMM");
  expectRejected(withActivation(OperationType::DIV, kI32, {2}, {2}, 3), ops::prepareDiv,
                 "DIV input 2 (fused activation) must be NONE");
  expectRejected(twoInputs(OperationType::POW, kI32, {2}, {2}, kI32), ops::preparePow,
                 "POW input 0 has unsupported type TENSOR_INT32");
  expectRejected(twoInputs(OperationType::MAXIMUM, kF32, {2}, {2}, kI32), ops::prepareMaximum,
                 "MAXIMUM output 0 has type TENSOR_INT32, expected TENSOR_FLOAT32");
  expectRejected(twoInputs(OperationType::MINIMUM, kF32, {3}, {2}, kF32), ops::prepareMinimum,
                 "MINIMUM input 1 dimensions [2] cannot be broadcast");
  expectRejected(twoInputs(OperationType::PRELU, kI32, {2}, {2}, kI32), ops::preparePrelu,
                 "PRELU input 0 has unsupported type TENSOR_INT32");
  expectRejected(twoInputs(OperationType::LOGICAL_AND, kF32, {2}, {2}, kF32),
                 ops::prepareLogicalAnd, "LOGICAL_AND input 0 has unsupported type");
  {
    OpBuilder op(OperationType::LOGICAL_OR);
    op.tensor(kBool, {2}).output(kBool);
    expectRejected(op, ops::prepareLogicalOr, "LOGICAL_OR takes 2 inputs, got 1");
  }
}

}  // namespace
}  // namespace nnhal::engine
