// tools/tflite_reference_lstm.h — one step of TFLite's fully integer LSTM (8-bit activations,
// 16-bit gates and cell state: lstm_eval.cc's LstmStepInteger8x8_16 with the effective scales
// of lstm.cc), which the NNAPI delegate maps to QUANTIZED_LSTM. Written for the operation-level
// check from TFLite's definitions and gemmlowp's 16-bit fixed-point logistic and tanh; it
// shares no code with src/kernels.
//
// Quantized values are held as int32 (the raw int8 or int16 value). Layouts: input
// [batch, inputSize], weights [numUnits, inputSize] and [numUnits, outputSize], peephole
// weights [numUnits], output state [batch, outputSize], cell state [batch, numUnits].
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "tools/tflite_reference_ops.h"

namespace nnhal::tflite_reference {

/// The operands of one QUANTIZED_LSTM step without layer normalization. Absent optional
/// tensors have no values: the input gate's weights and bias (CIFG), the peephole weights, the
/// projection.
struct QuantizedLstmStep {
  QuantTensor input;
  std::array<QuantTensor, 4> inputWeights;      ///< to the input, forget, cell, output gates
  std::array<QuantTensor, 4> recurrentWeights;  ///< the same, from the output state
  std::array<QuantTensor, 3> peepholeWeights;   ///< cell to input, forget, output
  std::array<std::vector<int32_t>, 4> biases;   ///< scale input scale x weight scale
  QuantTensor projectionWeights;
  std::vector<int32_t> projectionBias;
  QuantTensor outputState;  ///< in
  QuantTensor cellState;    ///< in; its scale is a power of two
  float cellClip = 0.0f;
  float projectionClip = 0.0f;
  int32_t hiddenZeroPoint = 0;
  float hiddenScale = 0.0f;
};

/// What the step writes: output state and output (int8, the same values) and cell state
/// (int16).
struct QuantizedLstmResult {
  std::vector<int32_t> outputState;
  std::vector<int32_t> cellState;
  std::vector<int32_t> output;
};

/// One step as TFLite computes it. Each gate: the input and the output state each multiplied
/// by their weights (with the zero points folded into the bias), requantized to the gate's
/// Q3.12 with the effective scale weight scale x input scale / 2^-12 (products in float, as
/// lstm.cc computes them) and accumulated with int16 saturation; the peephole term likewise;
/// then gemmlowp's logistic (input, forget, output gates) or tanh (cell gate) into Q0.15. The
/// cell state: forget x cell >> 15, plus input x cell gate >> (30 + log2 cell scale), saturated,
/// clipped. The hidden state: output gate x tanh(cell state) requantized to the hidden scale;
/// then the projection, or the hidden state is the output.
QuantizedLstmResult quantizedLstm(const QuantizedLstmStep& step);

/// gemmlowp's logistic of a 16-bit fixed-point value with `integerBits` integer bits, as raw
/// Q0.15; and its tanh. Exposed for the test of this file.
int16_t fixedPointLogistic(int16_t raw, int integerBits);
int16_t fixedPointTanh(int16_t raw, int integerBits);

}  // namespace nnhal::tflite_reference
