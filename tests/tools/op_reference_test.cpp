// The operation-level check against TFLite's reference integer arithmetic (issue 26, item 4).
//
// Each real model in shared/models is imported, every intermediate tensor is made a model
// output as well, and the model runs once on the embedded driver with seeded random inputs.
// Then every quantized CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED, ADD, SUB, MUL,
// AVERAGE_POOL_2D, MAX_POOL_2D, QUANTIZE, DEQUANTIZE, CONCATENATION, LOGISTIC,
// RESIZE_BILINEAR, SOFTMAX, MEAN and RESHAPE of the model is recomputed from the very inputs
// nnhal gave it with TFLite's arithmetic (tools/tflite_reference_ops.h), and the result must
// equal nnhal's bit for bit. The only allowed differences are the documented ones: nnhal
// requantizes convolutions with the NNAPI CPU reference's multiplier (the scale product in
// float), TFLite with the product in double; and nnhal rounds a quantized MEAN once where
// TFLite's reference paths truncate or round twice. An element may differ from TFLite's
// formula only where it equals the documented one, and then by one step at most. Operation by
// operation, so one rounding cannot hide behind the next. Quantized random graphs get the same
// check, for MEAN (in no real model here) and for SOFTMAX over random shapes and axes.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "hal/operand_utils.h"
#include "hal/tflite/model_builder.h"
#include "nnhal/device.h"
#include "nnhal/memory.h"
#include "nnhal/prepared_model.h"
#include "nnhal/tflite_import.h"
#include "nnhal/types.h"
#include "tools/common/random_graph.h"
#include "tools/tflite_reference_lstm.h"
#include "tools/tflite_reference_ops.h"

namespace nnhal {
namespace {

namespace fs = std::filesystem;
namespace ref = tflite_reference;
const fs::path kModels = fs::path(NNHAL_SHARED_DIR) / "models";

bool isQuant8(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
         type == OperandType::TENSOR_QUANT8_SYMM ||
         type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
}

/// A real model whose intermediates are outputs too, run once; every operand's bytes at hand.
class ExposedRun {
 public:
  /// Imports `file` for `device`, runs it on inputs drawn from `seed`. Empty after a failed
  /// expectation.
  static std::optional<ExposedRun> run(Device& device, const fs::path& file, uint32_t seed) {
    auto imported = importTfliteFile(file, {.extensions = device.getSupportedExtensions()});
    EXPECT_TRUE(imported) << imported.error().message;
    if (!imported) return std::nullopt;
    return run(device, imported->model, seed);
  }

  /// Runs `model` (its intermediates made outputs) on inputs drawn from `seed`.
  static std::optional<ExposedRun> run(Device& device, const Model& model, uint32_t seed) {
    ExposedRun r;
    r.model_ = model;
    Subgraph& g = r.model_.main;
    for (uint32_t i = 0; i < g.operands.size(); ++i) {
      Operand& o = g.operands[i];
      if (o.lifetime != OperandLifeTime::TEMPORARY_VARIABLE || o.dimensions.empty()) continue;
      if (!hal::hasFullySpecifiedShape(o.type, o.dimensions)) continue;
      o.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
      g.outputIndexes.push_back(i);
    }
    // One pool: the inputs, then the outputs, each 64-byte aligned.
    size_t size = 0;
    const auto place = [&](uint32_t operand) {
      const Operand& o = g.operands[operand];
      const size_t bytes = hal::byteSize(o.type, o.dimensions).value_or(0);
      r.locations_[operand] = {static_cast<uint32_t>(size), bytes};
      size += (bytes + 63) / 64 * 64;
    };
    for (const uint32_t i : g.inputIndexes) place(i);
    for (const uint32_t i : g.outputIndexes) place(i);
    auto pool = Memory::create(size);
    EXPECT_TRUE(pool) << pool.error().message;
    if (!pool) return std::nullopt;
    r.pool_ = *pool;
    std::mt19937 random(seed);
    Request request;
    request.pools = {r.pool_};
    for (const uint32_t i : g.inputIndexes) {
      const auto [offset, bytes] = r.locations_[i];
      uint8_t* data = r.pool_.data() + offset;
      if (g.operands[i].type == OperandType::TENSOR_FLOAT32) {
        std::uniform_real_distribution<float> real(-1.0f, 1.0f);
        for (size_t k = 0; k < bytes / 4; ++k) {
          const float v = real(random);
          std::memcpy(data + 4 * k, &v, 4);
        }
      } else {
        for (size_t k = 0; k < bytes; ++k) data[k] = static_cast<uint8_t>(random());
      }
      request.inputs.push_back(
          {false, {0, static_cast<uint32_t>(offset), static_cast<uint32_t>(bytes)}, {}});
    }
    for (const uint32_t i : g.outputIndexes) {
      const auto [offset, bytes] = r.locations_[i];
      request.outputs.push_back(
          {false, {0, static_cast<uint32_t>(offset), static_cast<uint32_t>(bytes)}, {}});
    }
    auto prepared = device.prepareModel(Model(r.model_));
    EXPECT_TRUE(prepared) << prepared.error().message;
    if (!prepared) return std::nullopt;
    auto ran = (*prepared)->executeSynchronously(request);
    EXPECT_TRUE(ran) << ran.error().message;
    if (!ran) return std::nullopt;
    return r;
  }

  const Subgraph& graph() const { return model_.main; }
  const Operand& operand(uint32_t i) const { return model_.main.operands[i]; }

  std::span<const uint8_t> bytes(uint32_t i) const {
    const Operand& o = operand(i);
    switch (o.lifetime) {
      case OperandLifeTime::CONSTANT_COPY:
        return {model_.operandValues.data() + o.location.offset, o.location.length};
      case OperandLifeTime::CONSTANT_REFERENCE:
        return {model_.pools[o.location.poolIndex].data() + o.location.offset, o.location.length};
      case OperandLifeTime::SUBGRAPH_INPUT:
      case OperandLifeTime::SUBGRAPH_OUTPUT: {
        const auto [offset, size] = locations_.at(i);
        return {pool_.data() + offset, size};
      }
      default:
        return {};
    }
  }

  int32_t int32At(uint32_t i) const {
    int32_t v = 0;
    std::memcpy(&v, bytes(i).data(), 4);
    return v;
  }
  bool boolAt(uint32_t i) const { return bytes(i)[0] != 0; }

  ref::QuantTensor quant(uint32_t i) const {
    const Operand& o = operand(i);
    ref::QuantTensor t;
    t.dims = o.dimensions;
    t.scale = o.scale;
    t.zeroPoint = o.zeroPoint;
    if (const auto* pc = std::get_if<SymmPerChannelQuantParams>(&o.extraParams)) {
      t.channelScales = pc->scales;
    }
    const auto b = bytes(i);
    if (o.type == OperandType::TENSOR_QUANT16_SYMM) {
      t.values.resize(b.size() / 2);
      for (size_t k = 0; k < t.values.size(); ++k) {
        int16_t v = 0;
        std::memcpy(&v, b.data() + 2 * k, 2);
        t.values[k] = v;
      }
      return t;
    }
    t.values.resize(b.size());
    const bool isUnsigned = o.type == OperandType::TENSOR_QUANT8_ASYMM;
    for (size_t k = 0; k < b.size(); ++k) {
      t.values[k] = isUnsigned ? int32_t{b[k]} : int32_t{static_cast<int8_t>(b[k])};
    }
    return t;
  }

  /// Whether optional operand `i` has a value.
  bool present(uint32_t i) const { return operand(i).lifetime != OperandLifeTime::NO_VALUE; }

  float floatAt(uint32_t i) const {
    float v = 0.0f;
    std::memcpy(&v, bytes(i).data(), 4);
    return v;
  }

  std::vector<int32_t> int32s(uint32_t i) const {
    const auto b = bytes(i);
    std::vector<int32_t> v(b.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
    return v;
  }

  std::vector<float> floats(uint32_t i) const {
    const auto b = bytes(i);
    std::vector<float> v(b.size() / 4);
    if (!v.empty()) std::memcpy(v.data(), b.data(), b.size());
    return v;
  }

 private:
  Model model_;
  Memory pool_;
  std::map<uint32_t, std::pair<size_t, size_t>> locations_;
};

/// What one operation type showed over a model.
struct Tally {
  size_t operations = 0;
  size_t elements = 0;
  size_t mismatches = 0;  ///< elements equal to neither formula: must stay 0
  size_t offTflite = 0;   ///< elements that follow the alternative where TFLite's differs
  int32_t largestOffTflite = 0;
  double alternativeShare = 0.0;  ///< the share of elements allowed to
  std::string firstMismatch;
};

std::pair<int32_t, int32_t> quantRange(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ? std::pair{0, 255} : std::pair{-128, 127};
}

/// NNAPI's implicit padding (SAME = 1, VALID = 2): the padding before the first element.
int32_t padBefore(int32_t code, uint32_t in, uint32_t stride, uint32_t filter, uint32_t dilation) {
  if (code != 1) return 0;
  const int64_t out = (int64_t{in} + stride - 1) / stride;
  const int64_t needed = (out - 1) * stride + (int64_t{filter} - 1) * dilation + 1;
  return static_cast<int32_t>(std::max<int64_t>(needed - in, 0) / 2);
}

/// The window and activation of a CONV_2D, DEPTHWISE_CONV_2D or pooling operation, read the
/// way types.hal lays out their explicit and implicit forms. `first` is the index of the first
/// padding input, `extra` the inputs between the strides and the activation (the depthwise
/// multiplier, or the pooling filter's width and height). Empty for NCHW (not checked here).
struct WindowArgs {
  ref::Window window;
  int32_t activation = 0;
  std::vector<int32_t> extra;
};
std::optional<WindowArgs> readWindow(const ExposedRun& run, const Operation& op, size_t first,
                                     size_t extra, uint32_t filterHeight, uint32_t filterWidth,
                                     bool filterFromExtra) {
  const auto& in = op.inputs;
  // The explicit form without layout has as many inputs as the implicit one with layout and
  // dilation; there the implicit form has its BOOL layout where the explicit has a stride.
  const size_t explicitCount = first + 7 + extra;
  const bool isExplicit =
      in.size() > explicitCount ||
      (in.size() == explicitCount && run.operand(in[first + 4 + extra]).type != OperandType::BOOL);
  WindowArgs a;
  size_t next = first;
  int32_t padCode = 0;
  if (isExplicit) {
    const int32_t padLeft = run.int32At(in[next]);
    const int32_t padTop = run.int32At(in[next + 2]);
    a.window.padLeft = padLeft;
    a.window.padTop = padTop;
    next += 4;
  } else {
    padCode = run.int32At(in[next]);
    next += 1;
  }
  a.window.strideWidth = run.int32At(in[next]);
  a.window.strideHeight = run.int32At(in[next + 1]);
  next += 2;
  for (size_t k = 0; k < extra; ++k) a.extra.push_back(run.int32At(in[next++]));
  a.activation = run.int32At(in[next++]);
  if (in.size() > next && run.boolAt(in[next])) return std::nullopt;  // NCHW
  ++next;
  if (in.size() > next + 1) {
    a.window.dilationWidth = run.int32At(in[next]);
    a.window.dilationHeight = run.int32At(in[next + 1]);
  }
  if (filterFromExtra) {
    filterWidth = static_cast<uint32_t>(a.extra[0]);
    filterHeight = static_cast<uint32_t>(a.extra[1]);
  }
  if (!isExplicit) {
    const Operand& input = run.operand(in[0]);
    a.window.padTop = padBefore(padCode, input.dimensions[1], a.window.strideHeight, filterHeight,
                                a.window.dilationHeight);
    a.window.padLeft = padBefore(padCode, input.dimensions[2], a.window.strideWidth, filterWidth,
                                 a.window.dilationWidth);
  }
  return a;
}

ref::OutputQuant outputQuant(const ExposedRun& run, uint32_t operand, int32_t activation) {
  const Operand& o = run.operand(operand);
  const auto [qmin, qmax] = quantRange(o.type);
  return {o.scale, o.zeroPoint, ref::activationRange(activation, o.scale, o.zeroPoint, qmin, qmax)};
}

/// The reference results of `op` by TFLite's formula and by NNAPI's (the same where they do
/// not differ), or nothing for an operation this check does not cover.
struct Expected {
  std::vector<int32_t> tflite;
  std::vector<int32_t> nnapi;  ///< the documented alternative nnhal follows (see the callers)
  /// The share of values that may follow the alternative: rare for the multiplier formula; any
  /// for MEAN, whose TFLite paths round differently from one another (truncation in one).
  double alternativeShare = 0.001;
};
std::optional<Expected> reference(const ExposedRun& run, const Operation& op) {
  const auto& in = op.inputs;
  const uint32_t outIndex = op.outputs[0];
  const Operand& out = run.operand(outIndex);
  const auto both = [](auto compute) {
    return Expected{compute(ref::Formula::kTflite), compute(ref::Formula::kNnapi)};
  };
  switch (op.type) {
    case OperationType::CONV_2D:
    case OperationType::DEPTHWISE_CONV_2D: {
      if (!isQuant8(run.operand(in[0]).type)) return std::nullopt;
      const bool depthwise = op.type == OperationType::DEPTHWISE_CONV_2D;
      const Operand& filter = run.operand(in[1]);
      const auto args = readWindow(run, op, 3, depthwise ? 1 : 0, filter.dimensions[1],
                                   filter.dimensions[2], false);
      if (!args) return std::nullopt;
      const auto input = run.quant(in[0]);
      const auto weights = run.quant(in[1]);
      const auto bias = run.int32s(in[2]);
      const auto q = outputQuant(run, outIndex, args->activation);
      return both([&](ref::Formula f) {
        return depthwise ? ref::depthwiseConv2d(input, weights, bias, args->window,
                                                static_cast<uint32_t>(args->extra[0]),
                                                out.dimensions[1], out.dimensions[2], q, f)
                         : ref::conv2d(input, weights, bias, args->window, out.dimensions[1],
                                       out.dimensions[2], q, f);
      });
    }
    case OperationType::FULLY_CONNECTED: {
      if (!isQuant8(run.operand(in[0]).type)) return std::nullopt;
      const auto input = run.quant(in[0]);
      const auto weights = run.quant(in[1]);
      const auto bias = run.int32s(in[2]);
      const auto q = outputQuant(run, outIndex, run.int32At(in[3]));
      return both([&](ref::Formula f) { return ref::fullyConnected(input, weights, bias, q, f); });
    }
    case OperationType::ADD:
    case OperationType::SUB:
    case OperationType::MUL: {
      if (!isQuant8(run.operand(in[0]).type)) return std::nullopt;
      const auto a = run.quant(in[0]);
      const auto b = run.quant(in[1]);
      const auto q = outputQuant(run, outIndex, run.int32At(in[2]));
      auto v = op.type == OperationType::MUL
                   ? ref::mul(a, b, out.dimensions, q)
                   : ref::addOrSub(a, b, out.dimensions, q, op.type == OperationType::SUB);
      return Expected{v, v};
    }
    case OperationType::AVERAGE_POOL_2D:
    case OperationType::MAX_POOL_2D: {
      if (!isQuant8(run.operand(in[0]).type)) return std::nullopt;
      const auto args = readWindow(run, op, 1, 2, 0, 0, true);
      if (!args) return std::nullopt;
      const auto q = outputQuant(run, outIndex, args->activation);
      auto v = ref::pool2d(run.quant(in[0]), args->window, static_cast<uint32_t>(args->extra[1]),
                           static_cast<uint32_t>(args->extra[0]), out.dimensions[1],
                           out.dimensions[2], q.range, op.type == OperationType::AVERAGE_POOL_2D);
      return Expected{v, v};
    }
    case OperationType::QUANTIZE: {
      if (run.operand(in[0]).type != OperandType::TENSOR_FLOAT32) return std::nullopt;
      const auto values = run.floats(in[0]);
      const auto [qmin, qmax] = quantRange(out.type);
      return both([&](ref::Formula f) {
        return ref::quantize(values, out.scale, out.zeroPoint, qmin, qmax, f);
      });
    }
    case OperationType::DEQUANTIZE: {
      if (!isQuant8(run.operand(in[0]).type) || out.type != OperandType::TENSOR_FLOAT32) {
        return std::nullopt;
      }
      // Compared as the floats' bit patterns.
      const auto values = ref::dequantize(run.quant(in[0]));
      std::vector<int32_t> bits(values.size());
      std::memcpy(bits.data(), values.data(), 4 * values.size());
      return Expected{bits, bits};
    }
    case OperationType::CONCATENATION: {
      if (!isQuant8(out.type)) return std::nullopt;
      std::vector<ref::QuantTensor> inputs;
      for (size_t k = 0; k + 1 < in.size(); ++k) inputs.push_back(run.quant(in[k]));
      int32_t axis = run.int32At(in.back());
      if (axis < 0) axis += static_cast<int32_t>(out.dimensions.size());
      const auto [qmin, qmax] = quantRange(out.type);
      auto v = ref::concatenation(inputs, static_cast<uint32_t>(axis), out.dimensions,
                                  outputQuant(run, outIndex, 0), qmin, qmax);
      return Expected{v, v};
    }
    case OperationType::LOGISTIC: {
      if (!isQuant8(out.type)) return std::nullopt;
      const auto [qmin, qmax] = quantRange(out.type);
      auto v = ref::logistic(run.quant(in[0]), out.scale, out.zeroPoint, qmin, qmax);
      return Expected{v, v};
    }
    case OperationType::RESIZE_BILINEAR: {
      if (!isQuant8(out.type)) return std::nullopt;
      const auto flag = [&](size_t k) { return in.size() > k && run.boolAt(in[k]); };
      if (flag(3)) return std::nullopt;  // NCHW
      auto v = ref::resizeBilinear(run.quant(in[0]), out.dimensions[1], out.dimensions[2], flag(4),
                                   flag(5), out.type == OperandType::TENSOR_QUANT8_ASYMM);
      return Expected{v, v};
    }
    case OperationType::SOFTMAX: {
      if (!isQuant8(out.type)) return std::nullopt;
      const auto input = run.quant(in[0]);
      int32_t axis = in.size() > 2 ? run.int32At(in[2]) : -1;
      if (axis < 0) axis += static_cast<int32_t>(input.dims.size());
      float beta = 0.0f;
      std::memcpy(&beta, run.bytes(in[1]).data(), 4);
      auto v = ref::softmax(input, beta, static_cast<uint32_t>(axis),
                            out.type == OperandType::TENSOR_QUANT8_ASYMM);
      return Expected{v, v};
    }
    case OperationType::MEAN: {
      // nnhal rounds the exact mean once (as XNNPACK, which LiteRT runs, does); TFLite's
      // reference paths truncate (same scales) or round twice: within one step of it.
      if (!isQuant8(out.type)) return std::nullopt;
      const auto input = run.quant(in[0]);
      const auto axes = run.int32s(in[1]);
      const bool keepDims = run.int32At(in[2]) != 0;
      const auto [qmin, qmax] = quantRange(out.type);
      return Expected{ref::mean(input, axes, keepDims, out.scale, out.zeroPoint, qmin, qmax),
                      ref::meanRoundedOnce(input, axes, out.scale, out.zeroPoint, qmin, qmax), 1.0};
    }
    case OperationType::QUANTIZED_LSTM: {
      // Without layer normalization; with a projection only for hidden zero point 0 (TFLite
      // and the NNAPI CPU reference fold a non-zero one into the projection differently).
      for (uint32_t k = 20; k < 24; ++k) {
        if (run.present(in[k])) return std::nullopt;
      }
      if (run.present(in[16]) && run.int32At(in[30]) != 0) return std::nullopt;
      ref::QuantizedLstmStep step;
      const auto optional = [&](uint32_t k) {
        return run.present(in[k]) ? run.quant(in[k]) : ref::QuantTensor{};
      };
      step.input = run.quant(in[0]);
      for (uint32_t g = 0; g < 4; ++g) {
        step.inputWeights[g] = optional(1 + g);
        step.recurrentWeights[g] = optional(5 + g);
        if (run.present(in[12 + g])) step.biases[g] = run.int32s(in[12 + g]);
      }
      for (uint32_t g = 0; g < 3; ++g) step.peepholeWeights[g] = optional(9 + g);
      step.projectionWeights = optional(16);
      if (run.present(in[17])) step.projectionBias = run.int32s(in[17]);
      step.outputState = run.quant(in[18]);
      step.cellState = run.quant(in[19]);
      step.cellClip = run.floatAt(in[24]);
      step.projectionClip = run.floatAt(in[25]);
      step.hiddenZeroPoint = run.int32At(in[30]);
      step.hiddenScale = run.floatAt(in[31]);
      const auto r = ref::quantizedLstm(step);
      std::vector<int32_t> v = r.outputState;
      v.insert(v.end(), r.cellState.begin(), r.cellState.end());
      v.insert(v.end(), r.output.begin(), r.output.end());
      return Expected{v, v};
    }
    case OperationType::RESHAPE: {
      if (!isQuant8(out.type)) return std::nullopt;
      auto v = run.quant(in[0]).values;
      return Expected{v, v};
    }
    default:
      return std::nullopt;
  }
}

/// nnhal's output of `op`, as raw values (or float bit patterns for DEQUANTIZE).
std::vector<int32_t> actual(const ExposedRun& run, const Operation& op) {
  if (op.type == OperationType::QUANTIZED_LSTM) {  // output state, cell state, output
    std::vector<int32_t> v;
    for (const uint32_t o : op.outputs) {
      const auto values = run.quant(o).values;
      v.insert(v.end(), values.begin(), values.end());
    }
    return v;
  }
  const Operand& out = run.operand(op.outputs[0]);
  if (out.type == OperandType::TENSOR_FLOAT32) return run.int32s(op.outputs[0]);
  return run.quant(op.outputs[0]).values;
}

/// Checks every covered operation of `run`; the tally per operation type.
std::map<std::string, Tally> checkOperations(const ExposedRun& run) {
  std::map<std::string, Tally> tallies;
  const auto& ops = run.graph().operations;
  for (size_t k = 0; k < ops.size(); ++k) {
    const Operation& op = ops[k];
    const auto expected = reference(run, op);
    std::string name(toString(op.type));
    if (op.inputs.size() > 1 &&
        run.operand(op.inputs[1]).type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL) {
      name += " per-channel";
    }
    if (!expected) {
      tallies["(not checked) " + name].operations++;
      continue;
    }
    const auto got = actual(run, op);
    Tally& t = tallies[name];
    t.operations++;
    t.alternativeShare = expected->alternativeShare;
    if (got.size() != expected->tflite.size()) {
      t.mismatches += std::max(got.size(), expected->tflite.size());
      if (t.firstMismatch.empty()) t.firstMismatch = "operation " + std::to_string(k) + ": size";
      continue;
    }
    t.elements += got.size();
    for (size_t e = 0; e < got.size(); ++e) {
      if (got[e] == expected->tflite[e]) continue;
      if (got[e] == expected->nnapi[e]) {
        t.offTflite++;
        t.largestOffTflite = std::max(t.largestOffTflite, std::abs(got[e] - expected->tflite[e]));
        continue;
      }
      if (t.mismatches++ == 0 && t.firstMismatch.empty()) {
        t.firstMismatch = "operation " + std::to_string(k) + " element " + std::to_string(e) +
                          ": nnhal " + std::to_string(got[e]) + ", TFLite " +
                          std::to_string(expected->tflite[e]);
      }
    }
  }
  return tallies;
}

/// Checks the tallies of one run against the rules; appends them to `report` and counts the
/// checked operations per type.
void expectTallies(const std::map<std::string, Tally>& tallies, std::string& report,
                   std::map<std::string, size_t>& checkedPerType) {
  for (const auto& [type, t] : tallies) {
    report += " " + type + " x" + std::to_string(t.operations);
    if (type.starts_with("(not")) continue;
    checkedPerType[type] += t.operations;
    report += " (" + std::to_string(t.elements) + " values";
    if (t.offTflite > 0) {
      report += ", " + std::to_string(t.offTflite) + " by the documented formula";
    }
    report += ")";
    EXPECT_EQ(t.mismatches, 0u) << type << ": " << t.firstMismatch;
    EXPECT_LE(t.largestOffTflite, 1) << type;
    // The multiplier difference is rare: a product of scales rounded in float moves the
    // multiplier by 2^-24 of itself, which changes a result only at a rounding tie.
    EXPECT_LE(static_cast<double>(t.offTflite),
              t.alternativeShare * static_cast<double>(t.elements))
        << type;
  }
}

TEST(OperationReference, EveryQuantizedOperationOfTheRealModelsMatchesTflitesArithmetic) {
  auto device = createDevice();
  ASSERT_TRUE(device) << device.error().message;
  std::map<std::string, size_t> checkedPerType;
  size_t models = 0;
  for (const auto& entry : fs::directory_iterator(kModels)) {
    if (entry.path().extension() != ".tflite") continue;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const auto run = ExposedRun::run(**device, entry.path(), 26);
    ASSERT_TRUE(run.has_value());
    ++models;
    std::string report = name + ":";
    expectTallies(checkOperations(*run), report, checkedPerType);
    std::printf("%s\n", report.c_str());
  }
  EXPECT_GE(models, 12u);
  // The check covers what the real models use: it would fail loudly if an import change
  // made it skip them.
  for (const char* type :
       {"CONV_2D", "CONV_2D per-channel", "DEPTHWISE_CONV_2D", "DEPTHWISE_CONV_2D per-channel",
        "FULLY_CONNECTED", "ADD", "SUB", "MUL", "AVERAGE_POOL_2D", "QUANTIZE", "DEQUANTIZE",
        "CONCATENATION", "LOGISTIC", "RESIZE_BILINEAR", "SOFTMAX", "QUANTIZED_LSTM"}) {
    EXPECT_GT(checkedPerType[type], 0u) << type;
  }
}

// MEAN is in none of the real models here, and SOFTMAX only at their ends, over 2 to 1001
// values. Quantized random graphs (tools/common/random_graph.h) give both with random shapes,
// axes, scales and zero points, and every other covered operation besides.
TEST(OperationReference, QuantizedOperationsOfRandomGraphsMatchTflitesArithmetic) {
  auto device = createDevice();
  ASSERT_TRUE(device) << device.error().message;
  std::map<std::string, size_t> checkedPerType;
  std::map<std::string, Tally> totals;
  size_t graphs = 0;
  for (uint64_t seed = 1; graphs < 400 && seed < 20000; ++seed) {
    auto graph = tools::generateRandomGraph(seed);
    ASSERT_TRUE(graph) << graph.error().message;
    const auto mainType = graph->model.main.operands[graph->model.main.inputIndexes[0]].type;
    if (mainType != OperandType::TENSOR_QUANT8_ASYMM &&
        mainType != OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
      continue;
    }
    SCOPED_TRACE(graph->name + " (" + tools::describeRandomGraph(*graph) + ")");
    const auto run = ExposedRun::run(**device, graph->model, static_cast<uint32_t>(seed));
    ASSERT_TRUE(run.has_value());
    ++graphs;
    std::string report;
    const auto tallies = checkOperations(*run);
    expectTallies(tallies, report, checkedPerType);
    for (const auto& [type, t] : tallies) {
      Tally& total = totals[type];
      total.operations += t.operations;
      total.elements += t.elements;
      total.offTflite += t.offTflite;
    }
    if (::testing::Test::HasFailure()) break;
  }
  std::string summary = std::to_string(graphs) + " quantized graphs:";
  for (const auto& [type, t] : totals) {
    summary += " " + type + " x" + std::to_string(t.operations);
    if (!type.starts_with("(not")) {
      summary += " (" + std::to_string(t.elements) + " values, " + std::to_string(t.offTflite) +
                 " by the documented formula)";
    }
  }
  std::printf("%s\n", summary.c_str());
  EXPECT_GE(checkedPerType["MEAN"], 100u);
  EXPECT_GE(checkedPerType["SOFTMAX"], 100u);
  for (const char* type :
       {"CONV_2D", "CONV_2D per-channel", "DEPTHWISE_CONV_2D", "DEPTHWISE_CONV_2D per-channel",
        "FULLY_CONNECTED", "ADD", "SUB", "MUL", "AVERAGE_POOL_2D", "MAX_POOL_2D", "LOGISTIC",
        "CONCATENATION", "DEQUANTIZE"}) {
    EXPECT_GE(checkedPerType[type], 10u) << type;
  }
}

// The real models' LSTMs use neither CIFG, nor peepholes, nor a projection: one step with all
// three (and both clips) checks those paths of QUANTIZED_LSTM against TFLite's arithmetic.
TEST(OperationReference, QuantizedLstmWithCifgPeepholesAndProjectionMatchesTflitesArithmetic) {
  constexpr uint32_t kBatch = 2, kInput = 5, kUnits = 8, kOutput = 4;
  std::mt19937 random(30);
  hal::tfl::ModelBuilder b;
  const auto tensor = [&](OperandType type, std::vector<uint32_t> dims, float scale,
                          int32_t zeroPoint) {
    const uint32_t index = b.addOperand(type, std::move(dims));
    b.operand(index).scale = scale;
    b.operand(index).zeroPoint = zeroPoint;
    return index;
  };

  const auto randomConstant = [&](uint32_t index, size_t elementBytes, int32_t range) {
    const Operand& o = b.operand(index);
    size_t count = 1;
    for (const uint32_t d : o.dimensions) count *= d;
    std::vector<uint8_t> bytes(count * elementBytes);
    std::uniform_int_distribution<int32_t> value(-range, range);
    for (size_t k = 0; k < count; ++k) {
      const int32_t v = value(random);
      std::memcpy(bytes.data() + k * elementBytes, &v, elementBytes);  // little endian
    }
    b.setConstantOwned(index, std::move(bytes));
    return index;
  };
  const auto omitted = [&](OperandType type) {
    const uint32_t index = b.addOmitted(type);
    if (type != OperandType::TENSOR_INT32) b.operand(index).scale = 1.0f;
    return index;
  };
  using T = OperandType;
  const uint32_t input = tensor(T::TENSOR_QUANT8_ASYMM_SIGNED, {kBatch, kInput}, 0.02f, 3);
  std::vector<uint32_t> in = {input, omitted(T::TENSOR_QUANT8_SYMM)};
  for (int g = 0; g < 3; ++g) {
    in.push_back(randomConstant(tensor(T::TENSOR_QUANT8_SYMM, {kUnits, kInput}, 0.01f, 0), 1, 127));
  }
  in.push_back(omitted(T::TENSOR_QUANT8_SYMM));
  for (int g = 0; g < 3; ++g) {
    in.push_back(
        randomConstant(tensor(T::TENSOR_QUANT8_SYMM, {kUnits, kOutput}, 0.012f, 0), 1, 127));
  }
  in.push_back(omitted(T::TENSOR_QUANT16_SYMM));
  for (int g = 0; g < 2; ++g) {
    in.push_back(randomConstant(tensor(T::TENSOR_QUANT16_SYMM, {kUnits}, 0.0005f, 0), 2, 3000));
  }
  in.push_back(omitted(T::TENSOR_INT32));
  for (int g = 0; g < 3; ++g) {
    in.push_back(randomConstant(tensor(T::TENSOR_INT32, {kUnits}, 0.0002f, 0), 4, 5000));
  }
  in.push_back(randomConstant(tensor(T::TENSOR_QUANT8_SYMM, {kOutput, kUnits}, 0.015f, 0), 1, 127));
  in.push_back(randomConstant(tensor(T::TENSOR_INT32, {kOutput}, 0.000105f, 0), 4, 2000));
  const uint32_t outputStateIn =
      tensor(T::TENSOR_QUANT8_ASYMM_SIGNED, {kBatch, kOutput}, 0.03f, -2);
  const uint32_t cellStateIn = tensor(T::TENSOR_QUANT16_SYMM, {kBatch, kUnits}, 1.0f / 2048, 0);
  in.push_back(outputStateIn);
  in.push_back(cellStateIn);
  for (int g = 0; g < 4; ++g) in.push_back(omitted(T::TENSOR_QUANT16_SYMM));
  in.push_back(b.addFloat32Scalar(3.0f));  // cell clip
  in.push_back(b.addFloat32Scalar(1.5f));  // projection clip
  for (int g = 0; g < 4; ++g) in.push_back(b.addFloat32Scalar(1.0f / 4096));
  in.push_back(b.addInt32Scalar(0));         // hidden zero point
  in.push_back(b.addFloat32Scalar(0.007f));  // hidden scale
  const uint32_t outputStateOut =
      tensor(T::TENSOR_QUANT8_ASYMM_SIGNED, {kBatch, kOutput}, 0.03f, -2);
  const uint32_t cellStateOut = tensor(T::TENSOR_QUANT16_SYMM, {kBatch, kUnits}, 1.0f / 2048, 0);
  const uint32_t output = tensor(T::TENSOR_QUANT8_ASYMM_SIGNED, {kBatch, kOutput}, 0.03f, -2);
  b.addOperation(OperationType::QUANTIZED_LSTM, in, {outputStateOut, cellStateOut, output});
  auto model = std::move(b).finish({input, outputStateIn, cellStateIn},
                                   {outputStateOut, cellStateOut, output});
  ASSERT_TRUE(model) << model.error().message;
  for (const uint32_t i : model->main.inputIndexes) {
    model->main.operands[i].lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  }
  for (const uint32_t i : model->main.outputIndexes) {
    model->main.operands[i].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  }

  auto device = createDevice();
  ASSERT_TRUE(device) << device.error().message;
  size_t values = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {  // inputs and both states drawn afresh
    const auto run = ExposedRun::run(**device, *model, seed);
    ASSERT_TRUE(run.has_value());
    const auto tallies = checkOperations(*run);
    ASSERT_EQ(tallies.count("QUANTIZED_LSTM"), 1u) << "the step was not checked";
    const Tally& t = tallies.at("QUANTIZED_LSTM");
    EXPECT_EQ(t.mismatches, 0u) << "seed " << seed << ": " << t.firstMismatch;
    values += t.elements;
  }
  EXPECT_EQ(values, 20u * (2 * kBatch * kOutput + kBatch * kUnits));
}

}  // namespace
}  // namespace nnhal
