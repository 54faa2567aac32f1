// RESHAPE and CONCATENATION: prepare (shapes, validation) and execution.
#include <gtest/gtest.h>

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
constexpr auto kI32 = OperandType::TENSOR_INT32;

OpBuilder reshape(std::vector<uint32_t> in, std::vector<int32_t> shape) {
  OpBuilder op(OperationType::RESHAPE);
  const auto n = static_cast<uint32_t>(shape.size());
  op.tensor(kF32, std::move(in)).constTensor(kI32, {n}, shape).output(kF32);
  return op;
}

TEST(OpsReshapeTest, ResolvesMinusOneAndCopies) {
  const OpBuilder op = reshape({2, 3, 2}, {3, -1});
  const auto p = prepare(op, ops::prepareReshape);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{3, 4}));
  std::vector<float> x(12);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  const auto out = run<float>(p, {x.data(), nullptr});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, x);
}

TEST(OpsReshapeTest, ZeroSizedAndQuantized) {
  const auto scalar = prepare(reshape({1, 1}, {}), ops::prepareReshape);
  ASSERT_TRUE(scalar.kernel) << scalar.kernel.error().message;
  EXPECT_TRUE(scalar.outputDims().empty());
  const auto zero = prepare(reshape({0, 3}, {3, 0}), ops::prepareReshape);
  ASSERT_TRUE(zero.kernel) << zero.kernel.error().message;
  EXPECT_EQ(zero.outputDims(), (std::vector<uint32_t>{3, 0}));
  OpBuilder q(OperationType::RESHAPE);
  q.tensor(kQ8S, {4}, 0.5f, -3)
      .constTensor(kI32, {2}, std::vector<int32_t>{2, 2})
      .output(kQ8S, {}, 0.5f, -3);
  const std::vector<int8_t> x{1, -2, 3, -4};
  const auto p = prepare(q, ops::prepareReshape);
  const auto out = run<int8_t>(p, {x.data(), nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 2}));
  EXPECT_EQ(*out, x);
}

TEST(OpsReshapeTest, ShapeGivenAtExecutionMustMatchDeclaredOutput) {
  OpBuilder op(OperationType::RESHAPE);
  op.tensor(kF32, {2, 3}).tensor(kI32, {2}).output(kF32, {3, 2});
  const auto p = prepare(op, ops::prepareReshape);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> good{-1, 2};
  const auto out = run<float>(p, {x.data(), good.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, x);
  const std::vector<int32_t> bad{2, 3};
  const auto failed = run<float>(p, {x.data(), bad.data()});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, ErrorStatus::GENERAL_FAILURE);

  OpBuilder undeclared(OperationType::RESHAPE);
  undeclared.tensor(kF32, {2, 3}).tensor(kI32, {2}).output(kF32, {0, 2});
  expectRejected(undeclared, ops::prepareReshape,
                 "RESHAPE input 1 (shape) is not a constant and output 0 does not declare");
}

TEST(OpsReshapeTest, Rejections) {
  expectRejected(reshape({6}, {-1, -1}), ops::prepareReshape,
                 "RESHAPE input 1 (shape) has more than one -1 entry");
  expectRejected(reshape({6}, {4, -1}), ops::prepareReshape, "cannot hold 6 elements");
  expectRejected(reshape({6}, {2, 2}), ops::prepareReshape,
                 "describes 4 elements but input 0 has 6");
  expectRejected(reshape({6}, {-2, 3}), ops::prepareReshape, "entry 0 is -2");
  expectRejected(reshape({0}, {-1, 0}), ops::prepareReshape, "has a -1 entry next to a 0 entry");
  expectRejected(reshape({1, 1, 1, 1, 6}, {6}), ops::prepareReshape, "RESHAPE input 0 has rank 5");
  OpBuilder shape2d(OperationType::RESHAPE);
  shape2d.tensor(kF32, {4}).constTensor(kI32, {2, 1}, std::vector<int32_t>{2, 2}).output(kF32);
  expectRejected(shape2d, ops::prepareReshape, "RESHAPE input 1 has rank 2");
  OpBuilder shapeType(OperationType::RESHAPE);
  shapeType.tensor(kF32, {4}).constTensor(kF32, {1}, std::vector<float>{4}).output(kF32);
  expectRejected(shapeType, ops::prepareReshape, "RESHAPE input 1 has unsupported type");
  OpBuilder quant(OperationType::RESHAPE);
  quant.tensor(kQ8, {4}, 0.5f, 3)
      .constTensor(kI32, {1}, std::vector<int32_t>{4})
      .output(kQ8, {}, 0.5f, 4);
  expectRejected(quant, ops::prepareReshape, "RESHAPE output 0 must have the scale and zeroPoint");
}

TEST(OpsConcatenationTest, FloatAlongMiddleAxis) {
  OpBuilder op(OperationType::CONCATENATION);
  op.tensor(kF32, {2, 1, 2}).tensor(kF32, {2, 2, 2}).int32(1).output(kF32);
  const auto p = prepare(op, ops::prepareConcatenation);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 3, 2}));
  const std::vector<float> a{1, 2, 3, 4};
  const std::vector<float> b{10, 11, 12, 13, 14, 15, 16, 17};
  const auto out = run<float>(p, {a.data(), b.data(), nullptr});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17}));
}

TEST(OpsConcatenationTest, QuantRequantizesDifferingInputs) {
  OpBuilder op(OperationType::CONCATENATION);
  op.tensor(kQ8, {1, 2}, 0.5f, 10)
      .tensor(kQ8, {1, 1}, 1.0f, 0)
      .tensor(kQ8, {1, 0}, 1.0f, 0)
      .int32(1)
      .output(kQ8, {1, 3}, 0.5f, 10);
  const auto p = prepare(op, ops::prepareConcatenation);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const std::vector<uint8_t> a{0, 255};
  const uint8_t b = 20;  // real 20 -> 40 + 10
  const auto out = run<uint8_t>(p, {a.data(), &b, nullptr, nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<uint8_t>{0, 255, 50}));

  OpBuilder s(OperationType::CONCATENATION);
  s.tensor(kQ8S, {2}, 1.0f, 0).tensor(kQ8S, {1}, 0.25f, -128).int32(0).output(kQ8S, {}, 0.5f, -1);
  const std::vector<int8_t> x{-10, 100};  // -> -21, 127 (199 saturated)
  const int8_t y = 0;                     // real 32 -> 64 - 1 = 63
  const auto sout = run<int8_t>(prepare(s, ops::prepareConcatenation), {x.data(), &y, nullptr});
  ASSERT_TRUE(sout) << sout.error().message;
  EXPECT_EQ(*sout, (std::vector<int8_t>{-21, 127, 63}));
}

TEST(OpsConcatenationTest, Rejections) {
  OpBuilder negative(OperationType::CONCATENATION);
  negative.tensor(kF32, {2}).tensor(kF32, {2}).int32(-1).output(kF32);
  expectRejected(negative, ops::prepareConcatenation,
                 "CONCATENATION input 2 (axis) is -1, outside [0, 1)");
  OpBuilder rank(OperationType::CONCATENATION);
  rank.tensor(kF32, {2}).tensor(kF32, {1, 2}).int32(0).output(kF32);
  expectRejected(rank, ops::prepareConcatenation,
                 "CONCATENATION input 1 has rank 2, input 0 has rank 1");
  OpBuilder dims(OperationType::CONCATENATION);
  dims.tensor(kF32, {2, 3}).tensor(kF32, {2, 4}).int32(0).output(kF32);
  expectRejected(dims, ops::prepareConcatenation,
                 "CONCATENATION input 1 dimension 1 is 4, input 0 has 3");
  OpBuilder types(OperationType::CONCATENATION);
  types.tensor(kF32, {2}).tensor(kQ8, {2}, 1.0f, 0).int32(0).output(kF32);
  expectRejected(types, ops::prepareConcatenation, "CONCATENATION input 1 has unsupported type");
  OpBuilder axisType(OperationType::CONCATENATION);
  axisType.tensor(kF32, {2}).tensor(kF32, {2}).float32(0.0f).output(kF32);
  expectRejected(axisType, ops::prepareConcatenation, "CONCATENATION input 2 has unsupported");
  OpBuilder onlyAxis(OperationType::CONCATENATION);
  onlyAxis.int32(0).output(kF32);
  expectRejected(onlyAxis, ops::prepareConcatenation,
                 "CONCATENATION takes at least 2 inputs, got 1");
  OpBuilder scalar(OperationType::CONCATENATION);
  scalar.tensor(kF32, {}).int32(0).output(kF32);
  expectRejected(scalar, ops::prepareConcatenation, "CONCATENATION input 0 has rank 0");
  OpBuilder zp(OperationType::CONCATENATION);
  zp.tensor(kQ8, {2}, 1.0f, 0).tensor(kQ8, {2}, 1.0f, 300).int32(0).output(kQ8, {}, 1.0f, 0);
  expectRejected(zp, ops::prepareConcatenation, "CONCATENATION input 1 has zeroPoint 300");
}

}  // namespace
}  // namespace nnhal::engine
