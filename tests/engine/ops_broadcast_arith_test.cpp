// ADD and MUL: prepare (shapes, validation) and execution.
#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "engine/op_test_harness.h"

namespace nnhal::engine {
namespace {

using ops::prepareAdd;
using ops::prepareMul;
using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::run;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;

OpBuilder floatOp(OperationType type, std::vector<uint32_t> a, std::vector<uint32_t> b,
                  int32_t activation = 0) {
  OpBuilder op(type);
  op.tensor(kF32, std::move(a)).tensor(kF32, std::move(b)).int32(activation).output(kF32);
  return op;
}

TEST(OpsBroadcastArithTest, AddFloatBroadcastsRankDifference) {
  const OpBuilder op = floatOp(OperationType::ADD, {2, 1, 3}, {4, 1});
  const auto p = prepare(op, prepareAdd);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 4, 3}));
  const std::vector<float> a{1, 2, 3, 10, 20, 30};
  const std::vector<float> b{100, 200, 300, 400};
  const auto out = run<float>(p, {a.data(), b.data(), nullptr});
  ASSERT_TRUE(out) << out.error().message;
  ASSERT_EQ(out->size(), 24u);
  EXPECT_EQ((*out)[0], 101.0f);   // [0, 0, 0]
  EXPECT_EQ((*out)[5], 203.0f);   // [0, 1, 2]
  EXPECT_EQ((*out)[23], 430.0f);  // [1, 3, 2]
}

TEST(OpsBroadcastArithTest, MulFloatWithRelu1) {
  const OpBuilder op = floatOp(OperationType::MUL, {4}, {1}, 2);
  const auto p = prepare(op, prepareMul);
  const std::vector<float> a{-2.0f, -0.25f, 0.25f, 3.0f};
  const float b = 2.0f;
  const auto out = run<float>(p, {a.data(), &b, nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<float>{-1.0f, -0.5f, 0.5f, 1.0f}));
}

TEST(OpsBroadcastArithTest, LargeAddSplitsAcrossThreadsConsistently) {
  const OpBuilder op = floatOp(OperationType::ADD, {300, 1000}, {1000});
  const auto p = prepare(op, prepareAdd);
  std::vector<float> a(300000), b(1000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 977);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i) * 0.5f;
  const auto one = run<float>(p, {a.data(), b.data(), nullptr}, 0, 1);
  const auto two = run<float>(p, {a.data(), b.data(), nullptr}, 0, 2);
  ASSERT_TRUE(one && two);
  EXPECT_EQ(*one, *two);
  EXPECT_EQ((*two)[123456], a[123456] + b[456]);
}

TEST(OpsBroadcastArithTest, AddQuantUint8DifferentScales) {
  // V1_0 add_quant8-style: real = 2 * q1 + 1 * q2, output scale 1... with zero points.
  OpBuilder op(OperationType::ADD);
  op.tensor(kQ8, {2}, 2.0f, 1).tensor(kQ8, {2}, 1.0f, 3).int32(0).output(kQ8, {2}, 0.5f, 10);
  const auto p = prepare(op, prepareAdd);
  const std::vector<uint8_t> a{1, 5};  // real 0, 8
  const std::vector<uint8_t> b{3, 4};  // real 0, 1
  const auto out = run<uint8_t>(p, {a.data(), b.data(), nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<uint8_t>{10, 28}));  // 0 -> 10, 9 / 0.5 + 10 = 28
}

TEST(OpsBroadcastArithTest, MulQuantInt8WithReluClampsAtRealZero) {
  OpBuilder op(OperationType::MUL);
  op.tensor(kQ8S, {3}, 0.5f, 0).tensor(kQ8S, {1}, 0.5f, 0).int32(1).output(kQ8S, {3}, 0.5f, -20);
  const auto p = prepare(op, prepareMul);
  const std::vector<int8_t> a{-4, 2, 8};  // -2, 1, 4
  const int8_t b = 6;                     // 3
  const auto out = run<int8_t>(p, {a.data(), &b, nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<int8_t>{-20, -14, 4}));  // relu(-6) = 0, 3 / 0.5 = 6, 12 / 0.5 = 24
}

TEST(OpsBroadcastArithTest, Int32AddAndMul) {
  OpBuilder add(OperationType::ADD);
  add.tensor(kI32, {2, 2}).tensor(kI32, {2}).int32(0).output(kI32);
  OpBuilder mul(OperationType::MUL);
  mul.tensor(kI32, {2, 2}).tensor(kI32, {2}).int32(0).output(kI32);
  const std::vector<int32_t> a{1, 2, 3, 4};
  const std::vector<int32_t> b{10, -1};
  const auto sum = run<int32_t>(prepare(add, prepareAdd), {a.data(), b.data(), nullptr});
  const auto product = run<int32_t>(prepare(mul, prepareMul), {a.data(), b.data(), nullptr});
  ASSERT_TRUE(sum && product);
  EXPECT_EQ(*sum, (std::vector<int32_t>{11, 1, 13, 3}));
  EXPECT_EQ(*product, (std::vector<int32_t>{10, -2, 30, -4}));
}

TEST(OpsBroadcastArithTest, ZeroSizedInputGivesZeroSizedOutput) {
  const OpBuilder op = floatOp(OperationType::ADD, {0, 3}, {1, 3});
  const auto p = prepare(op, prepareAdd);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{0, 3}));
  const std::vector<float> b{1, 2, 3};
  const auto out = run<float>(p, {nullptr, b.data(), nullptr});
  ASSERT_TRUE(out);
  EXPECT_TRUE(out->empty());
}

TEST(OpsBroadcastArithTest, ScalarShapedTensorsAndDeclaredOutput) {
  OpBuilder op(OperationType::ADD);
  op.tensor(kF32, {}).tensor(kF32, {1, 2}).int32(0).output(kF32, {1, 2});
  const auto p = prepare(op, prepareAdd);
  const float a = 0.5f;
  const std::vector<float> b{1, 2};
  const auto out = run<float>(p, {&a, b.data(), nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<float>{1.5f, 2.5f}));
}

TEST(OpsBroadcastArithTest, RejectsWrongOperandCounts) {
  OpBuilder op(OperationType::ADD);
  op.tensor(kF32, {2}).tensor(kF32, {2}).output(kF32);
  expectRejected(op, prepareAdd, "ADD takes 3 inputs, got 2");
  OpBuilder two(OperationType::MUL);
  two.tensor(kF32, {2}).tensor(kF32, {2}).int32(0).output(kF32).output(kF32);
  expectRejected(two, prepareMul, "MUL has 1 output(s), got 2");
}

TEST(OpsBroadcastArithTest, RejectsUnsupportedAndMismatchedTypes) {
  OpBuilder f16(OperationType::ADD);
  f16.tensor(OperandType::TENSOR_FLOAT16, {2})
      .tensor(OperandType::TENSOR_FLOAT16, {2})
      .int32(0)
      .output(OperandType::TENSOR_FLOAT16);
  expectRejected(f16, prepareAdd, "ADD input 0 has unsupported type TENSOR_FLOAT16");
  OpBuilder mixed(OperationType::ADD);
  mixed.tensor(kF32, {2}).tensor(kQ8, {2}, 1.0f, 0).int32(0).output(kF32);
  expectRejected(mixed, prepareAdd, "ADD input 1 has unsupported type TENSOR_QUANT8_ASYMM");
  OpBuilder out(OperationType::MUL);
  out.tensor(kF32, {2}).tensor(kF32, {2}).int32(0).output(kI32);
  expectRejected(out, prepareMul, "MUL output 0 has type TENSOR_INT32");
}

TEST(OpsBroadcastArithTest, RejectsRankAboveFour) {
  const OpBuilder op = floatOp(OperationType::ADD, {1, 1, 1, 1, 2}, {2});
  expectRejected(op, prepareAdd, "ADD input 0 has rank 5");
}

TEST(OpsBroadcastArithTest, RejectsBadActivation) {
  expectRejected(floatOp(OperationType::ADD, {2}, {2}, 4), prepareAdd,
                 "ADD input 2 (fused activation) must be 0..3, got 4");
  expectRejected(floatOp(OperationType::MUL, {2}, {2}, -1), prepareMul, "must be 0..3, got -1");
  OpBuilder notConstant(OperationType::ADD);
  notConstant.tensor(kF32, {2}).tensor(kF32, {2}).int32Input().output(kF32);
  expectRejected(notConstant, prepareAdd, "ADD input 2 must be a constant");
  OpBuilder floatScalar(OperationType::ADD);
  floatScalar.tensor(kF32, {2}).tensor(kF32, {2}).float32(0.0f).output(kF32);
  expectRejected(floatScalar, prepareAdd, "ADD input 2 has unsupported type FLOAT32");
  OpBuilder int32Relu(OperationType::MUL);
  int32Relu.tensor(kI32, {2}).tensor(kI32, {2}).int32(1).output(kI32);
  expectRejected(int32Relu, prepareMul, "must be NONE for TENSOR_INT32");
}

TEST(OpsBroadcastArithTest, RejectsIncompatibleShapes) {
  expectRejected(floatOp(OperationType::ADD, {2, 3}, {2}), prepareAdd,
                 "ADD input 1 dimensions [2] cannot be broadcast with input 0 [2, 3]");
  OpBuilder declared(OperationType::ADD);
  declared.tensor(kF32, {2, 3}).tensor(kF32, {3}).int32(0).output(kF32, {3, 3});
  expectRejected(declared, prepareAdd, "model declares dimension 0 = 3");
}

TEST(OpsBroadcastArithTest, RejectsBadQuantization) {
  OpBuilder zeroScale(OperationType::ADD);
  zeroScale.tensor(kQ8, {2}, 0.0f, 0).tensor(kQ8, {2}, 1.0f, 0).int32(0).output(kQ8, {}, 1.0f);
  expectRejected(zeroScale, prepareAdd, "ADD input 0 must have a positive finite scale");
  OpBuilder zeroPoint(OperationType::MUL);
  zeroPoint.tensor(kQ8S, {2}, 1.0f, 0).tensor(kQ8S, {2}, 1.0f, 200).int32(0).output(kQ8S, {}, 1.0f);
  expectRejected(zeroPoint, prepareMul, "MUL input 1 has zeroPoint 200 outside [-128, 127]");
  OpBuilder outScale(OperationType::ADD);
  outScale.tensor(kQ8, {2}, 1.0f, 0).tensor(kQ8, {2}, 1.0f, 0).int32(0).output(kQ8, {}, -1.0f);
  expectRejected(outScale, prepareAdd, "ADD output 0 must have a positive finite scale");
}

// Output scales far below the inputs' (TFLite computes with them; types.hal wants a MUL's above
// the product of its input scales): every nonzero result saturates, zero stays zero.
TEST(OpsBroadcastArithTest, TinyOutputScalesSaturateAsInTflite) {
  OpBuilder mul(OperationType::MUL);
  mul.tensor(kQ8S, {4}, 0.5f, 0).tensor(kQ8S, {4}, 0.5f, 0).int32(0).output(kQ8S, {}, 3e-35f);
  const std::vector<int8_t> a{-3, 0, 5, -100};
  const std::vector<int8_t> b{-3, 7, 5, 2};
  const auto product = run<int8_t>(prepare(mul, prepareMul), {a.data(), b.data(), nullptr});
  ASSERT_TRUE(product) << product.error().message;
  EXPECT_EQ(*product, (std::vector<int8_t>{127, 0, 127, -128}));
  OpBuilder add(OperationType::ADD);
  add.tensor(kQ8, {2}, 1.0f, 0).tensor(kQ8, {2}, 1.0f, 0).int32(0).output(kQ8, {}, 1e-20f, 0);
  const std::vector<uint8_t> x{0, 1};
  const std::vector<uint8_t> y{0, 2};
  const auto sum = run<uint8_t>(prepare(add, prepareAdd), {x.data(), y.data(), nullptr});
  ASSERT_TRUE(sum) << sum.error().message;
  EXPECT_EQ(*sum, (std::vector<uint8_t>{0, 255}));
}

}  // namespace
}  // namespace nnhal::engine
