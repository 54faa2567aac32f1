#include "tools/common/output_report.h"

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <sstream>

namespace nnhal::tools {
namespace {

/// MoveNet's (and COCO's) 17 body keypoints, in output order.
constexpr std::array<const char*, 17> kKeypointNames = {
    "nose",           "left_eye",   "right_eye",   "left_ear",   "right_ear",   "left_shoulder",
    "right_shoulder", "left_elbow", "right_elbow", "left_wrist", "right_wrist", "left_hip",
    "right_hip",      "left_knee",  "right_knee",  "left_ankle", "right_ankle"};

float halfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1u;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  float value = 0.0f;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa == 0 ? INFINITY : NAN;
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 0x400u), static_cast<int>(exponent) - 25);
  }
  return sign != 0 ? -value : value;
}

template <typename T>
T load(const uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

size_t elementCount(const std::vector<uint32_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), size_t{1},
                         [](size_t a, uint32_t d) { return a * d; });
}

std::string labelOf(const std::vector<std::string>& labels, size_t index) {
  return index < labels.size() ? labels[index] : std::string();
}

bool isIntegerType(OperandType type) {
  return type == OperandType::TENSOR_INT32 || type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

bool isDetection(const std::vector<OutputTensor>& o) {
  if (o.size() < 4) return false;
  for (size_t i = 0; i < 4; ++i) {
    if (o[i].desc.type != OperandType::TENSOR_FLOAT32) return false;
  }
  const auto& boxes = o[0].desc.dimensions;
  const auto& classes = o[1].desc.dimensions;
  const auto& scores = o[2].desc.dimensions;
  const auto& count = o[3].desc.dimensions;
  return boxes.size() == 3 && boxes[0] == 1 && boxes[2] == 4 && classes.size() == 2 &&
         classes[1] == boxes[1] && scores == classes && count.size() == 1 && count[0] == 1;
}

std::vector<Detection> detectionsOf(const std::vector<OutputTensor>& o,
                                    const std::vector<std::string>& labels) {
  const size_t slots = o[0].desc.dimensions[1];
  const float countValue = load<float>(o[3].bytes.data());
  const size_t count = std::isfinite(countValue) && countValue > 0
                           ? std::min(slots, static_cast<size_t>(countValue))
                           : 0;
  std::vector<Detection> result;
  for (size_t i = 0; i < count; ++i) {
    Detection d;
    d.ymin = load<float>(o[0].bytes.data() + (i * 4 + 0) * sizeof(float));
    d.xmin = load<float>(o[0].bytes.data() + (i * 4 + 1) * sizeof(float));
    d.ymax = load<float>(o[0].bytes.data() + (i * 4 + 2) * sizeof(float));
    d.xmax = load<float>(o[0].bytes.data() + (i * 4 + 3) * sizeof(float));
    const float cls = load<float>(o[1].bytes.data() + i * sizeof(float));
    d.classIndex = cls >= 0 && std::isfinite(cls) ? static_cast<uint32_t>(cls) : 0;
    d.label = labelOf(labels, d.classIndex);
    d.score = load<float>(o[2].bytes.data() + i * sizeof(float));
    result.push_back(std::move(d));
  }
  return result;
}

/// A class map from [1, H, W] integers, or [1, H, W, C] scores when `labels` has C lines.
Result<std::optional<Segmentation>> segmentationOf(const OutputTensor& o,
                                                   const std::vector<std::string>& labels) {
  const auto& dims = o.desc.dimensions;
  const bool indexMap = dims.size() == 3 && dims[0] == 1 && isIntegerType(o.desc.type) &&
                        dims[1] >= 8 && dims[2] >= 8;
  const bool scoreMap = dims.size() == 4 && dims[0] == 1 && dims[1] >= 8 && dims[2] >= 8 &&
                        dims[3] > 1 && labels.size() == dims[3];
  if (!indexMap && !scoreMap) return std::optional<Segmentation>();
  NNHAL_ASSIGN_OR_RETURN(const std::vector<float> values, realValues(o.desc, o.bytes));
  Segmentation s;
  s.height = dims[1];
  s.width = dims[2];
  const size_t pixels = size_t{s.width} * s.height;
  s.classMap.resize(pixels);
  for (size_t p = 0; p < pixels; ++p) {
    if (indexMap) {
      // A class index as the model computed it: TENSOR_INT32 (or 8-bit) values are indexes.
      int64_t index = 0;
      if (o.desc.type == OperandType::TENSOR_INT32) {
        index = load<int32_t>(o.bytes.data() + p * sizeof(int32_t));
      } else {
        index = static_cast<int64_t>(std::lround(values[p]));
      }
      s.classMap[p] = index < 0 ? 0 : static_cast<uint32_t>(index);
    } else {
      const float* scores = values.data() + p * dims[3];
      s.classMap[p] = static_cast<uint32_t>(std::max_element(scores, scores + dims[3]) - scores);
    }
  }
  std::map<uint32_t, size_t> counts;
  for (const uint32_t c : s.classMap) ++counts[c];
  for (const auto& [index, count] : counts) {
    s.classes.push_back({index, labelOf(labels, index), static_cast<double>(count) / pixels});
  }
  std::stable_sort(s.classes.begin(), s.classes.end(),
                   [](const auto& a, const auto& b) { return a.share > b.share; });
  return std::optional<Segmentation>(std::move(s));
}

std::string dimsText(const std::vector<uint32_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

}  // namespace

std::string_view toString(OutputKind kind) {
  switch (kind) {
    case OutputKind::kClassifier:
      return "classifier";
    case OutputKind::kDetection:
      return "detection";
    case OutputKind::kSegmentation:
      return "segmentation";
    case OutputKind::kPose:
      return "pose";
    case OutputKind::kTensors:
      return "tensors";
  }
  return "tensors";
}

Result<std::vector<float>> realValues(const TensorDescription& desc,
                                      const std::vector<uint8_t>& bytes) {
  const size_t expected = tensorBytes(desc);
  if (bytes.size() != expected) {
    return invalidArgument("output '" + desc.name + "' has " + std::to_string(bytes.size()) +
                           " bytes; its shape needs " + std::to_string(expected));
  }
  const size_t count = elementCount(desc.dimensions);
  std::vector<float> values(count);
  const uint8_t* p = bytes.data();
  for (size_t i = 0; i < count; ++i) {
    switch (desc.type) {
      case OperandType::TENSOR_FLOAT32:
        values[i] = load<float>(p + i * 4);
        break;
      case OperandType::TENSOR_FLOAT16:
        values[i] = halfToFloat(load<uint16_t>(p + i * 2));
        break;
      case OperandType::TENSOR_INT32:
        values[i] = static_cast<float>(load<int32_t>(p + i * 4));
        break;
      case OperandType::TENSOR_QUANT8_ASYMM:
        values[i] = desc.scale * static_cast<float>(static_cast<int32_t>(p[i]) - desc.zeroPoint);
        break;
      case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
        values[i] = desc.scale * static_cast<float>(static_cast<int8_t>(p[i]) - desc.zeroPoint);
        break;
      case OperandType::TENSOR_QUANT16_SYMM:
        values[i] = desc.scale * static_cast<float>(load<int16_t>(p + i * 2));
        break;
      case OperandType::TENSOR_BOOL8:
        values[i] = p[i] != 0 ? 1.0f : 0.0f;
        break;
      default:
        return invalidArgument("output '" + desc.name + "' has type " +
                               std::string(nnhal::toString(desc.type)) +
                               ", which nnhal run does not read");
    }
  }
  return values;
}

TensorSummary summarize(const OutputTensor& output) {
  TensorSummary s;
  s.name = output.desc.name;
  s.type = output.desc.int64 ? "INT64 (computed as TENSOR_INT32)"
                             : std::string(nnhal::toString(output.desc.type));
  s.dimensions = output.desc.dimensions;
  auto values = realValues(output.desc, output.bytes);
  if (!values || values->empty()) return s;
  s.elements = values->size();
  const auto [lo, hi] = std::minmax_element(values->begin(), values->end());
  s.min = *lo;
  s.max = *hi;
  s.mean = static_cast<float>(std::accumulate(values->begin(), values->end(), 0.0) /
                              static_cast<double>(values->size()));
  return s;
}

Result<OutputReport> interpretOutputs(const std::vector<OutputTensor>& outputs,
                                      const std::vector<std::string>& labels, size_t top) {
  OutputReport report;
  for (const OutputTensor& o : outputs) {
    if (o.bytes.size() != tensorBytes(o.desc)) {
      return invalidArgument("output '" + o.desc.name + "' has " + std::to_string(o.bytes.size()) +
                             " bytes; its shape needs " + std::to_string(tensorBytes(o.desc)));
    }
    report.tensors.push_back(summarize(o));
  }
  if (outputs.empty()) return report;
  if (isDetection(outputs)) {
    report.kind = OutputKind::kDetection;
    report.detections = detectionsOf(outputs, labels);
    return report;
  }
  const OutputTensor& first = outputs.front();
  const auto& dims = first.desc.dimensions;
  if (dims == std::vector<uint32_t>{1, 1, 17, 3} &&
      first.desc.type == OperandType::TENSOR_FLOAT32) {
    report.kind = OutputKind::kPose;
    for (size_t k = 0; k < kKeypointNames.size(); ++k) {
      const uint8_t* p = first.bytes.data() + k * 3 * sizeof(float);
      report.keypoints.push_back(
          {kKeypointNames[k], load<float>(p), load<float>(p + 4), load<float>(p + 8)});
    }
    return report;
  }
  NNHAL_ASSIGN_OR_RETURN(std::optional<Segmentation> segmentation, segmentationOf(first, labels));
  if (segmentation) {
    report.kind = OutputKind::kSegmentation;
    report.segmentation = std::move(segmentation);
    return report;
  }
  const bool classifier =
      outputs.size() == 1 && !first.desc.int64 &&
      ((dims.size() == 2 && dims[0] == 1 && dims[1] > 1) || (dims.size() == 1 && dims[0] > 1));
  if (classifier) {
    auto best = topK(first.bytes, first.desc, top);
    if (best) {
      report.kind = OutputKind::kClassifier;
      const size_t classes = elementCount(dims);
      // A label file with a leading background line has one line more than the outputs.
      const size_t offset = labels.size() == classes + 1 ? 1 : 0;
      for (const ClassScore& c : *best)
        report.topLabels.push_back(labelOf(labels, c.index + offset));
      report.top = std::move(*best);
    }
  }
  return report;
}

std::string formatReport(const OutputReport& r) {
  std::ostringstream out;
  char line[256];
  switch (r.kind) {
    case OutputKind::kClassifier:
      out << "top " << r.top.size() << " classes:\n";
      for (size_t i = 0; i < r.top.size(); ++i) {
        std::snprintf(line, sizeof(line), "  %5u  %-32s %.4f\n", r.top[i].index,
                      r.topLabels[i].c_str(), r.top[i].score);
        out << line;
      }
      break;
    case OutputKind::kDetection:
      out << r.detections.size() << " detections (box: ymin xmin ymax xmax, 0..1):\n";
      for (const Detection& d : r.detections) {
        std::snprintf(line, sizeof(line),
                      "  %-20s class %3u  score %.3f  box %.3f %.3f %.3f %.3f\n",
                      d.label.empty() ? "-" : d.label.c_str(), d.classIndex, d.score, d.ymin,
                      d.xmin, d.ymax, d.xmax);
        out << line;
      }
      break;
    case OutputKind::kSegmentation:
      out << "segmentation " << r.segmentation->width << "x" << r.segmentation->height
          << ", share of pixels per class:\n";
      for (const SegmentationClass& c : r.segmentation->classes) {
        std::snprintf(line, sizeof(line), "  %3u  %-20s %6.2f%%\n", c.classIndex,
                      c.label.empty() ? "-" : c.label.c_str(), c.share * 100.0);
        out << line;
      }
      break;
    case OutputKind::kPose:
      out << "keypoints (y, x in 0..1, score):\n";
      for (const Keypoint& k : r.keypoints) {
        std::snprintf(line, sizeof(line), "  %-15s %.3f %.3f  %.3f\n", k.name.c_str(), k.y, k.x,
                      k.score);
        out << line;
      }
      break;
    case OutputKind::kTensors:
      break;
  }
  out << "outputs:\n";
  for (const TensorSummary& t : r.tensors) {
    std::snprintf(line, sizeof(line), "  '%s' %s %s", t.name.c_str(), t.type.c_str(),
                  dimsText(t.dimensions).c_str());
    out << line;
    if (t.elements > 0) {
      std::snprintf(line, sizeof(line), " min %g max %g mean %g", t.min, t.max, t.mean);
      out << line;
    }
    out << "\n";
  }
  return out.str();
}

nlohmann::json reportJson(const OutputReport& r) {
  nlohmann::json j;
  j["kind"] = std::string(toString(r.kind));
  if (r.kind == OutputKind::kClassifier) {
    for (size_t i = 0; i < r.top.size(); ++i) {
      j["top"].push_back(
          {{"index", r.top[i].index}, {"label", r.topLabels[i]}, {"score", r.top[i].score}});
    }
  }
  if (r.kind == OutputKind::kDetection) {
    j["detections"] = nlohmann::json::array();
    for (const Detection& d : r.detections) {
      j["detections"].push_back({{"class", d.classIndex},
                                 {"label", d.label},
                                 {"score", d.score},
                                 {"box", {d.ymin, d.xmin, d.ymax, d.xmax}}});
    }
  }
  if (r.segmentation) {
    j["segmentation"] = {{"width", r.segmentation->width}, {"height", r.segmentation->height}};
    for (const SegmentationClass& c : r.segmentation->classes) {
      j["segmentation"]["classes"].push_back(
          {{"class", c.classIndex}, {"label", c.label}, {"share", c.share}});
    }
  }
  for (const Keypoint& k : r.keypoints) {
    j["keypoints"].push_back({{"name", k.name}, {"y", k.y}, {"x", k.x}, {"score", k.score}});
  }
  j["outputs"] = nlohmann::json::array();
  for (const TensorSummary& t : r.tensors) {
    nlohmann::json tensor = {{"name", t.name}, {"type", t.type}, {"shape", t.dimensions}};
    if (t.elements > 0) {
      tensor["min"] = t.min;
      tensor["max"] = t.max;
      tensor["mean"] = t.mean;
    }
    j["outputs"].push_back(std::move(tensor));
  }
  return j;
}

Result<void> writeSegmentationMask(const Segmentation& s, const std::filesystem::path& path) {
  std::vector<uint8_t> rgb(size_t{s.width} * s.height * 3);
  for (size_t p = 0; p < s.classMap.size(); ++p) {
    const uint32_t c = s.classMap[p];
    // PASCAL VOC's palette: the bits of the class index spread over the three channels.
    uint8_t r = 0, g = 0, b = 0;
    uint32_t bits = c;
    for (int shift = 7; shift >= 0 && bits != 0; --shift, bits >>= 3) {
      r |= static_cast<uint8_t>(((bits >> 0) & 1u) << shift);
      g |= static_cast<uint8_t>(((bits >> 1) & 1u) << shift);
      b |= static_cast<uint8_t>(((bits >> 2) & 1u) << shift);
    }
    rgb[p * 3 + 0] = r;
    rgb[p * 3 + 1] = g;
    rgb[p * 3 + 2] = b;
  }
  const int ok = stbi_write_png(path.c_str(), static_cast<int>(s.width), static_cast<int>(s.height),
                                3, rgb.data(), static_cast<int>(s.width * 3));
  if (ok == 0) {
    return fail(ErrorStatus::GENERAL_FAILURE, "cannot write the mask PNG '" + path.string() + "'");
  }
  return {};
}

}  // namespace nnhal::tools
