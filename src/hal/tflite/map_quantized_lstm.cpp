// TFLite's fully integer UNIDIRECTIONAL_SEQUENCE_LSTM (int8 input and weights, int16 cell
// state, the "8x8_16" kernel) as one NNAPI QUANTIZED_LSTM (HAL 1.3) per time step.
//
// NNAPI's UNIDIRECTIONAL_SEQUENCE_LSTM is float only; its QUANTIZED_LSTM is the same integer
// cell TFLite computes, one step at a time. So the input [batch, time, inputSize] (or
// [time, batch, inputSize] when time major) is SPLIT into steps and RESHAPEd to [batch,
// inputSize]; step t's QUANTIZED_LSTM reads the output and cell state step t - 1 wrote (the
// operator's state tensors at t = 0); the step outputs are RESHAPEd back and CONCATENATEd
// along the time axis into the operator's output.
//
// QUANTIZED_LSTM takes parameters TFLite keeps in the operator's five intermediate tensors:
// the four gate matmul scales (intermediates 0-3) and the hidden state's scale and zero
// point (intermediate 4). A gate intermediate without quantization (models without layer
// normalization carry none) gets 2^-12, the scale TFLite's kernel uses then. Weights are
// int8 with zero point 0, i.e. NNAPI's TENSOR_QUANT8_SYMM.
#include <array>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/mapping_helpers.h"
#include "hal/tflite/mappings.h"
#include "tflite_schema_generated.h"

namespace nnhal::hal::tfl {
namespace {

constexpr OperandType kI8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
constexpr OperandType kSymm8 = OperandType::TENSOR_QUANT8_SYMM;
constexpr OperandType kI16 = OperandType::TENSOR_QUANT16_SYMM;
/// Time steps imported at most: each becomes a QUANTIZED_LSTM and two RESHAPEs, so the
/// model's size grows with them (a hostile file could otherwise ask for billions).
constexpr uint32_t kMaxSteps = 1024;

/// Tensor `i` of the operator's intermediates, read from the subgraph.
const ::tflite::Tensor* intermediateTensor(const OperatorContext& c,
                                           const ::tflite::SubGraph& subgraph, size_t i) {
  const auto* list = c.op().intermediates();
  if (list == nullptr || i >= list->size()) return nullptr;
  const int32_t t = list->Get(static_cast<flatbuffers::uoffset_t>(i));
  const auto* tensors = subgraph.tensors();
  if (t < 0 || tensors == nullptr || static_cast<size_t>(t) >= tensors->size()) return nullptr;
  return tensors->Get(static_cast<flatbuffers::uoffset_t>(t));
}

/// A tensor's single scale and zero point, when it has exactly one positive scale.
std::optional<std::pair<float, int32_t>> quantizationOf(const ::tflite::Tensor* tensor) {
  if (tensor == nullptr || tensor->quantization() == nullptr) return std::nullopt;
  const auto* scales = tensor->quantization()->scale();
  if (scales == nullptr || scales->size() != 1 || !(scales->Get(0) > 0.0f)) return std::nullopt;
  const auto* zeros = tensor->quantization()->zero_point();
  const int64_t zero = zeros != nullptr && zeros->size() == 1 ? zeros->Get(0) : 0;
  return std::make_pair(scales->Get(0), static_cast<int32_t>(zero));
}

/// Makes weight operand `w` TENSOR_QUANT8_SYMM (int8 with zero point 0).
Result<void> asSymmetric(OperatorContext& c, uint32_t w, size_t position) {
  Operand& operand = c.builder().operand(w);
  if (operand.lifetime == OperandLifeTime::NO_VALUE) {
    operand.type = kSymm8;
    return {};
  }
  if (operand.type != kI8 || operand.zeroPoint != 0) {
    return c.error("weights (input " + std::to_string(position) +
                   ") must be int8 with zero point 0 for a quantized LSTM");
  }
  operand.type = kSymm8;
  return {};
}

}  // namespace

Result<void> mapQuantizedSequenceLstm(OperatorContext& c, const ::tflite::SubGraph& subgraph,
                                      bool timeMajor, float cellClip, float projClip) {
  if (c.inputCount() != 24) {
    return c.error("a quantized LSTM needs the 24-input form (with layer normalization slots)");
  }
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const Operand inputOperand = c.operand(input);
  if (inputOperand.dimensions.size() != 3) {
    return c.error("the input must be [batch, time, inputSize] (rank 3)");
  }
  const uint32_t steps = inputOperand.dimensions[timeMajor ? 0 : 1];
  const uint32_t batch = inputOperand.dimensions[timeMajor ? 1 : 0];
  const uint32_t inputSize = inputOperand.dimensions[2];
  if (steps == 0 || batch == 0 || inputSize == 0) return c.error("the input shape has a zero");
  if (steps > kMaxSteps) {
    return c.error("a quantized LSTM over " + std::to_string(steps) +
                   " time steps would become as many QUANTIZED_LSTM operations; at most " +
                   std::to_string(kMaxSteps) + " are imported");
  }

  // Weights, biases, states and layer norm weights in TFLite's (= NNAPI's) order 1..23.
  std::vector<uint32_t> cell(24);
  for (size_t i = 1; i < 24; ++i) {
    const bool optional = i == 1 || i == 5 || (i >= 9 && i <= 12) || i == 16 || i == 17 || i >= 20;
    if (c.hasInput(i)) {
      NNHAL_ASSIGN_OR_RETURN(cell[i], c.input(i));
    } else if (optional) {
      const OperandType type = (i >= 9 && i <= 11) || i >= 20 ? kI16
                               : i == 12 || i == 17           ? OperandType::TENSOR_INT32
                                                              : kSymm8;
      cell[i] = c.builder().addOmitted(type);
      // NNAPI validates an omitted operand's type too: quantized types need a scale.
      if (type != OperandType::TENSOR_INT32) c.builder().operand(cell[i]).scale = 1.0f;
    } else {
      return c.error("input " + std::to_string(i) + " is required");
    }
  }
  for (size_t i : {1, 2, 3, 4, 5, 6, 7, 8, 16}) NNHAL_TRY(asSymmetric(c, cell[i], i));
  const Operand& outputState = c.operand(cell[18]);
  if (outputState.type != kI8 || c.operand(cell[19]).type != kI16) {
    return c.error("the output state must be int8 and the cell state int16");
  }
  const uint32_t outputSize = outputState.dimensions.size() == 2 ? outputState.dimensions[1] : 0;
  const Operand& cellState = c.operand(cell[19]);
  const uint32_t units = cellState.dimensions.size() == 2 ? cellState.dimensions[1] : 0;
  if (outputSize == 0 || units == 0) return c.error("the state tensors must be [batch, size]");

  std::array<float, 4> gateScales{};
  for (size_t g = 0; g < 4; ++g) {
    const auto q = quantizationOf(intermediateTensor(c, subgraph, g));
    gateScales[g] = q ? q->first : std::ldexp(1.0f, -12);
  }
  const auto hidden = quantizationOf(intermediateTensor(c, subgraph, 4));
  if (!hidden) {
    return c.error("intermediate 4 (the effective hidden state) needs a scale and zero point");
  }

  ModelBuilder& b = c.builder();
  // Split the input into steps [batch, inputSize].
  std::vector<uint32_t> pieces;
  std::vector<uint32_t> pieceDims = timeMajor ? std::vector<uint32_t>{1, batch, inputSize}
                                              : std::vector<uint32_t>{batch, 1, inputSize};
  for (uint32_t t = 0; t < steps; ++t) pieces.push_back(addTemporaryLike(b, input, pieceDims));
  c.addOperation(OperationType::SPLIT,
                 {input, b.addInt32Scalar(timeMajor ? 0 : 1), b.addInt32Scalar(steps)}, pieces);
  const std::vector<int32_t> stepShape{static_cast<int32_t>(batch),
                                       static_cast<int32_t>(inputSize)};
  const std::vector<int32_t> outShape =
      timeMajor
          ? std::vector<int32_t>{1, static_cast<int32_t>(batch), static_cast<int32_t>(outputSize)}
          : std::vector<int32_t>{static_cast<int32_t>(batch), 1, static_cast<int32_t>(outputSize)};
  const uint32_t stepShapeOperand = b.addInt32Vector(stepShape);
  const uint32_t outShapeOperand = b.addInt32Vector(outShape);

  uint32_t previousOutput = cell[18];
  uint32_t previousCell = cell[19];
  std::vector<uint32_t> stepOutputs;
  for (uint32_t t = 0; t < steps; ++t) {
    const uint32_t stepInput = addTemporaryLike(b, input, {batch, inputSize});
    c.addOperation(OperationType::RESHAPE, {pieces[t], stepShapeOperand}, {stepInput});
    std::vector<uint32_t> inputs{stepInput};
    for (size_t i = 1; i <= 17; ++i) inputs.push_back(cell[i]);
    inputs.push_back(previousOutput);
    inputs.push_back(previousCell);
    for (size_t i = 20; i <= 23; ++i) inputs.push_back(cell[i]);
    inputs.push_back(b.addFloat32Scalar(cellClip));
    inputs.push_back(b.addFloat32Scalar(projClip));
    for (const float scale : gateScales) inputs.push_back(b.addFloat32Scalar(scale));
    inputs.push_back(b.addInt32Scalar(hidden->second));
    inputs.push_back(b.addFloat32Scalar(hidden->first));
    const uint32_t outState = addTemporaryLike(b, cell[18], {batch, outputSize});
    const uint32_t cellOut = addTemporaryLike(b, cell[19], {batch, units});
    const uint32_t stepOutput = addTemporaryLike(b, cell[18], {batch, outputSize});
    c.addOperation(OperationType::QUANTIZED_LSTM, std::move(inputs),
                   {outState, cellOut, stepOutput});
    const uint32_t reshaped =
        addTemporaryLike(b, cell[18],
                         timeMajor ? std::vector<uint32_t>{1, batch, outputSize}
                                   : std::vector<uint32_t>{batch, 1, outputSize});
    c.addOperation(OperationType::RESHAPE, {stepOutput, outShapeOperand}, {reshaped});
    stepOutputs.push_back(reshaped);
    previousOutput = outState;
    previousCell = cellOut;
  }
  stepOutputs.push_back(b.addInt32Scalar(timeMajor ? 0 : 1));
  c.addOperation(OperationType::CONCATENATION, std::move(stepOutputs), {output});
  return {};
}

}  // namespace nnhal::hal::tfl
