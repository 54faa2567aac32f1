// SQUEEZE, EXPAND_DIMS, FILL, RANK, STRIDED_SLICE, SLICE, SPLIT, TRANSPOSE, TILE and
// CHANNEL_SHUFFLE: prepare (shapes, rejections) and execution.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"

namespace nnhal::engine {
namespace {

using testing::expectDims;
using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::run;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kI32 = OperandType::TENSOR_INT32;

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 1.0f);
  return v;
}

TEST(OpsDataShapeTest, SqueezeGivenOmittedAndEverything) {
  OpBuilder given(OperationType::SQUEEZE);
  given.tensor(kF32, {1, 3, 1, 2}).constTensor(kI32, {1}, std::vector<int32_t>{-2}).output(kF32);
  const auto p = prepare(given, ops::prepareSqueeze);
  expectDims(p, {1, 3, 2});
  const auto x = iota(6);
  EXPECT_EQ(*run<float>(p, {x.data(), nullptr}), x);

  OpBuilder omitted(OperationType::SQUEEZE);
  omitted.tensor(kF32, {1, 3, 1, 2}).omitted(kI32).output(kF32);
  expectDims(prepare(omitted, ops::prepareSqueeze), {3, 2});

  OpBuilder all(OperationType::SQUEEZE);
  all.tensor(kF32, {1, 1, 1}).omitted(kI32).output(kF32, {1});
  expectDims(prepare(all, ops::prepareSqueeze), {1});
}

TEST(OpsDataShapeTest, ExpandDimsFillRank) {
  OpBuilder expand(OperationType::EXPAND_DIMS);
  expand.tensor(kI32, {2, 3}).int32(-1).output(kI32);
  const auto p = prepare(expand, ops::prepareExpandDims);
  expectDims(p, {2, 3, 1});
  const std::vector<int32_t> xi{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(*run<int32_t>(p, {xi.data(), nullptr}), xi);
  OpBuilder front(OperationType::EXPAND_DIMS);
  front.tensor(kF32, {2}).int32(0).output(kF32);
  expectDims(prepare(front, ops::prepareExpandDims), {1, 2});

  OpBuilder fill(OperationType::FILL);
  fill.constTensor(kI32, {2}, std::vector<int32_t>{2, 3}).float32(1.5f).output(kF32);
  const auto f = prepare(fill, ops::prepareFill);
  expectDims(f, {2, 3});
  EXPECT_EQ(*run<float>(f, {nullptr, nullptr}), std::vector<float>(6, 1.5f));
  OpBuilder fillInt(OperationType::FILL);
  fillInt.constTensor(kI32, {1}, std::vector<int32_t>{3}).int32(-7).output(kI32);
  EXPECT_EQ(*run<int32_t>(prepare(fillInt, ops::prepareFill), {nullptr, nullptr}),
            (std::vector<int32_t>{-7, -7, -7}));
  // A value that arrives with the request (e.g. computed by RANK) defers to execution.
  OpBuilder later(OperationType::FILL);
  later.constTensor(kI32, {1}, std::vector<int32_t>{3}).int32Input().output(kI32);
  const auto deferred = prepare(later, ops::prepareFill);
  ASSERT_FALSE(deferred.kernel);
  EXPECT_TRUE(deferred.ctx->valuesMissing());

  OpBuilder rank(OperationType::RANK);
  rank.tensor(OperandType::TENSOR_BOOL8, {2, 1, 4}).output(OperandType::INT32);
  const auto r = prepare(rank, ops::prepareRank);
  expectDims(r, {});
  EXPECT_EQ(*run<int32_t>(r, {nullptr}), (std::vector<int32_t>{3}));
}

TEST(OpsDataShapeTest, Rejections) {
  OpBuilder range(OperationType::SQUEEZE);
  range.tensor(kF32, {1, 2}).constTensor(kI32, {1}, std::vector<int32_t>{2}).output(kF32);
  expectRejected(range, ops::prepareSqueeze,
                 "SQUEEZE input 1 (squeeze dims) entry 2 is outside [-2, 2)");
  OpBuilder notOne(OperationType::SQUEEZE);
  notOne.tensor(kF32, {1, 2}).constTensor(kI32, {1}, std::vector<int32_t>{1}).output(kF32);
  expectRejected(notOne, ops::prepareSqueeze,
                 "SQUEEZE input 1 (squeeze dims) names dimension 1 of size 2, not 1");
  OpBuilder expand(OperationType::EXPAND_DIMS);
  expand.tensor(kF32, {2}).int32(2).output(kF32);
  expectRejected(expand, ops::prepareExpandDims,
                 "EXPAND_DIMS input 1 (axis) is 2, outside [-2, 1]");
  OpBuilder negative(OperationType::FILL);
  negative.constTensor(kI32, {2}, std::vector<int32_t>{2, -1}).float32(0.0f).output(kF32);
  expectRejected(negative, ops::prepareFill, "FILL input 0 (dims) entry 1 must be >= 0, got -1");
  OpBuilder fillType(OperationType::FILL);
  fillType.constTensor(kI32, {1}, std::vector<int32_t>{2}).int32(0).output(kQ8, {}, 1.0f, 0);
  expectRejected(fillType, ops::prepareFill,
                 "FILL output 0 must be TENSOR_FLOAT32 or TENSOR_INT32");
  OpBuilder fillValue(OperationType::FILL);
  fillValue.constTensor(kI32, {1}, std::vector<int32_t>{2}).int32(0).output(kF32);
  expectRejected(fillValue, ops::prepareFill, "FILL input 1 has unsupported type INT32");
  OpBuilder rank(OperationType::RANK);
  rank.tensor(kF32, {2}).output(kI32);
  expectRejected(rank, ops::prepareRank, "RANK output 0 has type TENSOR_INT32, expected INT32");
}

OpBuilder stridedSlice(std::vector<uint32_t> dims, std::vector<int32_t> begin,
                       std::vector<int32_t> end, std::vector<int32_t> strides, int32_t beginMask,
                       int32_t endMask, int32_t shrinkMask) {
  const auto n = static_cast<uint32_t>(begin.size());
  OpBuilder op(OperationType::STRIDED_SLICE);
  op.tensor(kF32, std::move(dims))
      .constTensor(kI32, {n}, begin)
      .constTensor(kI32, {n}, end)
      .constTensor(kI32, {n}, strides)
      .int32(beginMask)
      .int32(endMask)
      .int32(shrinkMask)
      .output(kF32);
  return op;
}

TEST(OpsDataSliceTest, StridedSliceMasksAndNegativeStrides) {
  const auto x = iota(6);  // [2, 3]
  const std::vector<const void*> in(7, nullptr);
  auto inputs = in;
  inputs[0] = x.data();

  // Row 1 reversed: begin [1, -1], end [2, -4], strides [1, -1], shrink dimension 0.
  const auto p =
      prepare(stridedSlice({2, 3}, {1, -1}, {2, -4}, {1, -1}, 0, 0, 1), ops::prepareStridedSlice);
  expectDims(p, {3});
  EXPECT_EQ(*run<float>(p, inputs), (std::vector<float>{6, 5, 4}));

  // Masks: everything along dimension 0, every second column from 0.
  const auto q =
      prepare(stridedSlice({2, 3}, {1, 0}, {1, 3}, {1, 2}, 1, 1, 0), ops::prepareStridedSlice);
  expectDims(q, {2, 2});
  EXPECT_EQ(*run<float>(q, inputs), (std::vector<float>{1, 3, 4, 6}));

  // Out-of-range indices clamp; an empty slice is allowed.
  const auto r =
      prepare(stridedSlice({2, 3}, {-10, 5}, {10, 9}, {1, 1}, 0, 0, 0), ops::prepareStridedSlice);
  expectDims(r, {2, 0});

  // Shrinking every dimension gives shape [1] (not rank 0), as the NNAPI reference reports.
  const auto one = prepare(stridedSlice({3}, {1}, {2}, {1}, 0, 0, 1), ops::prepareStridedSlice);
  expectDims(one, {1});
  auto oneInputs = in;
  oneInputs[0] = x.data();
  EXPECT_EQ(*run<float>(one, oneInputs), (std::vector<float>{2}));
}

TEST(OpsDataSliceTest, ZeroSizedInputs) {
  OpBuilder slice(OperationType::SLICE);
  slice.tensor(kF32, {0, 2})
      .constTensor(kI32, {2}, std::vector<int32_t>{0, 1})
      .constTensor(kI32, {2}, std::vector<int32_t>{-1, 1})
      .output(kF32);
  const auto p = prepare(slice, ops::prepareSlice);
  expectDims(p, {0, 1});
  EXPECT_TRUE(run<float>(p, {nullptr, nullptr, nullptr}));
  OpBuilder transpose(OperationType::TRANSPOSE);
  transpose.tensor(kF32, {0, 3}).omitted(kI32).output(kF32);
  const auto q = prepare(transpose, ops::prepareTranspose);
  expectDims(q, {3, 0});
  EXPECT_TRUE(run<float>(q, {nullptr, nullptr}));
}

TEST(OpsDataSliceTest, SliceAndSplit) {
  OpBuilder slice(OperationType::SLICE);
  slice.tensor(kI32, {3, 4})
      .constTensor(kI32, {2}, std::vector<int32_t>{1, 1})
      .constTensor(kI32, {2}, std::vector<int32_t>{-1, 2})
      .output(kI32);
  const auto p = prepare(slice, ops::prepareSlice);
  expectDims(p, {2, 2});
  std::vector<int32_t> x(12);
  std::iota(x.begin(), x.end(), 0);
  EXPECT_EQ(*run<int32_t>(p, {x.data(), nullptr, nullptr}), (std::vector<int32_t>{5, 6, 9, 10}));

  OpBuilder split(OperationType::SPLIT);
  split.tensor(kQ8, {2, 4}, 0.5f, 1).int32(-1).int32(2);
  split.output(kQ8, {}, 0.5f, 1).output(kQ8, {}, 0.5f, 1);
  const auto s = prepare(split, ops::prepareSplit);
  expectDims(s, {2, 2}, 0);
  expectDims(s, {2, 2}, 1);
  const std::vector<uint8_t> xq{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(*run<uint8_t>(s, {xq.data(), nullptr, nullptr}, 0), (std::vector<uint8_t>{1, 2, 5, 6}));
  EXPECT_EQ(*run<uint8_t>(s, {xq.data(), nullptr, nullptr}, 1), (std::vector<uint8_t>{3, 4, 7, 8}));
}

TEST(OpsDataSliceTest, Rejections) {
  expectRejected(stridedSlice({2, 3}, {0, 0}, {2, 3}, {1, 0}, 0, 0, 0), ops::prepareStridedSlice,
                 "STRIDED_SLICE input 3 (strides) entry 1 must not be 0");
  expectRejected(stridedSlice({2, 3}, {0, 0}, {2, 3}, {1, 1}, 0, 0, 1), ops::prepareStridedSlice,
                 "STRIDED_SLICE input 6 (shrink axis mask) shrinks dimension 0 whose slice has 2 "
                 "elements, not 1");
  expectRejected(stridedSlice({2, 3}, {1, 0}, {0, 3}, {-1, 1}, 0, 0, 1), ops::prepareStridedSlice,
                 "STRIDED_SLICE input 3 (strides) entry 0 must be positive for a dimension in the "
                 "shrink axis mask");
  expectRejected(stridedSlice({2, 3}, {0}, {1}, {1}, 0, 0, 0), ops::prepareStridedSlice,
                 "STRIDED_SLICE input 1 must have 2 elements, got 1");
  expectRejected(
      stridedSlice({1, 1, 1, 1, 1}, {0, 0, 0, 0, 0}, {1, 1, 1, 1, 1}, {1, 1, 1, 1, 1}, 0, 0, 0),
      ops::prepareStridedSlice, "STRIDED_SLICE input 0 has rank 5");

  const auto slice = [](std::vector<int32_t> begin, std::vector<int32_t> size) {
    OpBuilder op(OperationType::SLICE);
    op.tensor(kF32, {3}).constTensor(kI32, {1}, begin).constTensor(kI32, {1}, size).output(kF32);
    return op;
  };
  expectRejected(slice({-1}, {1}), ops::prepareSlice,
                 "SLICE input 1 (begin) entry 0 is -1, outside [0, 3]");
  expectRejected(slice({1}, {3}), ops::prepareSlice,
                 "SLICE input 2 (size) entry 0 is 3, which does not fit dimension size 3 from 1");
  expectRejected(slice({1}, {-2}), ops::prepareSlice, "SLICE input 2 (size) entry 0 is -2");

  OpBuilder count(OperationType::SPLIT);
  count.tensor(kF32, {4}).int32(0).int32(3).output(kF32).output(kF32);
  expectRejected(count, ops::prepareSplit,
                 "SPLIT input 2 (num_splits) is 3 but the operation has 2 outputs");
  OpBuilder uneven(OperationType::SPLIT);
  uneven.tensor(kF32, {3}).int32(0).int32(2).output(kF32).output(kF32);
  expectRejected(uneven, ops::prepareSplit,
                 "SPLIT input 0 dimension 0 (3) is not a multiple of num_splits 2");
  OpBuilder axis(OperationType::SPLIT);
  axis.tensor(kF32, {4}).int32(1).int32(1).output(kF32);
  expectRejected(axis, ops::prepareSplit, "SPLIT input 1 (axis) is 1, outside [-1, 1)");
}

TEST(OpsDataPermuteTest, TransposeTileChannelShuffle) {
  const auto x = iota(6);  // [2, 3]
  OpBuilder transpose(OperationType::TRANSPOSE);
  transpose.tensor(kF32, {2, 3}).omitted(kI32).output(kF32);
  const auto p = prepare(transpose, ops::prepareTranspose);
  expectDims(p, {3, 2});
  EXPECT_EQ(*run<float>(p, {x.data(), nullptr}), (std::vector<float>{1, 4, 2, 5, 3, 6}));

  OpBuilder perm(OperationType::TRANSPOSE);
  perm.tensor(kF32, {1, 2, 3}).constTensor(kI32, {3}, std::vector<int32_t>{2, 0, 1}).output(kF32);
  const auto q = prepare(perm, ops::prepareTranspose);
  expectDims(q, {3, 1, 2});
  EXPECT_EQ(*run<float>(q, {x.data(), nullptr}), (std::vector<float>{1, 4, 2, 5, 3, 6}));

  OpBuilder tile(OperationType::TILE);
  tile.tensor(kI32, {2, 2}).constTensor(kI32, {2}, std::vector<int32_t>{2, 1}).output(kI32);
  const auto t = prepare(tile, ops::prepareTile);
  expectDims(t, {4, 2});
  const std::vector<int32_t> xi{1, 2, 3, 4};
  EXPECT_EQ(*run<int32_t>(t, {xi.data(), nullptr}), (std::vector<int32_t>{1, 2, 3, 4, 1, 2, 3, 4}));
  OpBuilder tileInner(OperationType::TILE);
  tileInner.tensor(kI32, {2, 2}).constTensor(kI32, {2}, std::vector<int32_t>{1, 2}).output(kI32);
  EXPECT_EQ(*run<int32_t>(prepare(tileInner, ops::prepareTile), {xi.data(), nullptr}),
            (std::vector<int32_t>{1, 2, 1, 2, 3, 4, 3, 4}));

  // 6 channels in 2 groups along axis 0: output channel i * 2 + j is input j * 3 + i.
  OpBuilder shuffle(OperationType::CHANNEL_SHUFFLE);
  shuffle.tensor(kF32, {6, 1}).int32(2).int32(-2).output(kF32);
  const auto s = prepare(shuffle, ops::prepareChannelShuffle);
  expectDims(s, {6, 1});
  EXPECT_EQ(*run<float>(s, {x.data(), nullptr, nullptr}), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(OpsDataPermuteTest, Rejections) {
  OpBuilder perm(OperationType::TRANSPOSE);
  perm.tensor(kF32, {2, 3}).constTensor(kI32, {2}, std::vector<int32_t>{1, 1}).output(kF32);
  expectRejected(perm, ops::prepareTranspose,
                 "TRANSPOSE input 1 (perm) is not a permutation of 0..1 (entry 1 is 1)");
  OpBuilder tile(OperationType::TILE);
  tile.tensor(kF32, {2}).constTensor(kI32, {1}, std::vector<int32_t>{-1}).output(kF32);
  expectRejected(tile, ops::prepareTile, "TILE input 1 (multiples) entry 0 must be >= 0, got -1");
  OpBuilder tileCount(OperationType::TILE);
  tileCount.tensor(kF32, {2}).constTensor(kI32, {2}, std::vector<int32_t>{1, 1}).output(kF32);
  expectRejected(tileCount, ops::prepareTile, "TILE input 1 must have 1 elements, got 2");
  OpBuilder groups(OperationType::CHANNEL_SHUFFLE);
  groups.tensor(kF32, {4}).int32(0).int32(0).output(kF32);
  expectRejected(groups, ops::prepareChannelShuffle,
                 "CHANNEL_SHUFFLE input 1 (num_groups) must be >= 1, got 0");
  OpBuilder uneven(OperationType::CHANNEL_SHUFFLE);
  uneven.tensor(kF32, {4}).int32(3).int32(0).output(kF32);
  expectRejected(uneven, ops::prepareChannelShuffle,
                 "CHANNEL_SHUFFLE input 0 dimension 0 (4) is not a multiple of num_groups 3");
}

}  // namespace
}  // namespace nnhal::engine
