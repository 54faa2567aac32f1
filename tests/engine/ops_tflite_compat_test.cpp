// FLOOR_DIV and GATHER_ND of the org.nnhal.tflite_compat extension: prepare (shapes, every
// rejection), execution, and the run-time failures (zero divisor, index out of range).
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"
#include "nnhal/tflite_compat_extension.h"

namespace nnhal::engine {
namespace {

using testing::expectDims;
using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::run;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kF16 = OperandType::TENSOR_FLOAT16;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kI32 = OperandType::TENSOR_INT32;
constexpr OperationType kFloorDiv =
    tflite_compat::operationType(1, tflite_compat::Operation::FLOOR_DIV);
constexpr OperationType kGatherNd =
    tflite_compat::operationType(1, tflite_compat::Operation::GATHER_ND);

TEST(OpsTfliteCompatTest, FloorDivInt32BroadcastsAndFloors) {
  OpBuilder op(kFloorDiv, "FLOOR_DIV");
  op.tensor(kI32, {1, 4}).constTensor(kI32, {1}, std::vector<int32_t>{-2}).output(kI32);
  const auto p = prepare(op, ops::prepareFloorDiv);
  expectDims(p, {1, 4});
  const std::vector<int32_t> a{7, -7, 0, 4};
  const std::vector<int32_t> b{-2};
  EXPECT_EQ(*run<int32_t>(p, {a.data(), b.data()}), (std::vector<int32_t>{-4, 3, 0, -2}));
}

TEST(OpsTfliteCompatTest, FloorDivInt32ByZeroFailsTheExecution) {
  OpBuilder op(kFloorDiv, "FLOOR_DIV");
  op.tensor(kI32, {3}).tensor(kI32, {3}).output(kI32);
  const auto p = prepare(op, ops::prepareFloorDiv);
  const std::vector<int32_t> a{1, 2, 3};
  const std::vector<int32_t> b{1, 2, 0};
  const auto failed = run<int32_t>(p, {a.data(), b.data()});
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(
      failed.error().message.find("FLOOR_DIV input 1 (divisor) element 2 is 0: integer division by "
                                  "zero"),
      std::string::npos)
      << failed.error().message;
}

TEST(OpsTfliteCompatTest, FloorDivFloat32) {
  OpBuilder op(kFloorDiv, "FLOOR_DIV");
  op.floats({2, 1}, {7.5f, -7.5f}).floats({2}, {2.0f, -0.5f}).output(kF32);
  const auto p = prepare(op, ops::prepareFloorDiv);
  expectDims(p, {2, 2});
  const std::vector<float> a{7.5f, -7.5f};
  const std::vector<float> b{2.0f, -0.5f};
  EXPECT_EQ(*run<float>(p, {a.data(), b.data()}), (std::vector<float>{3, -15, -4, 15}));
}

TEST(OpsTfliteCompatTest, FloorDivRejections) {
  auto base = [] {
    OpBuilder op(kFloorDiv, "FLOOR_DIV");
    op.tensor(kI32, {2}).tensor(kI32, {2}).output(kI32);
    return op;
  };
  {
    OpBuilder op(kFloorDiv, "FLOOR_DIV");
    op.tensor(kI32, {2}).output(kI32);
    expectRejected(op, ops::prepareFloorDiv, "FLOOR_DIV takes 2 inputs, got 1");
  }
  {
    OpBuilder op = base();
    op.input(0).type = kQ8;
    op.input(0).scale = 1.0f;
    expectRejected(op, ops::prepareFloorDiv, "input 0");
  }
  {
    OpBuilder op = base();
    op.input(1).type = kF32;
    expectRejected(op, ops::prepareFloorDiv, "input 1");
  }
  {
    OpBuilder op = base();
    op.outputAt(0).type = kF32;
    expectRejected(op, ops::prepareFloorDiv, "output 0");
  }
  {
    OpBuilder op = base();
    op.input(1).dimensions = {3};
    expectRejected(op, ops::prepareFloorDiv, "broadcast");
  }
  {
    OpBuilder op = base();
    op.input(0).dimensions = {1, 1, 1, 1, 1, 1, 2};
    expectRejected(op, ops::prepareFloorDiv, "rank");
  }
}

TEST(OpsTfliteCompatTest, GatherNdSlicesKeepTypeAndQuantization) {
  // MoveNet's shape: params [1, 4, 4, 2] int8, indices [3, 3] -> [3, 2].
  OpBuilder op(kGatherNd, "GATHER_ND");
  op.tensor(kQ8S, {1, 4, 4, 2}, 0.25f, -3).tensor(kI32, {3, 3}).output(kQ8S, {}, 0.25f, -3);
  const auto p = prepare(op, ops::prepareGatherNd);
  expectDims(p, {3, 2});
  std::vector<int8_t> params(32);
  std::iota(params.begin(), params.end(), int8_t{0});
  const std::vector<int32_t> indices{0, 0, 0, 0, 3, 3, 0, 1, 2};
  EXPECT_EQ(*run<int8_t>(p, {params.data(), indices.data()}),
            (std::vector<int8_t>{0, 1, 30, 31, 12, 13}));
}

TEST(OpsTfliteCompatTest, GatherNdFullTuplesAndBatchedIndices) {
  OpBuilder op(kGatherNd, "GATHER_ND");
  op.floats({2, 3}, {}).tensor(kI32, {2, 1, 2}).output(kF32);
  const auto p = prepare(op, ops::prepareGatherNd);
  expectDims(p, {2, 1});
  const std::vector<float> params{1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> indices{1, 2, 0, 1};
  EXPECT_EQ(*run<float>(p, {params.data(), indices.data()}), (std::vector<float>{6, 2}));
}

TEST(OpsTfliteCompatTest, GatherNdIndexOutOfRangeFailsTheExecution) {
  OpBuilder op(kGatherNd, "GATHER_ND");
  op.tensor(kI32, {2, 3}).tensor(kI32, {2, 2}).output(kI32);
  const auto p = prepare(op, ops::prepareGatherNd);
  const std::vector<int32_t> params{1, 2, 3, 4, 5, 6};
  for (const std::vector<int32_t>& bad :
       {std::vector<int32_t>{0, 0, 1, 3}, std::vector<int32_t>{0, 0, -1, 0}}) {
    const auto failed = run<int32_t>(p, {params.data(), bad.data()});
    ASSERT_FALSE(failed);
    EXPECT_EQ(failed.error().status, ErrorStatus::GENERAL_FAILURE);
    EXPECT_NE(failed.error().message.find("GATHER_ND input 1 (indices) tuple 1 component"),
              std::string::npos)
        << failed.error().message;
  }
}

TEST(OpsTfliteCompatTest, GatherNdRejections) {
  auto base = [] {
    OpBuilder op(kGatherNd, "GATHER_ND");
    op.tensor(kF32, {2, 3}).tensor(kI32, {4, 2}).output(kF32);
    return op;
  };
  {
    OpBuilder op = base();
    op.tensor(kI32, {1});
    expectRejected(op, ops::prepareGatherNd, "GATHER_ND takes 2 inputs, got 3");
  }
  {
    OpBuilder op = base();
    op.input(1).type = kF32;
    expectRejected(op, ops::prepareGatherNd, "input 1");
  }
  {
    OpBuilder op = base();
    op.input(1).dimensions = {4, 3};
    expectRejected(op, ops::prepareGatherNd, "tuples of 3 indices");
  }
  {
    OpBuilder op = base();
    op.input(0).dimensions = {};
    expectRejected(op, ops::prepareGatherNd, "input 0");
  }
  {
    OpBuilder op = base();
    op.input(1).dimensions = {};
    expectRejected(op, ops::prepareGatherNd, "input 1");
  }
  {
    OpBuilder op = base();
    op.outputAt(0).type = kF16;
    expectRejected(op, ops::prepareGatherNd, "output 0");
  }
  {
    OpBuilder op(kGatherNd, "GATHER_ND");
    op.tensor(kQ8, {2, 3}, 0.5f, 1).tensor(kI32, {1, 2}).output(kQ8, {}, 0.25f, 1);
    expectRejected(op, ops::prepareGatherNd, "output 0");
  }
  {
    OpBuilder op = base();
    op.outputAt(0).dimensions = {4, 3};
    expectRejected(op, ops::prepareGatherNd, "output 0");
  }
}

TEST(OpsTfliteCompatTest, ReshapeAndConcatenationTakeInt32) {
  constexpr OperationType kReshape =
      tflite_compat::operationType(1, tflite_compat::Operation::RESHAPE);
  OpBuilder reshape(kReshape, "RESHAPE");
  reshape.tensor(kI32, {1, 3}).constTensor(kI32, {1}, std::vector<int32_t>{-1}).output(kI32);
  const auto r = prepare(reshape, ops::prepareTfliteCompatReshape);
  expectDims(r, {3});
  const std::vector<int32_t> values{7, -8, 9};
  EXPECT_EQ(*run<int32_t>(r, {values.data(), nullptr}), values);
  // The base RESHAPE still refuses TENSOR_INT32, as types.hal 1.3 says.
  OpBuilder base(OperationType::RESHAPE);
  base.tensor(kI32, {1, 3}).constTensor(kI32, {1}, std::vector<int32_t>{-1}).output(kI32);
  expectRejected(base, ops::prepareReshape, "RESHAPE input 0");

  constexpr OperationType kConcatenation =
      tflite_compat::operationType(1, tflite_compat::Operation::CONCATENATION);
  OpBuilder concat(kConcatenation, "CONCATENATION");
  concat.tensor(kI32, {2, 1}).tensor(kI32, {2, 2}).int32(1).output(kI32);
  const auto c = prepare(concat, ops::prepareTfliteCompatConcatenation);
  expectDims(c, {2, 3});
  const std::vector<int32_t> left{1, 2};
  const std::vector<int32_t> right{10, 11, 20, 21};
  EXPECT_EQ(*run<int32_t>(c, {left.data(), right.data(), nullptr}),
            (std::vector<int32_t>{1, 10, 11, 2, 20, 21}));
  OpBuilder mixed(kConcatenation, "CONCATENATION");
  mixed.tensor(kI32, {2, 1}).tensor(kF32, {2, 2}).int32(1).output(kI32);
  expectRejected(mixed, ops::prepareTfliteCompatConcatenation, "CONCATENATION input 1");
}

}  // namespace
}  // namespace nnhal::engine
