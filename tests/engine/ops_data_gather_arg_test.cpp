// GATHER, EMBEDDING_LOOKUP, HASHTABLE_LOOKUP, ARGMAX, ARGMIN and TOPK_V2: prepare (shapes,
// rejections), execution and run-time index failures.
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

TEST(OpsDataGatherTest, GatherAlongAxisAndBadIndexAtRunTime) {
  OpBuilder op(OperationType::GATHER);
  op.tensor(kF32, {2, 3}).int32(-1).tensor(kI32, {2, 2}).output(kF32);
  const auto p = prepare(op, ops::prepareGather);
  expectDims(p, {2, 2, 2});
  const std::vector<float> x{1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> indices{2, 0, 1, 1};
  EXPECT_EQ(*run<float>(p, {x.data(), nullptr, indices.data()}),
            (std::vector<float>{3, 1, 2, 2, 6, 4, 5, 5}));
  const std::vector<int32_t> negative{0, -1, 0, 0};
  const auto failed = run<float>(p, {x.data(), nullptr, negative.data()});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(failed.error().message.find("GATHER input 2 (indices) element 1 is -1, outside [0, 3)"),
            std::string::npos)
      << failed.error().message;
}

TEST(OpsDataGatherTest, EmbeddingLookup) {
  OpBuilder op(OperationType::EMBEDDING_LOOKUP);
  op.tensor(kI32, {3}).tensor(kQ8S, {3, 2}, 0.5f, -1).output(kQ8S, {}, 0.5f, -1);
  const auto p = prepare(op, ops::prepareEmbeddingLookup);
  expectDims(p, {3, 2});
  const std::vector<int32_t> lookups{1, 0, 2};
  const std::vector<int8_t> values{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(*run<int8_t>(p, {lookups.data(), values.data()}),
            (std::vector<int8_t>{3, 4, 1, 2, 5, 6}));
  const std::vector<int32_t> bad{1, 3, 0};
  const auto failed = run<int8_t>(p, {bad.data(), values.data()});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(OpsDataGatherTest, HashtableLookupOutputsAndHits) {
  OpBuilder op(OperationType::HASHTABLE_LOOKUP);
  op.tensor(kI32, {4}).tensor(kI32, {3}).tensor(kQ8, {3, 2}, 1.0f, 0);
  op.output(kQ8, {}, 1.0f, 0).output(kQ8, {}, 1.0f, 0);
  const auto p = prepare(op, ops::prepareHashtableLookup);
  expectDims(p, {4, 2}, 0);
  expectDims(p, {4}, 1);
  const std::vector<int32_t> lookups{123, 250, 255, 0};
  const std::vector<int32_t> keys{0, 123, 255};
  const std::vector<uint8_t> values{0, 1, 10, 11, 20, 21};
  const std::vector<const void*> inputs{lookups.data(), keys.data(), values.data()};
  EXPECT_EQ(*run<uint8_t>(p, inputs, 0), (std::vector<uint8_t>{10, 11, 0, 0, 20, 21, 0, 1}));
  EXPECT_EQ(*run<uint8_t>(p, inputs, 1), (std::vector<uint8_t>{1, 0, 1, 1}));
}

TEST(OpsDataGatherTest, Rejections) {
  OpBuilder axis(OperationType::GATHER);
  axis.tensor(kF32, {2}).int32(1).tensor(kI32, {1}).output(kF32);
  expectRejected(axis, ops::prepareGather, "GATHER input 1 (axis) is 1, outside [-1, 1)");
  OpBuilder indexType(OperationType::GATHER);
  indexType.tensor(kF32, {2}).int32(0).tensor(kF32, {1}).output(kF32);
  expectRejected(indexType, ops::prepareGather, "GATHER input 2 has unsupported type");
  OpBuilder rank(OperationType::EMBEDDING_LOOKUP);
  rank.tensor(kI32, {2}).tensor(kF32, {4}).output(kF32);
  expectRejected(rank, ops::prepareEmbeddingLookup, "EMBEDDING_LOOKUP input 1 has rank 1");
  OpBuilder rows(OperationType::HASHTABLE_LOOKUP);
  rows.tensor(kI32, {1}).tensor(kI32, {2}).tensor(kF32, {3});
  rows.output(kF32).output(kQ8, {}, 1.0f, 0);
  expectRejected(rows, ops::prepareHashtableLookup,
                 "HASHTABLE_LOOKUP input 2 (values) has 3 rows but input 1 (keys) has 2 keys");
  OpBuilder hits(OperationType::HASHTABLE_LOOKUP);
  hits.tensor(kI32, {1}).tensor(kI32, {2}).tensor(kF32, {2});
  hits.output(kF32).output(kF32);
  expectRejected(hits, ops::prepareHashtableLookup,
                 "HASHTABLE_LOOKUP output 1 has type TENSOR_FLOAT32, expected TENSOR_QUANT8_ASYMM");
}

TEST(OpsDataArgTest, ArgMaxArgMinTopK) {
  const std::vector<float> x{1, 5, 3, 7, 2, 7};  // [2, 3]
  OpBuilder argmax(OperationType::ARGMAX);
  argmax.tensor(kF32, {2, 3}).int32(1).output(kI32);
  const auto p = prepare(argmax, ops::prepareArgMax);
  expectDims(p, {2});
  EXPECT_EQ(*run<int32_t>(p, {x.data(), nullptr}), (std::vector<int32_t>{1, 0}));
  OpBuilder argmin(OperationType::ARGMIN);
  argmin.tensor(kF32, {2, 3}).int32(0).output(kI32);
  const auto q = prepare(argmin, ops::prepareArgMin);
  expectDims(q, {3});
  EXPECT_EQ(*run<int32_t>(q, {x.data(), nullptr}), (std::vector<int32_t>{0, 1, 0}));
  // A 1-D input gives shape [1] (not rank 0).
  OpBuilder vector(OperationType::ARGMAX);
  vector.tensor(kF32, {6}).int32(0).output(kI32);
  const auto v = prepare(vector, ops::prepareArgMax);
  expectDims(v, {1});
  EXPECT_EQ(*run<int32_t>(v, {x.data(), nullptr}), (std::vector<int32_t>{3}));

  OpBuilder topk(OperationType::TOPK_V2);
  topk.tensor(kF32, {2, 3}).int32(2).output(kF32).output(kI32);
  const auto t = prepare(topk, ops::prepareTopKV2);
  expectDims(t, {2, 2}, 0);
  expectDims(t, {2, 2}, 1);
  EXPECT_EQ(*run<float>(t, {x.data(), nullptr}, 0), (std::vector<float>{5, 3, 7, 7}));
  // Equal values: the larger index first.
  EXPECT_EQ(*run<int32_t>(t, {x.data(), nullptr}, 1), (std::vector<int32_t>{1, 2, 2, 0}));
}

TEST(OpsDataArgTest, Rejections) {
  OpBuilder axis(OperationType::ARGMAX);
  axis.tensor(kF32, {2, 3}).int32(-3).output(kI32);
  expectRejected(axis, ops::prepareArgMax, "ARGMAX input 1 (axis) is -3, outside [-2, 2)");
  OpBuilder type(OperationType::ARGMIN);
  type.tensor(kF32, {2, 3}).int32(0).output(kF32);
  expectRejected(type, ops::prepareArgMin,
                 "ARGMIN output 0 has type TENSOR_FLOAT32, expected TENSOR_INT32");
  OpBuilder k(OperationType::TOPK_V2);
  k.tensor(kF32, {2, 3}).int32(4).output(kF32).output(kI32);
  expectRejected(k, ops::prepareTopKV2, "TOPK_V2 input 1 (k) is 4, outside [1, 3]");
  OpBuilder indices(OperationType::TOPK_V2);
  indices.tensor(kF32, {3}).int32(1).output(kF32).output(kF32);
  expectRejected(indices, ops::prepareTopKV2,
                 "TOPK_V2 output 1 has type TENSOR_FLOAT32, expected TENSOR_INT32");
}

}  // namespace
}  // namespace nnhal::engine
