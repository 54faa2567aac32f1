#include "tools/common/calibration_workloads.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "hal/tflite/model_builder.h"
#include "tools/common/dequantize_model.h"

namespace nnhal::tools {
namespace {

// Activation quantization: the image in [-1, 1], RELU6 outputs in [0, 6], linear outputs
// (projections, residual sums, logits) in about [-6, 6].
constexpr float kInputScale = 1.0f / 128;
constexpr int32_t kInputZeroPoint = 128;
constexpr float kRelu6Scale = 6.0f / 255;
constexpr float kLinearScale = 12.0f / 255;
constexpr int32_t kLinearZeroPoint = 128;
constexpr int32_t kWeightZeroPoint = 128;
// NNAPI's implicit padding codes and the fused activation codes used here.
constexpr int32_t kPaddingSame = 1;
constexpr int32_t kPaddingValid = 2;
constexpr int32_t kActivationNone = 0;
constexpr int32_t kActivationRelu6 = 3;
constexpr uint32_t kClasses = 1001;
// Weight gains (the amplitude of uniform weights times sqrt(fan-in)): sqrt(3) keeps a linear
// layer's output variance at its input's, sqrt(6) a RELU6 layer's (He's rule, since the
// activation drops half the variance). The classifier's is larger: the global average pool
// before it averages the variance away.
constexpr float kLinearGain = 1.73f;
constexpr float kReluGain = 2.45f;
constexpr float kClassifierGain = 12.0f;

Operand tensorOperand(OperandType type, std::vector<uint32_t> dimensions, float scale,
                      int32_t zeroPoint) {
  Operand operand;
  operand.type = type;
  operand.dimensions = std::move(dimensions);
  operand.scale = scale;
  operand.zeroPoint = zeroPoint;
  return operand;
}

struct Tensor {
  uint32_t index = 0;
  uint32_t height = 0;
  uint32_t width = 0;
  uint32_t channels = 0;
  float scale = 0;
  int32_t zeroPoint = 0;
};

// Builds an NHWC TENSOR_QUANT8_ASYMM network layer by layer.
class NetworkBuilder {
 public:
  Tensor input(uint32_t size) {
    const Tensor t = activation(size, size, 3, kInputScale, kInputZeroPoint);
    builder_.operand(t.index).lifetime = OperandLifeTime::SUBGRAPH_INPUT;
    input_ = t.index;
    return t;
  }

  // CONV_2D with a [out, k, k, in] filter, SAME padding.
  Tensor convolution(const Tensor& in, uint32_t outChannels, uint32_t kernel, uint32_t stride,
                     bool relu6, float gain = 0) {
    const uint32_t fanIn = kernel * kernel * in.channels;
    const auto [filter, filterScale] = weights({outChannels, kernel, kernel, in.channels}, fanIn,
                                               gain != 0 ? gain
                                               : relu6   ? kReluGain
                                                         : kLinearGain);
    const Tensor out =
        activation(outSize(in.height, stride), outSize(in.width, stride), outChannels,
                   relu6 ? kRelu6Scale : kLinearScale, relu6 ? 0 : kLinearZeroPoint);
    builder_.addOperation(OperationType::CONV_2D,
                          {in.index, filter, bias(outChannels, in.scale * filterScale),
                           builder_.addInt32Scalar(kPaddingSame),
                           builder_.addInt32Scalar(static_cast<int32_t>(stride)),
                           builder_.addInt32Scalar(static_cast<int32_t>(stride)),
                           builder_.addInt32Scalar(relu6 ? kActivationRelu6 : kActivationNone)},
                          {out.index});
    return out;
  }

  // DEPTHWISE_CONV_2D 3x3 with a [1, 3, 3, channels] filter, SAME padding, RELU6.
  Tensor depthwise(const Tensor& in, uint32_t stride) {
    const auto [filter, filterScale] = weights({1, 3, 3, in.channels}, 9, kReluGain);
    const Tensor out = activation(outSize(in.height, stride), outSize(in.width, stride),
                                  in.channels, kRelu6Scale, 0);
    builder_.addOperation(OperationType::DEPTHWISE_CONV_2D,
                          {in.index, filter, bias(in.channels, in.scale * filterScale),
                           builder_.addInt32Scalar(kPaddingSame),
                           builder_.addInt32Scalar(static_cast<int32_t>(stride)),
                           builder_.addInt32Scalar(static_cast<int32_t>(stride)),
                           builder_.addInt32Scalar(1), builder_.addInt32Scalar(kActivationRelu6)},
                          {out.index});
    return out;
  }

  Tensor add(const Tensor& a, const Tensor& b) {
    const Tensor out = activation(a.height, a.width, a.channels, kLinearScale, kLinearZeroPoint);
    builder_.addOperation(OperationType::ADD,
                          {a.index, b.index, builder_.addInt32Scalar(kActivationNone)},
                          {out.index});
    return out;
  }

  // AVERAGE_POOL_2D over the whole plane (a quantized pool keeps its input's scale).
  Tensor globalAveragePool(const Tensor& in) {
    const Tensor out = activation(1, 1, in.channels, in.scale, in.zeroPoint);
    builder_.addOperation(
        OperationType::AVERAGE_POOL_2D,
        {in.index, builder_.addInt32Scalar(kPaddingValid), builder_.addInt32Scalar(1),
         builder_.addInt32Scalar(1), builder_.addInt32Scalar(static_cast<int32_t>(in.width)),
         builder_.addInt32Scalar(static_cast<int32_t>(in.height)),
         builder_.addInt32Scalar(kActivationNone)},
        {out.index});
    return out;
  }

  // The published models' head: a 1x1 convolution to the class logits, RESHAPE to
  // [1, classes] and SOFTMAX (beta 1, output scale 1/256 as NNAPI requires). Returns the
  // network's output operand.
  uint32_t classifier(const Tensor& pooled) {
    const Tensor logits = convolution(pooled, kClasses, 1, 1, /*relu6=*/false, kClassifierGain);
    Operand flat = tensorOperand(OperandType::TENSOR_QUANT8_ASYMM, {1, kClasses}, logits.scale,
                                 logits.zeroPoint);
    const uint32_t reshaped = builder_.addOperand(flat);
    const int32_t shape[] = {1, static_cast<int32_t>(kClasses)};
    builder_.addOperation(OperationType::RESHAPE, {logits.index, builder_.addInt32Vector(shape)},
                          {reshaped});
    flat.scale = 1.0f / 256;
    flat.zeroPoint = 0;
    flat.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
    const uint32_t probabilities = builder_.addOperand(flat);
    builder_.addOperation(OperationType::SOFTMAX, {reshaped, builder_.addFloat32Scalar(1.0f)},
                          {probabilities});
    return probabilities;
  }

  Result<Model> finish(uint32_t output) && {
    return std::move(builder_).finish({input_}, {output});
  }

 private:
  static uint32_t outSize(uint32_t in, uint32_t stride) { return (in + stride - 1) / stride; }

  Tensor activation(uint32_t height, uint32_t width, uint32_t channels, float scale,
                    int32_t zeroPoint) {
    const uint32_t index = builder_.addOperand(tensorOperand(
        OperandType::TENSOR_QUANT8_ASYMM, {1, height, width, channels}, scale, zeroPoint));
    return {index, height, width, channels, scale, zeroPoint};
  }

  // Uniform weights in [-a, a] with a = gain / sqrt(fanIn): a unit-variance input gives an
  // output of about unit variance, so the activations keep their range layer after layer.
  std::pair<uint32_t, float> weights(std::vector<uint32_t> dimensions, uint32_t fanIn, float gain) {
    const float scale = gain / std::sqrt(static_cast<float>(fanIn)) / 128;
    size_t count = 1;
    for (const uint32_t d : dimensions) count *= d;
    std::vector<uint8_t> values(count);
    for (uint8_t& v : values) v = static_cast<uint8_t>(next() >> 24);
    const uint32_t index = builder_.addOperand(tensorOperand(
        OperandType::TENSOR_QUANT8_ASYMM, std::move(dimensions), scale, kWeightZeroPoint));
    builder_.setConstantOwned(index, std::move(values));
    return {index, scale};
  }

  // TENSOR_INT32 bias of scale input scale x filter scale (NNAPI's rule), small values.
  uint32_t bias(uint32_t count, float scale) {
    std::vector<int32_t> values(count);
    for (int32_t& v : values) v = static_cast<int32_t>(next() >> 25) - 64;
    const uint32_t index =
        builder_.addOperand(tensorOperand(OperandType::TENSOR_INT32, {count}, scale, 0));
    std::vector<uint8_t> bytes(count * sizeof(int32_t));
    std::memcpy(bytes.data(), values.data(), bytes.size());
    builder_.setConstantOwned(index, std::move(bytes));
    return index;
  }

  // A 32-bit linear congruential generator (Numerical Recipes' constants): the same weights
  // on every machine and every run.
  uint32_t next() { return state_ = state_ * 1664525u + 1013904223u; }

  hal::tfl::ModelBuilder builder_;
  uint32_t input_ = 0;
  uint32_t state_ = 0x2545F491u;
};

}  // namespace

Result<Model> mobileNetV1Quant() {
  // Width 0.25: every pointwise convolution a quarter of MobileNet v1's channels.
  struct Layer {
    uint32_t stride;
    uint32_t channels;
  };
  constexpr Layer kLayers[] = {{1, 16},  {2, 32},  {1, 32},  {2, 64},  {1, 64},  {2, 128}, {1, 128},
                               {1, 128}, {1, 128}, {1, 128}, {1, 128}, {2, 256}, {1, 256}};
  NetworkBuilder net;
  Tensor x = net.convolution(net.input(128), 8, 3, 2, true);
  for (const Layer& layer : kLayers) {
    x = net.convolution(net.depthwise(x, layer.stride), layer.channels, 1, 1, true);
  }
  const uint32_t output = net.classifier(net.globalAveragePool(x));
  return std::move(net).finish(output);
}

Result<Model> mobileNetV2Quant() {
  // The inverted residual blocks: expansion t, output channels c, repeats n, first stride s.
  struct Stage {
    uint32_t expansion;
    uint32_t channels;
    uint32_t repeats;
    uint32_t stride;
  };
  constexpr Stage kStages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                               {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  NetworkBuilder net;
  Tensor x = net.convolution(net.input(224), 32, 3, 2, true);
  for (const Stage& stage : kStages) {
    for (uint32_t r = 0; r < stage.repeats; ++r) {
      const uint32_t stride = r == 0 ? stage.stride : 1;
      Tensor y = x;
      if (stage.expansion != 1) {
        y = net.convolution(y, x.channels * stage.expansion, 1, 1, true);
      }
      y = net.convolution(net.depthwise(y, stride), stage.channels, 1, 1, false);
      x = (stride == 1 && x.channels == stage.channels) ? net.add(x, y) : y;
    }
  }
  x = net.convolution(x, 1280, 1, 1, true);
  const uint32_t output = net.classifier(net.globalAveragePool(x));
  return std::move(net).finish(output);
}

Result<std::vector<CalibrationWorkload>> builtInCalibrationWorkloads() {
  std::vector<CalibrationWorkload> workloads;
  NNHAL_ASSIGN_OR_RETURN(Model v1, mobileNetV1Quant());
  NNHAL_ASSIGN_OR_RETURN(Model v2, mobileNetV2Quant());
  NNHAL_ASSIGN_OR_RETURN(Model v2Float, dequantizeModel(v2));
  workloads.push_back({"mobilenet_v1_0.25_128_quant", true, std::move(v1)});
  workloads.push_back({"mobilenet_v2_1.0_224_quant", true, std::move(v2)});
  workloads.push_back({"mobilenet_v2_1.0_224_float", false, std::move(v2Float)});
  return workloads;
}

}  // namespace nnhal::tools
