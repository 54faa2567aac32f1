// Mapping functions of the generic operator shapes and of the first supported operators
// (convolutions, pooling, fully connected, softmax, concatenation, mean, reshape).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/mapping_helpers.h"
#include "hal/tflite/mappings.h"

namespace nnhal::hal::tfl {
namespace {

/// The operands of a convolution or FULLY_CONNECTED: input 0, the weights (input 1) and the
/// bias (input 2, or zeros per output channel, dimension `channelDim` of the weights), both
/// dequantized beside a float input (hybrid), and output 0.
struct WeightedOperands {
  uint32_t input = 0, weights = 0, bias = 0, output = 0;
};

Result<WeightedOperands> weightedOperands(OperatorContext& c, size_t channelDim) {
  WeightedOperands o;
  NNHAL_ASSIGN_OR_RETURN(o.input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t quantizedFilter, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(o.output, c.output(0));
  o.weights = dequantizedForFloatInput(c, o.input, quantizedFilter);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t quantizedBias,
                         biasOperand(c, o.input, o.weights, 2, channelDim));
  o.bias = dequantizedForFloatInput(c, o.input, quantizedBias);
  return o;
}

/// Adds `type` (CONV_2D, or DEPTHWISE_CONV_2D with its depth multiplier) in the implicit
/// padding form: {input, weights, bias, padding, stride w, stride h, [multiplier,]
/// activation}, then the NN HAL 1.2 tail (layout NHWC, dilation w, dilation h) when a
/// dilation factor is not 1.
Result<void> addConvolution(OperatorContext& c, OperationType type, const WeightedOperands& ops,
                            const WindowSettings& w, std::optional<int32_t> multiplier,
                            int32_t dilationW, int32_t dilationH) {
  NNHAL_TRY(expectPositive(c, dilationW, "dilation_w_factor"));
  NNHAL_TRY(expectPositive(c, dilationH, "dilation_h_factor"));
  ModelBuilder& b = c.builder();
  std::vector<uint32_t> inputs{ops.input,
                               ops.weights,
                               ops.bias,
                               b.addInt32Scalar(w.padding),
                               b.addInt32Scalar(w.strideW),
                               b.addInt32Scalar(w.strideH)};
  if (multiplier) inputs.push_back(b.addInt32Scalar(*multiplier));
  inputs.push_back(b.addInt32Scalar(w.activation));
  if (dilationW != 1 || dilationH != 1) {
    inputs.push_back(b.addBoolScalar(false));
    inputs.push_back(b.addInt32Scalar(dilationW));
    inputs.push_back(b.addInt32Scalar(dilationH));
  }
  c.addOperation(type, std::move(inputs), {ops.output});
  return {};
}

/// A reduction's operands: input 0, the INT32 axes (input 1), output 0 and ReducerOptions'
/// keep_dims (false without options).
struct ReducerOperands {
  uint32_t input = 0, axes = 0, output = 0;
  bool keepDims = false;
};

Result<ReducerOperands> reducerOperands(OperatorContext& c) {
  ReducerOperands r;
  NNHAL_ASSIGN_OR_RETURN(r.input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(r.axes, c.int32TensorInput(1, "axis"));
  NNHAL_ASSIGN_OR_RETURN(r.output, c.output(0));
  const auto* options = c.options<::tflite::ReducerOptions>();
  r.keepDims = options != nullptr && options->keep_dims();
  return r;
}

}  // namespace

// --- generic shapes ------------------------------------------------------------------------

Result<void> mapPassThrough(OperatorContext& c, OperationType type, size_t inputs, size_t outputs) {
  NNHAL_TRY(c.expectCounts(inputs, inputs, outputs));
  std::vector<uint32_t> in;
  for (size_t i = 0; i < inputs; ++i) {
    NNHAL_ASSIGN_OR_RETURN(const uint32_t operand, c.input(i));
    in.push_back(operand);
  }
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> out, c.outputs());
  c.addOperation(type, std::move(in), std::move(out));
  return {};
}

Result<void> mapBinaryActivation(OperatorContext& c, OperationType type,
                                 ::tflite::ActivationFunctionType activation) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input0, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input1, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_ASSIGN_OR_RETURN(const int32_t code, c.fusedActivation(activation));
  c.addOperation(type, {input0, input1, c.builder().addInt32Scalar(code)}, {output});
  return {};
}

Result<void> mapPool(OperatorContext& c, OperationType type) {
  NNHAL_TRY(c.expectCounts(1, 1, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options,
                         c.requiredOptions<::tflite::Pool2DOptions>("Pool2DOptions"));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_ASSIGN_OR_RETURN(const WindowSettings w, windowSettings(c, *options));
  NNHAL_TRY(expectPositive(c, options->filter_width(), "filter_width"));
  NNHAL_TRY(expectPositive(c, options->filter_height(), "filter_height"));
  ModelBuilder& b = c.builder();
  c.addOperation(type,
                 {input, b.addInt32Scalar(w.padding), b.addInt32Scalar(w.strideW),
                  b.addInt32Scalar(w.strideH), b.addInt32Scalar(options->filter_width()),
                  b.addInt32Scalar(options->filter_height()), b.addInt32Scalar(w.activation)},
                 {output});
  return {};
}

Result<void> mapReduce(OperatorContext& c, OperationType type) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const ReducerOperands r, reducerOperands(c));
  c.addOperation(type, {r.input, r.axes, c.builder().addBoolScalar(r.keepDims)}, {r.output});
  return {};
}

// --- convolutions and the first operators --------------------------------------------------

Result<void> mapConv2d(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 3, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options,
                         c.requiredOptions<::tflite::Conv2DOptions>("Conv2DOptions"));
  NNHAL_ASSIGN_OR_RETURN(const WeightedOperands ops, weightedOperands(c, 0));
  NNHAL_ASSIGN_OR_RETURN(const WindowSettings w, windowSettings(c, *options));
  return addConvolution(c, OperationType::CONV_2D, ops, w, std::nullopt,
                        options->dilation_w_factor(), options->dilation_h_factor());
}

/// The multiplier is out / in channels when the shapes give both (newer TFLite files may
/// leave the option stale), else the option's value.
Result<void> mapDepthwiseConv2d(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 3, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options, c.requiredOptions<::tflite::DepthwiseConv2DOptions>(
                                                  "DepthwiseConv2DOptions"));
  NNHAL_ASSIGN_OR_RETURN(const WeightedOperands ops, weightedOperands(c, 3));
  NNHAL_ASSIGN_OR_RETURN(const WindowSettings w, windowSettings(c, *options));
  int32_t multiplier = options->depth_multiplier();
  const auto& inDims = c.operand(ops.input).dimensions;
  const auto& filterDims = c.operand(ops.weights).dimensions;
  if (inDims.size() == 4 && filterDims.size() == 4 && inDims[3] != 0 && filterDims[3] != 0 &&
      filterDims[3] % inDims[3] == 0) {
    multiplier = static_cast<int32_t>(filterDims[3] / inDims[3]);
  }
  NNHAL_TRY(expectPositive(c, multiplier, "depth_multiplier"));
  return addConvolution(c, OperationType::DEPTHWISE_CONV_2D, ops, w, multiplier,
                        options->dilation_w_factor(), options->dilation_h_factor());
}

/// Only the default weights format has an NNAPI equivalent. keep_num_dims = true becomes
/// FULLY_CONNECTED into a 2-D temporary [batch, units] and a RESHAPE to the input's leading
/// dimensions and units, as the NNAPI delegate emits it. Hybrid (float input, quantized
/// weights): the weights are dequantized first.
Result<void> mapFullyConnected(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 3, 1));
  const auto* options = c.options<::tflite::FullyConnectedOptions>();
  if (options != nullptr &&
      options->weights_format() != ::tflite::FullyConnectedOptionsWeightsFormat_DEFAULT) {
    return c.error(std::string("weights_format ") +
                   ::tflite::EnumNameFullyConnectedOptionsWeightsFormat(options->weights_format()) +
                   " is unsupported");
  }
  NNHAL_ASSIGN_OR_RETURN(const WeightedOperands ops, weightedOperands(c, 0));
  NNHAL_ASSIGN_OR_RETURN(const int32_t activation,
                         c.fusedActivation(options ? options->fused_activation_function()
                                                   : ::tflite::ActivationFunctionType_NONE));
  ModelBuilder& b = c.builder();
  if (options == nullptr || !options->keep_num_dims()) {
    c.addOperation(OperationType::FULLY_CONNECTED,
                   {ops.input, ops.weights, ops.bias, b.addInt32Scalar(activation)}, {ops.output});
    return {};
  }
  // keep_num_dims: the output keeps the input's leading dimensions, the last one = units.
  const std::vector<uint32_t> inDims = c.operand(ops.input).dimensions;
  const std::vector<uint32_t> weightDims = c.operand(ops.weights).dimensions;
  if (inDims.empty() || weightDims.size() != 2 || weightDims[0] == 0) {
    return c.error("keep_num_dims = true needs an input of known rank and 2-D weights");
  }
  const uint32_t units = weightDims[0];
  std::vector<int32_t> shape;
  uint64_t batch = 1;
  int unknown = 0;
  for (size_t d = 0; d + 1 < inDims.size(); ++d) {
    if (inDims[d] == 0) ++unknown;
    shape.push_back(inDims[d] == 0 ? -1 : static_cast<int32_t>(inDims[d]));
    batch *= inDims[d];
  }
  if (unknown > 1) {
    return c.error("keep_num_dims = true with more than one unknown leading dimension");
  }
  shape.push_back(static_cast<int32_t>(units));
  const uint32_t flat =
      addTemporaryLike(b, ops.output, {unknown != 0 ? 0 : static_cast<uint32_t>(batch), units});
  c.addOperation(OperationType::FULLY_CONNECTED,
                 {ops.input, ops.weights, ops.bias, b.addInt32Scalar(activation)}, {flat});
  c.addOperation(OperationType::RESHAPE, {flat, b.addInt32Vector(shape)}, {ops.output});
  return {};
}

/// Beta is FLOAT16 for a float16 input, FLOAT32 otherwise.
Result<void> mapSoftmax(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(1, 1, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options,
                         c.requiredOptions<::tflite::SoftmaxOptions>("SoftmaxOptions"));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const uint32_t beta = addFloatScalarFor(c.builder(), c.operand(input).type, options->beta());
  c.addOperation(OperationType::SOFTMAX, {input, beta}, {output});
  return {};
}

/// The axis is made non-negative with the output rank. NNAPI has no fused activation here,
/// so only NONE is accepted.
Result<void> mapConcatenation(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(1, c.inputCount() == 0 ? 1 : c.inputCount(), 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options,
                         c.requiredOptions<::tflite::ConcatenationOptions>("ConcatenationOptions"));
  if (options->fused_activation_function() != ::tflite::ActivationFunctionType_NONE) {
    return c.error(std::string("fused activation ") +
                   ::tflite::EnumNameActivationFunctionType(options->fused_activation_function()) +
                   " is unsupported on CONCATENATION");
  }
  std::vector<uint32_t> inputs;
  for (size_t i = 0; i < c.inputCount(); ++i) {
    NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(i));
    inputs.push_back(input);
  }
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  int32_t axis = options->axis();
  if (axis < 0) {
    const auto rank = static_cast<int32_t>(c.operand(output).dimensions.size());
    if (rank == 0) return c.error("negative axis with an output of unknown rank");
    axis += rank;
    if (axis < 0) return c.error("axis " + std::to_string(options->axis()) + " is out of range");
  }
  inputs.push_back(c.builder().addInt32Scalar(axis));
  const OperationType type = int32Variant(c, OperationType::CONCATENATION, inputs[0]);
  c.addOperation(type, std::move(inputs), {output});
  return {};
}

/// MEAN keeps its NN HAL 1.1 form: keep dims is an INT32 (1 / 0), not a BOOL.
Result<void> mapMean(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const ReducerOperands r, reducerOperands(c));
  c.addOperation(OperationType::MEAN,
                 {r.input, r.axes, c.builder().addInt32Scalar(r.keepDims ? 1 : 0)}, {r.output});
  return {};
}

/// The shape is the second input tensor when present, else the new_shape option, else the
/// output tensor's own shape.
Result<void> mapReshape(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(1, 2, 1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  uint32_t shape = 0;
  if (c.hasInput(1)) {
    NNHAL_ASSIGN_OR_RETURN(shape, c.int32TensorInput(1, "shape"));
  } else if (const auto* options = c.options<::tflite::ReshapeOptions>();
             options != nullptr && options->new_shape() != nullptr) {
    const std::vector<int32_t> values(options->new_shape()->begin(), options->new_shape()->end());
    shape = c.builder().addInt32Vector(values);
  } else {
    const auto& dims = c.operand(output).dimensions;
    if (dims.empty()) return c.error("no target shape: no shape input, option or output shape");
    std::vector<int32_t> values;
    for (const uint32_t d : dims) {
      if (d == 0) return c.error("no target shape and the output shape is not fully known");
      values.push_back(static_cast<int32_t>(d));
    }
    shape = c.builder().addInt32Vector(values);
  }
  c.addOperation(int32Variant(c, OperationType::RESHAPE, input), {input, shape}, {output});
  return {};
}

}  // namespace nnhal::hal::tfl
