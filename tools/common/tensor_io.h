// tools/common/tensor_io.h — moving tensors between files, images and shared memory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/tflite_import.h"
#include "tools/common/image.h"

namespace nnhal::tools {

/// Reads a whole file. Errors: INVALID_ARGUMENT naming the path.
Result<std::vector<uint8_t>> readFile(const std::filesystem::path& path);
/// Writes a whole file. Errors: GENERAL_FAILURE naming the path.
Result<void> writeFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes);

/// Bytes of a tensor described by `desc`.
size_t tensorBytes(const TensorDescription& desc);

/// How pixel bytes map to a float input: value = (pixel - mean) / stddev.
struct FloatNormalization {
  float mean = 127.5f;
  float stddev = 127.5f;
};

/// Turns an image into the input tensor `desc` ([1, H, W, 3]): resized with
/// resizeBilinear; uint8 inputs take the pixel bytes, int8 inputs pixel - 128, float32
/// inputs the normalized value. Errors: INVALID_ARGUMENT for inputs that are not
/// [1, H, W, 3] of one of those types.
Result<std::vector<uint8_t>> imageToTensor(const RgbImage& image, const TensorDescription& desc,
                                           const FloatNormalization& norm);

/// One class of a classification output.
struct ClassScore {
  uint32_t index = 0;
  float score = 0.0f;
};

/// The `k` best classes of an output tensor of shape [1, N] (or [N]); scores dequantized.
/// Equal scores rank the lower index first. Errors: INVALID_ARGUMENT for other types.
Result<std::vector<ClassScore>> topK(const std::vector<uint8_t>& output,
                                     const TensorDescription& desc, size_t k);

/// Reads a label file, one label per line. Errors: INVALID_ARGUMENT for a missing file, a
/// directory or other non-regular file, and an empty file.
Result<std::vector<std::string>> readLabels(const std::filesystem::path& path);

}  // namespace nnhal::tools
