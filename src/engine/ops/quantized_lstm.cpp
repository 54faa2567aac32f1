// QUANTIZED_16BIT_LSTM (HAL 1.2) and QUANTIZED_LSTM (HAL 1.3): validation, effective scales
// and kernels over kernels/quantized_lstm.h.
//
// QUANTIZED_16BIT_LSTM inputs: 0 input [batch, inputSize] QUANT8_ASYMM (scale 1/128, zero
// point 128); 1..4 input-to-{input, forget, cell, output} weights [outputSize, inputSize] and
// 5..8 recurrent-to-* weights [outputSize, outputSize], QUANT8_ASYMM sharing one scale and
// zero point; 9..12 gate biases [outputSize] INT32 (scale weights scale / 128, zero point 0);
// 13 previous cell state [batch, outputSize] QUANT16_SYMM (scale 2^-11, zero point 0); 14
// previous output [batch, outputSize] QUANT8_ASYMM (scale 1/128, zero point 128). Outputs:
// 0 cell state, 1 output (same types and shapes as inputs 13 and 14).
//
// QUANTIZED_LSTM inputs: 0 input [batch, inputSize] QUANT8_ASYMM_SIGNED; 1..4 input-to-*
// weights [numUnits, inputSize] and 5..8 recurrent-to-* weights [numUnits, outputSize]
// QUANT8_SYMM (input-to-input and recurrent-to-input optional: CIFG); 9..11 optional peephole
// weights [numUnits] QUANT16_SYMM; 12..15 gate biases [numUnits] INT32 (input gate bias
// omitted with CIFG); 16 optional projection weights [outputSize, numUnits] QUANT8_SYMM; 17
// optional projection bias [outputSize] INT32; 18 previous output [batch, outputSize]
// QUANT8_ASYMM_SIGNED; 19 previous cell state [batch, numUnits] QUANT16_SYMM (scale a power
// of two, 2^-15..2^-9); 20..23 optional layer norm weights [numUnits] QUANT16_SYMM; 24 cell
// clip, 25 projection clip (FLOAT32, 0 = none); 26..29 FLOAT32 scales of the input, forget,
// cell and output gates' matmul results; 30 INT32 hidden state zero point; 31 FLOAT32 hidden
// state scale. Outputs: 0 output state [batch, outputSize] QUANT8_ASYMM_SIGNED, 1 cell state
// [batch, numUnits] QUANT16_SYMM, 2 output [batch, outputSize] QUANT8_ASYMM_SIGNED.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "engine/ops/ops.h"
#include "engine/ops/sequence_common.h"
#include "kernels/quantized_lstm.h"

namespace nnhal::engine::ops {
namespace {

constexpr OperandType kU8 = OperandType::TENSOR_QUANT8_ASYMM;
constexpr OperandType kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kSymm8 = OperandType::TENSOR_QUANT8_SYMM;
constexpr OperandType kI16 = OperandType::TENSOR_QUANT16_SYMM;
constexpr OperandType kI32 = OperandType::TENSOR_INT32;

/// log2(x) when x is (within 1e-3 in the exponent) a power of two, as the reference's
/// CheckedLog2 decides it.
std::optional<int> checkedLog2(float x) {
  if (!(x > 0.0f) || !std::isfinite(x)) return std::nullopt;
  const float log2 = std::log(x) * (1.0f / std::log(2.0f));
  const float rounded = std::round(log2);
  if (std::abs(log2 - rounded) >= 1e-3f) return std::nullopt;
  return static_cast<int>(rounded);
}

Result<kernels::QuantizedMultiplier> multiplier(const PrepareContext& ctx, double real,
                                                const std::string& what) {
  kernels::QuantizedMultiplier m;
  if (!kernels::quantizeMultiplier(real, &m)) {
    return invalidArgument(std::string(toString(ctx.type())) + ": the " + what + " scale " +
                           std::to_string(real) + " cannot be represented");
  }
  return m;
}

Result<void> requireQuant(const PrepareContext& ctx, size_t i, float scale, int32_t zeroPoint,
                          const char* role) {
  const OperandInfo& in = ctx.input(i);
  if (in.scale != scale || in.zeroPoint != zeroPoint) {
    return invalidArgument(seq::describe(ctx, i, role) + " must have scale " +
                           std::to_string(scale) + " and zero point " + std::to_string(zeroPoint) +
                           ", got " + std::to_string(in.scale) + " and " +
                           std::to_string(in.zeroPoint));
  }
  return {};
}

}  // namespace

PrepareResult prepareQuantized16BitLstm(PrepareContext& ctx) {
  NNHAL_TRY(seq::checkInputCount(ctx, {15}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {2}));
  NNHAL_TRY(seq::requireType(ctx, 0, kU8, "input"));
  NNHAL_TRY(seq::requireRank(ctx, 0, 2, "input"));
  NNHAL_TRY(requireQuant(ctx, 0, 1.0f / 128.0f, 128, "input"));
  const uint32_t batch = ctx.input(0).dimensions[0];
  const uint32_t inputSize = ctx.input(0).dimensions[1];
  NNHAL_TRY(seq::requireType(ctx, 14, kU8, "previous output"));
  NNHAL_TRY(seq::requireRank(ctx, 14, 2, "previous output"));
  const uint32_t outputSize = ctx.input(14).dimensions[1];
  NNHAL_TRY(seq::requireShape(ctx, 14, {batch, outputSize}, "previous output"));
  NNHAL_TRY(requireQuant(ctx, 14, 1.0f / 128.0f, 128, "previous output"));

  NNHAL_TRY(seq::requireType(ctx, 1, kU8, "input-to-input weights"));
  const float weightsScale = ctx.input(1).scale;
  const int32_t weightsZeroPoint = ctx.input(1).zeroPoint;
  if (!(weightsScale > 0.0f)) {
    return invalidArgument(seq::describe(ctx, 1, "input-to-input weights") +
                           " must have a positive scale");
  }
  static constexpr const char* kWeightRoles[8] = {
      "input-to-input weights",    "input-to-forget weights",    "input-to-cell weights",
      "input-to-output weights",   "recurrent-to-input weights", "recurrent-to-forget weights",
      "recurrent-to-cell weights", "recurrent-to-output weights"};
  for (size_t i = 1; i <= 8; ++i) {
    const uint32_t columns = i <= 4 ? inputSize : outputSize;
    NNHAL_TRY(seq::requireTensor(ctx, i, kU8, {outputSize, columns}, kWeightRoles[i - 1]));
    NNHAL_TRY(requireQuant(ctx, i, weightsScale, weightsZeroPoint, kWeightRoles[i - 1]));
  }
  static constexpr const char* kBiasRoles[4] = {"input gate bias", "forget gate bias",
                                                "cell gate bias", "output gate bias"};
  const float biasScale = ctx.input(9).scale;
  if (static_cast<double>(biasScale) != static_cast<double>(weightsScale) / 128.0) {
    return invalidArgument(seq::describe(ctx, 9, "input gate bias") +
                           " must have the scale of the weights / 128");
  }
  for (size_t i = 9; i <= 12; ++i) {
    NNHAL_TRY(seq::requireTensor(ctx, i, kI32, {outputSize}, kBiasRoles[i - 9]));
    NNHAL_TRY(requireQuant(ctx, i, biasScale, 0, kBiasRoles[i - 9]));
  }
  NNHAL_TRY(seq::requireTensor(ctx, 13, kI16, {batch, outputSize}, "previous cell state"));
  const std::optional<int> cellLog2 = checkedLog2(ctx.input(13).scale);
  if (ctx.input(13).zeroPoint != 0 || !cellLog2 || 15 + *cellLog2 != 4) {
    return invalidArgument(seq::describe(ctx, 13, "previous cell state") +
                           " must have scale 2^-11 and zero point 0");
  }
  NNHAL_TRY(seq::requireOutputType(ctx, 0, kI16));
  NNHAL_TRY(seq::requireOutputType(ctx, 1, kU8));
  NNHAL_TRY(ctx.setOutputShape(0, {batch, outputSize}));
  NNHAL_TRY(ctx.setOutputShape(1, {batch, outputSize}));

  kernels::Quantized16BitLstmShape shape;
  shape.batch = batch;
  shape.inputSize = inputSize;
  shape.outputSize = outputSize;
  shape.weightsZeroPoint = weightsZeroPoint;
  NNHAL_ASSIGN_OR_RETURN(shape.accumulator,
                         multiplier(ctx, 4096.0 * static_cast<double>(biasScale), "accumulator"));
  seq::ScratchPlan plan;
  const size_t scratchOffset = plan.reserve<int16_t>(kernels::quantized16BitLstmScratchSize(shape));
  ctx.requestScratch(plan.bytes());
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    kernels::Quantized16BitLstmTensors t;
    t.input = rc.input<uint8_t>(0);
    t.inputToInput = rc.input<uint8_t>(1);
    t.inputToForget = rc.input<uint8_t>(2);
    t.inputToCell = rc.input<uint8_t>(3);
    t.inputToOutput = rc.input<uint8_t>(4);
    t.recurrentToInput = rc.input<uint8_t>(5);
    t.recurrentToForget = rc.input<uint8_t>(6);
    t.recurrentToCell = rc.input<uint8_t>(7);
    t.recurrentToOutput = rc.input<uint8_t>(8);
    t.inputGateBias = rc.input<int32_t>(9);
    t.forgetGateBias = rc.input<int32_t>(10);
    t.cellGateBias = rc.input<int32_t>(11);
    t.outputGateBias = rc.input<int32_t>(12);
    t.prevCellState = rc.input<int16_t>(13);
    t.prevOutput = rc.input<uint8_t>(14);
    t.cellStateOut = rc.output<int16_t>(0);
    t.output = rc.output<uint8_t>(1);
    kernels::quantized16BitLstm(shape, t, seq::scratchAt<int16_t>(rc, scratchOffset));
    return {};
  });
}

namespace {

/// QUANTIZED_LSTM's operands once checked: sizes, the options present, and its scalars.
struct QuantizedLstmShape {
  uint32_t batch = 0;
  uint32_t inputSize = 0;
  uint32_t units = 0;
  uint32_t outputSize = 0;
  bool cifg = false;
  bool peephole = false;
  bool projection = false;
  bool projectionBias = false;
  bool layerNorm = false;
  int cellShift = 0;  ///< log2 of the cell state's scale
  float cellClip = 0.0f;
  float projectionClip = 0.0f;
  float intermediate[4] = {};  ///< the gates' intermediate scales
  int32_t hiddenZeroPoint = 0;
  float hiddenScale = 0.0f;
};

constexpr const char* kIntermediateRoles[4] = {
    "input gate intermediate scale", "forget gate intermediate scale",
    "cell gate intermediate scale", "output gate intermediate scale"};

/// Inputs 0..17: the input, each gate's weights and bias, the peepholes and the projection.
Result<void> checkQuantizedLstmWeights(const PrepareContext& ctx, QuantizedLstmShape& s) {
  NNHAL_TRY(seq::checkInputCount(ctx, {32}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {3}));
  NNHAL_TRY(seq::requireType(ctx, 0, kI8, "input"));
  NNHAL_TRY(seq::requireRank(ctx, 0, 2, "input"));
  s.batch = ctx.input(0).dimensions[0];
  s.inputSize = ctx.input(0).dimensions[1];
  NNHAL_TRY(seq::requireType(ctx, 4, kSymm8, "input-to-output weights"));
  NNHAL_TRY(seq::requireRank(ctx, 4, 2, "input-to-output weights"));
  s.units = ctx.input(4).dimensions[0];
  NNHAL_TRY(seq::requireType(ctx, 8, kSymm8, "recurrent-to-output weights"));
  NNHAL_TRY(seq::requireRank(ctx, 8, 2, "recurrent-to-output weights"));
  s.outputSize = ctx.input(8).dimensions[1];

  NNHAL_ASSIGN_OR_RETURN(const bool inputToInput, seq::optionalPresent(ctx, 1));
  NNHAL_ASSIGN_OR_RETURN(const bool recurrentToInput, seq::optionalPresent(ctx, 5));
  if (inputToInput != recurrentToInput) {
    return invalidArgument(
        "QUANTIZED_LSTM inputs 1 and 5 (input-to-input and recurrent-to-input weights) must "
        "both be present or both be omitted");
  }
  s.cifg = !inputToInput;
  static constexpr const char* kRoles[9] = {"",
                                            "input-to-input weights",
                                            "input-to-forget weights",
                                            "input-to-cell weights",
                                            "input-to-output weights",
                                            "recurrent-to-input weights",
                                            "recurrent-to-forget weights",
                                            "recurrent-to-cell weights",
                                            "recurrent-to-output weights"};
  for (size_t i = s.cifg ? 2 : 1; i <= 8; ++i) {
    if (s.cifg && i == 5) continue;
    const uint32_t columns = i <= 4 ? s.inputSize : s.outputSize;
    NNHAL_TRY(seq::requireTensor(ctx, i, kSymm8, {s.units, columns}, kRoles[i]));
  }

  NNHAL_ASSIGN_OR_RETURN(const bool cellToInput, seq::optionalPresent(ctx, 9));
  NNHAL_ASSIGN_OR_RETURN(const bool cellToForget, seq::optionalPresent(ctx, 10));
  NNHAL_ASSIGN_OR_RETURN(const bool cellToOutput, seq::optionalPresent(ctx, 11));
  s.peephole = cellToForget && cellToOutput && (cellToInput || s.cifg);
  if (!s.peephole && (cellToInput || cellToForget || cellToOutput)) {
    return invalidArgument(
        "QUANTIZED_LSTM inputs 9..11 (peephole weights) must all be present (cell-to-input "
        "may be omitted with CIFG) or all be omitted");
  }
  if (s.peephole) {
    if (!s.cifg) NNHAL_TRY(seq::requireTensor(ctx, 9, kI16, {s.units}, "cell-to-input weights"));
    NNHAL_TRY(seq::requireTensor(ctx, 10, kI16, {s.units}, "cell-to-forget weights"));
    NNHAL_TRY(seq::requireTensor(ctx, 11, kI16, {s.units}, "cell-to-output weights"));
  }

  NNHAL_ASSIGN_OR_RETURN(const bool inputGateBias, seq::optionalPresent(ctx, 12));
  if (s.cifg && inputGateBias) {
    return invalidArgument(seq::describe(ctx, 12, "input gate bias") +
                           " must be omitted with CIFG");
  }
  if (!s.cifg) NNHAL_TRY(seq::requireTensor(ctx, 12, kI32, {s.units}, "input gate bias"));
  NNHAL_TRY(seq::requireTensor(ctx, 13, kI32, {s.units}, "forget gate bias"));
  NNHAL_TRY(seq::requireTensor(ctx, 14, kI32, {s.units}, "cell gate bias"));
  NNHAL_TRY(seq::requireTensor(ctx, 15, kI32, {s.units}, "output gate bias"));

  NNHAL_ASSIGN_OR_RETURN(s.projection, seq::optionalPresent(ctx, 16));
  NNHAL_ASSIGN_OR_RETURN(s.projectionBias, seq::optionalPresent(ctx, 17));
  if (s.projection) {
    NNHAL_TRY(seq::requireTensor(ctx, 16, kSymm8, {s.outputSize, s.units}, "projection weights"));
    if (s.projectionBias) {
      NNHAL_TRY(seq::requireTensor(ctx, 17, kI32, {s.outputSize}, "projection bias"));
    }
  } else {
    if (s.projectionBias) {
      return invalidArgument(seq::describe(ctx, 17, "projection bias") +
                             " must be omitted without projection weights");
    }
    if (s.outputSize != s.units) {
      return invalidArgument("QUANTIZED_LSTM without projection weights needs an output size (" +
                             std::to_string(s.outputSize) + ") equal to the number of units (" +
                             std::to_string(s.units) + ")");
    }
  }

  return {};
}

/// Inputs 18..31: the states, the layer norm weights, the clips, the gates' intermediate
/// scales and the hidden state's quantization.
Result<void> checkQuantizedLstmStates(const PrepareContext& ctx, QuantizedLstmShape& s) {
  NNHAL_TRY(seq::requireTensor(ctx, 18, kI8, {s.batch, s.outputSize}, "previous output"));
  NNHAL_TRY(seq::requireTensor(ctx, 19, kI16, {s.batch, s.units}, "previous cell state"));
  const std::optional<int> cellShift = checkedLog2(ctx.input(19).scale);
  if (!cellShift || *cellShift < -15 || *cellShift > -9) {
    return invalidArgument(seq::describe(ctx, 19, "previous cell state") +
                           " must have a power-of-two scale between 2^-15 and 2^-9");
  }
  s.cellShift = *cellShift;

  bool norms[4] = {};
  for (size_t k = 0; k < 4; ++k) {
    NNHAL_ASSIGN_OR_RETURN(norms[k], seq::optionalPresent(ctx, 20 + k));
  }
  s.layerNorm = norms[1] && norms[2] && norms[3] && (norms[0] || s.cifg);
  if (s.cifg && norms[0]) {
    return invalidArgument(seq::describe(ctx, 20, "input layer norm weights") +
                           " must be omitted with CIFG");
  }
  if (!s.layerNorm && (norms[0] || norms[1] || norms[2] || norms[3])) {
    return invalidArgument(
        "QUANTIZED_LSTM inputs 20..23 (layer norm weights) must all be present (the input "
        "gate's omitted with CIFG) or all be omitted");
  }
  if (s.layerNorm) {
    static constexpr const char* kNormRoles[4] = {
        "input layer norm weights", "forget layer norm weights", "cell layer norm weights",
        "output layer norm weights"};
    for (size_t k = s.cifg ? 1 : 0; k < 4; ++k) {
      NNHAL_TRY(seq::requireTensor(ctx, 20 + k, kI16, {s.units}, kNormRoles[k]));
    }
  }

  NNHAL_ASSIGN_OR_RETURN(s.cellClip, seq::readClip(ctx, 24, "cell clip"));
  NNHAL_ASSIGN_OR_RETURN(s.projectionClip, seq::readClip(ctx, 25, "projection clip"));
  for (size_t k = 0; k < 4; ++k) {
    NNHAL_ASSIGN_OR_RETURN(s.intermediate[k], seq::readFloat(ctx, 26 + k, kIntermediateRoles[k]));
    if (!(s.intermediate[k] > 0.0f) && !(k == 0 && s.cifg)) {
      return invalidArgument(seq::describe(ctx, 26 + k, kIntermediateRoles[k]) +
                             " must be positive");
    }
  }
  NNHAL_ASSIGN_OR_RETURN(s.hiddenZeroPoint, seq::readInt32(ctx, 30, "hidden state zero point"));
  NNHAL_ASSIGN_OR_RETURN(s.hiddenScale, seq::readFloat(ctx, 31, "hidden state scale"));
  if (!(s.hiddenScale > 0.0f) || s.hiddenZeroPoint < -128 || s.hiddenZeroPoint > 127) {
    return invalidArgument(
        "QUANTIZED_LSTM inputs 30 and 31 (hidden state zero point and scale) must be an int8 "
        "zero point and a positive scale");
  }

  return {};
}

/// The kernel's effective scales, variance floors and clips, computed in float as the NNAPI
/// CPU reference does.
Result<kernels::QuantizedLstmParams> quantizedLstmParams(const PrepareContext& ctx,
                                                         const QuantizedLstmShape& s) {
  kernels::QuantizedLstmParams p;
  p.batch = s.batch;
  p.inputSize = s.inputSize;
  p.numUnits = s.units;
  p.outputSize = s.outputSize;
  p.cifg = s.cifg;
  p.peephole = s.peephole;
  p.layerNorm = s.layerNorm;
  p.projection = s.projection;
  p.inputZeroPoint = ctx.input(0).zeroPoint;
  p.prevOutputZeroPoint = ctx.input(18).zeroPoint;
  p.hiddenZeroPoint = s.hiddenZeroPoint;
  p.cellShift = s.cellShift;
  const float inputScale = ctx.input(0).scale;
  const float prevOutputScale = ctx.input(18).scale;
  const double cellScalePot = std::pow(2.0, s.cellShift);
  auto gateScales = [&](size_t gate, size_t inputWeights, size_t recurrentWeights,
                        size_t peepholeWeights, kernels::QuantizedMultiplier* fromInput,
                        kernels::QuantizedMultiplier* fromRecurrent,
                        kernels::QuantizedMultiplier* fromCell) -> Result<void> {
    const float inputEffective = ctx.input(inputWeights).scale * inputScale / s.intermediate[gate];
    const float recurrentEffective =
        ctx.input(recurrentWeights).scale * prevOutputScale / s.intermediate[gate];
    NNHAL_ASSIGN_OR_RETURN(*fromInput, multiplier(ctx, inputEffective, kIntermediateRoles[gate]));
    NNHAL_ASSIGN_OR_RETURN(*fromRecurrent,
                           multiplier(ctx, recurrentEffective, kIntermediateRoles[gate]));
    if (fromCell != nullptr && s.peephole) {
      const auto cellEffective = static_cast<float>(
          cellScalePot * ctx.input(peepholeWeights).scale / s.intermediate[gate]);
      NNHAL_ASSIGN_OR_RETURN(*fromCell, multiplier(ctx, cellEffective, "peephole"));
    }
    return {};
  };
  if (!s.cifg) {
    NNHAL_TRY(gateScales(0, 1, 5, 9, &p.inputToInput, &p.recurrentToInput, &p.cellToInput));
  }
  NNHAL_TRY(gateScales(1, 2, 6, 10, &p.inputToForget, &p.recurrentToForget, &p.cellToForget));
  NNHAL_TRY(gateScales(2, 3, 7, 0, &p.inputToCell, &p.recurrentToCell, nullptr));
  NNHAL_TRY(gateScales(3, 4, 8, 11, &p.inputToOutput, &p.recurrentToOutput, &p.cellToOutput));
  if (s.layerNorm) {
    kernels::QuantizedMultiplier* scales[4] = {&p.inputLayerNorm, &p.forgetLayerNorm,
                                               &p.cellLayerNorm, &p.outputLayerNorm};
    int32_t* limits[4] = {&p.inputVarianceLimit, &p.forgetVarianceLimit, &p.cellVarianceLimit,
                          &p.outputVarianceLimit};
    for (size_t k = s.cifg ? 1 : 0; k < 4; ++k) {
      const float scale = ctx.input(20 + k).scale;
      NNHAL_ASSIGN_OR_RETURN(*scales[k], multiplier(ctx, scale, "layer norm"));
      *limits[k] = std::min(1, static_cast<int32_t>(10000 * scale));
    }
  }
  const auto hiddenEffective =
      static_cast<float>(std::pow(2.0, -15) / s.hiddenScale * std::pow(2.0, -15));
  NNHAL_ASSIGN_OR_RETURN(p.hiddenScale, multiplier(ctx, hiddenEffective, "hidden state"));
  if (s.projection) {
    const float projectionEffective = ctx.input(16).scale * s.hiddenScale / prevOutputScale;
    NNHAL_ASSIGN_OR_RETURN(p.projectionScale, multiplier(ctx, projectionEffective, "projection"));
  }
  if (s.cellClip > 0.0f) {
    p.cellClip = static_cast<int16_t>(static_cast<int32_t>(
        std::min(std::max(s.cellClip / ctx.input(19).scale, -32768.0f), 32767.0f)));
  }
  if (s.projectionClip > 0.0f) {
    p.projectionClip = static_cast<int8_t>(static_cast<int32_t>(
        std::min(std::max(s.projectionClip / prevOutputScale, -128.0f), 127.0f)));
  }

  return p;
}

}  // namespace

PrepareResult prepareQuantizedLstm(PrepareContext& ctx) {
  QuantizedLstmShape s;
  NNHAL_TRY(checkQuantizedLstmWeights(ctx, s));
  NNHAL_TRY(checkQuantizedLstmStates(ctx, s));
  NNHAL_TRY(seq::requireOutputType(ctx, 0, kI8));
  NNHAL_TRY(seq::requireOutputType(ctx, 1, kI16));
  NNHAL_TRY(seq::requireOutputType(ctx, 2, kI8));
  NNHAL_TRY(ctx.setOutputShape(0, {s.batch, s.outputSize}));
  NNHAL_TRY(ctx.setOutputShape(1, {s.batch, s.units}));
  NNHAL_TRY(ctx.setOutputShape(2, {s.batch, s.outputSize}));

  NNHAL_ASSIGN_OR_RETURN(const kernels::QuantizedLstmParams p, quantizedLstmParams(ctx, s));

  seq::ScratchPlan plan;
  const size_t scratchOffset = plan.reserve<uint8_t>(kernels::quantizedLstmScratchBytes(p));
  ctx.requestScratch(plan.bytes());
  return makeKernel([s, p, scratchOffset](const RunContext& rc) -> Result<void> {
    auto optional8 = [&](size_t i, bool used) { return used ? rc.input<int8_t>(i) : nullptr; };
    auto optional16 = [&](size_t i, bool used) { return used ? rc.input<int16_t>(i) : nullptr; };
    kernels::QuantizedLstmTensors t;
    t.input = rc.input<int8_t>(0);
    t.inputToInput = optional8(1, !s.cifg);
    t.inputToForget = rc.input<int8_t>(2);
    t.inputToCell = rc.input<int8_t>(3);
    t.inputToOutput = rc.input<int8_t>(4);
    t.recurrentToInput = optional8(5, !s.cifg);
    t.recurrentToForget = rc.input<int8_t>(6);
    t.recurrentToCell = rc.input<int8_t>(7);
    t.recurrentToOutput = rc.input<int8_t>(8);
    t.cellToInput = optional16(9, s.peephole && !s.cifg);
    t.cellToForget = optional16(10, s.peephole);
    t.cellToOutput = optional16(11, s.peephole);
    t.inputGateBias = s.cifg ? nullptr : rc.input<int32_t>(12);
    t.forgetGateBias = rc.input<int32_t>(13);
    t.cellGateBias = rc.input<int32_t>(14);
    t.outputGateBias = rc.input<int32_t>(15);
    t.projectionWeights = optional8(16, s.projection);
    t.projectionBias = s.projection && s.projectionBias ? rc.input<int32_t>(17) : nullptr;
    t.prevOutput = rc.input<int8_t>(18);
    t.prevCellState = rc.input<int16_t>(19);
    t.inputLayerNorm = optional16(20, s.layerNorm && !s.cifg);
    t.forgetLayerNorm = optional16(21, s.layerNorm);
    t.cellLayerNorm = optional16(22, s.layerNorm);
    t.outputLayerNorm = optional16(23, s.layerNorm);
    t.outputStateOut = rc.output<int8_t>(0);
    t.cellStateOut = rc.output<int16_t>(1);
    t.output = rc.output<int8_t>(2);
    kernels::quantizedLstm(p, t, seq::scratchAt<uint8_t>(rc, scratchOffset));
    return {};
  });
}

}  // namespace nnhal::engine::ops
