// SVDF, LSH_PROJECTION, QUANTIZED_16BIT_LSTM and QUANTIZED_LSTM prepare functions: results
// on small examples and every rejection.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::prepareAndRun;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;

// --- SVDF --------------------------------------------------------------------------------

OpBuilder svdf(int32_t rank, bool bias) {
  // batch 1, input 2, filters 2, memory 3.
  OpBuilder b(OperationType::SVDF);
  b.floats({1, 2}, {1.0f, 2.0f})
      .floats({2, 2}, {1.0f, 0.0f, 0.0f, 1.0f})
      .floats({2, 3}, {1.0f, 1.0f, 1.0f, 0.5f, 0.5f, 0.5f});
  if (bias) {
    b.floats({uint32_t(2 / rank)}, std::vector<float>(2 / rank, 10.0f));
  } else {
    b.omitted();
  }
  b.floats({1, 6}, {1.0f, 2.0f, 99.0f, 3.0f, 4.0f, 99.0f}).int32(rank).int32(0);
  b.output(kF32).output(kF32);
  return b;
}

TEST(SvdfOpTest, UpdatesMemoryAndSumsRanks) {
  const auto p = prepareAndRun(svdf(1, false), ops::prepareSvdf);
  ASSERT_TRUE(p.kernel);
  // Filter 0 memory [1, 2, x=1] -> 4; filter 1 memory [3, 4, x=2] * 0.5 -> 4.5.
  EXPECT_EQ(p.output<float>(1), (std::vector<float>{4.0f, 4.5f}));
  EXPECT_EQ(p.output<float>(0), (std::vector<float>{2.0f, 1.0f, 0.0f, 4.0f, 2.0f, 0.0f}));
  const auto ranked = prepareAndRun(svdf(2, true), ops::prepareSvdf);
  ASSERT_TRUE(ranked.kernel);
  EXPECT_EQ(ranked.outputDims(1), (std::vector<uint32_t>{1, 1}));
  EXPECT_EQ(ranked.output<float>(1), (std::vector<float>{18.5f}));
}

TEST(SvdfOpTest, Rejections) {
  expectRejected(svdf(3, false), ops::prepareSvdf,
                 "SVDF input 5 (rank) must be positive and divide 2");
  expectRejected(svdf(0, false), ops::prepareSvdf, "must be positive");
  {
    auto b = svdf(1, true);
    b.input(3).dimensions = {3};
    expectRejected(b, ops::prepareSvdf, "SVDF input 3 (bias) must have shape [2], got [3]");
  }
  {
    auto b = svdf(1, false);
    b.input(4).dimensions = {1, 4};
    expectRejected(b, ops::prepareSvdf, "input 4 (state) must have shape [1, 6]");
  }
  {
    auto b = svdf(1, false);
    b.input(2).dimensions = {3, 2};
    expectRejected(b, ops::prepareSvdf, "input 2 (weights_time) must have shape [2, 2]");
  }
}

// --- LSH_PROJECTION ------------------------------------------------------------------------

const std::vector<float> kHash = {0.123f, 0.456f, -0.321f, -0.654f,
                                  1.234f, 5.678f, -4.321f, -8.765f};
const std::vector<int32_t> kLookup = {12345, 54321, 67890, 9876, -12345678, -87654321};

OpBuilder lsh(int32_t type, bool weight) {
  OpBuilder b(OperationType::LSH_PROJECTION);
  b.floats({4, 2}, kHash).tensor(OperandType::TENSOR_INT32, {3, 2}, kLookup);
  if (weight) {
    b.floats({3}, {0.12f, 0.34f, 0.56f});
  } else {
    b.omitted();
  }
  b.int32(type).output(OperandType::TENSOR_INT32);
  return b;
}

TEST(LshProjectionOpTest, DenseAndSparse) {
  const auto dense = prepareAndRun(lsh(2, true), ops::prepareLshProjection);
  ASSERT_TRUE(dense.kernel);
  EXPECT_EQ(dense.outputDims(0), (std::vector<uint32_t>{8}));
  EXPECT_EQ(dense.output<int32_t>(0), (std::vector<int32_t>{1, 1, 1, 0, 1, 1, 1, 0}));
  const auto sparse = prepareAndRun(lsh(3, false), ops::prepareLshProjection);
  ASSERT_TRUE(sparse.kernel);
  EXPECT_EQ(sparse.output<int32_t>(0), (std::vector<int32_t>{1, 6, 10, 12}));
}

TEST(LshProjectionOpTest, Rejections) {
  expectRejected(lsh(4, false), ops::prepareLshProjection,
                 "LSH_PROJECTION input 3 (type) must be 1 (sparse, deprecated), 2 (dense) or 3");
  {
    auto b = lsh(2, true);
    b.input(2).dimensions = {2};
    expectRejected(b, ops::prepareLshProjection, "input 2 (weight) must have shape [3], got [2]");
  }
  {
    auto b = lsh(2, true);
    b.input(0).dimensions = {1, 33};
    expectRejected(b, ops::prepareLshProjection, "at most 32 bits per function, got 33");
  }
  {
    auto b = lsh(3, false);
    b.input(0).dimensions = {5, 30};
    expectRejected(b, ops::prepareLshProjection, "bits + ceil(log2(functions)) <= 32");
  }
  {
    auto b = lsh(2, true);
    b.input(1).type = OperandType::TENSOR_BOOL8;
    expectRejected(b, ops::prepareLshProjection, "input 1 (input) has unsupported type");
  }
}

// --- QUANTIZED_16BIT_LSTM ----------------------------------------------------------------

OpBuilder quantized16() {
  constexpr auto kU8 = OperandType::TENSOR_QUANT8_ASYMM;
  const float weightScale = 0.00408021f;
  OpBuilder b(OperationType::QUANTIZED_16BIT_LSTM);
  b.tensor(kU8, {1, 2}, std::vector<uint8_t>{128, 128}, 1.0f / 128, 128);
  for (int k = 0; k < 4; ++k) {
    b.tensor(kU8, {4, 2}, std::vector<uint8_t>(8, 100), weightScale, 100);
  }
  for (int k = 0; k < 4; ++k) {
    b.tensor(kU8, {4, 4}, std::vector<uint8_t>(16, 100), weightScale, 100);
  }
  for (int k = 0; k < 4; ++k) {
    b.tensor(OperandType::TENSOR_INT32, {4}, std::vector<int32_t>(4, 0), weightScale / 128, 0);
  }
  b.tensor(OperandType::TENSOR_QUANT16_SYMM, {1, 4}, std::vector<int16_t>{0, 2048, -2048, 4096},
           1.0f / 2048, 0);
  b.tensor(kU8, {1, 4}, std::vector<uint8_t>(4, 128), 1.0f / 128, 128);
  b.output(OperandType::TENSOR_QUANT16_SYMM, {}, 1.0f / 2048).output(kU8, {}, 1.0f / 128, 128);
  return b;
}

TEST(Quantized16BitLstmOpTest, ZeroGates) {
  const auto p = prepareAndRun(quantized16(), ops::prepareQuantized16BitLstm);
  ASSERT_TRUE(p.kernel);
  EXPECT_EQ(p.output<int16_t>(0), (std::vector<int16_t>{0, 1024, -1024, 2048}));
  const auto out = p.output<uint8_t>(1);
  EXPECT_EQ(out[0], 128);
  EXPECT_NEAR(out[3], 128 + 64 * std::tanh(1.0), 1.0);
}

TEST(Quantized16BitLstmOpTest, Rejections) {
  {
    auto b = quantized16();
    b.input(0).zeroPoint = 0;
    expectRejected(b, ops::prepareQuantized16BitLstm,
                   "QUANTIZED_16BIT_LSTM input 0 (input) must have scale");
  }
  {
    auto b = quantized16();
    b.input(13).scale = 1.0f / 4096;
    expectRejected(b, ops::prepareQuantized16BitLstm,
                   "input 13 (previous cell state) must have scale 2^-11");
  }
  {
    auto b = quantized16();
    b.input(9).scale = 0.5f;
    expectRejected(b, ops::prepareQuantized16BitLstm, "must have the scale of the weights / 128");
  }
  {
    auto b = quantized16();
    b.input(6).zeroPoint = 99;
    expectRejected(b, ops::prepareQuantized16BitLstm,
                   "input 6 (recurrent-to-forget weights) must have scale");
  }
  {
    auto b = quantized16();
    b.input(3).dimensions = {4, 3};
    expectRejected(b, ops::prepareQuantized16BitLstm,
                   "input 3 (input-to-cell weights) must have shape [4, 2]");
  }
}

// --- QUANTIZED_LSTM ------------------------------------------------------------------------

/// batch 1, input 2, units 2, no projection (output 2); CIFG and layer norm optional.
OpBuilder qlstm(bool cifg, bool layerNorm) {
  constexpr auto kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  constexpr auto kS8 = OperandType::TENSOR_QUANT8_SYMM;
  constexpr auto kI16 = OperandType::TENSOR_QUANT16_SYMM;
  OpBuilder b(OperationType::QUANTIZED_LSTM);
  b.tensor(kI8, {1, 2}, std::vector<int8_t>{10, -20}, 1.0f / 128, 0);
  for (int k = 0; k < 8; ++k) {
    if (cifg && k % 4 == 0) {
      b.omitted(kS8);
    } else {
      b.tensor(kS8, {2, 2}, std::vector<int8_t>{10, 20, -30, 40}, 1.0f / 64, 0);
    }
  }
  b.omitted(kI16).omitted(kI16).omitted(kI16);
  for (int k = 0; k < 4; ++k) {
    if (cifg && k == 0) {
      b.omitted(OperandType::TENSOR_INT32);
    } else {
      b.tensor(OperandType::TENSOR_INT32, {2}, std::vector<int32_t>{100, -100});
    }
  }
  b.omitted(kS8).omitted(OperandType::TENSOR_INT32);
  b.tensor(kI8, {1, 2}, std::vector<int8_t>{5, 6}, 1.0f / 128, 0);
  b.tensor(kI16, {1, 2}, std::vector<int16_t>{100, -200}, 1.0f / 2048, 0);
  for (int k = 0; k < 4; ++k) {
    if (!layerNorm || (cifg && k == 0)) {
      b.omitted(kI16);
    } else {
      b.tensor(kI16, {2}, std::vector<int16_t>{16384, 16384}, 1.0f / 32768, 0);
    }
  }
  b.float32(0.0f).float32(0.0f);
  for (int k = 0; k < 4; ++k) b.float32(1.0f / 4096);
  b.int32(0).float32(1.0f / 128);
  b.output(kI8, {}, 1.0f / 128, 0).output(kI16, {}, 1.0f / 2048, 0).output(kI8, {}, 1.0f / 128, 0);
  return b;
}

TEST(QuantizedLstmOpTest, RunsEveryForm) {
  for (bool cifg : {false, true}) {
    for (bool norm : {false, true}) {
      const auto p = prepareAndRun(qlstm(cifg, norm), ops::prepareQuantizedLstm);
      ASSERT_TRUE(p.kernel) << cifg << norm;
      EXPECT_EQ(p.outputDims(1), (std::vector<uint32_t>{1, 2}));
      EXPECT_EQ(p.output<int8_t>(0), p.output<int8_t>(2));
    }
  }
}

TEST(QuantizedLstmOpTest, Rejections) {
  {
    auto b = qlstm(false, false);
    b.input(5).hasNoValue = true;
    expectRejected(b, ops::prepareQuantizedLstm,
                   "QUANTIZED_LSTM inputs 1 and 5 (input-to-input and recurrent-to-input "
                   "weights) must both be present or both be omitted");
  }
  {
    auto b = qlstm(false, false);
    b.input(19).scale = 0.001f;
    expectRejected(b, ops::prepareQuantizedLstm,
                   "input 19 (previous cell state) must have a power-of-two scale");
  }
  {
    auto b = qlstm(false, true);
    b.input(22).hasNoValue = true;
    expectRejected(b, ops::prepareQuantizedLstm, "inputs 20..23 (layer norm weights) must all");
  }
  {
    auto b = qlstm(true, false);
    b.input(12) = b.input(13);
    expectRejected(b, ops::prepareQuantizedLstm,
                   "input 12 (input gate bias) must be omitted with CIFG");
  }
  {
    auto b = qlstm(false, false);
    b.input(2).dimensions = {2, 3};
    expectRejected(b, ops::prepareQuantizedLstm,
                   "input 2 (input-to-forget weights) must have shape [2, 2]");
  }
  {
    auto b = qlstm(false, false);
    for (size_t i = 5; i <= 8; ++i) b.input(i).dimensions = {2, 3};
    expectRejected(b, ops::prepareQuantizedLstm,
                   "needs an output size (3) equal to the number of units (2)");
  }
}

}  // namespace
}  // namespace nnhal::engine
