// Tests of tools/common/output_report.h: which kind a model's outputs are, and their values.
#include "tools/common/output_report.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace nnhal::tools {
namespace {

template <typename T>
OutputTensor tensor(const std::string& name, OperandType type, std::vector<uint32_t> dims,
                    const std::vector<T>& values, float scale = 0.0f, int32_t zeroPoint = 0) {
  OutputTensor t;
  t.desc.name = name;
  t.desc.type = type;
  t.desc.dimensions = std::move(dims);
  t.desc.scale = scale;
  t.desc.zeroPoint = zeroPoint;
  t.bytes.resize(values.size() * sizeof(T));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

TEST(OutputReport, RealValuesDequantize) {
  auto u8 = realValues(
      tensor<uint8_t>("a", OperandType::TENSOR_QUANT8_ASYMM, {3}, {0, 128, 255}, 0.5f, 128).desc,
      std::vector<uint8_t>{0, 128, 255});
  ASSERT_TRUE(u8.has_value());
  EXPECT_EQ(*u8, (std::vector<float>{-64.0f, 0.0f, 63.5f}));
  const OutputTensor i8 =
      tensor<int8_t>("b", OperandType::TENSOR_QUANT8_ASYMM_SIGNED, {2}, {-128, 127}, 1.0f, -128);
  EXPECT_EQ(*realValues(i8.desc, i8.bytes), (std::vector<float>{0.0f, 255.0f}));
  const OutputTensor half =
      tensor<uint16_t>("h", OperandType::TENSOR_FLOAT16, {2}, {0x3c00, 0xc000});
  EXPECT_EQ(*realValues(half.desc, half.bytes), (std::vector<float>{1.0f, -2.0f}));
  const auto wrong = realValues(i8.desc, std::vector<uint8_t>(5));
  ASSERT_FALSE(wrong.has_value());
  EXPECT_NE(wrong.error().message.find("has 5 bytes; its shape needs 2"), std::string::npos);
}

TEST(OutputReport, DetectionOutputsAreRecognized) {
  std::vector<OutputTensor> outputs{
      tensor<float>("boxes", OperandType::TENSOR_FLOAT32, {1, 2, 4},
                    {0.1f, 0.2f, 0.5f, 0.6f, 0, 0, 0, 0}),
      tensor<float>("classes", OperandType::TENSOR_FLOAT32, {1, 2}, {2.0f, 0.0f}),
      tensor<float>("scores", OperandType::TENSOR_FLOAT32, {1, 2}, {0.9f, 0.0f}),
      tensor<float>("count", OperandType::TENSOR_FLOAT32, {1}, {1.0f})};
  auto report = interpretOutputs(outputs, {"person", "bicycle", "car"}, 5);
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(report->kind, OutputKind::kDetection);
  ASSERT_EQ(report->detections.size(), 1u);  // the count, not the slots
  EXPECT_EQ(report->detections[0].label, "car");
  EXPECT_FLOAT_EQ(report->detections[0].xmax, 0.6f);
  EXPECT_EQ(reportJson(*report)["detections"][0]["class"], 2);
  EXPECT_NE(formatReport(*report).find("car"), std::string::npos);
}

TEST(OutputReport, SegmentationFromScoresAndFromIndexes) {
  // [1, 8, 8, 2] scores: the left half prefers class 1.
  std::vector<float> scores;
  for (int y = 0; y < 8; ++y) {
    for (int x = 0; x < 8; ++x) {
      scores.push_back(x < 4 ? 0.0f : 1.0f);
      scores.push_back(x < 4 ? 1.0f : 0.0f);
    }
  }
  auto report = interpretOutputs(
      {tensor<float>("seg", OperandType::TENSOR_FLOAT32, {1, 8, 8, 2}, scores)}, {"bg", "cat"}, 5);
  ASSERT_TRUE(report.has_value());
  ASSERT_EQ(report->kind, OutputKind::kSegmentation);
  ASSERT_EQ(report->segmentation->classes.size(), 2u);
  EXPECT_DOUBLE_EQ(report->segmentation->classes[0].share, 0.5);
  // Without the labels the same scores are only a tensor.
  report = interpretOutputs(
      {tensor<float>("seg", OperandType::TENSOR_FLOAT32, {1, 8, 8, 2}, scores)}, {}, 5);
  EXPECT_EQ(report->kind, OutputKind::kTensors);
  // [1, 8, 8] class indexes (an INT64 ARG_MAX computed as INT32).
  OutputTensor indexes =
      tensor<int32_t>("am", OperandType::TENSOR_INT32, {1, 8, 8}, std::vector<int32_t>(64, 3));
  indexes.desc.int64 = true;
  report = interpretOutputs({indexes}, {}, 5);
  ASSERT_EQ(report->kind, OutputKind::kSegmentation);
  EXPECT_EQ(report->segmentation->classes[0].classIndex, 3u);
  EXPECT_EQ(report->tensors[0].type, "INT64 (computed as TENSOR_INT32)");
}

TEST(OutputReport, PoseAndPlainTensors) {
  std::vector<float> keypoints(17 * 3, 0.5f);
  auto report = interpretOutputs(
      {tensor<float>("kp", OperandType::TENSOR_FLOAT32, {1, 1, 17, 3}, keypoints)}, {}, 5);
  ASSERT_EQ(report->kind, OutputKind::kPose);
  EXPECT_EQ(report->keypoints[0].name, "nose");
  EXPECT_EQ(report->keypoints[16].name, "right_ankle");
  report = interpretOutputs(
      {tensor<float>("x", OperandType::TENSOR_FLOAT32, {2, 2}, {1.0f, -3.0f, 2.0f, 4.0f})}, {}, 5);
  ASSERT_EQ(report->kind, OutputKind::kTensors);
  EXPECT_EQ(report->tensors[0].min, -3.0f);
  EXPECT_EQ(report->tensors[0].max, 4.0f);
  EXPECT_EQ(report->tensors[0].mean, 1.0f);
}

TEST(OutputReport, ClassifierSkipsABackgroundLabelLine) {
  auto report = interpretOutputs(
      {tensor<float>("p", OperandType::TENSOR_FLOAT32, {1, 3}, {0.1f, 0.7f, 0.2f})},
      {"background", "a", "b", "c"}, 2);
  ASSERT_EQ(report->kind, OutputKind::kClassifier);
  EXPECT_EQ(report->top[0].index, 1u);
  EXPECT_EQ(report->topLabels[0], "b");
}

}  // namespace
}  // namespace nnhal::tools
