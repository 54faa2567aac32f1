// QUANTIZE, DEQUANTIZE and MEAN: prepare (shapes, validation) and execution.
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

TEST(OpsQuantizeTest, QuantizeToBothTypes) {
  const std::vector<float> x{-1.0f, 0.0f, 0.375f, 100.0f};
  OpBuilder u(OperationType::QUANTIZE);
  u.tensor(kF32, {2, 2}).output(kQ8, {2, 2}, 0.25f, 5);
  const auto p = prepare(u, ops::prepareQuantize);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 2}));
  const auto out = run<uint8_t>(p, {x.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<uint8_t>{1, 5, 7, 255}));  // -4 + 5, 1.5 -> 2 + 5, 405
  OpBuilder s(OperationType::QUANTIZE);
  s.tensor(kF32, {4}).output(kQ8S, {}, 0.5f, -100);
  const auto sout = run<int8_t>(prepare(s, ops::prepareQuantize), {x.data()});
  ASSERT_TRUE(sout);
  EXPECT_EQ(*sout, (std::vector<int8_t>{-102, -100, -99, 100}));
}

TEST(OpsQuantizeTest, QuantizeRejections) {
  OpBuilder in(OperationType::QUANTIZE);
  in.tensor(kQ8, {2}, 1.0f, 0).output(kQ8, {}, 1.0f, 0);
  expectRejected(in, ops::prepareQuantize, "QUANTIZE input 0 has unsupported type");
  OpBuilder out(OperationType::QUANTIZE);
  out.tensor(kF32, {2}).output(OperandType::TENSOR_QUANT8_SYMM, {}, 1.0f, 0);
  expectRejected(out, ops::prepareQuantize, "QUANTIZE output 0 has unsupported type");
  OpBuilder scale(OperationType::QUANTIZE);
  scale.tensor(kF32, {2}).output(kQ8, {}, 0.0f, 0);
  expectRejected(scale, ops::prepareQuantize, "QUANTIZE output 0 must have a positive");
  OpBuilder rank(OperationType::QUANTIZE);
  rank.tensor(kF32, {1, 1, 1, 1, 1}).output(kQ8, {}, 1.0f, 0);
  expectRejected(rank, ops::prepareQuantize, "QUANTIZE input 0 has rank 5");
}

TEST(OpsDequantizeTest, AllInputTypes) {
  OpBuilder u(OperationType::DEQUANTIZE);
  u.tensor(kQ8, {3}, 0.5f, 10).output(kF32);
  const std::vector<uint8_t> ux{0, 10, 255};
  auto out = run<float>(prepare(u, ops::prepareDequantize), {ux.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{-5.0f, 0.0f, 122.5f}));

  OpBuilder s(OperationType::DEQUANTIZE);
  s.tensor(kQ8S, {2}, 2.0f, -1).output(kF32);
  const std::vector<int8_t> sx{-128, 127};
  out = run<float>(prepare(s, ops::prepareDequantize), {sx.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{-254.0f, 256.0f}));

  OpBuilder symm(OperationType::DEQUANTIZE);
  symm.tensor(OperandType::TENSOR_QUANT8_SYMM, {2}, 0.25f, 0).output(kF32);
  out = run<float>(prepare(symm, ops::prepareDequantize), {sx.data()});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{-32.0f, 31.75f}));

  OpBuilder pc(OperationType::DEQUANTIZE);
  pc.tensor(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2, 2})
      .perChannel({1.0f, 0.5f}, 1)
      .output(kF32);
  const std::vector<int8_t> px{2, 2, -4, -4};
  out = run<float>(prepare(pc, ops::prepareDequantize), {px.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<float>{2.0f, 1.0f, -4.0f, -2.0f}));
}

TEST(OpsDequantizeTest, Rejections) {
  OpBuilder in(OperationType::DEQUANTIZE);
  in.tensor(kF32, {2}).output(kF32);
  expectRejected(in, ops::prepareDequantize, "DEQUANTIZE input 0 has unsupported type");
  OpBuilder out(OperationType::DEQUANTIZE);
  out.tensor(kQ8, {2}, 1.0f, 0).output(OperandType::TENSOR_FLOAT16);
  expectRejected(out, ops::prepareDequantize, "DEQUANTIZE output 0 has type TENSOR_FLOAT16");
  OpBuilder symmZp(OperationType::DEQUANTIZE);
  symmZp.tensor(OperandType::TENSOR_QUANT8_SYMM, {2}, 1.0f, 3).output(kF32);
  expectRejected(symmZp, ops::prepareDequantize, "zeroPoint must be 0, got 3");
  OpBuilder noParams(OperationType::DEQUANTIZE);
  noParams.tensor(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2}).output(kF32);
  expectRejected(noParams, ops::prepareDequantize, "has no per-channel quantization");
  OpBuilder badDim(OperationType::DEQUANTIZE);
  badDim.tensor(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2})
      .perChannel({1.0f, 1.0f}, 1)
      .output(kF32);
  expectRejected(badDim, ops::prepareDequantize, "channelDim 1 is not below the rank 1");
  OpBuilder count(OperationType::DEQUANTIZE);
  count.tensor(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {3})
      .perChannel({1.0f, 1.0f}, 0)
      .output(kF32);
  expectRejected(count, ops::prepareDequantize, "has 2 channel scales for 3 channels");
  OpBuilder scale(OperationType::DEQUANTIZE);
  scale.tensor(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2})
      .perChannel({1.0f, 0.0f}, 0)
      .output(kF32);
  expectRejected(scale, ops::prepareDequantize, "channel 1 has a non-positive");
}

OpBuilder mean(std::vector<uint32_t> dims, std::vector<int32_t> axes, int32_t keepDims,
               OperandType type = kF32, float scale = 0.0f, int32_t zeroPoint = 0) {
  OpBuilder op(OperationType::MEAN);
  const auto n = static_cast<uint32_t>(axes.size());
  op.tensor(type, std::move(dims), scale, zeroPoint)
      .constTensor(kI32, {n}, axes)
      .int32(keepDims)
      .output(type, {}, scale, zeroPoint);
  return op;
}

TEST(OpsMeanTest, ShapesWithAndWithoutKeepDims) {
  auto p = prepare(mean({2, 3, 4}, {1, -1}, 0), ops::prepareMean);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2}));
  p = prepare(mean({2, 3, 4}, {1, -1, 1}, 1), ops::prepareMean);
  ASSERT_TRUE(p.kernel);
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 1, 1}));
  p = prepare(mean({2, 3}, {0, 1}, 0), ops::prepareMean);
  ASSERT_TRUE(p.kernel);
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{1}));
  p = prepare(mean({2, 3}, {}, 0), ops::prepareMean);
  ASSERT_TRUE(p.kernel);
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 3}));
}

TEST(OpsMeanTest, FloatValues) {
  const auto p = prepare(mean({2, 3}, {1}, 1), ops::prepareMean);
  const std::vector<float> x{1, 2, 3, 10, 20, 60};
  const auto out = run<float>(p, {x.data(), nullptr, nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<float>{2.0f, 30.0f}));
}

TEST(OpsMeanTest, QuantWithDifferentOutputQuantization) {
  OpBuilder op(OperationType::MEAN);
  op.tensor(kQ8, {2, 2}, 1.0f, 2)
      .constTensor(kI32, {1}, std::vector<int32_t>{0})
      .int32(0)
      .output(kQ8, {}, 0.5f, 100);
  const std::vector<uint8_t> x{1, 10, 2, 13};  // means 1.5 and 11.5 -> (m - 2) * 2 + 100
  const auto out = run<uint8_t>(prepare(op, ops::prepareMean), {x.data(), nullptr, nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<uint8_t>{99, 119}));
  const auto s = prepare(mean({3}, {0}, 0, kQ8S, 0.5f, -10), ops::prepareMean);
  const std::vector<int8_t> y{-128, -100, 2};
  const auto sout = run<int8_t>(s, {y.data(), nullptr, nullptr});
  ASSERT_TRUE(sout);
  EXPECT_EQ(*sout, (std::vector<int8_t>{-75}));  // -226 / 3 = -75.33
}

TEST(OpsMeanTest, AxesGivenAtExecution) {
  OpBuilder op(OperationType::MEAN);
  op.tensor(kF32, {2, 2}).tensor(kI32, {1}).int32(0).output(kF32, {2});
  const auto p = prepare(op, ops::prepareMean);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const std::vector<float> x{1, 2, 3, 5};
  const std::vector<int32_t> axis1{1};
  auto out = run<float>(p, {x.data(), axis1.data(), nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(*out, (std::vector<float>{1.5f, 4.0f}));
  const std::vector<int32_t> axis0{-2};
  out = run<float>(p, {x.data(), axis0.data(), nullptr});
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, (std::vector<float>{2.0f, 3.5f}));
  const std::vector<int32_t> outOfRange{2};
  out = run<float>(p, {x.data(), outOfRange.data(), nullptr});
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().status, ErrorStatus::GENERAL_FAILURE);

  OpBuilder undeclared(OperationType::MEAN);
  undeclared.tensor(kF32, {2, 2}).tensor(kI32, {1}).int32(0).output(kF32);
  expectRejected(undeclared, ops::prepareMean,
                 "MEAN input 1 (axes) is not a constant and output 0 does not declare");
}

TEST(OpsMeanTest, Rejections) {
  expectRejected(mean({2, 3}, {2}, 0), ops::prepareMean,
                 "MEAN input 1 (axes) entry 0 is 2, outside [-2, 2)");
  expectRejected(mean({2, 3}, {-3}, 0), ops::prepareMean, "entry 0 is -3");
  expectRejected(mean({1, 1, 1, 1, 2}, {0}, 0), ops::prepareMean, "MEAN input 0 has rank 5");
  OpBuilder axesType(OperationType::MEAN);
  axesType.tensor(kF32, {2}).constTensor(kF32, {1}, std::vector<float>{0}).int32(0).output(kF32);
  expectRejected(axesType, ops::prepareMean, "MEAN input 1 has unsupported type TENSOR_FLOAT32");
  OpBuilder keep(OperationType::MEAN);
  keep.tensor(kF32, {2}).constTensor(kI32, {1}, std::vector<int32_t>{0}).float32(1).output(kF32);
  expectRejected(keep, ops::prepareMean, "MEAN input 2 has unsupported type FLOAT32");
  OpBuilder outType(OperationType::MEAN);
  outType.tensor(kF32, {2})
      .constTensor(kI32, {1}, std::vector<int32_t>{0})
      .int32(0)
      .output(kQ8, {}, 1.0f, 0);
  expectRejected(outType, ops::prepareMean, "MEAN output 0 has type TENSOR_QUANT8_ASYMM");
  expectRejected(mean({2}, {0}, 0, kQ8, 1.0f, -1), ops::prepareMean,
                 "MEAN input 0 has zeroPoint -1 outside [0, 255]");
}

}  // namespace
}  // namespace nnhal::engine
