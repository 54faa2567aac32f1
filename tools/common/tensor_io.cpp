#include "tools/common/tensor_io.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>

namespace nnhal::tools {

Result<std::vector<uint8_t>> readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalidArgument("cannot open '" + path.string() + "': " + std::strerror(errno));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (in.bad()) return invalidArgument("cannot read '" + path.string() + "'");
  return bytes;
}

Result<void> writeFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return fail(ErrorStatus::GENERAL_FAILURE, "cannot create '" + path.string() + "'");
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) return fail(ErrorStatus::GENERAL_FAILURE, "cannot write '" + path.string() + "'");
  return {};
}

size_t tensorBytes(const TensorDescription& desc) {
  size_t elements = 1;
  for (uint32_t d : desc.dimensions) elements *= d;
  switch (desc.type) {
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_INT32:
      return elements * 4;
    case OperandType::TENSOR_FLOAT16:
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
      return elements * 2;
    default:
      return elements;
  }
}

Result<std::vector<uint8_t>> imageToTensor(const RgbImage& image, const TensorDescription& desc,
                                           const FloatNormalization& norm) {
  const auto& d = desc.dimensions;
  if (d.size() != 4 || d[0] != 1 || d[3] != 3) {
    return invalidArgument("input '" + desc.name + "' is not an RGB image tensor [1, H, W, 3]");
  }
  const RgbImage resized = resizeBilinear(image, d[2], d[1]);
  const size_t count = resized.pixels.size();
  std::vector<uint8_t> tensor;
  switch (desc.type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      return resized.pixels;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      tensor.resize(count);
      for (size_t i = 0; i < count; ++i) {
        tensor[i] = static_cast<uint8_t>(static_cast<int8_t>(resized.pixels[i] - 128));
      }
      return tensor;
    case OperandType::TENSOR_FLOAT32:
      tensor.resize(count * sizeof(float));
      for (size_t i = 0; i < count; ++i) {
        const float v = (static_cast<float>(resized.pixels[i]) - norm.mean) / norm.stddev;
        std::memcpy(&tensor[i * sizeof(float)], &v, sizeof(float));
      }
      return tensor;
    default:
      return invalidArgument("input '" + desc.name + "' has type " +
                             std::string(toString(desc.type)) +
                             "; images feed uint8, int8 or float32 inputs");
  }
}

Result<std::vector<ClassScore>> topK(const std::vector<uint8_t>& output,
                                     const TensorDescription& desc, size_t k) {
  std::vector<ClassScore> scores;
  switch (desc.type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      for (size_t i = 0; i < output.size(); ++i) {
        scores.push_back({static_cast<uint32_t>(i), desc.scale * (output[i] - desc.zeroPoint)});
      }
      break;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      for (size_t i = 0; i < output.size(); ++i) {
        const auto q = static_cast<int8_t>(output[i]);
        scores.push_back({static_cast<uint32_t>(i), desc.scale * (q - desc.zeroPoint)});
      }
      break;
    case OperandType::TENSOR_FLOAT32:
      for (size_t i = 0; i < output.size() / sizeof(float); ++i) {
        float v;
        std::memcpy(&v, &output[i * sizeof(float)], sizeof(float));
        scores.push_back({static_cast<uint32_t>(i), v});
      }
      break;
    default:
      return invalidArgument("output '" + desc.name + "' of type " +
                             std::string(toString(desc.type)) + " is not a score vector");
  }
  k = std::min(k, scores.size());
  std::partial_sort(scores.begin(), scores.begin() + static_cast<std::ptrdiff_t>(k), scores.end(),
                    [](const ClassScore& a, const ClassScore& b) {
                      return a.score != b.score ? a.score > b.score : a.index < b.index;
                    });
  scores.resize(k);
  return scores;
}

Result<std::vector<std::string>> readLabels(const std::filesystem::path& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return invalidArgument("label file '" + path.string() + "' is " +
                           (std::filesystem::exists(path, ec) ? "not a regular file" : "missing"));
  }
  std::ifstream in(path);
  if (!in) return invalidArgument("cannot open label file '" + path.string() + "'");
  std::vector<std::string> labels;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    labels.push_back(line);
  }
  if (labels.empty()) return invalidArgument("label file '" + path.string() + "' is empty");
  return labels;
}

}  // namespace nnhal::tools
