#include "bench/onednn_operations.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>

#include "tools/cpu_reference/nnapi_params.h"

namespace nnhal::bench::onednn {
namespace {

using dnnl::algorithm;
using dnnl::prop_kind;
using dt = memory::data_type;
using tag = memory::format_tag;

constexpr int32_t kNoProducer = -1;

bool isQuantized(const Operand& operand) {
  return operand.type == OperandType::TENSOR_QUANT8_ASYMM;
}

/// The real values of a constant tensor: float32 as stored, uint8 dequantized with its scale
/// and zero point, int32 (a bias) multiplied by its scale.
Result<std::vector<float>> realValues(const Model& model, uint32_t index) {
  NNHAL_ASSIGN_OR_RETURN(const std::span<const uint8_t> bytes,
                         cpu_reference::constantBytes(model, index));
  const Operand& operand = model.main.operands[index];
  const size_t count = cpu_reference::elementCount(operand);
  std::vector<float> values(count);
  switch (operand.type) {
    case OperandType::TENSOR_FLOAT32:
      if (bytes.size() < count * sizeof(float)) break;
      std::memcpy(values.data(), bytes.data(), count * sizeof(float));
      return values;
    case OperandType::TENSOR_QUANT8_ASYMM:
      if (bytes.size() < count) break;
      for (size_t i = 0; i < count; ++i) {
        values[i] = operand.scale * static_cast<float>(int32_t{bytes[i]} - operand.zeroPoint);
      }
      return values;
    case OperandType::TENSOR_INT32:
      if (bytes.size() < count * sizeof(int32_t)) break;
      for (size_t i = 0; i < count; ++i) {
        int32_t value = 0;
        std::memcpy(&value, bytes.data() + i * sizeof(int32_t), sizeof(int32_t));
        values[i] = operand.scale * static_cast<float>(value);
      }
      return values;
    default:
      return invalidArgument("constant operand " + std::to_string(index) + " has type " +
                             std::string(toString(operand.type)));
  }
  return invalidArgument("constant operand " + std::to_string(index) +
                         " is shorter than its shape");
}

/// Appends a fused activation as an eltwise post-op, its bounds in steps of `dstScale`.
void appendActivation(dnnl::post_ops& ops, FusedActivationFunc activation, float dstScale) {
  switch (activation) {
    case FusedActivationFunc::NONE:
      return;
    case FusedActivationFunc::RELU:
      ops.append_eltwise(1.0f, algorithm::eltwise_relu, 0.0f, 0.0f);
      return;
    case FusedActivationFunc::RELU1:
      ops.append_eltwise(1.0f, algorithm::eltwise_clip, -1.0f / dstScale, 1.0f / dstScale);
      return;
    case FusedActivationFunc::RELU6:
      ops.append_eltwise(1.0f, algorithm::eltwise_clip, 0.0f, 6.0f / dstScale);
      return;
  }
}

/// Weights in oneDNN's scheme: f32 as they are, or s8 per output channel with the scales
/// that turn a step back into a real value.
struct PackedWeights {
  memory user;
  std::vector<float> scales;  ///< per output channel (int8 only)
};

/// Makes `real` (in `desc`'s plain order, `outputs` channels of `perOutput` values each) a
/// user memory: f32, or s8 with per-channel symmetric scales.
PackedWeights packWeights(const dnnl::engine& engine, const std::vector<float>& real,
                          size_t outputs, const memory::dims& dims, tag layout, bool quantized) {
  const size_t perOutput = real.size() / outputs;
  PackedWeights packed;
  if (!quantized) {
    packed.user = memory({dims, dt::f32, layout}, engine);
    std::memcpy(packed.user.get_data_handle(), real.data(), real.size() * sizeof(float));
    return packed;
  }
  packed.user = memory({dims, dt::s8, layout}, engine);
  auto* out = static_cast<int8_t*>(packed.user.get_data_handle());
  packed.scales.resize(outputs);
  for (size_t o = 0; o < outputs; ++o) {
    float largest = 0.0f;
    for (size_t i = 0; i < perOutput; ++i)
      largest = std::max(largest, std::abs(real[o * perOutput + i]));
    const float scale = largest > 0.0f ? largest / 127.0f : 1.0f;
    packed.scales[o] = scale;
    for (size_t i = 0; i < perOutput; ++i) {
      const float q = std::nearbyint(real[o * perOutput + i] / scale);
      out[o * perOutput + i] = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
    }
  }
  return packed;
}

/// Reorders constant `from` into `desc` now (weights packed once).
memory packOnce(Network& network, const memory& from, const memory::desc& desc) {
  if (from.get_desc() == desc) return from;
  memory source = from;
  memory to(desc, network.engine());
  dnnl::reorder(source, to).execute(network.stream(), source, to);
  network.stream().wait();
  return to;
}

/// The bias: f32, or s32 in the accumulator's steps (input scale x weight scale per channel).
memory packBias(const dnnl::engine& engine, const std::vector<float>& real, bool quantized,
                float inputScale, const std::vector<float>& weightScales) {
  const memory::dims dims{static_cast<memory::dim>(real.size())};
  if (!quantized) {
    memory bias({dims, dt::f32, tag::a}, engine);
    std::memcpy(bias.get_data_handle(), real.data(), real.size() * sizeof(float));
    return bias;
  }
  memory bias({dims, dt::s32, tag::a}, engine);
  auto* out = static_cast<int32_t*>(bias.get_data_handle());
  for (size_t o = 0; o < real.size(); ++o) {
    out[o] = static_cast<int32_t>(std::lround(real[o] / (inputScale * weightScales[o])));
  }
  return bias;
}

/// Output scales that requantize the accumulator into the destination's steps.
std::vector<float> outputScales(float inputScale, const std::vector<float>& weightScales,
                                float outputScale) {
  std::vector<float> scales(weightScales.size());
  for (size_t o = 0; o < scales.size(); ++o) {
    scales[o] = inputScale * weightScales[o] / outputScale;
  }
  return scales;
}

/// CONV_2D and DEPTHWISE_CONV_2D, NHWC; with `fused`, also the ADD it absorbs.
Result<void> convolution(Network& net, const Operation& op, const std::optional<FusedAdd>& fused) {
  const Model& model = net.model();
  NNHAL_ASSIGN_OR_RETURN(const cpu_reference::Window2d w,
                         cpu_reference::readConvolution(model, op));
  const Operand& input = net.operand(op.inputs[0]);
  const Operand& filter = net.operand(op.inputs[1]);
  const uint32_t outputIndex = fused ? fused->output : op.outputs[0];
  const Operand& output = net.operand(op.outputs[0]);
  const bool depthwise = op.type == OperationType::DEPTHWISE_CONV_2D;
  const bool quantized = isQuantized(input);
  const uint32_t inChannels = input.dimensions[3];
  const uint32_t outChannels = depthwise ? filter.dimensions[3] : filter.dimensions[0];
  const uint32_t kh = w.filterHeight;
  const uint32_t kw = w.filterWidth;
  if (output.dimensions.size() != 4 || output.dimensions[3] != outChannels ||
      (depthwise ? outChannels != inChannels * w.depthMultiplier
                 : filter.dimensions[3] != inChannels)) {
    return invalidArgument("the filter's or the output's channels do not match");
  }
  if (filter.type != input.type)
    return invalidArgument("the filter's type differs from the input's");
  if (!net.placed(op.inputs[0])) return invalidArgument("the input is read before it is written");
  NNHAL_ASSIGN_OR_RETURN(const std::vector<float> stored, realValues(model, op.inputs[1]));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<float> bias, realValues(model, op.inputs[2]));
  // NNAPI's [O, KH, KW, I] (or [1, KH, KW, O]) into oneDNN's oihw (goihw: g x m = O).
  const uint32_t groupInputs = depthwise ? 1 : inChannels;
  std::vector<float> real(stored.size());
  for (uint32_t o = 0; o < outChannels; ++o) {
    for (uint32_t y = 0; y < kh; ++y) {
      for (uint32_t x = 0; x < kw; ++x) {
        for (uint32_t i = 0; i < groupInputs; ++i) {
          const size_t from = depthwise ? (size_t{y} * kw + x) * outChannels + o
                                        : ((size_t{o} * kh + y) * kw + x) * inChannels + i;
          real[((size_t{o} * groupInputs + i) * kh + y) * kw + x] = stored[from];
        }
      }
    }
  }
  const memory::dims weightDims = depthwise ? memory::dims{inChannels, w.depthMultiplier, 1, kh, kw}
                                            : memory::dims{outChannels, inChannels, kh, kw};
  const PackedWeights weights = packWeights(net.engine(), real, outChannels, weightDims,
                                            depthwise ? tag::goihw : tag::oihw, quantized);
  const Quantization in = net.quantizationOf(op.inputs[0]);
  Quantization out;
  FusedActivationFunc activation = w.activation;
  if (fused) {
    NNHAL_ASSIGN_OR_RETURN(out, schemeOf(net.operand(fused->output)));
    const Operation& add = net.graph().operations[fused->add];
    NNHAL_ASSIGN_OR_RETURN(activation, cpu_reference::fusedActivation(model, add.inputs[2]));
  } else {
    NNHAL_ASSIGN_OR_RETURN(out, schemeOf(output));
  }
  const memory::dim n = input.dimensions[0];
  const memory::desc src({n, inChannels, input.dimensions[1], input.dimensions[2]}, in.type,
                         tag::any);
  const memory::desc wei(weightDims, quantized ? dt::s8 : dt::f32, tag::any);
  const memory::desc biasDesc({outChannels}, quantized ? dt::s32 : dt::f32, tag::a);
  const memory::desc dst =
      fused ? net.memoryOf(fused->other).get_desc()
            : memory::desc({n, outChannels, output.dimensions[1], output.dimensions[2]}, out.type,
                           tag::any);
  const dnnl::convolution_forward::desc desc(
      prop_kind::forward_inference, algorithm::convolution_direct, src, wei, biasDesc, dst,
      {w.strideHeight, w.strideWidth}, {w.dilationHeight - 1, w.dilationWidth - 1},
      {w.padTop, w.padLeft}, {w.padBottom, w.padRight});
  dnnl::primitive_attr attr;
  if (quantized) attr.set_output_scales(1 << 1, outputScales(in.scale, weights.scales, out.scale));
  dnnl::post_ops ops;
  if (fused) {
    ops.append_sum(quantized ? net.quantizationOf(fused->other).scale / out.scale : 1.0f);
  }
  appendActivation(ops, activation, out.scale);
  attr.set_post_ops(ops);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, net.engine());
  NNHAL_ASSIGN_OR_RETURN(const memory source, net.readAs(op.inputs[0], pd.src_desc()));
  const memory packed = packOnce(net, weights.user, pd.weights_desc());
  const memory biasMemory = packOnce(
      net, packBias(net.engine(), bias, quantized, in.scale, weights.scales), pd.bias_desc());
  const memory destination = fused ? net.placeOver(outputIndex, fused->other, pd.dst_desc(), out)
                                   : net.place(outputIndex, pd.dst_desc(), out);
  net.add(dnnl::convolution_forward(pd),
          {{DNNL_ARG_SRC, source},
           {DNNL_ARG_WEIGHTS, packed},
           {DNNL_ARG_BIAS, biasMemory},
           {DNNL_ARG_DST, destination}},
          describe(pd, fused ? "convolution+sum" : "convolution"));
  return {};
}

/// FULLY_CONNECTED: the input flattened to [batch, I], weights [O, I].
Result<void> fullyConnected(Network& net, const Operation& op) {
  const Model& model = net.model();
  if (op.inputs.size() != 4) return invalidArgument("expected 4 inputs");
  const Operand& input = net.operand(op.inputs[0]);
  const Operand& weightsOperand = net.operand(op.inputs[1]);
  const Operand& output = net.operand(op.outputs[0]);
  if (weightsOperand.dimensions.size() != 2 || weightsOperand.type != input.type) {
    return invalidArgument("the weights must be [O, I] of the input's type");
  }
  const uint32_t outputs = weightsOperand.dimensions[0];
  const uint32_t inputSize = weightsOperand.dimensions[1];
  if (inputSize == 0 || cpu_reference::elementCount(input) % inputSize != 0) {
    return invalidArgument("the input does not flatten to [batch, I]");
  }
  const memory::dim batch =
      static_cast<memory::dim>(cpu_reference::elementCount(input) / inputSize);
  NNHAL_ASSIGN_OR_RETURN(const std::vector<float> real, realValues(model, op.inputs[1]));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<float> bias, realValues(model, op.inputs[2]));
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation,
                         cpu_reference::fusedActivation(model, op.inputs[3]));
  const bool quantized = isQuantized(input);
  const Quantization in = net.quantizationOf(op.inputs[0]);
  NNHAL_ASSIGN_OR_RETURN(const Quantization out, schemeOf(output));
  const PackedWeights weights =
      packWeights(net.engine(), real, outputs, {outputs, inputSize}, tag::ab, quantized);
  const memory::desc src({batch, inputSize}, in.type, tag::ab);
  const dnnl::inner_product_forward::desc desc(
      prop_kind::forward_inference, src,
      {{outputs, inputSize}, quantized ? dt::s8 : dt::f32, tag::any},
      {{outputs}, quantized ? dt::s32 : dt::f32, tag::a}, {{batch, outputs}, out.type, tag::ab});
  dnnl::primitive_attr attr;
  if (quantized) attr.set_output_scales(1 << 1, outputScales(in.scale, weights.scales, out.scale));
  dnnl::post_ops ops;
  appendActivation(ops, activation, out.scale);
  attr.set_post_ops(ops);
  const dnnl::inner_product_forward::primitive_desc pd(desc, attr, net.engine());
  // The input in its dense NNAPI order, read as [batch, I].
  NNHAL_ASSIGN_OR_RETURN(const memory dense, net.readAs(op.inputs[0], plainDesc(input, in.type)));
  const memory source(src, net.engine(), dense.get_data_handle());
  const memory packed = packOnce(net, weights.user, pd.weights_desc());
  const memory biasMemory = packOnce(
      net, packBias(net.engine(), bias, quantized, in.scale, weights.scales), pd.bias_desc());
  const memory destination = net.place(op.outputs[0], pd.dst_desc(), out);
  net.add(dnnl::inner_product_forward(pd),
          {{DNNL_ARG_SRC, source},
           {DNNL_ARG_WEIGHTS, packed},
           {DNNL_ARG_BIAS, biasMemory},
           {DNNL_ARG_DST, destination}},
          describe(pd, "inner_product"));
  return {};
}

/// AVERAGE_POOL_2D (padding excluded from the average, as NNAPI) and MAX_POOL_2D, in the
/// input's format; in int8 the output keeps the input's scale.
Result<void> pooling(Network& net, const Operation& op) {
  NNHAL_ASSIGN_OR_RETURN(const cpu_reference::Window2d w,
                         cpu_reference::readPooling(net.model(), op));
  const Operand& output = net.operand(op.outputs[0]);
  if (output.dimensions.size() != 4) return invalidArgument("the output must be 4-D");
  if (!net.placed(op.inputs[0])) return invalidArgument("the input is read before it is written");
  const memory& source = net.memoryOf(op.inputs[0]);
  const Quantization quant = net.quantizationOf(op.inputs[0]);
  const memory::desc dst(
      {output.dimensions[0], output.dimensions[3], output.dimensions[1], output.dimensions[2]},
      quant.type, tag::any);
  const algorithm kind = op.type == OperationType::MAX_POOL_2D
                             ? algorithm::pooling_max
                             : algorithm::pooling_avg_exclude_padding;
  const dnnl::pooling_forward::desc desc(
      prop_kind::forward_inference, kind, source.get_desc(), dst, {w.strideHeight, w.strideWidth},
      {w.filterHeight, w.filterWidth}, {w.padTop, w.padLeft}, {w.padBottom, w.padRight});
  dnnl::primitive_attr attr;
  dnnl::post_ops ops;
  appendActivation(ops, w.activation, quant.scale);
  attr.set_post_ops(ops);
  const dnnl::pooling_forward::primitive_desc pd(desc, attr, net.engine());
  const memory destination = net.place(op.outputs[0], pd.dst_desc(), quant);
  net.add(dnnl::pooling_forward(pd), {{DNNL_ARG_SRC, source}, {DNNL_ARG_DST, destination}},
          describe(pd, "pooling"));
  return {};
}

/// `like`'s format with another element type, when it is one of the common ones.
std::optional<memory::desc> sameFormat(const memory::desc& like, dt type) {
  static constexpr tag kCandidates[] = {tag::nhwc,   tag::nchw, tag::nChw8c, tag::nChw16c,
                                        tag::nChw4c, tag::ab,   tag::ba,     tag::a};
  for (const tag candidate : kCandidates) {
    try {
      const memory::desc probe(like.dims(), like.data_type(), candidate);
      if (probe == like) return memory::desc(like.dims(), type, candidate);
    } catch (const dnnl::error&) {
      // The candidate's rank differs from the tensor's.
    }
  }
  return std::nullopt;
}

/// ADD of two tensors of the same shape (no broadcast), not fused into a convolution.
Result<void> add(Network& net, const Operation& op) {
  if (op.inputs.size() != 3) return invalidArgument("expected 3 inputs");
  const Operand& a = net.operand(op.inputs[0]);
  const Operand& b = net.operand(op.inputs[1]);
  const Operand& output = net.operand(op.outputs[0]);
  if (a.dimensions != b.dimensions || a.dimensions != output.dimensions) {
    return invalidArgument("the oneDNN baseline adds tensors of one shape only");
  }
  if (!net.placed(op.inputs[0])) return invalidArgument("the input is read before it is written");
  NNHAL_ASSIGN_OR_RETURN(const FusedActivationFunc activation,
                         cpu_reference::fusedActivation(net.model(), op.inputs[2]));
  const Quantization qa = net.quantizationOf(op.inputs[0]);
  NNHAL_ASSIGN_OR_RETURN(const Quantization out, schemeOf(output));
  memory first = net.memoryOf(op.inputs[0]);
  if (!net.placed(op.inputs[1])) return invalidArgument("the input is read before it is written");
  std::optional<memory::desc> secondDesc =
      sameFormat(first.get_desc(), net.quantizationOf(op.inputs[1]).type);
  if (!secondDesc) {
    NNHAL_ASSIGN_OR_RETURN(first, net.readAs(op.inputs[0], plainDesc(a, qa.type)));
    secondDesc = plainDesc(b, net.quantizationOf(op.inputs[1]).type);
  }
  NNHAL_ASSIGN_OR_RETURN(const memory second, net.readAs(op.inputs[1], *secondDesc));
  const memory::desc dst =
      sameFormat(first.get_desc(), out.type).value_or(plainDesc(output, out.type));
  const dnnl::binary::desc desc(algorithm::binary_add, first.get_desc(), second.get_desc(), dst);
  dnnl::primitive_attr attr;
  if (isQuantized(a)) {
    attr.set_scales(DNNL_ARG_SRC_0, 0, {qa.scale / out.scale});
    attr.set_scales(DNNL_ARG_SRC_1, 0, {net.quantizationOf(op.inputs[1]).scale / out.scale});
  }
  dnnl::post_ops ops;
  appendActivation(ops, activation, out.scale);
  attr.set_post_ops(ops);
  const dnnl::binary::primitive_desc pd(desc, attr, net.engine());
  const memory destination = net.place(op.outputs[0], pd.dst_desc(), out);
  net.add(dnnl::binary(pd),
          {{DNNL_ARG_SRC_0, first}, {DNNL_ARG_SRC_1, second}, {DNNL_ARG_DST, destination}},
          describe(pd, "binary"));
  return {};
}

/// SOFTMAX over the last NNAPI dimension, in f32 (beta folded into the reorder into f32).
Result<void> softmax(Network& net, const Operation& op) {
  if (op.inputs.size() < 2) return invalidArgument("expected 2 or 3 inputs");
  const Operand& input = net.operand(op.inputs[0]);
  const Operand& output = net.operand(op.outputs[0]);
  const int rank = static_cast<int>(input.dimensions.size());
  if (op.inputs.size() >= 3) {
    NNHAL_ASSIGN_OR_RETURN(const int32_t axis,
                           cpu_reference::int32Scalar(net.model(), op.inputs[2]));
    if (axis != -1 && axis != rank - 1) return invalidArgument("only the last axis is supported");
  }
  NNHAL_ASSIGN_OR_RETURN(const float beta, cpu_reference::float32Scalar(net.model(), op.inputs[1]));
  const Quantization in = net.quantizationOf(op.inputs[0]);
  NNHAL_ASSIGN_OR_RETURN(const Quantization out, schemeOf(output));
  const memory::desc reals = plainDesc(input, dt::f32);
  NNHAL_ASSIGN_OR_RETURN(const memory source, net.readAs(op.inputs[0], reals, in.scale * beta));
  const int axis = rank == 4 ? 1 : rank - 1;
  const dnnl::softmax_forward::desc desc(prop_kind::forward_inference, reals, axis);
  const dnnl::softmax_forward::primitive_desc pd(desc, net.engine());
  if (out.type == dt::f32) {
    const memory destination = net.place(op.outputs[0], plainDesc(output, dt::f32), out);
    net.add(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, source}, {DNNL_ARG_DST, destination}},
            describe(pd, "softmax"));
    return {};
  }
  net.add(dnnl::softmax_forward(pd), {{DNNL_ARG_SRC, source}, {DNNL_ARG_DST, source}},
          describe(pd, "softmax"));
  const memory destination = net.place(op.outputs[0], plainDesc(output, out.type), out);
  dnnl::primitive_attr attr;
  attr.set_output_scales(0, {1.0f / out.scale});
  const dnnl::reorder::primitive_desc back(source, destination, attr);
  net.add(dnnl::reorder(back), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, destination}},
          describe(back, "reorder"));
  return {};
}

/// RESHAPE and SQUEEZE: the output is the input's dense bytes under the output's shape (a
/// reorder into a new buffer first when the input is stored blocked).
Result<void> alias(Network& net, const Operation& op) {
  NNHAL_TRY(cpu_reference::checkAlias(net.model(), op));
  const uint32_t from = op.inputs[0];
  const uint32_t to = op.outputs[0];
  if (!net.placed(from)) return invalidArgument("reshaping a constant is unsupported");
  const Quantization quant = net.quantizationOf(from);
  const memory::desc dense = plainDesc(net.operand(from), quant.type);
  const memory::desc shaped = plainDesc(net.operand(to), quant.type);
  if (net.memoryOf(from).get_desc() == dense) {
    net.placeOver(to, from, shaped, quant);
    return {};
  }
  const memory destination = net.place(to, shaped, quant);
  const memory view(dense, net.engine(), destination.get_data_handle());
  const memory& source = net.memoryOf(from);
  const dnnl::reorder::primitive_desc pd(source, view);
  net.add(dnnl::reorder(pd), {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, view}},
          describe(pd, "reorder"));
  return {};
}

/// The operations and their outputs' producers.
std::vector<int32_t> producers(const Network& net) {
  std::vector<int32_t> producer(net.graph().operands.size(), kNoProducer);
  const auto& operations = net.graph().operations;
  for (size_t k = 0; k < operations.size(); ++k) {
    for (const uint32_t output : operations[k].outputs) {
      if (output < producer.size()) producer[output] = static_cast<int32_t>(k);
    }
  }
  return producer;
}

/// Whether ADD `k` can run as the sum post-op of the convolution producing `conv`, written
/// over `other`.
bool canFuse(const Network& net, const std::vector<int32_t>& producer, size_t k, uint32_t conv,
             uint32_t other) {
  const Operation& add = net.graph().operations[k];
  const int32_t p = producer[conv];
  const int32_t q = producer[other];
  if (p == kNoProducer || q == kNoProducer || q >= p) return false;
  const Operation& producerOp = net.graph().operations[static_cast<size_t>(p)];
  const Operation& otherOp = net.graph().operations[static_cast<size_t>(q)];
  if (producerOp.type != OperationType::CONV_2D || cpu_reference::isAlias(otherOp.type))
    return false;
  const auto window = cpu_reference::readConvolution(net.model(), producerOp);
  if (!window || window->activation != FusedActivationFunc::NONE) return false;
  if (net.readers(conv) != std::vector<size_t>{k} || net.isModelOutput(conv)) return false;
  if (net.isModelInput(other) || net.isModelOutput(other)) return false;
  for (const size_t reader : net.readers(other)) {
    if (reader != k && reader >= static_cast<size_t>(p)) return false;
  }
  const Operand& out = net.operand(add.outputs[0]);
  const Operand& a = net.operand(conv);
  const Operand& b = net.operand(other);
  if (a.dimensions != out.dimensions || b.dimensions != out.dimensions) return false;
  const auto outScheme = schemeOf(out);
  const auto otherScheme = schemeOf(b);
  return outScheme && otherScheme && outScheme->type == otherScheme->type && a.type == out.type &&
         !cpu_reference::isConstant(b);
}

}  // namespace

Fusions planFusions(const Network& net) {
  const auto& operations = net.graph().operations;
  Fusions fusions;
  fusions.intoConvolution.resize(operations.size());
  fusions.fusedAway.assign(operations.size(), false);
  const std::vector<int32_t> producer = producers(net);
  for (size_t k = 0; k < operations.size(); ++k) {
    const Operation& op = operations[k];
    if (op.type != OperationType::ADD || op.inputs.size() != 3 || op.outputs.size() != 1) continue;
    for (const auto& [conv, other] :
         {std::pair{op.inputs[0], op.inputs[1]}, std::pair{op.inputs[1], op.inputs[0]}}) {
      if (!canFuse(net, producer, k, conv, other)) continue;
      const auto p = static_cast<size_t>(producer[conv]);
      if (fusions.intoConvolution[p]) continue;
      fusions.intoConvolution[p] = FusedAdd{k, other, op.outputs[0]};
      fusions.fusedAway[k] = true;
      break;
    }
  }
  return fusions;
}

Result<void> addOperation(Network& net, size_t k, const Fusions& fusions) {
  const Operation& op = net.graph().operations[k];
  if (fusions.fusedAway[k]) return {};
  if (op.inputs.empty() || op.outputs.size() != 1) {
    return invalidArgument("expected inputs and one output");
  }
  for (const uint32_t index : op.inputs) {
    if (index >= net.graph().operands.size()) return invalidArgument("an input does not exist");
  }
  return guarded([&]() -> Result<void> {
    switch (op.type) {
      case OperationType::CONV_2D:
      case OperationType::DEPTHWISE_CONV_2D:
        return convolution(net, op, fusions.intoConvolution[k]);
      case OperationType::FULLY_CONNECTED:
        return fullyConnected(net, op);
      case OperationType::AVERAGE_POOL_2D:
      case OperationType::MAX_POOL_2D:
        return pooling(net, op);
      case OperationType::ADD:
        return add(net, op);
      case OperationType::SOFTMAX:
        return softmax(net, op);
      case OperationType::RESHAPE:
      case OperationType::SQUEEZE:
        return alias(net, op);
      default:
        return invalidArgument("the oneDNN baseline does not support this operation");
    }
  });
}

}  // namespace nnhal::bench::onednn
