// hal/tflite/tensor_conversion.h — one TFLite tensor as an NNAPI operand.
//
// Types map as TFLite's NNAPI delegate maps them:
//   FLOAT32 -> TENSOR_FLOAT32, FLOAT16 -> TENSOR_FLOAT16, INT32 -> TENSOR_INT32 (scale 0,
//   zero point 0; biases get their scale from the operator), BOOL -> TENSOR_BOOL8,
//   UINT8 -> TENSOR_QUANT8_ASYMM, INT8 -> TENSOR_QUANT8_ASYMM_SIGNED, or
//   TENSOR_QUANT8_SYMM_PER_CHANNEL (extraParams = scales, channel dimension) when the tensor
//   has several scales, INT16 -> TENSOR_QUANT16_SYMM.
//   INT64 -> TENSOR_INT32, as TFLite's NNAPI delegate does for ARG_MAX / ARG_MIN outputs and
//   other index tensors: NNAPI has no 64-bit integers, so the values are computed as int32
//   (every index fits) and the caller widens them to int64 on the way out (isInt64). An
//   INT64 constant is narrowed to int32; a value outside the int32 range is an error.
// An 8-bit tensor whose only scale is 0 or below 1e-30 (converters write these where calibration
// saw only zeros, e.g. the state products of an LSTM cell on its first frame), gets scale 1, as the
// NNAPI delegate does for scale 0: NNAPI has no such quantized tensors. TFLite's own kernels would
// saturate every nonzero value there to about 1e-32, i.e. treat the tensor as zero; with scale 1 it
// carries the values the operation computes.
// Every other type (UINT64, STRING, COMPLEX64, ...) is rejected. A rank-0 constant becomes a
// [1] tensor (NNAPI has no rank-0 constant tensors). Variable tensors (the state of the
// recurrent operators) are converted like any other; the importer decides their lifetime.
//
// Thread safety: pure function.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"
#include "tflite_schema_generated.h"

namespace nnhal::hal::tfl {

struct ConvertedTensor {
  /// Type, dimensions and quantization; lifetime and location are left for the importer.
  Operand operand;
  /// The constant value inside the file bytes; empty for tensors without data.
  std::span<const uint8_t> data;
  std::string name;
  /// Tensor.is_variable: state that TFLite operators update in place.
  bool isVariable = false;
  /// The TFLite tensor is INT64, converted to TENSOR_INT32.
  bool isInt64 = false;
  /// An INT64 constant's values as int32 (`data` then points here): move the whole
  /// ConvertedTensor, never copy it, or `data` dangles.
  std::vector<uint8_t> narrowed;
};

/// Converts tensor `index` of the main subgraph. `buffers` is Model.buffers (may be null),
/// `file` the whole model file (Buffer.offset counts from its start). `unitScaleDefault`:
/// an 8-bit tensor without quantization gets scale 1 and zero point 0 instead of an error
/// (NNAPI's convention for tensors that only hold 0/1 flags, like HASHTABLE_LOOKUP's hits).
/// Errors (INVALID_ARGUMENT, naming the tensor): sparse tensors, types without an NNAPI
/// equivalent, negative dimensions, missing or invalid quantization of quantized types,
/// buffer index out of range, buffer bytes outside the file, data size not matching the
/// shape.
Result<ConvertedTensor> convertTensor(
    const ::tflite::Tensor& tensor, uint32_t index,
    const flatbuffers::Vector<flatbuffers::Offset<::tflite::Buffer>>* buffers,
    std::span<const uint8_t> file, bool unitScaleDefault = false);

}  // namespace nnhal::hal::tfl
