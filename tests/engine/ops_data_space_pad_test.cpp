// BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, DEPTH_TO_SPACE, SPACE_TO_DEPTH, PAD and PAD_V2:
// prepare (shapes, rejections, deferral of unknown values) and execution.
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
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 1.0f);
  return v;
}

/// NHWC [n, h, w, c] float data as NCHW.
std::vector<float> toNchw(const std::vector<float>& x, size_t n, size_t h, size_t w, size_t c) {
  std::vector<float> y(x.size());
  for (size_t b = 0; b < n; ++b)
    for (size_t i = 0; i < h; ++i)
      for (size_t j = 0; j < w; ++j)
        for (size_t k = 0; k < c; ++k) {
          y[((b * c + k) * h + i) * w + j] = x[((b * h + i) * w + j) * c + k];
        }
  return y;
}

OpBuilder& layout(OpBuilder& op, bool nchw) {
  return op.scalar<uint8_t>(OperandType::BOOL, nchw ? 1 : 0);
}

// Output of DEPTH_TO_SPACE of [1, 2, 2, 4] (values 1..16, block 2) and input of SPACE_TO_DEPTH.
const std::vector<float> kSpatial{1, 2, 5, 6, 3, 4, 7, 8, 9, 10, 13, 14, 11, 12, 15, 16};

TEST(OpsDataSpaceTest, DepthToSpaceBothLayouts) {
  OpBuilder nhwc(OperationType::DEPTH_TO_SPACE);
  nhwc.tensor(kF32, {1, 2, 2, 4}).int32(2).output(kF32);
  const auto p = prepare(nhwc, ops::prepareDepthToSpace);
  expectDims(p, {1, 4, 4, 1});
  const auto x = iota(16);
  EXPECT_EQ(*run<float>(p, {x.data(), nullptr}), kSpatial);

  OpBuilder nchw(OperationType::DEPTH_TO_SPACE);
  nchw.tensor(kF32, {1, 4, 2, 2}).int32(2);
  layout(nchw, true).output(kF32);
  const auto q = prepare(nchw, ops::prepareDepthToSpace);
  expectDims(q, {1, 1, 4, 4});
  const auto xn = toNchw(x, 1, 2, 2, 4);
  EXPECT_EQ(*run<float>(q, {xn.data(), nullptr, nullptr}), kSpatial);
}

TEST(OpsDataSpaceTest, SpaceToDepthBothLayouts) {
  OpBuilder nhwc(OperationType::SPACE_TO_DEPTH);
  nhwc.tensor(kQ8, {1, 4, 4, 1}, 0.5f, 3).int32(2);
  layout(nhwc, false).output(kQ8, {}, 0.5f, 3);
  const auto p = prepare(nhwc, ops::prepareSpaceToDepth);
  expectDims(p, {1, 2, 2, 4});
  const std::vector<uint8_t> x(kSpatial.begin(), kSpatial.end());
  std::vector<uint8_t> expected(16);
  std::iota(expected.begin(), expected.end(), uint8_t{1});
  EXPECT_EQ(*run<uint8_t>(p, {x.data(), nullptr, nullptr}), expected);

  OpBuilder nchw(OperationType::SPACE_TO_DEPTH);
  nchw.tensor(kF32, {1, 1, 4, 4}).int32(2);
  layout(nchw, true).output(kF32);
  const auto q = prepare(nchw, ops::prepareSpaceToDepth);
  expectDims(q, {1, 4, 2, 2});
  EXPECT_EQ(*run<float>(q, {kSpatial.data(), nullptr, nullptr}), toNchw(iota(16), 1, 2, 2, 4));
}

// BATCH_TO_SPACE_ND of [4, 2, 2, 1] (values 1..16, block [2, 2]) as [1, 4, 4, 1].
const std::vector<float> kBatchSpace{1, 5, 2, 6, 9, 13, 10, 14, 3, 7, 4, 8, 11, 15, 12, 16};

TEST(OpsDataSpaceTest, BatchToSpaceBothLayouts) {
  OpBuilder nhwc(OperationType::BATCH_TO_SPACE_ND);
  nhwc.tensor(kF32, {4, 2, 2, 1}).constTensor(kI32, {2}, std::vector<int32_t>{2, 2}).output(kF32);
  const auto p = prepare(nhwc, ops::prepareBatchToSpaceNd);
  expectDims(p, {1, 4, 4, 1});
  const auto x = iota(16);
  EXPECT_EQ(*run<float>(p, {x.data(), nullptr}), kBatchSpace);

  // Two channels in NCHW: channel 1 holds the same pattern plus 100.
  OpBuilder nchw(OperationType::BATCH_TO_SPACE_ND);
  nchw.tensor(kF32, {4, 2, 2, 2}).constTensor(kI32, {2}, std::vector<int32_t>{2, 2});
  layout(nchw, true).output(kF32);
  const auto q = prepare(nchw, ops::prepareBatchToSpaceNd);
  expectDims(q, {1, 2, 4, 4});
  std::vector<float> xn;
  for (size_t b = 0; b < 4; ++b)
    for (float offset : {0.0f, 100.0f})
      for (size_t i = 0; i < 4; ++i) xn.push_back(x[b * 4 + i] + offset);
  std::vector<float> expected = kBatchSpace;
  for (float v : kBatchSpace) expected.push_back(v + 100.0f);
  EXPECT_EQ(*run<float>(q, {xn.data(), nullptr, nullptr}), expected);
}

TEST(OpsDataSpaceTest, SpaceToBatchPadsWithZeroPoint) {
  OpBuilder op(OperationType::SPACE_TO_BATCH_ND);
  op.tensor(kQ8S, {1, 2, 2, 1}, 0.25f, -5)
      .constTensor(kI32, {2}, std::vector<int32_t>{2, 2})
      .constTensor(kI32, {2, 2}, std::vector<int32_t>{1, 1, 1, 1})
      .output(kQ8S, {}, 0.25f, -5);
  const auto p = prepare(op, ops::prepareSpaceToBatchNd);
  expectDims(p, {4, 2, 2, 1});
  const std::vector<int8_t> x{1, 2, 3, 4};
  EXPECT_EQ(*run<int8_t>(p, {x.data(), nullptr, nullptr}),
            (std::vector<int8_t>{-5, -5, -5, 4, -5, -5, 3, -5, -5, 2, -5, -5, 1, -5, -5, -5}));

  // Without padding it inverts BATCH_TO_SPACE_ND (NCHW, one channel: same bytes as NHWC).
  OpBuilder nchw(OperationType::SPACE_TO_BATCH_ND);
  nchw.tensor(kF32, {1, 1, 4, 4})
      .constTensor(kI32, {2}, std::vector<int32_t>{2, 2})
      .constTensor(kI32, {2, 2}, std::vector<int32_t>{0, 0, 0, 0});
  layout(nchw, true).output(kF32);
  const auto q = prepare(nchw, ops::prepareSpaceToBatchNd);
  expectDims(q, {4, 1, 2, 2});
  EXPECT_EQ(*run<float>(q, {kBatchSpace.data(), nullptr, nullptr, nullptr}), iota(16));
}

TEST(OpsDataSpaceTest, UnknownBlockShapeDefersToExecution) {
  OpBuilder op(OperationType::SPACE_TO_BATCH_ND);
  op.tensor(kF32, {1, 4, 4, 1}).tensor(kI32, {2}).tensor(kI32, {2, 2}).output(kF32);
  const auto p = prepare(op, ops::prepareSpaceToBatchNd);
  ASSERT_FALSE(p.kernel);
  EXPECT_TRUE(p.ctx->valuesMissing());
}

TEST(OpsDataSpaceTest, Rejections) {
  const auto blocks = [](std::vector<int32_t> block) {
    OpBuilder op(OperationType::BATCH_TO_SPACE_ND);
    const auto n = static_cast<uint32_t>(block.size());
    op.tensor(kF32, {4, 1, 1, 1}).constTensor(kI32, {n}, block).output(kF32);
    return op;
  };
  expectRejected(blocks({0, 2}), ops::prepareBatchToSpaceNd,
                 "BATCH_TO_SPACE_ND input 1 (block shape) entry 0 must be >= 1, got 0");
  expectRejected(blocks({3, 1}), ops::prepareBatchToSpaceNd,
                 "batch size 4 is not a multiple of the block size product 3");
  expectRejected(blocks({2, 2, 1}), ops::prepareBatchToSpaceNd,
                 "BATCH_TO_SPACE_ND input 1 must have 2 elements, got 3");
  OpBuilder rank3(OperationType::BATCH_TO_SPACE_ND);
  rank3.tensor(kF32, {4, 1, 1}).constTensor(kI32, {2}, std::vector<int32_t>{1, 1}).output(kF32);
  expectRejected(rank3, ops::prepareBatchToSpaceNd, "BATCH_TO_SPACE_ND input 0 has rank 3");
  OpBuilder badLayout(OperationType::BATCH_TO_SPACE_ND);
  badLayout.tensor(kF32, {4, 1, 1, 1})
      .constTensor(kI32, {2}, std::vector<int32_t>{1, 1})
      .int32(1)
      .output(kF32);
  expectRejected(badLayout, ops::prepareBatchToSpaceNd,
                 "BATCH_TO_SPACE_ND input 2 has unsupported type INT32");

  const auto s2b = [](std::vector<uint32_t> padDims, std::vector<int32_t> pads) {
    OpBuilder op(OperationType::SPACE_TO_BATCH_ND);
    op.tensor(kF32, {1, 3, 3, 1})
        .constTensor(kI32, {2}, std::vector<int32_t>{2, 2})
        .constTensor(kI32, std::move(padDims), pads)
        .output(kF32);
    return op;
  };
  expectRejected(s2b({4}, {0, 1, 0, 1}), ops::prepareSpaceToBatchNd,
                 "SPACE_TO_BATCH_ND input 2 (paddings) must have shape [2, 2]");
  expectRejected(s2b({2, 2}, {0, 1, -1, 2}), ops::prepareSpaceToBatchNd,
                 "SPACE_TO_BATCH_ND input 2 (paddings) entry 2 must be >= 0, got -1");
  expectRejected(s2b({2, 2}, {0, 0, 0, 1}), ops::prepareSpaceToBatchNd,
                 "padded spatial size 3x4 is not a multiple of the block 2x2");

  OpBuilder d2s(OperationType::DEPTH_TO_SPACE);
  d2s.tensor(kF32, {1, 1, 1, 6}).int32(2).output(kF32);
  expectRejected(d2s, ops::prepareDepthToSpace,
                 "DEPTH_TO_SPACE input 0 depth 6 is not a multiple of the squared block size 4");
  OpBuilder d2sZero(OperationType::DEPTH_TO_SPACE);
  d2sZero.tensor(kF32, {1, 1, 1, 4}).int32(0).output(kF32);
  expectRejected(d2sZero, ops::prepareDepthToSpace,
                 "DEPTH_TO_SPACE input 1 (block size) must be >= 1, got 0");
  OpBuilder s2d(OperationType::SPACE_TO_DEPTH);
  s2d.tensor(kF32, {1, 4, 3, 1}).int32(2).output(kF32);
  expectRejected(s2d, ops::prepareSpaceToDepth,
                 "SPACE_TO_DEPTH input 0 spatial size 4x3 is not a multiple of the block size 2");
  OpBuilder quant(OperationType::SPACE_TO_DEPTH);
  quant.tensor(kQ8, {1, 2, 2, 1}, 0.5f, 1).int32(2).output(kQ8, {}, 0.5f, 2);
  expectRejected(quant, ops::prepareSpaceToDepth,
                 "SPACE_TO_DEPTH output 0 must have the scale and zeroPoint of input 0");
}

TEST(OpsDataPadTest, PadV2WithValueAndPadWithZeroPoint) {
  OpBuilder v2(OperationType::PAD_V2);
  v2.tensor(kF32, {1, 2, 3, 1})
      .constTensor(kI32, {4, 2}, std::vector<int32_t>{0, 0, 0, 2, 1, 3, 0, 0})
      .float32(9.5f)
      .output(kF32);
  const auto p = prepare(v2, ops::preparePadV2);
  expectDims(p, {1, 4, 7, 1});
  const auto x = iota(6);
  const float v = 9.5f;
  std::vector<float> expected{v, 1, 2, 3, v, v, v, v, 4, 5, 6, v, v, v};
  expected.resize(28, v);
  EXPECT_EQ(*run<float>(p, {x.data(), nullptr, nullptr}), expected);

  OpBuilder pad(OperationType::PAD);
  pad.tensor(kQ8, {3}, 0.5f, 7)
      .constTensor(kI32, {1, 2}, std::vector<int32_t>{2, 1})
      .output(kQ8, {}, 0.5f, 7);
  const auto q = prepare(pad, ops::preparePad);
  expectDims(q, {6});
  const std::vector<uint8_t> xq{1, 2, 3};
  EXPECT_EQ(*run<uint8_t>(q, {xq.data(), nullptr}), (std::vector<uint8_t>{7, 7, 1, 2, 3, 7}));

  OpBuilder signedV2(OperationType::PAD_V2);
  signedV2.tensor(kQ8S, {2}, 0.5f, 0)
      .constTensor(kI32, {1, 2}, std::vector<int32_t>{1, 0})
      .int32(-128)
      .output(kQ8S, {}, 0.5f, 0);
  const auto s = prepare(signedV2, ops::preparePadV2);
  const std::vector<int8_t> xs{5, 6};
  EXPECT_EQ(*run<int8_t>(s, {xs.data(), nullptr, nullptr}), (std::vector<int8_t>{-128, 5, 6}));
}

TEST(OpsDataPadTest, PaddingsGivenAtExecutionDefer) {
  OpBuilder op(OperationType::PAD);
  op.tensor(kF32, {2, 2}).tensor(kI32, {2, 2}).output(kF32);
  const auto p = prepare(op, ops::preparePad);
  ASSERT_FALSE(p.kernel);
  EXPECT_TRUE(p.ctx->valuesMissing());
}

TEST(OpsDataPadTest, Rejections) {
  const auto pad = [](std::vector<uint32_t> padDims, std::vector<int32_t> pads) {
    OpBuilder op(OperationType::PAD);
    op.tensor(kF32, {2, 2}).constTensor(kI32, std::move(padDims), pads).output(kF32);
    return op;
  };
  expectRejected(pad({2}, {1, 1}), ops::preparePad,
                 "PAD input 1 (paddings) must have shape [2, 2]");
  expectRejected(pad({2, 2}, {0, 1, 2, -3}), ops::preparePad,
                 "PAD input 1 (paddings) of dimension 1 must be >= 0, got [2, -3]");
  OpBuilder scalar(OperationType::PAD);
  scalar.tensor(kF32, {}).constTensor(kI32, {0, 2}, std::vector<int32_t>{}).output(kF32);
  expectRejected(scalar, ops::preparePad, "PAD input 0 has rank 0");

  OpBuilder range(OperationType::PAD_V2);
  range.tensor(kQ8, {2}, 0.5f, 0)
      .constTensor(kI32, {1, 2}, std::vector<int32_t>{1, 1})
      .int32(256)
      .output(kQ8, {}, 0.5f, 0);
  expectRejected(range, ops::preparePadV2,
                 "PAD_V2 input 2 (pad value) 256 is outside the range [0, 255] of input 0");
  OpBuilder wrongType(OperationType::PAD_V2);
  wrongType.tensor(kF32, {2})
      .constTensor(kI32, {1, 2}, std::vector<int32_t>{1, 1})
      .int32(1)
      .output(kF32);
  expectRejected(wrongType, ops::preparePadV2, "PAD_V2 input 2 has unsupported type INT32");
}

}  // namespace
}  // namespace nnhal::engine
