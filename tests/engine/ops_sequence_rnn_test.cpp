// RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN prepare functions: output
// shapes, layouts, linking modes, optional-input deferral and every rejection.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::prepareAndRun;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;

std::vector<float> values(size_t n, int seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

/// [a, b, c] -> [b, a, c].
std::vector<float> swapFirstDims(const std::vector<float>& in, size_t a, size_t b, size_t c) {
  std::vector<float> out(in.size());
  for (size_t i = 0; i < a; ++i) {
    for (size_t j = 0; j < b; ++j) {
      for (size_t k = 0; k < c; ++k) out[(j * a + i) * c + k] = in[(i * b + j) * c + k];
    }
  }
  return out;
}

OpBuilder rnn(size_t batch = 2, size_t input = 3, size_t units = 4) {
  OpBuilder b(OperationType::RNN);
  b.floats({uint32_t(batch), uint32_t(input)}, values(batch * input, 1))
      .floats({uint32_t(units), uint32_t(input)}, values(units * input, 2))
      .floats({uint32_t(units), uint32_t(units)}, values(units * units, 3))
      .floats({uint32_t(units)}, values(units, 4))
      .floats({uint32_t(batch), uint32_t(units)}, values(batch * units, 5))
      .int32(1)
      .output(kF32)
      .output(kF32);
  return b;
}

TEST(RnnOpTest, ComputesReluStep) {
  OpBuilder b(OperationType::RNN);
  b.floats({1, 2}, {1.0f, 2.0f})
      .floats({2, 2}, {0.5f, 0.5f, -1.0f, 0.25f})
      .floats({2, 2}, {1.0f, 0.0f, 0.0f, 1.0f})
      .floats({2}, {0.1f, 0.2f})
      .floats({1, 2}, {0.3f, -0.4f})
      .int32(1)
      .output(kF32)
      .output(kF32);
  const auto p = prepareAndRun(b, ops::prepareRnn);
  ASSERT_TRUE(p.kernel);
  EXPECT_EQ(p.outputDims(0), (std::vector<uint32_t>{1, 2}));
  // unit 0: 0.1 + 1.5 + 0.3 = 1.9; unit 1: relu(0.2 - 0.5 - 0.4) = 0.
  const auto out = p.output<float>(1);
  EXPECT_NEAR(out[0], 1.9f, 1e-6);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(p.output<float>(0), out);
}

TEST(RnnOpTest, Rejections) {
  expectRejected(rnn().int32(0), ops::prepareRnn, "RNN takes 6 inputs, got 7");
  {
    auto b = rnn();
    b.input(1).dimensions = {4, 2};
    expectRejected(b, ops::prepareRnn, "RNN input 1 (weights) must have shape [4, 3], got [4, 2]");
  }
  {
    auto b = rnn();
    b.input(4).dimensions = {3, 4};
    expectRejected(b, ops::prepareRnn, "input 4 (hidden state) must have shape [2, 4]");
  }
  {
    OpBuilder b(OperationType::RNN);
    b.floats({1, 1}, {1.0f}).floats({1, 1}, {1.0f}).floats({1, 1}, {1.0f}).floats({1}, {0.0f});
    b.floats({1, 1}, {0.0f}).int32(5).output(kF32).output(kF32);
    expectRejected(b, ops::prepareRnn, "input 5 (activation) must be 0 (none)");
  }
  {
    auto b = rnn();
    b.input(0).type = OperandType::TENSOR_INT32;
    expectRejected(b, ops::prepareRnn, "input 0 (input) has type TENSOR_INT32");
  }
  {
    auto b = rnn();
    b.input(0).dimensions = {6};
    expectRejected(b, ops::prepareRnn, "input 0 (input) must have rank 2, got 1");
  }
}

OpBuilder sequenceRnn(bool timeMajor, const std::vector<float>& input, size_t outputs = 2) {
  // maxTime 3, batch 2, input 3, units 4.
  OpBuilder b(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN);
  b.floats(timeMajor ? std::vector<uint32_t>{3, 2, 3} : std::vector<uint32_t>{2, 3, 3}, input)
      .floats({4, 3}, values(12, 2))
      .floats({4, 4}, values(16, 3))
      .floats({4}, values(4, 4))
      .floats({2, 4}, values(8, 5))
      .int32(4)
      .int32(timeMajor ? 1 : 0);
  for (size_t o = 0; o < outputs; ++o) b.output(kF32);
  return b;
}

TEST(UnidirectionalSequenceRnnOpTest, BatchMajorMatchesTimeMajor) {
  const auto timeMajorInput = values(18, 9);
  const auto tm =
      prepareAndRun(sequenceRnn(true, timeMajorInput), ops::prepareUnidirectionalSequenceRnn);
  const auto bm = prepareAndRun(sequenceRnn(false, swapFirstDims(timeMajorInput, 3, 2, 3)),
                                ops::prepareUnidirectionalSequenceRnn);
  ASSERT_TRUE(tm.kernel && bm.kernel);
  EXPECT_EQ(tm.outputDims(0), (std::vector<uint32_t>{3, 2, 4}));
  EXPECT_EQ(bm.outputDims(0), (std::vector<uint32_t>{2, 3, 4}));
  EXPECT_EQ(swapFirstDims(tm.output<float>(0), 3, 2, 4), bm.output<float>(0));
  // The final hidden state is the last time step's output.
  const auto out = tm.output<float>(0);
  EXPECT_EQ(tm.output<float>(1), std::vector<float>(out.begin() + 16, out.end()));
  EXPECT_EQ(tm.output<float>(1), bm.output<float>(1));
}

TEST(UnidirectionalSequenceRnnOpTest, Rejections) {
  {
    OpBuilder b(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN);
    b.floats({1, 1, 1}, {1.0f}).floats({1, 1}, {1.0f}).floats({1, 1}, {1.0f});
    b.floats({1}, {0.0f}).floats({1, 1}, {0.0f}).int32(0).int32(2).output(kF32);
    expectRejected(b, ops::prepareUnidirectionalSequenceRnn,
                   "input 6 (time major) must be 0 or 1, got 2");
  }
  expectRejected(sequenceRnn(true, values(18, 1), 3), ops::prepareUnidirectionalSequenceRnn,
                 "UNIDIRECTIONAL_SEQUENCE_RNN has 1 or 2 outputs, got 3");
  {
    auto b = sequenceRnn(true, values(18, 1));
    b.input(0).dimensions = {3, 6};
    expectRejected(b, ops::prepareUnidirectionalSequenceRnn, "must have rank 3, got 2");
  }
}

/// BIDIRECTIONAL_SEQUENCE_RNN, time-major [3, 2, 3], fw units 4, bw units 2.
OpBuilder biRnn(bool merge, size_t outputs, const std::vector<float>& input,
                const std::vector<float>* aux = nullptr, bool auxWeights = false) {
  OpBuilder b(OperationType::BIDIRECTIONAL_SEQUENCE_RNN);
  b.floats({3, 2, 3}, input)
      .floats({4, 3}, values(12, 2))
      .floats({4, 4}, values(16, 3))
      .floats({4}, values(4, 4))
      .floats({2, 4}, values(8, 5))
      .floats({2, 3}, values(6, 6))
      .floats({2, 2}, values(4, 7))
      .floats({2}, values(2, 8))
      .floats({2, 2}, values(4, 9));
  if (aux != nullptr) {
    b.floats({3, 2, 3}, *aux);
  } else {
    b.omitted();
  }
  if (auxWeights) {
    b.floats({4, 3}, values(12, 10)).floats({2, 3}, values(6, 11));
  } else {
    b.omitted().omitted();
  }
  b.int32(4).boolean(true).boolean(merge);
  for (size_t o = 0; o < outputs; ++o) b.output(kF32);
  return b;
}

TEST(BidirectionalSequenceRnnOpTest, MergedOutputConcatenatesDirections) {
  const auto input = values(18, 1);
  const auto separate = prepareAndRun(biRnn(false, 4, input), ops::prepareBidirectionalSequenceRnn);
  const auto merged = prepareAndRun(biRnn(true, 3, input), ops::prepareBidirectionalSequenceRnn);
  ASSERT_TRUE(separate.kernel && merged.kernel);
  EXPECT_EQ(merged.outputDims(0), (std::vector<uint32_t>{3, 2, 6}));
  EXPECT_EQ(separate.outputDims(1), (std::vector<uint32_t>{3, 2, 2}));
  EXPECT_EQ(separate.outputDims(3), (std::vector<uint32_t>{2, 2}));
  const auto fw = separate.output<float>(0);
  const auto bw = separate.output<float>(1);
  const auto both = merged.output<float>(0);
  for (size_t row = 0; row < 6; ++row) {
    for (size_t k = 0; k < 4; ++k) EXPECT_EQ(both[row * 6 + k], fw[row * 4 + k]);
    for (size_t k = 0; k < 2; ++k) EXPECT_EQ(both[row * 6 + 4 + k], bw[row * 2 + k]);
  }
  // The backward pass ends at time step 0: its final state is the first output row block.
  EXPECT_EQ(separate.output<float>(3), std::vector<float>(bw.begin(), bw.begin() + 4));
  EXPECT_EQ(separate.output<float>(2), std::vector<float>(fw.end() - 8, fw.end()));
  EXPECT_EQ(merged.output<float>(2), separate.output<float>(3));
}

TEST(BidirectionalSequenceRnnOpTest, ParallelLinkingFeedsAuxToBackwardCell) {
  const auto input = values(18, 1);
  const auto aux = values(18, 2);
  const auto linked =
      prepareAndRun(biRnn(false, 2, input, &aux), ops::prepareBidirectionalSequenceRnn);
  const auto plainInput =
      prepareAndRun(biRnn(false, 2, input), ops::prepareBidirectionalSequenceRnn);
  const auto plainAux = prepareAndRun(biRnn(false, 2, aux), ops::prepareBidirectionalSequenceRnn);
  ASSERT_TRUE(linked.kernel && plainInput.kernel && plainAux.kernel);
  EXPECT_EQ(linked.output<float>(0), plainInput.output<float>(0));
  EXPECT_EQ(linked.output<float>(1), plainAux.output<float>(1));
}

TEST(BidirectionalSequenceRnnOpTest, CrossLinkingAddsAuxProducts) {
  const auto input = values(18, 1);
  const auto zeros = std::vector<float>(18, 0.0f);
  const auto crossZero =
      prepareAndRun(biRnn(false, 2, input, &zeros, true), ops::prepareBidirectionalSequenceRnn);
  const auto plain = prepareAndRun(biRnn(false, 2, input), ops::prepareBidirectionalSequenceRnn);
  ASSERT_TRUE(crossZero.kernel && plain.kernel);
  EXPECT_EQ(crossZero.output<float>(0), plain.output<float>(0));  // aux of zeros adds nothing
  const auto aux = values(18, 2);
  const auto cross =
      prepareAndRun(biRnn(false, 2, input, &aux, true), ops::prepareBidirectionalSequenceRnn);
  EXPECT_NE(cross.output<float>(0), plain.output<float>(0));
}

TEST(BidirectionalSequenceRnnOpTest, Rejections) {
  const auto input = values(18, 1);
  expectRejected(biRnn(true, 2, input), ops::prepareBidirectionalSequenceRnn,
                 "BIDIRECTIONAL_SEQUENCE_RNN has 1 or 3 outputs, got 2");
  expectRejected(biRnn(false, 3, input), ops::prepareBidirectionalSequenceRnn,
                 "has 2 or 4 outputs, got 3");
  expectRejected(biRnn(false, 2, input, nullptr, true), ops::prepareBidirectionalSequenceRnn,
                 "inputs 9..11 (auxiliary input and weights) must be all present");
  {
    auto b = biRnn(false, 2, input);
    b.input(6).dimensions = {2, 3};
    expectRejected(b, ops::prepareBidirectionalSequenceRnn,
                   "input 6 (backward recurrent weights) must have shape [2, 2]");
  }
  {
    const auto aux = values(18, 2);
    auto b = biRnn(false, 2, input, &aux);
    b.input(9).dimensions = {3, 1, 6};
    expectRejected(b, ops::prepareBidirectionalSequenceRnn,
                   "input 9 (auxiliary input) must have shape [3, 2, 6]");
  }
}

TEST(BidirectionalSequenceRnnOpTest, OptionalModelInputsDeferToExecution) {
  const auto input = values(18, 1);
  auto b = biRnn(false, 2, input);
  b.input(9).hasNoValue = false;
  b.input(9).lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  b.input(9).dimensions = {3, 2, 3};
  const auto p = prepare(b, ops::prepareBidirectionalSequenceRnn);
  EXPECT_FALSE(p.kernel);
  EXPECT_TRUE(p.ctx->valuesMissing());
  // At execution the same operand omitted by the request is simply absent.
  b.input(9).hasNoValue = true;
  EXPECT_TRUE(prepare(b, ops::prepareBidirectionalSequenceRnn, true).kernel);
}

}  // namespace
}  // namespace nnhal::engine
