#include "hal/tflite/tensor_conversion.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "hal/operand_utils.h"

namespace nnhal::hal::tfl {
namespace {

/// Builds the "TFLite tensor N ('name'): message" errors.
class TensorErrors {
 public:
  TensorErrors(uint32_t index, std::string_view name) : index_(index), name_(name) {}
  std::unexpected<Error> operator()(std::string_view message) const {
    return invalidArgument("TFLite tensor " + std::to_string(index_) + " ('" + std::string(name_) +
                           "'): " + std::string(message));
  }

 private:
  uint32_t index_;
  std::string_view name_;
};

/// Element `i` of a [long] vector. Files from older converters do not always align these
/// to 8 bytes (the verifier only checks 4), so the value is copied out byte-wise.
int64_t int64At(const flatbuffers::Vector<int64_t>& values, size_t i) {
  int64_t value = 0;
  std::memcpy(&value, values.Data() + i * sizeof(int64_t), sizeof(int64_t));
  return flatbuffers::EndianScalar(value);
}

Result<OperandType> operandTypeOf(::tflite::TensorType type, size_t scaleCount,
                                  const TensorErrors& error) {
  switch (type) {
    case ::tflite::TensorType_FLOAT32:
      return OperandType::TENSOR_FLOAT32;
    case ::tflite::TensorType_FLOAT16:
      return OperandType::TENSOR_FLOAT16;
    case ::tflite::TensorType_INT32:
      return OperandType::TENSOR_INT32;
    case ::tflite::TensorType_BOOL:
      return OperandType::TENSOR_BOOL8;
    case ::tflite::TensorType_UINT8:
      return OperandType::TENSOR_QUANT8_ASYMM;
    case ::tflite::TensorType_INT8:
      return scaleCount > 1 ? OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL
                            : OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    case ::tflite::TensorType_INT16:
      return OperandType::TENSOR_QUANT16_SYMM;
    case ::tflite::TensorType_INT64:  // computed as int32 (see tensor_conversion.h)
      return OperandType::TENSOR_INT32;
    default:
      break;
  }
  const char* name = ::tflite::EnumNameTensorType(type);
  return error(
      std::string("tensor type ") +
      (name != nullptr && name[0] != '\0' ? name : std::to_string(static_cast<int>(type))) +
      " has no NNAPI equivalent");
}

Result<std::vector<uint32_t>> dimensionsOf(const ::tflite::Tensor& tensor,
                                           const TensorErrors& error) {
  std::vector<uint32_t> dims;
  if (tensor.shape() == nullptr) return dims;
  for (const int32_t d : *tensor.shape()) {
    if (d < 0) return error("shape has negative dimension " + std::to_string(d));
    dims.push_back(static_cast<uint32_t>(d));
  }
  return dims;
}

/// Fills scale, zero point and per-channel parameters of a quantized operand.
Result<void> setQuantization(const ::tflite::Tensor& tensor, Operand& operand,
                             const TensorErrors& error) {
  const ::tflite::QuantizationParameters* q = tensor.quantization();
  if (q != nullptr && q->details_type() != ::tflite::QuantizationDetails_NONE) {
    return error("custom quantization is unsupported");
  }
  const auto* scales = q != nullptr ? q->scale() : nullptr;
  const auto* zeroPoints = q != nullptr ? q->zero_point() : nullptr;
  if (scales == nullptr || scales->size() == 0) {
    return error(std::string(toString(operand.type)) + " tensor has no quantization scale");
  }
  for (const float scale : *scales) {
    if (!(scale > 0.0f) || !std::isfinite(scale)) {
      return error("quantization scale " + std::to_string(scale) + " is not positive and finite");
    }
  }
  if (operand.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
    if (zeroPoints != nullptr) {
      for (size_t i = 0; i < zeroPoints->size(); ++i) {
        if (int64At(*zeroPoints, i) != 0) {
          return error("per-channel quantization needs zero points of 0");
        }
      }
    }
    const int32_t dim = q->quantized_dimension();
    if (dim < 0 || static_cast<size_t>(dim) >= operand.dimensions.size()) {
      return error("quantized_dimension " + std::to_string(dim) + " is outside the shape");
    }
    const uint32_t channels = operand.dimensions[static_cast<size_t>(dim)];
    if (channels != 0 && channels != scales->size()) {
      return error(std::to_string(scales->size()) + " scales for " + std::to_string(channels) +
                   " channels");
    }
    operand.extraParams =
        SymmPerChannelQuantParams{.scales = std::vector<float>(scales->begin(), scales->end()),
                                  .channelDim = static_cast<uint32_t>(dim)};
    return {};
  }
  if (scales->size() != 1) {
    return error("per-channel quantization is only supported for INT8 tensors");
  }
  int64_t zeroPoint = 0;
  if (zeroPoints != nullptr && zeroPoints->size() > 0) zeroPoint = int64At(*zeroPoints, 0);
  if (zeroPoint < std::numeric_limits<int32_t>::min() ||
      zeroPoint > std::numeric_limits<int32_t>::max()) {
    return error("zero point " + std::to_string(zeroPoint) + " is out of range");
  }
  if (operand.type == OperandType::TENSOR_QUANT16_SYMM && zeroPoint != 0) {
    return error("INT16 tensors need zero point 0 (TENSOR_QUANT16_SYMM)");
  }
  operand.scale = scales->Get(0);
  operand.zeroPoint = static_cast<int32_t>(zeroPoint);
  return {};
}

/// The bytes of buffer `bufferIndex` (inline data, or `size` bytes at file `offset`).
Result<std::span<const uint8_t>> bufferBytes(
    uint32_t bufferIndex, const flatbuffers::Vector<flatbuffers::Offset<::tflite::Buffer>>* buffers,
    std::span<const uint8_t> file, const TensorErrors& error) {
  const size_t bufferCount = buffers != nullptr ? buffers->size() : 0;
  if (bufferIndex >= bufferCount) {
    // Buffer 0 is the conventional "no data" sentinel even when the list is empty.
    if (bufferIndex == 0) return std::span<const uint8_t>{};
    return error("buffer index " + std::to_string(bufferIndex) + " is out of range (" +
                 std::to_string(bufferCount) + " buffers)");
  }
  const ::tflite::Buffer* buffer = buffers->Get(bufferIndex);
  if (buffer == nullptr) return std::span<const uint8_t>{};
  if (buffer->data() != nullptr && buffer->data()->size() > 0) {
    return std::span<const uint8_t>(buffer->data()->data(), buffer->data()->size());
  }
  if (buffer->offset() > 1 && buffer->size() > 0) {
    const uint64_t offset = buffer->offset();
    const uint64_t size = buffer->size();
    if (offset > file.size() || size > file.size() - offset) {
      return error("buffer " + std::to_string(bufferIndex) + " ([" + std::to_string(offset) +
                   ", +" + std::to_string(size) + ")) lies outside the file (" +
                   std::to_string(file.size()) + " bytes)");
    }
    return file.subspan(static_cast<size_t>(offset), static_cast<size_t>(size));
  }
  return std::span<const uint8_t>{};
}

/// Whether the tensor's one scale is 0, which NNAPI refuses: TFLite's NNAPI delegate replaces
/// exactly that ("zero scale is not valid in NNAPI") and keeps every other scale, however small
/// (converters write scales like 3e-35 where calibration saw only zeros; TFLite computes with
/// them: products into such a tensor saturate, and its contribution to a sum flushes to 0).
bool calibratedToZero(const ::tflite::Tensor& tensor) {
  return tensor.quantization()->scale()->Get(0) == 0.0f;
}

/// Replaces an INT64 constant's data with its values as int32, refusing values outside the
/// int32 range.
Result<void> narrowInt64(ConvertedTensor& tensor, const TensorErrors& error) {
  if (tensor.data.size() % sizeof(int64_t) != 0) {
    return error("INT64 data of " + std::to_string(tensor.data.size()) +
                 " bytes is not a whole number of values");
  }
  const size_t count = tensor.data.size() / sizeof(int64_t);
  tensor.narrowed.resize(count * sizeof(int32_t));
  for (size_t i = 0; i < count; ++i) {
    int64_t value = 0;
    std::memcpy(&value, tensor.data.data() + i * sizeof(int64_t), sizeof(value));
    value = flatbuffers::EndianScalar(value);
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max()) {
      return error("INT64 value " + std::to_string(value) + " at element " + std::to_string(i) +
                   " does not fit the TENSOR_INT32 it is computed as");
    }
    const auto narrow = static_cast<int32_t>(value);
    std::memcpy(tensor.narrowed.data() + i * sizeof(int32_t), &narrow, sizeof(narrow));
  }
  tensor.data = tensor.narrowed;
  return {};
}

}  // namespace

Result<ConvertedTensor> convertTensor(
    const ::tflite::Tensor& tensor, uint32_t index,
    const flatbuffers::Vector<flatbuffers::Offset<::tflite::Buffer>>* buffers,
    std::span<const uint8_t> file, bool unitScaleDefault) {
  ConvertedTensor result;
  result.name = tensor.name() != nullptr ? tensor.name()->str() : std::string();
  const TensorErrors error(index, result.name);

  if (tensor.sparsity() != nullptr) return error("sparse tensors are unsupported");
  result.isVariable = tensor.is_variable();

  const auto* scales = tensor.quantization() ? tensor.quantization()->scale() : nullptr;
  NNHAL_ASSIGN_OR_RETURN(result.operand.type,
                         operandTypeOf(tensor.type(), scales ? scales->size() : 0, error));
  NNHAL_ASSIGN_OR_RETURN(result.operand.dimensions, dimensionsOf(tensor, error));
  const bool unquantized = scales == nullptr || scales->size() == 0;
  const bool asymm8 = result.operand.type == OperandType::TENSOR_QUANT8_ASYMM ||
                      result.operand.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  const bool zeroScale = !unquantized && scales->size() == 1 && calibratedToZero(tensor);
  if (asymm8 && (unquantized || zeroScale) && (unitScaleDefault || zeroScale)) {
    // TFLite's NNAPI delegate: an 8-bit tensor with scale 0 (a converter found only zeros
    // there, e.g. an LSTM state product on its first frame) is invalid in NNAPI and gets
    // scale 1 instead; the zero point stays.
    result.operand.scale = 1.0f;
    const auto* zeroPoints = zeroScale ? tensor.quantization()->zero_point() : nullptr;
    if (zeroPoints != nullptr && zeroPoints->size() == 1) {
      result.operand.zeroPoint = static_cast<int32_t>(int64At(*zeroPoints, 0));
    }
  } else if (isQuantizedType(result.operand.type)) {
    NNHAL_TRY(setQuantization(tensor, result.operand, error));
  }

  result.isInt64 = tensor.type() == ::tflite::TensorType_INT64;
  NNHAL_ASSIGN_OR_RETURN(result.data, bufferBytes(tensor.buffer(), buffers, file, error));
  if (result.data.empty()) return result;
  if (result.isInt64) NNHAL_TRY(narrowInt64(result, error));

  // NNAPI has no rank-0 constant tensors: a scalar constant becomes a [1] tensor.
  if (result.operand.dimensions.empty() &&
      result.data.size() == sizeOfElement(result.operand.type)) {
    result.operand.dimensions = {1};
  }
  const std::optional<uint32_t> expected = byteSize(result.operand.type, result.operand.dimensions);
  if (!expected) return error("tensor is larger than 4 GiB");
  if (*expected != result.data.size()) {
    return error("buffer " + std::to_string(tensor.buffer()) + " holds " +
                 std::to_string(result.data.size()) + " bytes but the shape and type need " +
                 std::to_string(*expected));
  }
  return result;
}

}  // namespace nnhal::hal::tfl
