// Comparisons (EQUAL ... LESS_EQUAL), SELECT and CAST: prepare (shapes, validation) and
// execution.
#include <gtest/gtest.h>

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

OpBuilder compare(OperationType type, OperandType t, std::vector<uint32_t> a,
                  std::vector<uint32_t> b) {
  OpBuilder op(type);
  op.tensor(t, std::move(a)).tensor(t, std::move(b)).output(kBool);
  return op;
}

TEST(OpsElementwiseCompareTest, Int32LessBroadcastsScalar) {
  // The shape IF/WHILE condition models use: LESS(counter[1], limit[1]).
  const auto p = prepare(compare(OperationType::LESS, kI32, {2, 2}, {1}), ops::prepareLess);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 2}));
  const std::vector<int32_t> a{1, 5, 3, 4};
  const std::vector<int32_t> b{4};
  const auto out = run<uint8_t>(p, {a.data(), b.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<uint8_t>{1, 0, 1, 0}));
}

TEST(OpsElementwiseCompareTest, AllOperatorsOnFloat) {
  const std::vector<float> a{1.0f, 2.0f, 3.0f};
  const std::vector<float> b{2.0f};
  const std::vector<std::pair<OperationType, ops::PrepareResult (*)(PrepareContext&)>> ops{
      {OperationType::EQUAL, ops::prepareEqual},
      {OperationType::NOT_EQUAL, ops::prepareNotEqual},
      {OperationType::GREATER, ops::prepareGreater},
      {OperationType::GREATER_EQUAL, ops::prepareGreaterEqual},
      {OperationType::LESS, ops::prepareLess},
      {OperationType::LESS_EQUAL, ops::prepareLessEqual},
  };
  const std::vector<std::vector<uint8_t>> expected{
      {0, 1, 0}, {1, 0, 1}, {0, 0, 1}, {0, 1, 1}, {1, 0, 0}, {1, 1, 0},
  };
  for (size_t i = 0; i < ops.size(); ++i) {
    const auto out = run<uint8_t>(prepare(compare(ops[i].first, kF32, {3}, {1}), ops[i].second),
                                  {a.data(), b.data()});
    ASSERT_TRUE(out) << toString(ops[i].first);
    EXPECT_EQ(*out, expected[i]) << toString(ops[i].first);
  }
}

TEST(OpsElementwiseCompareTest, QuantizedWithDifferentScales) {
  OpBuilder op(OperationType::GREATER_EQUAL);
  op.tensor(kQ8S, {2}, 1.0f, 0).tensor(kQ8S, {2}, 0.5f, -10).output(kBool);
  const std::vector<int8_t> a{3, 3};
  const std::vector<int8_t> b{-4, -2};  // real 3, 4
  const auto out = run<uint8_t>(prepare(op, ops::prepareGreaterEqual), {a.data(), b.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<uint8_t>{1, 0}));
}

TEST(OpsElementwiseCompareTest, Rejections) {
  {
    OpBuilder op(OperationType::LESS);
    op.tensor(kI32, {2}).tensor(kI32, {2}).output(kI32);
    expectRejected(op, ops::prepareLess, "LESS output 0 has type TENSOR_INT32, expected");
  }
  {
    OpBuilder op(OperationType::EQUAL);
    op.tensor(kI32, {2}).tensor(kF32, {2}).output(kBool);
    expectRejected(op, ops::prepareEqual, "EQUAL input 1 has unsupported type TENSOR_FLOAT32");
  }
  expectRejected(compare(OperationType::GREATER, kF32, {2, 3}, {2}), ops::prepareGreater,
                 "GREATER input 1 dimensions [2] cannot be broadcast");
  expectRejected(compare(OperationType::LESS_EQUAL, OperandType::TENSOR_QUANT16_SYMM, {2}, {2}),
                 ops::prepareLessEqual, "LESS_EQUAL input 0 has unsupported type");
  {
    OpBuilder op(OperationType::NOT_EQUAL);
    op.tensor(kQ8, {2}, -1.0f, 0).tensor(kQ8, {2}, 1.0f, 0).output(kBool);
    expectRejected(op, ops::prepareNotEqual, "NOT_EQUAL input 0 must have a positive finite");
  }
  expectRejected(compare(OperationType::LESS, kI32, {1, 1, 1, 1, 1, 1, 2}, {2}), ops::prepareLess,
                 "LESS input 0 has rank 7");
}

TEST(OpsElementwiseSelectTest, SelectsAndRequantizes) {
  OpBuilder op(OperationType::SELECT);
  op.tensor(kBool, {3}).tensor(kI32, {3}).tensor(kI32, {3}).output(kI32);
  const std::vector<uint8_t> cond{1, 0, 1};
  const std::vector<int32_t> a{1, 2, 3};
  const std::vector<int32_t> b{-1, -2, -3};
  const auto out = run<int32_t>(prepare(op, ops::prepareSelect), {cond.data(), a.data(), b.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<int32_t>{1, -2, 3}));

  OpBuilder q(OperationType::SELECT);
  q.tensor(kBool, {2})
      .tensor(kQ8, {2}, 1.0f, 0)
      .tensor(kQ8, {2}, 2.0f, 0)
      .output(kQ8, {2}, 1.0f, 0);
  const std::vector<uint8_t> qa{5, 6};
  const std::vector<uint8_t> qb{7, 8};
  const auto qo = run<uint8_t>(prepare(q, ops::prepareSelect), {cond.data(), qa.data(), qb.data()});
  ASSERT_TRUE(qo) << qo.error().message;
  EXPECT_EQ(*qo, (std::vector<uint8_t>{5, 16}));
}

TEST(OpsElementwiseSelectTest, Rejections) {
  {
    OpBuilder op(OperationType::SELECT);
    op.tensor(kI32, {2}).tensor(kF32, {2}).tensor(kF32, {2}).output(kF32);
    expectRejected(op, ops::prepareSelect, "SELECT input 0 has unsupported type TENSOR_INT32");
  }
  {
    OpBuilder op(OperationType::SELECT);
    op.tensor(kBool, {2}).tensor(kF32, {2}).tensor(kF32, {1}).output(kF32);
    expectRejected(op, ops::prepareSelect, "SELECT input 2 must have the dimensions of input 0");
  }
  {
    OpBuilder op(OperationType::SELECT);
    op.tensor(kBool, {2}).tensor(kBool, {2}).tensor(kBool, {2}).output(kBool);
    expectRejected(op, ops::prepareSelect, "SELECT input 1 has unsupported type TENSOR_BOOL8");
  }
}

TEST(OpsElementwiseCastTest, ConvertsAndCopies) {
  OpBuilder op(OperationType::CAST);
  op.tensor(kF32, {2, 2}).output(kQ8);
  const std::vector<float> in{-1.0f, 2.9f, 100.5f, 400.0f};
  const auto p = prepare(op, ops::prepareCast);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 2}));
  const auto out = run<uint8_t>(p, {in.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<uint8_t>{0, 2, 100, 255}));

  OpBuilder copy(OperationType::CAST);
  copy.tensor(OperandType::TENSOR_QUANT16_SYMM, {3}, 0.5f, 0)
      .output(OperandType::TENSOR_QUANT16_SYMM, {3}, 0.5f, 0);
  const std::vector<int16_t> words{-300, 0, 1234};
  const auto copied = run<int16_t>(prepare(copy, ops::prepareCast), {words.data()});
  ASSERT_TRUE(copied) << copied.error().message;
  EXPECT_EQ(*copied, words);
}

TEST(OpsElementwiseCastTest, Rejections) {
  {
    OpBuilder op(OperationType::CAST);
    op.tensor(kF32, {2}).output(kBool);
    expectRejected(op, ops::prepareCast,
                   "CAST from TENSOR_FLOAT32 to TENSOR_BOOL8 is not supported");
  }
  {
    OpBuilder op(OperationType::CAST);
    op.tensor(kQ8S, {2}, 1.0f, 0).output(kF32);
    expectRejected(op, ops::prepareCast, "is not supported");
  }
  {
    // cast_mismatching_shapes: the model declares an output of another rank.
    OpBuilder op(OperationType::CAST);
    op.tensor(kI32, {2, 3}).output(kI32, {100});
    expectRejected(op, ops::prepareCast, "CAST output 0: model declares rank 1");
  }
}

}  // namespace
}  // namespace nnhal::engine
