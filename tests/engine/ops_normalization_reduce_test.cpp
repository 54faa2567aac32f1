// REDUCE_* prepare functions: output shapes, execution, and every rejection.
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
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;
constexpr auto kB8 = OperandType::TENSOR_BOOL8;

OpBuilder reduceOp(OperationType type, OperandType t, std::vector<uint32_t> dims,
                   std::vector<int32_t> axes, bool keep, float scale = 0.0f, int32_t zero = 0) {
  OpBuilder b(type);
  const auto count = static_cast<uint32_t>(axes.size());
  b.tensor(t, std::move(dims), scale, zero)
      .constTensor(kI32, {count}, axes)
      .scalar<uint8_t>(OperandType::BOOL, keep ? 1 : 0)
      .output(t, {}, scale, zero);
  return b;
}

TEST(OpsReduceTest, SumWithNegativeAndDuplicateAxes) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};  // [2, 3]
  const auto p = prepare(reduceOp(OperationType::REDUCE_SUM, kF32, {2, 3}, {-1, 1}, false),
                         ops::prepareReduceSum);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2}));
  const auto out = run<float>(p, {x.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{6, 15}));
}

TEST(OpsReduceTest, KeepDimsAndAllAxes) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  auto p = prepare(reduceOp(OperationType::REDUCE_PROD, kF32, {2, 3}, {0}, true),
                   ops::prepareReduceProd);
  ASSERT_TRUE(p.kernel);
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{1, 3}));
  auto out = run<float>(p, {x.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{4, 10, 18}));
  p = prepare(reduceOp(OperationType::REDUCE_MIN, kF32, {2, 3}, {0, 1}, false),
              ops::prepareReduceMin);
  ASSERT_TRUE(p.kernel);
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{1}));  // every dimension dropped
  out = run<float>(p, {x.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{1}));
}

TEST(OpsReduceTest, QuantizedMaxAndBoolean) {
  const std::vector<int8_t> q{-5, 7, 3, -128};
  const auto p = prepare(reduceOp(OperationType::REDUCE_MAX, kQ8S, {2, 2}, {1}, false, 0.5f, -1),
                         ops::prepareReduceMax);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const auto out = run<int8_t>(p, {q.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<int8_t>{7, 3}));

  const std::vector<uint8_t> b{1, 0, 1, 1};
  const auto any =
      prepare(reduceOp(OperationType::REDUCE_ANY, kB8, {2, 2}, {1}, true), ops::prepareReduceAny);
  ASSERT_TRUE(any.kernel);
  EXPECT_EQ(any.outputDims(), (std::vector<uint32_t>{2, 1}));
  EXPECT_EQ(*run<uint8_t>(any, {b.data()}), (std::vector<uint8_t>{1, 1}));
  const auto all =
      prepare(reduceOp(OperationType::REDUCE_ALL, kB8, {2, 2}, {1}, true), ops::prepareReduceAll);
  ASSERT_TRUE(all.kernel);
  EXPECT_EQ(*run<uint8_t>(all, {b.data()}), (std::vector<uint8_t>{0, 1}));
}

TEST(OpsReduceTest, AxesFromTheRequestAreDeferred) {
  OpBuilder b(OperationType::REDUCE_SUM);
  b.tensor(kF32, {2, 2}).tensor(kI32, {1}).scalar<uint8_t>(OperandType::BOOL, 0).output(kF32);
  const auto p = prepare(b, ops::prepareReduceSum);
  ASSERT_FALSE(p.kernel);
  EXPECT_TRUE(p.ctx->valuesMissing());
}

TEST(OpsReduceTest, Rejections) {
  expectRejected(reduceOp(OperationType::REDUCE_SUM, kQ8, {2}, {0}, false, 1.0f, 0),
                 ops::prepareReduceSum, "REDUCE_SUM input 0 has unsupported type");
  expectRejected(reduceOp(OperationType::REDUCE_ANY, kF32, {2}, {0}, false), ops::prepareReduceAny,
                 "REDUCE_ANY input 0 has unsupported type");
  expectRejected(reduceOp(OperationType::REDUCE_MAX, kF32, {1, 1, 1, 1, 2}, {0}, false),
                 ops::prepareReduceMax, "REDUCE_MAX input 0 has rank 5");
  expectRejected(reduceOp(OperationType::REDUCE_MIN, kF32, {2, 3}, {2}, false),
                 ops::prepareReduceMin, "REDUCE_MIN input 1 (axes) entry 0 is 2");
  expectRejected(reduceOp(OperationType::REDUCE_MIN, kF32, {2, 3}, {-3}, false),
                 ops::prepareReduceMin, "outside [-2, 2)");

  OpBuilder quant(OperationType::REDUCE_MAX);
  quant.tensor(kQ8, {2}, 0.5f, 3)
      .constTensor(kI32, {1}, std::vector<int32_t>{0})
      .scalar<uint8_t>(OperandType::BOOL, 0)
      .output(kQ8, {}, 0.25f, 3);
  expectRejected(quant, ops::prepareReduceMax, "REDUCE_MAX output 0 must have the scale");

  OpBuilder keep(OperationType::REDUCE_SUM);
  keep.tensor(kF32, {2}).constTensor(kI32, {1}, std::vector<int32_t>{0}).int32(0).output(kF32);
  expectRejected(keep, ops::prepareReduceSum, "REDUCE_SUM input 2 has unsupported type INT32");

  OpBuilder axesType(OperationType::REDUCE_SUM);
  axesType.tensor(kF32, {2})
      .constTensor(kF32, {1}, std::vector<float>{0})
      .scalar<uint8_t>(OperandType::BOOL, 0)
      .output(kF32);
  expectRejected(axesType, ops::prepareReduceSum, "REDUCE_SUM input 1 has unsupported type");

  OpBuilder axesRank(OperationType::REDUCE_SUM);
  axesRank.tensor(kF32, {2})
      .constTensor(kI32, {1, 1}, std::vector<int32_t>{0})
      .scalar<uint8_t>(OperandType::BOOL, 0)
      .output(kF32);
  expectRejected(axesRank, ops::prepareReduceSum, "REDUCE_SUM input 1 has rank 2");

  OpBuilder outType(OperationType::REDUCE_SUM);
  outType.tensor(kF32, {2})
      .constTensor(kI32, {1}, std::vector<int32_t>{0})
      .scalar<uint8_t>(OperandType::BOOL, 0)
      .output(kQ8, {}, 1.0f, 0);
  expectRejected(outType, ops::prepareReduceSum, "REDUCE_SUM output 0 has type");

  OpBuilder count(OperationType::REDUCE_SUM);
  count.tensor(kF32, {2}).constTensor(kI32, {1}, std::vector<int32_t>{0}).output(kF32);
  expectRejected(count, ops::prepareReduceSum, "REDUCE_SUM takes 3 inputs, got 2");

  OpBuilder shape(OperationType::REDUCE_SUM);
  shape.tensor(kF32, {2, 3})
      .constTensor(kI32, {1}, std::vector<int32_t>{0})
      .scalar<uint8_t>(OperandType::BOOL, 0)
      .output(kF32, {2});
  const auto p = prepare(shape, ops::prepareReduceSum);
  ASSERT_FALSE(p.kernel);
  EXPECT_EQ(p.kernel.error().status, ErrorStatus::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace nnhal::engine
