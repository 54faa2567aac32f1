// LSTM, UNIDIRECTIONAL_SEQUENCE_LSTM and BIDIRECTIONAL_SEQUENCE_LSTM prepare functions:
// output shapes (the scratch buffer follows CIFG), agreement between the three operations,
// optional-input rules and their messages.
#include <gtest/gtest.h>

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
  std::uniform_real_distribution<float> dist(-0.5f, 0.5f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Options {
  bool cifg = false;
  bool peephole = false;
  bool projection = false;
  bool layerNorm = false;
};

constexpr uint32_t kInput = 3, kCells = 4;

/// Appends the weights, biases and projection of one cell (LSTM inputs 1..17).
void addCell(OpBuilder& b, const Options& o, uint32_t inputSize, int seed) {
  const uint32_t out = o.projection ? 2 : kCells;
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && o.cifg) {
      b.omitted();
    } else {
      b.floats({kCells, inputSize}, values(kCells * inputSize, seed + g));
    }
  }
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && o.cifg) {
      b.omitted();
    } else {
      b.floats({kCells, out}, values(kCells * out, seed + 10 + g));
    }
  }
  for (int g = 0; g < 3; ++g) {
    if (!o.peephole || (g == 0 && o.cifg)) {
      b.omitted();
    } else {
      b.floats({kCells}, values(kCells, seed + 20 + g));
    }
  }
  for (int g = 0; g < 4; ++g) {
    if (g == 0 && o.cifg) {
      b.omitted();
    } else {
      b.floats({kCells}, values(kCells, seed + 30 + g));
    }
  }
  if (o.projection) {
    b.floats({out, kCells}, values(out * kCells, seed + 40)).floats({out}, values(out, seed + 41));
  } else {
    b.omitted().omitted();
  }
}

void addLayerNorms(OpBuilder& b, const Options& o, int seed) {
  for (int g = 0; g < 4; ++g) {
    if (!o.layerNorm || (g == 0 && o.cifg)) {
      b.omitted();
    } else {
      b.floats({kCells}, values(kCells, seed + 50 + g));
    }
  }
}

OpBuilder lstm(const Options& o, const std::vector<float>& input, uint32_t batch = 2,
               bool withNorms = true) {
  const uint32_t out = o.projection ? 2 : kCells;
  OpBuilder b(OperationType::LSTM);
  b.floats({batch, kInput}, input);
  addCell(b, o, kInput, 100);
  b.floats({batch, out}, values(batch * out, 7)).floats({batch, kCells}, values(batch * kCells, 8));
  b.int32(4).float32(0.0f).float32(0.0f);
  if (withNorms) addLayerNorms(b, o, 100);
  for (int k = 0; k < 4; ++k) b.output(kF32);
  return b;
}

OpBuilder sequenceLstm(const Options& o, const std::vector<float>& input, uint32_t maxTime,
                       bool timeMajor, size_t outputs) {
  const uint32_t out = o.projection ? 2 : kCells;
  OpBuilder b(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM);
  b.floats(timeMajor ? std::vector<uint32_t>{maxTime, 2, kInput}
                     : std::vector<uint32_t>{2, maxTime, kInput},
           input);
  addCell(b, o, kInput, 100);
  b.floats({2, out}, values(2 * out, 7)).floats({2, kCells}, values(2 * kCells, 8));
  b.int32(4).float32(0.0f).float32(0.0f).boolean(timeMajor);
  addLayerNorms(b, o, 100);
  for (size_t k = 0; k < outputs; ++k) b.output(kF32);
  return b;
}

TEST(LstmOpTest, ScratchBufferShapeFollowsCifg) {
  const auto input = values(6, 1);
  const auto full = prepareAndRun(lstm({}, input), ops::prepareLstm);
  ASSERT_TRUE(full.kernel);
  EXPECT_EQ(full.outputDims(0), (std::vector<uint32_t>{2, 16}));
  EXPECT_EQ(full.outputDims(1), (std::vector<uint32_t>{2, 4}));
  EXPECT_EQ(full.output<float>(1), full.output<float>(3));
  const auto cifg = prepareAndRun(lstm({.cifg = true, .peephole = true, .projection = true}, input),
                                  ops::prepareLstm);
  ASSERT_TRUE(cifg.kernel);
  EXPECT_EQ(cifg.outputDims(0), (std::vector<uint32_t>{2, 12}));
  EXPECT_EQ(cifg.outputDims(3), (std::vector<uint32_t>{2, 2}));
  EXPECT_EQ(cifg.outputDims(2), (std::vector<uint32_t>{2, 4}));
}

TEST(LstmOpTest, HalVersion10FormHasNoLayerNorm) {
  const auto input = values(6, 1);
  const auto v10 = prepareAndRun(lstm({}, input, 2, false), ops::prepareLstm);
  const auto v12 = prepareAndRun(lstm({}, input), ops::prepareLstm);
  ASSERT_TRUE(v10.kernel && v12.kernel);
  EXPECT_EQ(v10.output<float>(3), v12.output<float>(3));
}

TEST(UnidirectionalSequenceLstmOpTest, OneStepEqualsLstm) {
  for (const Options& o : {Options{}, Options{.cifg = true, .peephole = true, .layerNorm = true},
                           Options{.peephole = true, .projection = true, .layerNorm = true}}) {
    const auto input = values(6, 3);
    const auto single = prepareAndRun(lstm(o, input), ops::prepareLstm);
    const auto sequence =
        prepareAndRun(sequenceLstm(o, input, 1, true, 3), ops::prepareUnidirectionalSequenceLstm);
    ASSERT_TRUE(single.kernel && sequence.kernel);
    EXPECT_EQ(single.output<float>(3), sequence.output<float>(0));
    EXPECT_EQ(single.output<float>(1), sequence.output<float>(1));
    EXPECT_EQ(single.output<float>(2), sequence.output<float>(2));
  }
}

TEST(UnidirectionalSequenceLstmOpTest, BatchMajorMatchesTimeMajor) {
  const auto tmInput = values(18, 4);  // [3, 2, 3]
  std::vector<float> bmInput(18);
  for (size_t t = 0; t < 3; ++t) {
    for (size_t b = 0; b < 2; ++b) {
      for (size_t k = 0; k < 3; ++k) bmInput[(b * 3 + t) * 3 + k] = tmInput[(t * 2 + b) * 3 + k];
    }
  }
  const auto tm =
      prepareAndRun(sequenceLstm({}, tmInput, 3, true, 1), ops::prepareUnidirectionalSequenceLstm);
  const auto bm =
      prepareAndRun(sequenceLstm({}, bmInput, 3, false, 1), ops::prepareUnidirectionalSequenceLstm);
  ASSERT_TRUE(tm.kernel && bm.kernel);
  EXPECT_EQ(bm.outputDims(0), (std::vector<uint32_t>{2, 3, 4}));
  const auto a = tm.output<float>(0);
  const auto c = bm.output<float>(0);
  for (size_t t = 0; t < 3; ++t) {
    for (size_t b = 0; b < 2; ++b) {
      for (size_t k = 0; k < 4; ++k) EXPECT_EQ(a[(t * 2 + b) * 4 + k], c[(b * 3 + t) * 4 + k]);
    }
  }
}

TEST(LstmOpTest, Rejections) {
  const auto input = values(6, 1);
  expectRejected(lstm({}, input).int32(0), ops::prepareLstm, "LSTM takes 23 or 27 inputs, got 28");
  {
    auto b = lstm({}, input);
    b.input(5).hasNoValue = true;  // recurrent-to-input omitted, input-to-input present
    expectRejected(b, ops::prepareLstm,
                   "LSTM inputs 1 and 5 (input-to-input and recurrent-to-input weights) must "
                   "both be present or both be omitted");
  }
  {
    auto b = lstm({.peephole = true}, input);
    b.input(10).hasNoValue = true;
    expectRejected(b, ops::prepareLstm, "(peephole weights) must all be present");
  }
  {
    auto b = lstm({.cifg = true}, input);
    b.input(12) = b.input(13);  // an input gate bias with CIFG
    expectRejected(b, ops::prepareLstm, "input 12 (input gate bias) must be omitted with CIFG");
  }
  {
    auto b = lstm({}, input);
    b.input(12).hasNoValue = true;
    expectRejected(b, ops::prepareLstm, "input 12 (input gate bias) is required without CIFG");
  }
  {
    auto b = lstm({.projection = true}, input);
    b.input(16).hasNoValue = true;
    expectRejected(b, ops::prepareLstm,
                   "input 17 (projection bias) must be omitted without projection weights");
  }
  {
    auto b = lstm({.projection = true}, input);
    b.input(16).hasNoValue = true;
    b.input(17).hasNoValue = true;
    expectRejected(b, ops::prepareLstm,
                   "without projection weights needs an output size (2) equal to the number of "
                   "cells (4)");
  }
  {
    auto b = lstm({.layerNorm = true}, input);
    b.input(25).hasNoValue = true;
    expectRejected(b, ops::prepareLstm, "layer normalization weights must all be present");
  }
  {
    auto b = lstm({.cifg = true, .layerNorm = true}, input);
    b.input(23) = b.input(24);
    expectRejected(b, ops::prepareLstm,
                   "input 23 (input layer norm weights) must be omitted with CIFG");
  }
  {
    auto b = lstm({}, input);
    b.input(3).dimensions = {4, 2};
    expectRejected(b, ops::prepareLstm,
                   "LSTM input 3 (input-to-cell weights) must have shape [4, 3], got [4, 2]");
  }
  {
    auto b = lstm({}, input);
    b.input(19).dimensions = {2, 3};
    expectRejected(b, ops::prepareLstm, "input 19 (cell state) must have shape [2, 4]");
  }
  {
    OpBuilder b(OperationType::LSTM);
    b.floats({2, kInput}, input);
    addCell(b, {}, kInput, 100);
    b.floats({2, 4}, values(8, 7)).floats({2, 4}, values(8, 8)).int32(5).float32(0).float32(0);
    for (int k = 0; k < 4; ++k) b.output(kF32);
    expectRejected(b, ops::prepareLstm, "input 20 (activation) must be 0 (none)");
  }
  {
    OpBuilder b(OperationType::LSTM);
    b.floats({2, kInput}, input);
    addCell(b, {}, kInput, 100);
    b.floats({2, 4}, values(8, 7)).floats({2, 4}, values(8, 8)).int32(4).float32(-1).float32(0);
    for (int k = 0; k < 4; ++k) b.output(kF32);
    expectRejected(b, ops::prepareLstm, "input 21 (cell clip) must be >= 0");
  }
}

TEST(LstmOpTest, OptionalModelInputsDeferToExecution) {
  auto b = lstm({}, values(6, 1));
  b.input(9).hasNoValue = false;
  b.input(9).lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  b.input(9).dimensions = {4};
  const auto p = prepare(b, ops::prepareLstm);
  EXPECT_FALSE(p.kernel);
  EXPECT_TRUE(p.ctx->valuesMissing());
}

TEST(UnidirectionalSequenceLstmOpTest, Rejections) {
  expectRejected(sequenceLstm({}, values(18, 1), 3, true, 2),
                 ops::prepareUnidirectionalSequenceLstm,
                 "UNIDIRECTIONAL_SEQUENCE_LSTM has 1 or 3 outputs, got 2");
  auto b = sequenceLstm({}, values(18, 1), 3, true, 1);
  b.input(0).dimensions = {6, 3};
  expectRejected(b, ops::prepareUnidirectionalSequenceLstm, "input 0 (input) must have rank 3");
}

/// BIDIRECTIONAL_SEQUENCE_LSTM, time-major [3, 2, 3], both cells alike.
OpBuilder biLstm(const Options& o, bool merge, size_t outputs, const std::vector<float>& input,
                 const std::vector<float>* aux = nullptr, bool auxWeights = false) {
  const uint32_t out = o.projection ? 2 : kCells;
  OpBuilder b(OperationType::BIDIRECTIONAL_SEQUENCE_LSTM);
  b.floats({3, 2, kInput}, input);
  addCell(b, o, kInput, 100);
  addCell(b, o, kInput, 200);
  for (int d = 0; d < 2; ++d) {
    b.floats({2, out}, values(2 * out, 7 + 10 * d))
        .floats({2, kCells}, values(2 * kCells, 8 + 10 * d));
  }
  if (aux != nullptr) {
    b.floats({3, 2, kInput}, *aux);
  } else {
    b.omitted();
  }
  for (int k = 0; k < 8; ++k) {
    if (auxWeights && !(o.cifg && k % 4 == 0)) {
      b.floats({kCells, kInput}, values(kCells * kInput, 300 + k));
    } else {
      b.omitted();
    }
  }
  b.int32(4).float32(0.0f).float32(0.0f).boolean(merge).boolean(true);
  addLayerNorms(b, o, 100);
  addLayerNorms(b, o, 200);
  for (size_t k = 0; k < outputs; ++k) b.output(kF32);
  return b;
}

TEST(BidirectionalSequenceLstmOpTest, ForwardMatchesUnidirectionalAndMergeConcatenates) {
  const Options o{.peephole = true, .projection = true};
  const auto input = values(18, 5);
  const auto bi = prepareAndRun(biLstm(o, false, 6, input), ops::prepareBidirectionalSequenceLstm);
  const auto merged =
      prepareAndRun(biLstm(o, true, 5, input), ops::prepareBidirectionalSequenceLstm);
  const auto uni =
      prepareAndRun(sequenceLstm(o, input, 3, true, 3), ops::prepareUnidirectionalSequenceLstm);
  ASSERT_TRUE(bi.kernel && merged.kernel && uni.kernel);
  EXPECT_EQ(bi.output<float>(0), uni.output<float>(0));
  EXPECT_EQ(bi.output<float>(2), uni.output<float>(1));
  EXPECT_EQ(bi.output<float>(3), uni.output<float>(2));
  EXPECT_EQ(merged.outputDims(0), (std::vector<uint32_t>{3, 2, 4}));
  const auto fw = bi.output<float>(0);
  const auto bw = bi.output<float>(1);
  const auto both = merged.output<float>(0);
  for (size_t row = 0; row < 6; ++row) {
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_EQ(both[row * 4 + k], fw[row * 2 + k]);
      EXPECT_EQ(both[row * 4 + 2 + k], bw[row * 2 + k]);
    }
  }
  EXPECT_EQ(merged.output<float>(3), bi.output<float>(4));
}

TEST(BidirectionalSequenceLstmOpTest, ParallelLinkingFeedsAuxToBackwardCell) {
  const auto input = values(18, 5);
  const auto aux = values(18, 6);
  const auto linked =
      prepareAndRun(biLstm({}, false, 2, input, &aux), ops::prepareBidirectionalSequenceLstm);
  const auto plainAux =
      prepareAndRun(biLstm({}, false, 2, aux), ops::prepareBidirectionalSequenceLstm);
  const auto plainInput =
      prepareAndRun(biLstm({}, false, 2, input), ops::prepareBidirectionalSequenceLstm);
  ASSERT_TRUE(linked.kernel && plainAux.kernel && plainInput.kernel);
  EXPECT_EQ(linked.output<float>(1), plainAux.output<float>(1));
  EXPECT_EQ(linked.output<float>(0), plainInput.output<float>(0));
}

TEST(BidirectionalSequenceLstmOpTest, CrossLinkingWithZeroAuxChangesNothing) {
  const auto input = values(18, 5);
  const std::vector<float> zeros(18, 0.0f);
  for (const Options& o : {Options{}, Options{.cifg = true}}) {
    const auto cross = prepareAndRun(biLstm(o, false, 2, input, &zeros, true),
                                     ops::prepareBidirectionalSequenceLstm);
    const auto plain =
        prepareAndRun(biLstm(o, false, 2, input), ops::prepareBidirectionalSequenceLstm);
    ASSERT_TRUE(cross.kernel && plain.kernel);
    EXPECT_EQ(cross.output<float>(0), plain.output<float>(0));
    EXPECT_EQ(cross.output<float>(1), plain.output<float>(1));
  }
}

TEST(BidirectionalSequenceLstmOpTest, Rejections) {
  const auto input = values(18, 5);
  expectRejected(biLstm({}, true, 2, input), ops::prepareBidirectionalSequenceLstm,
                 "BIDIRECTIONAL_SEQUENCE_LSTM has 1 or 5 outputs, got 2");
  expectRejected(biLstm({}, false, 2, input, nullptr, true), ops::prepareBidirectionalSequenceLstm,
                 "auxiliary weights need input 39 (auxiliary input)");
  {
    const auto aux = values(18, 6);
    auto b = biLstm({}, false, 2, input, &aux, true);
    for (size_t i = 44; i < 48; ++i) b.input(i).hasNoValue = true;
    expectRejected(b, ops::prepareBidirectionalSequenceLstm,
                   "forward and backward auxiliary weights must both be present");
  }
  {
    const auto aux = values(18, 6);
    auto b = biLstm({}, false, 2, input, &aux, true);
    b.input(40).hasNoValue = true;
    expectRejected(b, ops::prepareBidirectionalSequenceLstm,
                   "auxiliary weights must all be present with an auxiliary input");
  }
  {
    auto b = biLstm({}, false, 2, input);
    b.input(37).dimensions = {2, 3};
    expectRejected(b, ops::prepareBidirectionalSequenceLstm,
                   "input 37 (output state) must have shape [2, 4]");
  }
}

}  // namespace
}  // namespace nnhal::engine
