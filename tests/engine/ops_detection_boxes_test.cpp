// AXIS_ALIGNED_BBOX_TRANSFORM, BOX_WITH_NMS_LIMIT, GENERATE_PROPOSALS and
// DETECTION_POSTPROCESSING: prepare (shapes, validation, values known only at execution)
// and execution.
#include <gtest/gtest.h>

#include <vector>

#include "engine/op_test_harness.h"
#include "engine/ops/ops.h"

namespace nnhal::engine {
namespace {

using testing::expectRejected;
using testing::OpBuilder;
using testing::prepare;
using testing::runAll;
constexpr auto kF32 = OperandType::TENSOR_FLOAT32;
constexpr auto kI32 = OperandType::TENSOR_INT32;
constexpr auto kQ8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr auto kQ8S = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr auto kQ16 = OperandType::TENSOR_QUANT16_ASYMM;
constexpr auto kQ16S = OperandType::TENSOR_QUANT16_SYMM;

// ---- AXIS_ALIGNED_BBOX_TRANSFORM -------------------------------------------------------

OpBuilder bboxTransform(uint32_t rois = 2, uint32_t classes = 1) {
  OpBuilder b(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM);
  b.tensor(kF32, {rois, 4}).tensor(kF32, {rois, classes * 4}).tensor(kI32, {rois});
  b.tensor(kF32, {1, 2}).output(kF32);
  return b;
}

TEST(OpsBboxTransformTest, ShapeAndRun) {
  const auto p = prepare(bboxTransform(2, 2), ops::prepareAxisAlignedBboxTransform);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 8}));
  const std::vector<float> rois = {0, 0, 4, 4, 1, 1, 2, 2};
  const std::vector<float> deltas(16, 0.0f);
  const std::vector<int32_t> batches = {0, 0};
  const std::vector<float> info = {3, 3};
  const auto out = runAll(p, {rois.data(), deltas.data(), batches.data(), info.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<float>(0),
            (std::vector<float>{0, 0, 3, 3, 0, 0, 3, 3, 1, 1, 2, 2, 1, 1, 2, 2}));
  const std::vector<int32_t> badBatches = {0, 1};  // only one image
  const auto bad = runAll(p, {rois.data(), deltas.data(), badBatches.data(), info.data()});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(OpsBboxTransformTest, Quantized) {
  OpBuilder b(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM);
  b.tensor(kQ16, {1, 4}, 0.125f, 0).tensor(kQ8S, {1, 4}, 0.5f, 0).tensor(kI32, {1});
  b.tensor(kQ16, {1, 2}, 0.125f, 0).output(kQ16, {}, 0.125f, 0);
  const auto p = prepare(b, ops::prepareAxisAlignedBboxTransform);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const std::vector<uint16_t> rois = {8, 8, 40, 24};  // [1, 1, 5, 3]
  const std::vector<int8_t> deltas = {1, 0, 0, 0};    // dx = 0.5: x moves by 2
  const std::vector<int32_t> batches = {0};
  const std::vector<uint16_t> info = {800, 800};
  const auto out = runAll(p, {rois.data(), deltas.data(), batches.data(), info.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<uint16_t>(0), (std::vector<uint16_t>{24, 8, 56, 24}));
}

TEST(OpsBboxTransformTest, Rejections) {
  {
    auto b = bboxTransform();
    b.input(1).dimensions = {2, 6};
    expectRejected(b, ops::prepareAxisAlignedBboxTransform,
                   "AXIS_ALIGNED_BBOX_TRANSFORM input 1 dimension 1 must be a positive multiple");
  }
  {
    auto b = bboxTransform();
    b.input(2).dimensions = {3};
    expectRejected(b, ops::prepareAxisAlignedBboxTransform,
                   "AXIS_ALIGNED_BBOX_TRANSFORM input 2 dimension 0 must be 2");
  }
  {
    auto b = bboxTransform();
    b.input(3).dimensions = {1, 3};
    expectRejected(b, ops::prepareAxisAlignedBboxTransform,
                   "AXIS_ALIGNED_BBOX_TRANSFORM input 3 dimension 1 must be 2");
  }
  {
    auto b = bboxTransform();
    b.input(0).dimensions = {2, 4, 1};
    expectRejected(b, ops::prepareAxisAlignedBboxTransform,
                   "AXIS_ALIGNED_BBOX_TRANSFORM input 0 must have rank 2");
  }
  {
    auto b = bboxTransform();
    b.input(0).type = kQ8;
    expectRejected(b, ops::prepareAxisAlignedBboxTransform,
                   "AXIS_ALIGNED_BBOX_TRANSFORM input 0 has unsupported type");
  }
  {
    OpBuilder b(OperationType::AXIS_ALIGNED_BBOX_TRANSFORM);
    b.tensor(kQ16, {1, 4}, 0.25f, 0).tensor(kQ8, {1, 4}, 0.5f, 0).tensor(kI32, {1});
    b.tensor(kQ16, {1, 2}, 0.125f, 0).output(kQ16, {}, 0.125f, 0);
    expectRejected(b, ops::prepareAxisAlignedBboxTransform,
                   "AXIS_ALIGNED_BBOX_TRANSFORM input 0 (boxes) must have scale 0.125");
  }
  {
    auto b = bboxTransform();
    b.outputAt(0).type = kI32;
    expectRejected(b, ops::prepareAxisAlignedBboxTransform,
                   "AXIS_ALIGNED_BBOX_TRANSFORM output 0 has type TENSOR_INT32");
  }
}

// ---- BOX_WITH_NMS_LIMIT ----------------------------------------------------------------

// 3 rois x 2 classes; rois 0 and 1 overlap (IoU 0.68), roi 2 is far away. All in batch 0.
const std::vector<float> kNmsScores = {0.0f, 0.9f, 0.0f, 0.8f, 0.0f, 0.7f};
const std::vector<float> kNmsBoxes = {0, 0, 10, 10, 0,  0,  10, 10, 1,  1,  11, 11,
                                      1, 1, 11, 11, 20, 20, 30, 30, 20, 20, 30, 30};
const std::vector<int32_t> kNmsBatches = {0, 0, 0};

OpBuilder boxWithNms(int32_t kernel = 0, int32_t maxDetections = -1) {
  OpBuilder b(OperationType::BOX_WITH_NMS_LIMIT);
  b.constTensor(kF32, {3, 2}, kNmsScores).constTensor(kF32, {3, 8}, kNmsBoxes);
  b.constTensor(kI32, {3}, kNmsBatches);
  b.float32(0.1f).int32(maxDetections).int32(kernel).float32(0.5f).float32(0.5f).float32(0.1f);
  b.output(kF32).output(kF32).output(kI32).output(kI32);
  return b;
}

TEST(OpsBoxWithNmsLimitTest, ShapesFollowTheValues) {
  const auto hard = prepare(boxWithNms(0), ops::prepareBoxWithNmsLimit);
  ASSERT_TRUE(hard.kernel) << hard.kernel.error().message;
  EXPECT_EQ(hard.outputDims(0), (std::vector<uint32_t>{2}));
  EXPECT_EQ(hard.outputDims(1), (std::vector<uint32_t>{2, 4}));
  const auto out = runAll(hard, {nullptr, nullptr, nullptr});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<float>(0), (std::vector<float>{0.9f, 0.7f}));
  EXPECT_EQ(out->as<float>(1), (std::vector<float>{0, 0, 10, 10, 20, 20, 30, 30}));
  EXPECT_EQ(out->as<int32_t>(2), (std::vector<int32_t>{1, 1}));
  EXPECT_EQ(out->as<int32_t>(3), (std::vector<int32_t>{0, 0}));

  // Linear decay keeps roi 1 with a lowered score; the limit cuts to the best one.
  const auto linear = prepare(boxWithNms(1), ops::prepareBoxWithNmsLimit);
  ASSERT_TRUE(linear.kernel);
  EXPECT_EQ(linear.outputDims(0), (std::vector<uint32_t>{3}));
  const auto limited = prepare(boxWithNms(2, 1), ops::prepareBoxWithNmsLimit);
  ASSERT_TRUE(limited.kernel);
  EXPECT_EQ(limited.outputDims(0), (std::vector<uint32_t>{1}));
}

TEST(OpsBoxWithNmsLimitTest, NothingSelectedGivesEmptyOutputs) {
  OpBuilder b(OperationType::BOX_WITH_NMS_LIMIT);
  b.constTensor(kF32, {3, 2}, std::vector<float>(6, 0.05f)).constTensor(kF32, {3, 8}, kNmsBoxes);
  b.constTensor(kI32, {3}, kNmsBatches);
  b.float32(0.1f).int32(-1).int32(0).float32(0.5f).float32(0.5f).float32(0.1f);
  b.output(kF32, {0}).output(kF32, {0, 4}).output(kI32, {0}).output(kI32, {0});
  const auto p = prepare(b, ops::prepareBoxWithNmsLimit);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(1), (std::vector<uint32_t>{0, 4}));
  ASSERT_TRUE(runAll(p, {nullptr, nullptr, nullptr}));
}

TEST(OpsBoxWithNmsLimitTest, InputsArrivingAtExecutionDeferPrepare) {
  OpBuilder b(OperationType::BOX_WITH_NMS_LIMIT);
  b.tensor(kF32, {3, 2}).constTensor(kF32, {3, 8}, kNmsBoxes).constTensor(kI32, {3}, kNmsBatches);
  b.float32(0.1f).int32(-1).int32(0).float32(0.5f).float32(0.5f).float32(0.1f);
  b.output(kF32).output(kF32).output(kI32).output(kI32);
  const auto p = prepare(b, ops::prepareBoxWithNmsLimit);
  EXPECT_FALSE(p.kernel);
  EXPECT_TRUE(p.ctx->valuesMissing());
}

TEST(OpsBoxWithNmsLimitTest, Quantized) {
  OpBuilder b(OperationType::BOX_WITH_NMS_LIMIT);
  b.constTensor<uint8_t>(kQ8, {3, 2}, {0, 90, 0, 80, 0, 70}, 0.01f, 0);
  std::vector<uint16_t> boxes(kNmsBoxes.size());
  for (size_t i = 0; i < boxes.size(); ++i) boxes[i] = static_cast<uint16_t>(kNmsBoxes[i] * 8);
  b.constTensor(kQ16, {3, 8}, boxes, 0.125f, 0).constTensor(kI32, {3}, kNmsBatches);
  b.float32(0.1f).int32(-1).int32(0).float32(0.5f).float32(0.5f).float32(0.1f);
  b.output(kQ8, {}, 0.02f, 10).output(kQ16, {}, 0.125f, 0).output(kI32).output(kI32);
  const auto p = prepare(b, ops::prepareBoxWithNmsLimit);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const auto out = runAll(p, {nullptr, nullptr, nullptr});
  ASSERT_TRUE(out);
  EXPECT_EQ(out->as<uint8_t>(0), (std::vector<uint8_t>{55, 45}));  // 0.9 / 0.02 + 10, ...
  EXPECT_EQ(out->as<uint16_t>(1), (std::vector<uint16_t>{0, 0, 80, 80, 160, 160, 240, 240}));
}

TEST(OpsBoxWithNmsLimitTest, Rejections) {
  expectRejected(boxWithNms(3), ops::prepareBoxWithNmsLimit,
                 "BOX_WITH_NMS_LIMIT input 5 (NMS kernel) must be 0 (hard), 1 (linear) or 2");
  {
    OpBuilder b(OperationType::BOX_WITH_NMS_LIMIT);
    b.constTensor(kF32, {3, 1}, std::vector<float>(3))
        .constTensor(kF32, {3, 4}, std::vector<float>(12));
    b.constTensor(kI32, {3}, kNmsBatches);
    b.float32(0.1f).int32(-1).int32(0).float32(0.5f).float32(0.5f).float32(0.1f);
    b.output(kF32).output(kF32).output(kI32).output(kI32);
    expectRejected(b, ops::prepareBoxWithNmsLimit,
                   "BOX_WITH_NMS_LIMIT input 0 must have at least 2 classes");
  }
  {
    auto b = boxWithNms();
    b.input(1).dimensions = {3, 4};
    expectRejected(b, ops::prepareBoxWithNmsLimit,
                   "BOX_WITH_NMS_LIMIT input 1 dimension 1 must be 8");
  }
  {
    auto b = boxWithNms();
    b.input(2).dimensions = {2};
    expectRejected(b, ops::prepareBoxWithNmsLimit,
                   "BOX_WITH_NMS_LIMIT input 2 dimension 0 must be 3");
  }
  {
    auto b = boxWithNms();
    b.input(3).type = OperandType::INT32;
    expectRejected(b, ops::prepareBoxWithNmsLimit, "BOX_WITH_NMS_LIMIT input 3 must be FLOAT32");
  }
  {
    auto b = boxWithNms();
    b.outputAt(2).type = kF32;
    expectRejected(b, ops::prepareBoxWithNmsLimit, "BOX_WITH_NMS_LIMIT output 2 has type");
  }
  {
    auto b = boxWithNms();
    b.outputAt(0).dimensions = {5};  // declared, but 2 boxes are selected
    expectRejected(b, ops::prepareBoxWithNmsLimit, "BOX_WITH_NMS_LIMIT output 0: model declares");
  }
  {
    std::vector<float> bad = kNmsBoxes;
    bad[0] = 50.0f;  // x1 > x2
    OpBuilder b(OperationType::BOX_WITH_NMS_LIMIT);
    b.constTensor(kF32, {3, 2}, kNmsScores).constTensor(kF32, {3, 8}, bad);
    b.constTensor(kI32, {3}, kNmsBatches);
    b.float32(0.1f).int32(-1).int32(0).float32(0.5f).float32(0.5f).float32(0.1f);
    b.output(kF32).output(kF32).output(kI32).output(kI32);
    expectRejected(b, ops::prepareBoxWithNmsLimit, "BOX_WITH_NMS_LIMIT input 1 holds a malformed");
  }
  {
    OpBuilder b(OperationType::BOX_WITH_NMS_LIMIT);
    b.constTensor<uint8_t>(kQ8, {3, 2}, std::vector<uint8_t>(6), 0.01f, 0);
    b.constTensor(kQ16, {3, 8}, std::vector<uint16_t>(24), 0.5f, 0)
        .constTensor(kI32, {3}, kNmsBatches);
    b.float32(0.1f).int32(-1).int32(0).float32(0.5f).float32(0.5f).float32(0.1f);
    b.output(kQ8, {}, 0.01f, 0).output(kQ16, {}, 0.125f, 0).output(kI32).output(kI32);
    expectRejected(b, ops::prepareBoxWithNmsLimit,
                   "BOX_WITH_NMS_LIMIT input 1 (boxes) must have scale 0.125");
  }
  {
    auto b = boxWithNms();
    b.outputAt(3).type = kF32;
    expectRejected(b, ops::prepareBoxWithNmsLimit, "BOX_WITH_NMS_LIMIT output 3 has type");
  }
}

// ---- GENERATE_PROPOSALS ----------------------------------------------------------------

OpBuilder proposals(bool nchw = false, float stride = 8.0f) {
  // One batch, a 1x2 grid, one 4x4 anchor, zero deltas.
  OpBuilder b(OperationType::GENERATE_PROPOSALS);
  const std::vector<uint32_t> scoreDims =
      nchw ? std::vector<uint32_t>{1, 1, 1, 2} : std::vector<uint32_t>{1, 1, 2, 1};
  const std::vector<uint32_t> deltaDims =
      nchw ? std::vector<uint32_t>{1, 4, 1, 2} : std::vector<uint32_t>{1, 1, 2, 4};
  b.constTensor(kF32, scoreDims, std::vector<float>{0.8f, 0.9f});
  b.constTensor(kF32, deltaDims, std::vector<float>(8, 0.0f));
  b.constTensor(kF32, {1, 4}, std::vector<float>{0, 0, 4, 4});
  b.constTensor(kF32, {1, 2}, std::vector<float>{16, 16});
  b.float32(stride).float32(stride).int32(-1).int32(-1).float32(0.5f).float32(1.0f).boolean(nchw);
  b.output(kF32).output(kF32).output(kI32);
  return b;
}

TEST(OpsGenerateProposalsTest, ShapesFollowTheValues) {
  for (bool nchw : {false, true}) {
    const auto p = prepare(proposals(nchw), ops::prepareGenerateProposals);
    ASSERT_TRUE(p.kernel) << p.kernel.error().message;
    EXPECT_EQ(p.outputDims(1), (std::vector<uint32_t>{2, 4}));
    const auto out = runAll(p, {});
    ASSERT_TRUE(out);
    EXPECT_EQ(out->as<float>(0), (std::vector<float>{0.9f, 0.8f}));
    EXPECT_EQ(out->as<float>(1), (std::vector<float>{8, 0, 12, 4, 0, 0, 4, 4}));
    EXPECT_EQ(out->as<int32_t>(2), (std::vector<int32_t>{0, 0}));
  }
  const auto overlapping = prepare(proposals(false, 1.0f), ops::prepareGenerateProposals);
  ASSERT_TRUE(overlapping.kernel);
  EXPECT_EQ(overlapping.outputDims(0), (std::vector<uint32_t>{1}));
}

TEST(OpsGenerateProposalsTest, Rejections) {
  expectRejected(proposals(false, 0.0f), ops::prepareGenerateProposals,
                 "GENERATE_PROPOSALS input 4 and input 5 (strides) must be > 0");
  {
    auto b = proposals();
    b.input(2).dimensions = {2, 4};
    expectRejected(b, ops::prepareGenerateProposals,
                   "GENERATE_PROPOSALS input 2 dimension 0 must be 1 (anchors)");
  }
  {
    auto b = proposals();
    b.input(1).dimensions = {1, 1, 2, 3};
    expectRejected(b, ops::prepareGenerateProposals,
                   "GENERATE_PROPOSALS input 1 dimension 3 must be 4 (4 per anchor)");
  }
  {
    auto b = proposals();
    b.input(3).dimensions = {2, 2};
    expectRejected(b, ops::prepareGenerateProposals,
                   "GENERATE_PROPOSALS input 3 dimension 0 must be 1 (batches)");
  }
  {
    auto b = proposals();
    b.input(0).dimensions = {1, 2, 1};
    expectRejected(b, ops::prepareGenerateProposals, "GENERATE_PROPOSALS input 0 must have rank 4");
  }
  {
    auto b = proposals();
    b.input(10).type = OperandType::INT32;
    expectRejected(b, ops::prepareGenerateProposals, "GENERATE_PROPOSALS input 10 must be BOOL");
  }
  {
    OpBuilder b(OperationType::GENERATE_PROPOSALS);
    b.tensor(kQ8, {1, 1, 2, 1}, 0.1f, 0).tensor(kQ8, {1, 1, 2, 4}, 0.1f, 0);
    b.tensor(kQ16S, {1, 4}, 0.5f, 0).tensor(kQ16, {1, 2}, 0.125f, 0);
    b.float32(8).float32(8).int32(-1).int32(-1).float32(0.5f).float32(1.0f).boolean(false);
    b.output(kQ8, {}, 0.1f, 0).output(kQ16, {}, 0.125f, 0).output(kI32);
    expectRejected(b, ops::prepareGenerateProposals,
                   "GENERATE_PROPOSALS input 2 (anchors) must have scale 0.125");
  }
  {
    auto b = proposals();
    b.input(2).type = kQ16S;
    expectRejected(b, ops::prepareGenerateProposals,
                   "GENERATE_PROPOSALS input 2 must be TENSOR_FLOAT32");
  }
  {
    auto b = proposals();
    b.input(2) = OperandInfo{};
    b.input(2).type = kF32;
    b.input(2).dimensions = {1, 4};
    const auto p = prepare(b, ops::prepareGenerateProposals);  // anchors not constant
    EXPECT_FALSE(p.kernel);
    EXPECT_TRUE(p.ctx->valuesMissing());
  }
}

// ---- DETECTION_POSTPROCESSING ----------------------------------------------------------

OpBuilder postprocess(bool regular, int32_t maxDetections = 3, int32_t maxClasses = 1) {
  OpBuilder b(OperationType::DETECTION_POSTPROCESSING);
  b.tensor(kF32, {1, 2, 3}).tensor(kF32, {1, 2, 4}).tensor(kF32, {2, 4});
  b.float32(1)
      .float32(1)
      .float32(1)
      .float32(1)
      .boolean(regular)
      .int32(maxDetections)
      .int32(maxClasses)
      .int32(1);
  b.float32(0.25f).float32(0.5f).boolean(false);
  b.output(kF32).output(kF32).output(kI32).output(kI32);
  return b;
}

TEST(OpsDetectionPostprocessingTest, ShapesAndRun) {
  const auto fast = prepare(postprocess(false, 3, 2), ops::prepareDetectionPostprocessing);
  ASSERT_TRUE(fast.kernel) << fast.kernel.error().message;
  EXPECT_EQ(fast.outputDims(0), (std::vector<uint32_t>{1, 6}));
  EXPECT_EQ(fast.outputDims(1), (std::vector<uint32_t>{1, 6, 4}));
  EXPECT_EQ(fast.outputDims(3), (std::vector<uint32_t>{1}));
  const auto regular = prepare(postprocess(true, 3, 2), ops::prepareDetectionPostprocessing);
  ASSERT_TRUE(regular.kernel);
  EXPECT_EQ(regular.outputDims(2), (std::vector<uint32_t>{1, 3}));

  const std::vector<float> scores = {0.0f, 0.9f, 0.2f, 0.0f, 0.3f, 0.8f};
  const std::vector<float> deltas(8, 0.0f);
  const std::vector<float> anchors = {0.5f, 0.5f, 1, 1, 2.5f, 2.5f, 1, 1};
  const auto out = runAll(regular, {scores.data(), deltas.data(), anchors.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<float>(0), (std::vector<float>{0.9f, 0.8f, 0.0f}));
  EXPECT_EQ(out->as<int32_t>(2), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(out->as<int32_t>(3), (std::vector<int32_t>{2}));
}

TEST(OpsDetectionPostprocessingTest, Rejections) {
  {
    OpBuilder b(OperationType::DETECTION_POSTPROCESSING);
    b.tensor(kF32, {1, 2, 3}).tensor(kF32, {1, 2, 4}).tensor(kF32, {2, 4});
    b.float32(0).float32(1).float32(1).float32(1).boolean(false).int32(3).int32(1).int32(1);
    b.float32(0.25f).float32(0.5f).boolean(false);
    b.output(kF32).output(kF32).output(kI32).output(kI32);
    expectRejected(b, ops::prepareDetectionPostprocessing,
                   "DETECTION_POSTPROCESSING input 3 (y scale) must be > 0");
  }
  expectRejected(postprocess(false, 0), ops::prepareDetectionPostprocessing,
                 "DETECTION_POSTPROCESSING input 8 (max detections) must be > 0");
  expectRejected(postprocess(false, 3, 0), ops::prepareDetectionPostprocessing,
                 "DETECTION_POSTPROCESSING input 9 (max classes per detection) must be > 0");
  {
    auto b = postprocess(false);
    b.input(0).dimensions = {1, 2, 1};
    expectRejected(b, ops::prepareDetectionPostprocessing,
                   "DETECTION_POSTPROCESSING input 0 must have at least 2 classes");
  }
  {
    auto b = postprocess(false);
    b.input(1).dimensions = {1, 2, 3};
    expectRejected(b, ops::prepareDetectionPostprocessing,
                   "DETECTION_POSTPROCESSING input 1 dimension 2 (box encoding) must be >= 4");
  }
  {
    auto b = postprocess(false);
    b.input(2).dimensions = {3, 4};
    expectRejected(b, ops::prepareDetectionPostprocessing,
                   "DETECTION_POSTPROCESSING input 2 dimension 0 must be 2 (anchors)");
  }
  {
    auto b = postprocess(false);
    b.input(0).type = kQ8;
    expectRejected(b, ops::prepareDetectionPostprocessing,
                   "DETECTION_POSTPROCESSING input 0 must be TENSOR_FLOAT32");
  }
  {
    auto b = postprocess(false);
    b.input(11).type = OperandType::INT32;
    expectRejected(b, ops::prepareDetectionPostprocessing,
                   "DETECTION_POSTPROCESSING input 11 must be FLOAT32");
  }
}

}  // namespace
}  // namespace nnhal::engine
