#include "tools/cpu_reference/xnnpack_operators.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "tools/cpu_reference/nnapi_params.h"

namespace nnhal::cpu_reference {
namespace {

/// The element types the baseline computes in.
enum class Kind { kU8, kF32 };

std::vector<size_t> shapeOf(const Operand& operand) {
  return {operand.dimensions.begin(), operand.dimensions.end()};
}

/// Refuses operand `index` unless it has `type` (or is an omitted NO_VALUE operand).
Result<void> expectType(const Model& model, uint32_t index, OperandType type, const char* what) {
  const Operand& operand = model.main.operands[index];
  if (operand.lifetime == OperandLifeTime::NO_VALUE || operand.type == type) return {};
  return invalidArgument(std::string(what) + " must be " + std::string(toString(type)) + ", not " +
                         std::string(toString(operand.type)));
}

/// Maps an XNNPACK status to a Result naming the call.
Result<void> check(xnn_status status, const char* call) {
  if (status == xnn_status_success) return {};
  const std::string message = std::string(call) + " returned " + toString(status);
  if (status == xnn_status_out_of_memory) return fail(ErrorStatus::GENERAL_FAILURE, message);
  return invalidArgument(message);
}

Result<Kind> kindOf(const Model& model, uint32_t index) {
  const Operand& operand = model.main.operands[index];
  if (operand.type == OperandType::TENSOR_QUANT8_ASYMM) return Kind::kU8;
  if (operand.type == OperandType::TENSOR_FLOAT32) return Kind::kF32;
  return invalidArgument("operand " + std::to_string(index) + " has type " +
                         std::string(toString(operand.type)) +
                         "; only TENSOR_QUANT8_ASYMM and TENSOR_FLOAT32 are supported");
}

/// The kind shared by the data input (operand 0) and output 0 of `operation`.
Result<Kind> operationKind(const Model& model, const Operation& operation) {
  NNHAL_ASSIGN_OR_RETURN(const Kind input, kindOf(model, operation.inputs[0]));
  NNHAL_ASSIGN_OR_RETURN(const Kind output, kindOf(model, operation.outputs[0]));
  if (input != output) return invalidArgument("input and output types differ");
  return input;
}

Result<uint8_t> zeroPoint(const Operand& operand) {
  if (operand.zeroPoint < 0 || operand.zeroPoint > 255) {
    return invalidArgument("zero point " + std::to_string(operand.zeroPoint) +
                           " is outside [0, 255]");
  }
  return static_cast<uint8_t>(operand.zeroPoint);
}

/// Output clamp of a fused activation in uint8, as NNAPI computes it (CalculateActivation
/// RangeUint8): the real bounds quantized with the output's scale and zero point.
struct U8Range {
  uint8_t min = 0;
  uint8_t max = 255;
};
U8Range u8Range(FusedActivationFunc activation, const Operand& output) {
  const auto quantize = [&](float real) {
    return output.zeroPoint + static_cast<int32_t>(std::round(real / output.scale));
  };
  int32_t low = 0;
  int32_t high = 255;
  switch (activation) {
    case FusedActivationFunc::NONE:
      break;
    case FusedActivationFunc::RELU:
      low = std::max(low, quantize(0.0f));
      break;
    case FusedActivationFunc::RELU1:
      low = std::max(low, quantize(-1.0f));
      high = std::min(high, quantize(1.0f));
      break;
    case FusedActivationFunc::RELU6:
      low = std::max(low, quantize(0.0f));
      high = std::min(high, quantize(6.0f));
      break;
  }
  return {static_cast<uint8_t>(std::clamp(low, 0, 255)),
          static_cast<uint8_t>(std::clamp(high, 0, 255))};
}

struct F32Range {
  float min = -std::numeric_limits<float>::infinity();
  float max = std::numeric_limits<float>::infinity();
};
F32Range f32Range(FusedActivationFunc activation) {
  switch (activation) {
    case FusedActivationFunc::NONE:
      return {};
    case FusedActivationFunc::RELU:
      return {0.0f, std::numeric_limits<float>::infinity()};
    case FusedActivationFunc::RELU1:
      return {-1.0f, 1.0f};
    case FusedActivationFunc::RELU6:
      return {0.0f, 6.0f};
  }
  return {};
}

template <typename T>
const T* in(const OperatorContext& ctx, uint32_t index) {
  return static_cast<const T*>(ctx.data(index));
}

template <typename T>
T* out(const OperatorContext& ctx, uint32_t index) {
  return static_cast<T*>(ctx.data(index));
}

/// CONV_2D and DEPTHWISE_CONV_2D: input [N, H, W, C], output [N, OH, OW, O].
Result<XnnOperator> createConvolution(const OperatorContext& ctx, const Operation& operation) {
  const Model& model = ctx.model;
  NNHAL_ASSIGN_OR_RETURN(const Window2d w, readConvolution(model, operation));
  NNHAL_ASSIGN_OR_RETURN(const Kind kind, operationKind(model, operation));
  const Operand& input = model.main.operands[operation.inputs[0]];
  const Operand& filter = model.main.operands[operation.inputs[1]];
  const Operand& output = model.main.operands[operation.outputs[0]];
  const bool depthwise = operation.type == OperationType::DEPTHWISE_CONV_2D;
  const uint32_t inChannels = input.dimensions[3];
  const uint32_t outChannels = depthwise ? filter.dimensions[3] : filter.dimensions[0];
  if (output.dimensions.size() != 4 || output.dimensions[3] != outChannels ||
      output.dimensions[1] != windowOutputSize(input.dimensions[1], w.padTop, w.padBottom,
                                               w.filterHeight, w.strideHeight, w.dilationHeight) ||
      output.dimensions[2] != windowOutputSize(input.dimensions[2], w.padLeft, w.padRight,
                                               w.filterWidth, w.strideWidth, w.dilationWidth)) {
    return invalidArgument("the output shape does not follow from the input and parameters");
  }
  if (depthwise ? outChannels != inChannels * w.depthMultiplier
                : filter.dimensions[3] != inChannels) {
    return invalidArgument("the filter's channels do not match the input's");
  }
  const uint32_t groups = depthwise ? inChannels : 1;
  const size_t groupInput = depthwise ? 1 : inChannels;
  const size_t groupOutput = depthwise ? w.depthMultiplier : outChannels;
  const uint32_t flags = depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0;
  xnn_operator_t op = nullptr;
  if (kind == Kind::kU8) {
    NNHAL_TRY(expectType(model, operation.inputs[1], OperandType::TENSOR_QUANT8_ASYMM,
                         "the filter of a uint8 convolution"));
    NNHAL_TRY(expectType(model, operation.inputs[2], OperandType::TENSOR_INT32, "the bias"));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t inputZero, zeroPoint(input));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t filterZero, zeroPoint(filter));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t outputZero, zeroPoint(output));
    const U8Range range = u8Range(w.activation, output);
    NNHAL_TRY(check(
        xnn_create_convolution2d_nhwc_qu8(
            w.padTop, w.padRight, w.padBottom, w.padLeft, w.filterHeight, w.filterWidth,
            w.strideHeight, w.strideWidth, w.dilationHeight, w.dilationWidth, groups, groupInput,
            groupOutput, inChannels, outChannels, inputZero, input.scale, filterZero, filter.scale,
            in<uint8_t>(ctx, operation.inputs[1]), in<int32_t>(ctx, operation.inputs[2]),
            outputZero, output.scale, range.min, range.max, flags, &op),
        "xnn_create_convolution2d_nhwc_qu8"));
    XnnOperator owned(op);
    NNHAL_TRY(check(
        xnn_setup_convolution2d_nhwc_qu8(op, input.dimensions[0], input.dimensions[1],
                                         input.dimensions[2], in<uint8_t>(ctx, operation.inputs[0]),
                                         out<uint8_t>(ctx, operation.outputs[0]), ctx.threadpool),
        "xnn_setup_convolution2d_nhwc_qu8"));
    return owned;
  }
  NNHAL_TRY(expectType(model, operation.inputs[1], OperandType::TENSOR_FLOAT32, "the filter"));
  NNHAL_TRY(expectType(model, operation.inputs[2], OperandType::TENSOR_FLOAT32, "the bias"));
  const F32Range range = f32Range(w.activation);
  NNHAL_TRY(check(
      xnn_create_convolution2d_nhwc_f32(
          w.padTop, w.padRight, w.padBottom, w.padLeft, w.filterHeight, w.filterWidth,
          w.strideHeight, w.strideWidth, w.dilationHeight, w.dilationWidth, groups, groupInput,
          groupOutput, inChannels, outChannels, in<float>(ctx, operation.inputs[1]),
          in<float>(ctx, operation.inputs[2]), range.min, range.max, flags, &op),
      "xnn_create_convolution2d_nhwc_f32"));
  XnnOperator owned(op);
  NNHAL_TRY(check(
      xnn_setup_convolution2d_nhwc_f32(op, input.dimensions[0], input.dimensions[1],
                                       input.dimensions[2], in<float>(ctx, operation.inputs[0]),
                                       out<float>(ctx, operation.outputs[0]), ctx.threadpool),
      "xnn_setup_convolution2d_nhwc_f32"));
  return owned;
}

/// FULLY_CONNECTED: input flattened to [batch, I], weights [O, I], output [batch, O].
Result<XnnOperator> createFullyConnected(const OperatorContext& ctx, const Operation& operation) {
  const Model& model = ctx.model;
  if (operation.inputs.size() != 4) return invalidArgument("expected 4 inputs");
  NNHAL_ASSIGN_OR_RETURN(const Kind kind, operationKind(model, operation));
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation,
                         fusedActivation(model, operation.inputs[3]));
  const Operand& input = model.main.operands[operation.inputs[0]];
  const Operand& weights = model.main.operands[operation.inputs[1]];
  const Operand& output = model.main.operands[operation.outputs[0]];
  if (weights.dimensions.size() != 2 || weights.dimensions[1] == 0 ||
      elementCount(input) % weights.dimensions[1] != 0) {
    return invalidArgument("the weights are not [units, input size]");
  }
  const size_t inputSize = weights.dimensions[1];
  const size_t units = weights.dimensions[0];
  const size_t batch = elementCount(input) / inputSize;
  if (elementCount(output) != batch * units) {
    return invalidArgument("the output is not [batch, units]");
  }
  xnn_operator_t op = nullptr;
  if (kind == Kind::kU8) {
    NNHAL_TRY(expectType(model, operation.inputs[1], OperandType::TENSOR_QUANT8_ASYMM,
                         "the weights of a uint8 FULLY_CONNECTED"));
    NNHAL_TRY(expectType(model, operation.inputs[2], OperandType::TENSOR_INT32, "the bias"));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t inputZero, zeroPoint(input));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t weightsZero, zeroPoint(weights));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t outputZero, zeroPoint(output));
    const U8Range range = u8Range(activation, output);
    NNHAL_TRY(check(
        xnn_create_fully_connected_nc_qu8(
            inputSize, units, inputSize, units, inputZero, input.scale, weightsZero, weights.scale,
            in<uint8_t>(ctx, operation.inputs[1]), in<int32_t>(ctx, operation.inputs[2]),
            outputZero, output.scale, range.min, range.max, 0, &op),
        "xnn_create_fully_connected_nc_qu8"));
    XnnOperator owned(op);
    NNHAL_TRY(check(
        xnn_setup_fully_connected_nc_qu8(op, batch, in<uint8_t>(ctx, operation.inputs[0]),
                                         out<uint8_t>(ctx, operation.outputs[0]), ctx.threadpool),
        "xnn_setup_fully_connected_nc_qu8"));
    return owned;
  }
  NNHAL_TRY(expectType(model, operation.inputs[1], OperandType::TENSOR_FLOAT32, "the weights"));
  NNHAL_TRY(expectType(model, operation.inputs[2], OperandType::TENSOR_FLOAT32, "the bias"));
  const F32Range range = f32Range(activation);
  NNHAL_TRY(check(xnn_create_fully_connected_nc_f32(
                      inputSize, units, inputSize, units, in<float>(ctx, operation.inputs[1]),
                      in<float>(ctx, operation.inputs[2]), range.min, range.max, 0, &op),
                  "xnn_create_fully_connected_nc_f32"));
  XnnOperator owned(op);
  NNHAL_TRY(
      check(xnn_setup_fully_connected_nc_f32(op, batch, in<float>(ctx, operation.inputs[0]),
                                             out<float>(ctx, operation.outputs[0]), ctx.threadpool),
            "xnn_setup_fully_connected_nc_f32"));
  return owned;
}

/// ADD with NumPy-style broadcasting (XNNPACK's add_nd broadcasts the same way).
Result<XnnOperator> createAdd(const OperatorContext& ctx, const Operation& operation) {
  const Model& model = ctx.model;
  if (operation.inputs.size() != 3) return invalidArgument("expected 3 inputs");
  NNHAL_ASSIGN_OR_RETURN(const Kind kind, operationKind(model, operation));
  NNHAL_ASSIGN_OR_RETURN(const Kind kindB, kindOf(model, operation.inputs[1]));
  if (kindB != kind) return invalidArgument("the two inputs' types differ");
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation,
                         fusedActivation(model, operation.inputs[2]));
  const Operand& a = model.main.operands[operation.inputs[0]];
  const Operand& b = model.main.operands[operation.inputs[1]];
  const Operand& output = model.main.operands[operation.outputs[0]];
  const std::vector<size_t> shapeA = shapeOf(a);
  const std::vector<size_t> shapeB = shapeOf(b);
  xnn_operator_t op = nullptr;
  if (kind == Kind::kU8) {
    NNHAL_ASSIGN_OR_RETURN(const uint8_t zeroA, zeroPoint(a));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t zeroB, zeroPoint(b));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t outputZero, zeroPoint(output));
    const U8Range range = u8Range(activation, output);
    NNHAL_TRY(check(xnn_create_add_nd_qu8(zeroA, a.scale, zeroB, b.scale, outputZero, output.scale,
                                          range.min, range.max, 0, &op),
                    "xnn_create_add_nd_qu8"));
    XnnOperator owned(op);
    NNHAL_TRY(check(xnn_setup_add_nd_qu8(op, shapeA.size(), shapeA.data(), shapeB.size(),
                                         shapeB.data(), in<uint8_t>(ctx, operation.inputs[0]),
                                         in<uint8_t>(ctx, operation.inputs[1]),
                                         out<uint8_t>(ctx, operation.outputs[0]), ctx.threadpool),
                    "xnn_setup_add_nd_qu8"));
    return owned;
  }
  const F32Range range = f32Range(activation);
  NNHAL_TRY(check(xnn_create_add_nd_f32(range.min, range.max, 0, &op), "xnn_create_add_nd_f32"));
  XnnOperator owned(op);
  NNHAL_TRY(check(
      xnn_setup_add_nd_f32(op, shapeA.size(), shapeA.data(), shapeB.size(), shapeB.data(),
                           in<float>(ctx, operation.inputs[0]), in<float>(ctx, operation.inputs[1]),
                           out<float>(ctx, operation.outputs[0]), ctx.threadpool),
      "xnn_setup_add_nd_f32"));
  return owned;
}

/// AVERAGE_POOL_2D, input [N, H, W, C]. A window covering the whole unpadded input is a
/// global average pooling over H * W pixels, XNNPACK's faster operator for it.
Result<XnnOperator> createAveragePool(const OperatorContext& ctx, const Operation& operation) {
  const Model& model = ctx.model;
  NNHAL_ASSIGN_OR_RETURN(const Window2d w, readPooling(model, operation));
  NNHAL_ASSIGN_OR_RETURN(const Kind kind, operationKind(model, operation));
  const Operand& input = model.main.operands[operation.inputs[0]];
  const Operand& output = model.main.operands[operation.outputs[0]];
  const auto& d = input.dimensions;
  const size_t channels = d[3];
  if (output.dimensions.size() != 4 || output.dimensions[3] != channels ||
      output.dimensions[1] !=
          windowOutputSize(d[1], w.padTop, w.padBottom, w.filterHeight, w.strideHeight, 1) ||
      output.dimensions[2] !=
          windowOutputSize(d[2], w.padLeft, w.padRight, w.filterWidth, w.strideWidth, 1)) {
    return invalidArgument("the output shape does not follow from the input and parameters");
  }
  const bool global = w.padTop == 0 && w.padBottom == 0 && w.padLeft == 0 && w.padRight == 0 &&
                      w.filterHeight == d[1] && w.filterWidth == d[2];
  xnn_operator_t op = nullptr;
  if (kind == Kind::kU8) {
    NNHAL_ASSIGN_OR_RETURN(const uint8_t inputZero, zeroPoint(input));
    NNHAL_ASSIGN_OR_RETURN(const uint8_t outputZero, zeroPoint(output));
    const U8Range range = u8Range(w.activation, output);
    const auto* source = in<uint8_t>(ctx, operation.inputs[0]);
    auto* target = out<uint8_t>(ctx, operation.outputs[0]);
    if (global) {
      NNHAL_TRY(check(xnn_create_global_average_pooling_nwc_qu8(
                          channels, channels, channels, inputZero, input.scale, outputZero,
                          output.scale, range.min, range.max, 0, &op),
                      "xnn_create_global_average_pooling_nwc_qu8"));
      XnnOperator owned(op);
      NNHAL_TRY(check(xnn_setup_global_average_pooling_nwc_qu8(op, d[0], size_t{d[1]} * d[2],
                                                               source, target, ctx.threadpool),
                      "xnn_setup_global_average_pooling_nwc_qu8"));
      return owned;
    }
    NNHAL_TRY(check(xnn_create_average_pooling2d_nhwc_qu8(
                        w.padTop, w.padRight, w.padBottom, w.padLeft, w.filterHeight, w.filterWidth,
                        w.strideHeight, w.strideWidth, channels, channels, channels, inputZero,
                        input.scale, outputZero, output.scale, range.min, range.max, 0, &op),
                    "xnn_create_average_pooling2d_nhwc_qu8"));
    XnnOperator owned(op);
    NNHAL_TRY(check(
        xnn_setup_average_pooling2d_nhwc_qu8(op, d[0], d[1], d[2], source, target, ctx.threadpool),
        "xnn_setup_average_pooling2d_nhwc_qu8"));
    return owned;
  }
  const F32Range range = f32Range(w.activation);
  const auto* source = in<float>(ctx, operation.inputs[0]);
  auto* target = out<float>(ctx, operation.outputs[0]);
  if (global) {
    NNHAL_TRY(check(xnn_create_global_average_pooling_nwc_f32(channels, channels, channels,
                                                              range.min, range.max, 0, &op),
                    "xnn_create_global_average_pooling_nwc_f32"));
    XnnOperator owned(op);
    NNHAL_TRY(check(xnn_setup_global_average_pooling_nwc_f32(op, d[0], size_t{d[1]} * d[2], source,
                                                             target, ctx.threadpool),
                    "xnn_setup_global_average_pooling_nwc_f32"));
    return owned;
  }
  NNHAL_TRY(check(xnn_create_average_pooling2d_nhwc_f32(
                      w.padTop, w.padRight, w.padBottom, w.padLeft, w.filterHeight, w.filterWidth,
                      w.strideHeight, w.strideWidth, channels, channels, channels, range.min,
                      range.max, 0, &op),
                  "xnn_create_average_pooling2d_nhwc_f32"));
  XnnOperator owned(op);
  NNHAL_TRY(check(
      xnn_setup_average_pooling2d_nhwc_f32(op, d[0], d[1], d[2], source, target, ctx.threadpool),
      "xnn_setup_average_pooling2d_nhwc_f32"));
  return owned;
}

/// SOFTMAX over the last dimension. XNNPACK has no beta: in uint8 it is folded into the
/// input scale (softmax(beta * x) with x = scale * (q - zp)); in float only beta = 1 runs.
Result<XnnOperator> createSoftmax(const OperatorContext& ctx, const Operation& operation) {
  const Model& model = ctx.model;
  NNHAL_ASSIGN_OR_RETURN(const Kind kind, operationKind(model, operation));
  NNHAL_ASSIGN_OR_RETURN(const float beta, float32Scalar(model, operation.inputs[1]));
  const Operand& input = model.main.operands[operation.inputs[0]];
  const Operand& output = model.main.operands[operation.outputs[0]];
  if (input.dimensions.empty()) return invalidArgument("the input has no dimensions");
  if (operation.inputs.size() > 2) {
    NNHAL_ASSIGN_OR_RETURN(const int32_t axis, int32Scalar(model, operation.inputs[2]));
    const auto rank = static_cast<int32_t>(input.dimensions.size());
    if (axis != -1 && axis != rank - 1) return invalidArgument("only the last axis is supported");
  }
  const size_t channels = input.dimensions.back();
  const size_t batch = elementCount(input) / channels;
  xnn_operator_t op = nullptr;
  if (kind == Kind::kU8) {
    NNHAL_ASSIGN_OR_RETURN(const uint8_t outputZero, zeroPoint(output));
    NNHAL_TRY(check(xnn_create_softmax_nc_qu8(channels, channels, channels, input.scale * beta,
                                              outputZero, output.scale, 0, &op),
                    "xnn_create_softmax_nc_qu8"));
    XnnOperator owned(op);
    NNHAL_TRY(
        check(xnn_setup_softmax_nc_qu8(op, batch, in<uint8_t>(ctx, operation.inputs[0]),
                                       out<uint8_t>(ctx, operation.outputs[0]), ctx.threadpool),
              "xnn_setup_softmax_nc_qu8"));
    return owned;
  }
  if (beta != 1.0f) return invalidArgument("float SOFTMAX supports beta = 1 only");
  NNHAL_TRY(check(xnn_create_softmax_nc_f32(channels, channels, channels, 0, &op),
                  "xnn_create_softmax_nc_f32"));
  XnnOperator owned(op);
  NNHAL_TRY(check(xnn_setup_softmax_nc_f32(op, batch, in<float>(ctx, operation.inputs[0]),
                                           out<float>(ctx, operation.outputs[0]), ctx.threadpool),
                  "xnn_setup_softmax_nc_f32"));
  return owned;
}

}  // namespace

Result<XnnOperator> createOperator(const OperatorContext& ctx, const Operation& operation) {
  if (operation.inputs.empty() || operation.outputs.size() != 1) {
    return invalidArgument("expected inputs and one output");
  }
  switch (operation.type) {
    case OperationType::CONV_2D:
    case OperationType::DEPTHWISE_CONV_2D:
      return createConvolution(ctx, operation);
    case OperationType::FULLY_CONNECTED:
      return createFullyConnected(ctx, operation);
    case OperationType::ADD:
      return createAdd(ctx, operation);
    case OperationType::AVERAGE_POOL_2D:
      return createAveragePool(ctx, operation);
    case OperationType::SOFTMAX:
      return createSoftmax(ctx, operation);
    default:
      return invalidArgument("the XNNPACK baseline does not support this operation");
  }
}

const char* toString(xnn_status status) {
  switch (status) {
    case xnn_status_success:
      return "success";
    case xnn_status_uninitialized:
      return "uninitialized";
    case xnn_status_invalid_parameter:
      return "invalid_parameter";
    case xnn_status_invalid_state:
      return "invalid_state";
    case xnn_status_unsupported_parameter:
      return "unsupported_parameter";
    case xnn_status_unsupported_hardware:
      return "unsupported_hardware";
    case xnn_status_out_of_memory:
      return "out_of_memory";
  }
  return "unknown status";
}

}  // namespace nnhal::cpu_reference
