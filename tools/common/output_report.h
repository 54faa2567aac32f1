// tools/common/output_report.h — what a model's outputs mean, for `nnhal run` to print.
//
// `nnhal run` takes any model; this turns its output tensors into a report by kind:
//  - classifier: one output [1, N] or [N] (N > 1) -> the top-k classes, dequantized scores;
//  - detection: the four outputs of TFLite_Detection_PostProcess (boxes [1, M, 4], classes
//    [1, M], scores [1, M], count [1], FLOAT32, in that order) -> the detected boxes;
//  - segmentation: a class index per pixel ([1, H, W] integer, or [1, H, W, C] scores with
//    as many labels as C, arg-maxed) -> the share of pixels per class, and a colour mask;
//  - pose: [1, 1, 17, 3] FLOAT32 (MoveNet: y, x, score per COCO keypoint) -> keypoints;
//  - anything else: a summary per tensor (shape, type, min / max / mean).
// Every report also has the per-tensor summaries. Labels are optional everywhere.
//
// Thread safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/tflite_import.h"
#include "tools/common/tensor_io.h"

namespace nnhal::tools {

/// One output of an execution: its description and its bytes as the model computed them
/// (TENSOR_INT32 values for a TFLite INT64 tensor).
struct OutputTensor {
  TensorDescription desc;
  std::vector<uint8_t> bytes;
};

/// The real values of a tensor: floats as they are, quantized types dequantized, integers
/// and booleans converted. Errors: INVALID_ARGUMENT for a byte count that does not match.
Result<std::vector<float>> realValues(const TensorDescription& desc,
                                      const std::vector<uint8_t>& bytes);

struct TensorSummary {
  std::string name;
  std::string type;
  std::vector<uint32_t> dimensions;
  size_t elements = 0;
  float min = 0.0f, max = 0.0f, mean = 0.0f;
};
TensorSummary summarize(const OutputTensor& output);

struct Detection {
  float ymin = 0, xmin = 0, ymax = 0, xmax = 0;  ///< normalized to [0, 1] by the model
  uint32_t classIndex = 0;
  std::string label;
  float score = 0.0f;
};

struct SegmentationClass {
  uint32_t classIndex = 0;
  std::string label;
  double share = 0.0;  ///< of all pixels, in [0, 1]
};

struct Segmentation {
  uint32_t width = 0, height = 0;
  std::vector<uint32_t> classMap;          ///< height * width class indexes, rows top first
  std::vector<SegmentationClass> classes;  ///< present classes, largest share first
};

struct Keypoint {
  std::string name;
  float y = 0, x = 0, score = 0;  ///< y, x normalized to [0, 1]
};

enum class OutputKind { kClassifier, kDetection, kSegmentation, kPose, kTensors };
std::string_view toString(OutputKind kind);

struct OutputReport {
  OutputKind kind = OutputKind::kTensors;
  std::vector<ClassScore> top;         ///< kClassifier
  std::vector<std::string> topLabels;  ///< one per top entry ("" without labels)
  std::vector<Detection> detections;   ///< kDetection, in the model's order
  std::optional<Segmentation> segmentation;
  std::vector<Keypoint> keypoints;  ///< kPose
  std::vector<TensorSummary> tensors;
};

/// Interprets `outputs`. `labels` names class i on line i (a file with one more line than
/// a classifier's outputs starts with a background line, which is skipped). `top` is k for
/// classifiers. Errors: INVALID_ARGUMENT for outputs whose bytes do not match their shape.
Result<OutputReport> interpretOutputs(const std::vector<OutputTensor>& outputs,
                                      const std::vector<std::string>& labels, size_t top);

/// The report as text for a terminal (one section per kind, then the tensor summaries).
std::string formatReport(const OutputReport& report);
/// The report as JSON.
nlohmann::json reportJson(const OutputReport& report);

/// Writes a segmentation's class map as a PNG, one distinct colour per class (class 0
/// black). Errors: GENERAL_FAILURE naming the path when it cannot be written.
Result<void> writeSegmentationMask(const Segmentation& segmentation,
                                   const std::filesystem::path& path);

}  // namespace nnhal::tools
