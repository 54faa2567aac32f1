// ROI_ALIGN, ROI_POOLING, HEATMAP_MAX_KEYPOINT and RANDOM_MULTINOMIAL: prepare (shapes,
// validation) and execution, including empty (zero-roi) tensors.
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

// ---- ROI_ALIGN -------------------------------------------------------------------------

OpBuilder roiAlign(uint32_t rois = 1, bool nchw = false, int32_t outSize = 2, float stride = 1.0f,
                   int32_t ratio = 2) {
  OpBuilder b(OperationType::ROI_ALIGN);
  b.tensor(kF32, nchw ? std::vector<uint32_t>{1, 3, 4, 4} : std::vector<uint32_t>{1, 4, 4, 3});
  b.tensor(kF32, {rois, 4}).tensor(kI32, {rois});
  b.int32(outSize).int32(outSize).float32(stride).float32(stride).int32(ratio).int32(ratio).boolean(
      nchw);
  b.output(kF32);
  return b;
}

TEST(OpsRoiAlignTest, ShapesInBothLayouts) {
  const auto nhwc = prepare(roiAlign(5, false, 2), ops::prepareRoiAlign);
  ASSERT_TRUE(nhwc.kernel) << nhwc.kernel.error().message;
  EXPECT_EQ(nhwc.outputDims(), (std::vector<uint32_t>{5, 2, 2, 3}));
  const auto nchw = prepare(roiAlign(5, true, 3), ops::prepareRoiAlign);
  ASSERT_TRUE(nchw.kernel);
  EXPECT_EQ(nchw.outputDims(), (std::vector<uint32_t>{5, 3, 3, 3}));
}

TEST(OpsRoiAlignTest, ConstantMapAndEmptyRois) {
  const auto p = prepare(roiAlign(1, false, 2), ops::prepareRoiAlign);
  ASSERT_TRUE(p.kernel);
  const std::vector<float> map(48, 2.5f);
  const std::vector<float> rois = {0.5f, 0.5f, 3.0f, 3.5f};
  const std::vector<int32_t> batches = {0};
  const auto out = runAll(p, {map.data(), rois.data(), batches.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<float>(0), std::vector<float>(12, 2.5f));
  const std::vector<int32_t> badBatch = {1};
  const auto bad = runAll(p, {map.data(), rois.data(), badBatch.data()});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().status, ErrorStatus::GENERAL_FAILURE);

  // Zero rois (e.g. after a BOX_WITH_NMS_LIMIT that selected nothing): an empty output.
  const auto empty = prepare(roiAlign(0), ops::prepareRoiAlign);
  ASSERT_TRUE(empty.kernel) << empty.kernel.error().message;
  EXPECT_EQ(empty.outputDims(), (std::vector<uint32_t>{0, 2, 2, 3}));
  ASSERT_TRUE(runAll(empty, {map.data(), nullptr, nullptr}));
}

TEST(OpsRoiAlignTest, QuantizedSignedMap) {
  OpBuilder b(OperationType::ROI_ALIGN);
  b.tensor(kQ8S, {1, 2, 2, 1}, 0.5f, -10).tensor(kQ16, {1, 4}, 0.125f, 0).tensor(kI32, {1});
  b.int32(1).int32(1).float32(1.0f).float32(1.0f).int32(1).int32(1).boolean(false);
  b.output(kQ8S, {}, 0.25f, 0);
  const auto p = prepare(b, ops::prepareRoiAlign);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const std::vector<int8_t> map = {-10, -6, -2, 2};   // 0, 2, 4, 6
  const std::vector<uint16_t> rois = {0, 0, 16, 16};  // [0, 0, 2, 2]: one sample at (1, 1)
  const std::vector<int32_t> batches = {0};
  const auto out = runAll(p, {map.data(), rois.data(), batches.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<int8_t>(0), (std::vector<int8_t>{24}));  // 6 / 0.25
}

// 200 x 200 samples of 255 * 255 each: the sum leaves int32 (found by fuzz_model as signed
// overflow) and is requantized in floating point: 127.5 / 2 = 63.75 -> 64.
TEST(OpsRoiAlignTest, QuantizedSumOfManySamples) {
  OpBuilder b(OperationType::ROI_ALIGN);
  b.tensor(kQ8S, {1, 2, 2, 1}, 0.5f, -128).tensor(kQ16, {1, 4}, 0.125f, 0).tensor(kI32, {1});
  b.int32(1).int32(1).float32(1.0f).float32(1.0f).int32(200).int32(200).boolean(false);
  b.output(kQ8S, {}, 2.0f, 0);
  const auto p = prepare(b, ops::prepareRoiAlign);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  const std::vector<int8_t> map(4, 127);
  const std::vector<uint16_t> rois = {0, 0, 16, 16};
  const std::vector<int32_t> batches = {0};
  const auto out = runAll(p, {map.data(), rois.data(), batches.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<int8_t>(0), (std::vector<int8_t>{64}));
}

TEST(OpsRoiAlignTest, Rejections) {
  expectRejected(roiAlign(1, false, 0), ops::prepareRoiAlign,
                 "ROI_ALIGN input 3 and input 4 (output size) must be > 0");
  expectRejected(roiAlign(1, false, 2, 0.0f), ops::prepareRoiAlign,
                 "ROI_ALIGN input 5 and input 6 (strides) must be > 0");
  expectRejected(roiAlign(1, false, 2, 1.0f, -1), ops::prepareRoiAlign,
                 "ROI_ALIGN input 7 and input 8 (sampling ratios) must be >= 0");
  // A bounded cost per output value: one kernel call cannot be interrupted.
  expectRejected(roiAlign(1, false, 2, 1.0f, 257), ops::prepareRoiAlign,
                 "this driver takes at most 65536 samples per output value");
  // Allowed per value (256 x 256), but 128 x 128 values x 3 channels of them is ~3.2e9
  // samples in one execution.
  expectRejected(roiAlign(1, false, 128, 1.0f, 256), ops::prepareRoiAlign,
                 "samples in one execution; this driver takes at most 1073741824");
  {
    auto b = roiAlign();
    b.input(1).dimensions = {1, 5};
    expectRejected(b, ops::prepareRoiAlign, "ROI_ALIGN input 1 dimension 1 must be 4");
  }
  {
    auto b = roiAlign();
    b.input(2).dimensions = {2};
    expectRejected(b, ops::prepareRoiAlign, "ROI_ALIGN input 2 dimension 0 must be 1");
  }
  {
    auto b = roiAlign();
    b.input(0).dimensions = {1, 0, 4, 3};
    expectRejected(b, ops::prepareRoiAlign, "ROI_ALIGN input 0 must have non-zero batches");
  }
  {
    auto b = roiAlign();
    b.input(0).dimensions = {4, 4, 3};
    expectRejected(b, ops::prepareRoiAlign, "ROI_ALIGN input 0 must have rank 4");
  }
  {
    OpBuilder b(OperationType::ROI_ALIGN);
    b.tensor(kQ8, {1, 2, 2, 1}, 0.5f, 0).tensor(kF32, {1, 4}).tensor(kI32, {1});
    b.int32(1).int32(1).float32(1.0f).float32(1.0f).int32(1).int32(1).boolean(false);
    b.output(kQ8, {}, 0.5f, 0);
    expectRejected(b, ops::prepareRoiAlign, "ROI_ALIGN input 1 must be TENSOR_QUANT16_ASYMM");
  }
  {
    auto b = roiAlign();
    b.input(9).type = OperandType::INT32;
    expectRejected(b, ops::prepareRoiAlign, "ROI_ALIGN input 9 must be BOOL");
  }
  {
    auto b = roiAlign();
    b.outputAt(0).type = kQ8;
    expectRejected(b, ops::prepareRoiAlign, "ROI_ALIGN output 0 has type");
  }
}

// ---- ROI_POOLING -----------------------------------------------------------------------

OpBuilder roiPooling(OperandType type = kF32, bool nchw = false, float outScale = 0.5f) {
  OpBuilder b(OperationType::ROI_POOLING);
  const bool quant = type != kF32;
  b.tensor(type, nchw ? std::vector<uint32_t>{1, 1, 4, 4} : std::vector<uint32_t>{1, 4, 4, 1},
           quant ? 0.5f : 0.0f, 0);
  b.tensor(quant ? kQ16 : kF32, {1, 4}, quant ? 0.125f : 0.0f, 0).tensor(kI32, {1});
  b.int32(2).int32(2).float32(1.0f).float32(1.0f).boolean(nchw);
  b.output(type, {}, quant ? outScale : 0.0f, 0);
  return b;
}

TEST(OpsRoiPoolingTest, MaxOfEachBin) {
  for (bool nchw : {false, true}) {
    const auto p = prepare(roiPooling(kF32, nchw), ops::prepareRoiPooling);
    ASSERT_TRUE(p.kernel) << p.kernel.error().message;
    EXPECT_EQ(p.outputDims(),
              nchw ? (std::vector<uint32_t>{1, 1, 2, 2}) : (std::vector<uint32_t>{1, 2, 2, 1}));
    std::vector<float> map(16);
    for (int i = 0; i < 16; ++i) map[i] = float(i);
    const std::vector<float> rois = {0, 0, 3, 3};
    const std::vector<int32_t> batches = {0};
    const auto out = runAll(p, {map.data(), rois.data(), batches.data()});
    ASSERT_TRUE(out);
    EXPECT_EQ(out->as<float>(0), (std::vector<float>{5, 7, 13, 15}));
  }
  const auto q = prepare(roiPooling(kQ8S), ops::prepareRoiPooling);
  ASSERT_TRUE(q.kernel) << q.kernel.error().message;
  std::vector<int8_t> map(16);
  for (int i = 0; i < 16; ++i) map[i] = int8_t(i - 8);
  const std::vector<uint16_t> rois = {0, 0, 24, 24};
  const std::vector<int32_t> batches = {0};
  const auto out = runAll(q, {map.data(), rois.data(), batches.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<int8_t>(0), (std::vector<int8_t>{-3, -1, 5, 7}));
}

TEST(OpsRoiPoolingTest, Rejections) {
  expectRejected(roiPooling(kQ8, false, 0.25f), ops::prepareRoiPooling,
                 "ROI_POOLING output 0 must have the scale and zeroPoint of input 0");
  {
    OpBuilder b(OperationType::ROI_POOLING);
    b.tensor(kF32, {1, 4, 4, 1}).tensor(kF32, {1, 4}).tensor(kI32, {1});
    b.int32(2).int32(-2).float32(1.0f).float32(1.0f).boolean(false).output(kF32);
    expectRejected(b, ops::prepareRoiPooling,
                   "ROI_POOLING input 3 and input 4 (output size) must be > 0");
  }
  {
    OpBuilder b(OperationType::ROI_POOLING);
    b.tensor(kF32, {1, 4, 4, 1}).tensor(kF32, {1, 4}).tensor(kI32, {1});
    b.int32(2).int32(2).float32(-1.0f).float32(1.0f).boolean(false).output(kF32);
    expectRejected(b, ops::prepareRoiPooling, "ROI_POOLING input 5 and input 6 (strides)");
  }
  {
    auto b = roiPooling(kQ8);
    b.input(1).scale = 1.0f;
    expectRejected(b, ops::prepareRoiPooling, "ROI_POOLING input 1 (boxes) must have scale 0.125");
  }
  {
    auto b = roiPooling();
    b.input(2).type = kF32;
    expectRejected(b, ops::prepareRoiPooling, "ROI_POOLING input 2 must be TENSOR_INT32");
  }
}

// ---- HEATMAP_MAX_KEYPOINT --------------------------------------------------------------

TEST(OpsHeatmapMaxKeypointTest, ShapesAndQuantizedRun) {
  OpBuilder f(OperationType::HEATMAP_MAX_KEYPOINT);
  f.tensor(kF32, {2, 3, 3, 5}).tensor(kF32, {2, 4}).boolean(false).output(kF32).output(kF32);
  const auto p = prepare(f, ops::prepareHeatmapMaxKeypoint);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(0), (std::vector<uint32_t>{2, 5}));
  EXPECT_EQ(p.outputDims(1), (std::vector<uint32_t>{2, 5, 2}));

  // Quantized NCHW: one box, one keypoint, a flat 2x2 heatmap (no refinement).
  OpBuilder q(OperationType::HEATMAP_MAX_KEYPOINT);
  q.tensor(kQ8, {1, 1, 2, 2}, 0.5f, 10).tensor(kQ16, {1, 4}, 0.125f, 0).boolean(true);
  q.output(kQ8, {}, 0.25f, 0).output(kQ16, {}, 0.125f, 0);
  const auto pq = prepare(q, ops::prepareHeatmapMaxKeypoint);
  ASSERT_TRUE(pq.kernel) << pq.kernel.error().message;
  const std::vector<uint8_t> heatmap(4, 14);           // 2.0 everywhere
  const std::vector<uint16_t> boxes = {0, 0, 32, 16};  // [0, 0, 4, 2]
  const auto out = runAll(pq, {heatmap.data(), boxes.data()});
  ASSERT_TRUE(out) << out.error().message;
  EXPECT_EQ(out->as<uint8_t>(0), (std::vector<uint8_t>{8}));       // 2.0 / 0.25
  EXPECT_EQ(out->as<uint16_t>(1), (std::vector<uint16_t>{8, 4}));  // (1, 0.5) / 0.125
}

TEST(OpsHeatmapMaxKeypointTest, Rejections) {
  {
    OpBuilder b(OperationType::HEATMAP_MAX_KEYPOINT);
    b.tensor(kF32, {2, 3, 4, 5}).tensor(kF32, {2, 4}).boolean(false).output(kF32).output(kF32);
    expectRejected(b, ops::prepareHeatmapMaxKeypoint,
                   "HEATMAP_MAX_KEYPOINT input 0 heatmaps must be square, got 3x4");
  }
  {
    OpBuilder b(OperationType::HEATMAP_MAX_KEYPOINT);
    b.tensor(kF32, {2, 1, 1, 5}).tensor(kF32, {2, 4}).boolean(false).output(kF32).output(kF32);
    expectRejected(b, ops::prepareHeatmapMaxKeypoint,
                   "HEATMAP_MAX_KEYPOINT input 0 heatmap size must be >= 2");
  }
  {
    OpBuilder b(OperationType::HEATMAP_MAX_KEYPOINT);
    b.tensor(kF32, {2, 3, 3, 5}).tensor(kF32, {3, 4}).boolean(false).output(kF32).output(kF32);
    expectRejected(b, ops::prepareHeatmapMaxKeypoint,
                   "HEATMAP_MAX_KEYPOINT input 1 dimension 0 must be 2 (boxes)");
  }
  {
    OpBuilder b(OperationType::HEATMAP_MAX_KEYPOINT);
    b.tensor(kQ8, {1, 2, 2, 1}, 0.5f, 0).tensor(kQ16, {1, 4}, 0.125f, 0).boolean(false);
    b.output(kQ8, {}, 0.5f, 0).output(kF32);
    expectRejected(b, ops::prepareHeatmapMaxKeypoint, "HEATMAP_MAX_KEYPOINT output 1 has type");
  }
}

// ---- RANDOM_MULTINOMIAL ----------------------------------------------------------------

OpBuilder multinomial(int32_t samples = 8, uint32_t seeds = 2) {
  OpBuilder b(OperationType::RANDOM_MULTINOMIAL);
  b.tensor(kF32, {2, 3}).int32(samples).tensor(kI32, {seeds}).output(kI32);
  return b;
}

TEST(OpsRandomMultinomialTest, SamplesAreValidAndSeeded) {
  const auto p = prepare(multinomial(), ops::prepareRandomMultinomial);
  ASSERT_TRUE(p.kernel) << p.kernel.error().message;
  EXPECT_EQ(p.outputDims(), (std::vector<uint32_t>{2, 8}));
  // Batch 0 can only draw class 1, batch 1 only class 2.
  const std::vector<float> logits = {-1e30f, 0.0f, -1e30f, -1e30f, -1e30f, 5.0f};
  const std::vector<int32_t> seeds = {1, 2};
  const auto out = runAll(p, {logits.data(), nullptr, seeds.data()});
  ASSERT_TRUE(out) << out.error().message;
  const auto samples = out->as<int32_t>(0);
  for (size_t i = 0; i < samples.size(); ++i) EXPECT_EQ(samples[i], i < 8 ? 1 : 2);
}

TEST(OpsRandomMultinomialTest, Rejections) {
  expectRejected(multinomial(0), ops::prepareRandomMultinomial,
                 "RANDOM_MULTINOMIAL input 1 (sample count) must be > 0");
  expectRejected(multinomial(8, 3), ops::prepareRandomMultinomial,
                 "RANDOM_MULTINOMIAL input 2 dimension 0 must be 2");
  {
    auto b = multinomial();
    b.input(0).dimensions = {6};
    expectRejected(b, ops::prepareRandomMultinomial, "RANDOM_MULTINOMIAL input 0 must have rank 2");
  }
  {
    auto b = multinomial();
    b.outputAt(0).type = kF32;
    expectRejected(b, ops::prepareRandomMultinomial, "RANDOM_MULTINOMIAL output 0 has type");
  }
}

}  // namespace
}  // namespace nnhal::engine
