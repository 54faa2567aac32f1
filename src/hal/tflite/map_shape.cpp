// Mapping functions of the shape and indexing operators whose NNAPI form takes some of the
// operator's tensors as scalar parameters (axes, block sizes, k, pad and fill values) or
// reorders them.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "hal/tflite/mapping_helpers.h"
#include "hal/tflite/mappings.h"

namespace nnhal::hal::tfl {
namespace {

/// `real` quantized with the scale and zero point of `operand`, clamped to its 8-bit range.
int32_t quantizeTo(const Operand& operand, double real) {
  const double q = std::round(real / operand.scale) + operand.zeroPoint;
  const bool isSigned = operand.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  return static_cast<int32_t>(std::clamp(q, isSigned ? -128.0 : 0.0, isSigned ? 127.0 : 255.0));
}

/// ARG_MAX, ARG_MIN: input, axis (INT32 scalar from the constant axis tensor).
Result<void> mapArg(OperatorContext& c, OperationType type) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axisTensor, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_ASSIGN_OR_RETURN(const int32_t axis, constantInt32(c, axisTensor, "axis"));
  c.addOperation(type, {input, c.builder().addInt32Scalar(axis)}, {output});
  return {};
}

/// SPACE_TO_DEPTH, DEPTH_TO_SPACE: input, block size.
template <typename Options>
Result<void> mapBlockSize(OperatorContext& c, OperationType type, std::string_view table) {
  NNHAL_TRY(c.expectCounts(1, 1, 1));
  NNHAL_ASSIGN_OR_RETURN(const Options* options, c.requiredOptions<Options>(table));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_TRY(expectPositive(c, options->block_size(), "block_size"));
  c.addOperation(type, {input, c.builder().addInt32Scalar(options->block_size())}, {output});
  return {};
}

}  // namespace

/// A pad value becomes PAD_V2's scalar: FLOAT32 / FLOAT16 like a float input, the value
/// quantized with the input's scale and zero point (INT32) for a quantized input.
Result<void> mapPad(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 3, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t paddings, c.int32TensorInput(1, "paddings"));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto valueTensor = c.optionalInput(2);
  if (!valueTensor) {
    c.addOperation(OperationType::PAD, {input, paddings}, {output});
    return {};
  }
  NNHAL_ASSIGN_OR_RETURN(const double value, constantReal(c, *valueTensor, "constant_values"));
  const Operand& in = c.operand(input);
  ModelBuilder& b = c.builder();
  uint32_t scalar = 0;
  if (isQuant8(in.type)) {
    scalar = b.addInt32Scalar(quantizeTo(in, value));
  } else if (in.type == OperandType::TENSOR_INT32) {
    scalar = b.addInt32Scalar(static_cast<int32_t>(value));
  } else {
    scalar = addFloatScalarFor(b, in.type, static_cast<float>(value));
  }
  c.addOperation(OperationType::PAD_V2, {input, paddings, scalar}, {output});
  return {};
}

/// Without squeeze_dims the dims input is omitted (NO_VALUE): NNAPI then squeezes every
/// dimension of size 1, as TFLite does.
Result<void> mapSqueeze(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(1, 1, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto* options = c.options<::tflite::SqueezeOptions>();
  ModelBuilder& b = c.builder();
  uint32_t dims = 0;
  if (options != nullptr && options->squeeze_dims() != nullptr &&
      options->squeeze_dims()->size() > 0) {
    const std::vector<int32_t> values(options->squeeze_dims()->begin(),
                                      options->squeeze_dims()->end());
    dims = b.addInt32Vector(values);
  } else {
    dims = b.addOmitted(OperandType::TENSOR_INT32);
  }
  c.addOperation(OperationType::SQUEEZE, {input, dims}, {output});
  return {};
}

Result<void> mapExpandDims(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axisTensor, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_ASSIGN_OR_RETURN(const int32_t axis, constantInt32(c, axisTensor, "axis"));
  c.addOperation(OperationType::EXPAND_DIMS, {input, c.builder().addInt32Scalar(axis)}, {output});
  return {};
}

/// NNAPI has begin, end and shrink-axis masks only: an ellipsis or new-axis mask, or the
/// offset form, has no equivalent.
Result<void> mapStridedSlice(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(4, 4, 1));
  std::vector<uint32_t> inputs;
  for (size_t i = 0; i < 4; ++i) {
    NNHAL_ASSIGN_OR_RETURN(const uint32_t operand, c.input(i));
    if (i > 0 && c.operand(operand).type != OperandType::TENSOR_INT32) {
      return c.error("the begin, end and strides tensors must be INT32");
    }
    inputs.push_back(operand);
  }
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto* options = c.options<::tflite::StridedSliceOptions>();
  int32_t beginMask = 0;
  int32_t endMask = 0;
  int32_t shrinkMask = 0;
  if (options != nullptr) {
    if (options->ellipsis_mask() != 0) return c.error("ellipsis_mask is unsupported");
    if (options->new_axis_mask() != 0) return c.error("new_axis_mask is unsupported");
    if (options->offset()) return c.error("offset = true is unsupported");
    beginMask = options->begin_mask();
    endMask = options->end_mask();
    shrinkMask = options->shrink_axis_mask();
  }
  ModelBuilder& b = c.builder();
  inputs.push_back(b.addInt32Scalar(beginMask));
  inputs.push_back(b.addInt32Scalar(endMask));
  inputs.push_back(b.addInt32Scalar(shrinkMask));
  c.addOperation(OperationType::STRIDED_SLICE, std::move(inputs), {output});
  return {};
}

/// TFLite's inputs are params, indices; NNAPI's input, axis, indices. batch_dims has no
/// equivalent.
Result<void> mapGather(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t indices, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto* options = c.options<::tflite::GatherOptions>();
  if (options != nullptr && options->batch_dims() != 0) {
    return c.error("batch_dims " + std::to_string(options->batch_dims()) + " is unsupported");
  }
  const int32_t axis = options != nullptr ? options->axis() : 0;
  c.addOperation(OperationType::GATHER, {input, c.builder().addInt32Scalar(axis), indices},
                 {output});
  return {};
}

Result<void> mapSpaceToDepth(OperatorContext& c) {
  return mapBlockSize<::tflite::SpaceToDepthOptions>(c, OperationType::SPACE_TO_DEPTH,
                                                     "SpaceToDepthOptions");
}

Result<void> mapDepthToSpace(OperatorContext& c) {
  return mapBlockSize<::tflite::DepthToSpaceOptions>(c, OperationType::DEPTH_TO_SPACE,
                                                     "DepthToSpaceOptions");
}

/// NNAPI has no crops: the crops tensor must be a constant of zeros (or omitted).
Result<void> mapBatchToSpaceNd(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 3, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t blockShape, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  if (const auto crops = c.optionalInput(2)) {
    NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> values, constantInt32s(c, *crops, "crops"));
    if (std::any_of(values.begin(), values.end(), [](int32_t v) { return v != 0; })) {
      return c.error("non-zero crops have no NNAPI equivalent");
    }
  }
  c.addOperation(OperationType::BATCH_TO_SPACE_ND, {input, blockShape}, {output});
  return {};
}

Result<void> mapArgMax(OperatorContext& c) { return mapArg(c, OperationType::ARGMAX); }

Result<void> mapArgMin(OperatorContext& c) { return mapArg(c, OperationType::ARGMIN); }

Result<void> mapTopKV2(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 2, 2));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t kTensor, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outputs, c.outputs());
  NNHAL_ASSIGN_OR_RETURN(const int32_t k, constantInt32(c, kTensor, "k"));
  NNHAL_TRY(expectPositive(c, k, "k"));
  c.addOperation(OperationType::TOPK_V2, {input, c.builder().addInt32Scalar(k)},
                 std::move(outputs));
  return {};
}

/// The value scalar has the output's element type: FLOAT32, FLOAT16 or INT32.
Result<void> mapFill(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t shape, c.int32TensorInput(0, "dims"));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t valueTensor, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_ASSIGN_OR_RETURN(const double value, constantReal(c, valueTensor, "value"));
  const OperandType outType = c.operand(output).type;
  ModelBuilder& b = c.builder();
  uint32_t scalar = 0;
  if (outType == OperandType::TENSOR_INT32) {
    if (value < std::numeric_limits<int32_t>::min() ||
        value > std::numeric_limits<int32_t>::max()) {
      return c.error("the fill value does not fit INT32");
    }
    scalar = b.addInt32Scalar(static_cast<int32_t>(value));
  } else if (outType == OperandType::TENSOR_FLOAT32 || outType == OperandType::TENSOR_FLOAT16) {
    scalar = addFloatScalarFor(b, outType, static_cast<float>(value));
  } else {
    return c.error("output type " + std::string(toString(outType)) +
                   " has no NNAPI FILL equivalent");
  }
  c.addOperation(OperationType::FILL, {shape, scalar}, {output});
  return {};
}

}  // namespace nnhal::hal::tfl
