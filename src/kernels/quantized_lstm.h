// kernels/quantized_lstm.h — the integer LSTM cells of QUANTIZED_16BIT_LSTM (HAL 1.2: uint8
// activations, int16 cell state with 4 integer bits, gemmlowp fixed-point gates) and
// QUANTIZED_LSTM (HAL 1.3: int8 activations, int16 gates and cell state, optional CIFG,
// peephole, layer normalization and projection), bit-exact with the NNAPI CPU reference.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantization.h"

namespace nnhal::kernels {

// --- QUANTIZED_16BIT_LSTM ----------------------------------------------------------------

/// Sizes and requantization of QUANTIZED_16BIT_LSTM.
struct Quantized16BitLstmShape {
  size_t batch = 0, inputSize = 0, outputSize = 0;
  int32_t weightsZeroPoint = 0;
  /// Accumulator (scale input * weights) to the gates' Q3.12 format: 4096 * bias scale.
  QuantizedMultiplier accumulator;
};

/// Buffers of QUANTIZED_16BIT_LSTM. Weights are uint8 [outputSize, inputSize] (input-to-*)
/// and [outputSize, outputSize] (recurrent-to-*); biases int32 [outputSize]; input uint8
/// [batch, inputSize] and prevOutput uint8 [batch, outputSize], both with scale 1/128 and
/// zero point 128; prevCellState / cellStateOut int16 [batch, outputSize] with scale 2^-11.
struct Quantized16BitLstmTensors {
  const uint8_t* input = nullptr;
  const uint8_t* inputToInput = nullptr;
  const uint8_t* inputToForget = nullptr;
  const uint8_t* inputToCell = nullptr;
  const uint8_t* inputToOutput = nullptr;
  const uint8_t* recurrentToInput = nullptr;
  const uint8_t* recurrentToForget = nullptr;
  const uint8_t* recurrentToCell = nullptr;
  const uint8_t* recurrentToOutput = nullptr;
  const int32_t* inputGateBias = nullptr;
  const int32_t* forgetGateBias = nullptr;
  const int32_t* cellGateBias = nullptr;
  const int32_t* outputGateBias = nullptr;
  const int16_t* prevCellState = nullptr;
  const uint8_t* prevOutput = nullptr;
  int16_t* cellStateOut = nullptr;
  uint8_t* output = nullptr;
};

/// int16 scratch values quantized16BitLstm needs: batch * 4 * outputSize.
inline size_t quantized16BitLstmScratchSize(const Quantized16BitLstmShape& s) {
  return s.batch * 4 * s.outputSize;
}

/// One step of QUANTIZED_16BIT_LSTM. The fully connected layer multiplies each batch's
/// concatenation [input, prevOutput] (minus 128) by the rows of the weights concatenated as
/// the reference does ([recurrent-to-gate | input-to-gate] per gate row, gates in the order
/// input, cell, forget, output), then applies logistic / tanh in 16-bit fixed point.
void quantized16BitLstm(const Quantized16BitLstmShape& shape, const Quantized16BitLstmTensors& t,
                        int16_t* scratch) noexcept;

// --- QUANTIZED_LSTM ----------------------------------------------------------------------

/// Effective scales and options of QUANTIZED_LSTM (computed at prepare time).
struct QuantizedLstmParams {
  size_t batch = 0, inputSize = 0, numUnits = 0, outputSize = 0;
  bool cifg = false;
  bool peephole = false;
  bool layerNorm = false;
  bool projection = false;
  int32_t inputZeroPoint = 0;       ///< of the input
  int32_t prevOutputZeroPoint = 0;  ///< of the output state (in and out) and output
  int32_t hiddenZeroPoint = 0;      ///< of the intermediate hidden state
  int cellShift = -15;              ///< log2 of the cell state scale, in [-15, -9]
  int16_t cellClip = 0;             ///< quantized; 0: no clipping
  int8_t projectionClip = 0;        ///< quantized; 0: no clipping
  // Gate effective scales: input-to-gate, recurrent-to-gate, cell-to-gate (peephole).
  QuantizedMultiplier inputToInput, recurrentToInput, cellToInput;
  QuantizedMultiplier inputToForget, recurrentToForget, cellToForget;
  QuantizedMultiplier inputToCell, recurrentToCell;
  QuantizedMultiplier inputToOutput, recurrentToOutput, cellToOutput;
  // Layer normalization weight scales and variance floors.
  QuantizedMultiplier inputLayerNorm, forgetLayerNorm, cellLayerNorm, outputLayerNorm;
  int32_t inputVarianceLimit = 0, forgetVarianceLimit = 0, cellVarianceLimit = 0,
          outputVarianceLimit = 0;
  QuantizedMultiplier hiddenScale;      ///< gate product (2^-30) to the hidden state scale
  QuantizedMultiplier projectionScale;  ///< projection accumulator to the output scale
};

/// Buffers of QUANTIZED_LSTM (null for absent optional tensors).
struct QuantizedLstmTensors {
  const int8_t* input = nullptr;  ///< [batch, inputSize]
  const int8_t* inputToInput = nullptr;
  const int8_t* inputToForget = nullptr;
  const int8_t* inputToCell = nullptr;
  const int8_t* inputToOutput = nullptr;  ///< [numUnits, inputSize]
  const int8_t* recurrentToInput = nullptr;
  const int8_t* recurrentToForget = nullptr;
  const int8_t* recurrentToCell = nullptr;
  const int8_t* recurrentToOutput = nullptr;  ///< [numUnits, outputSize]
  const int16_t* cellToInput = nullptr;
  const int16_t* cellToForget = nullptr;
  const int16_t* cellToOutput = nullptr;  ///< [numUnits]
  const int32_t* inputGateBias = nullptr;
  const int32_t* forgetGateBias = nullptr;
  const int32_t* cellGateBias = nullptr;
  const int32_t* outputGateBias = nullptr;    ///< [numUnits]
  const int8_t* projectionWeights = nullptr;  ///< [outputSize, numUnits]
  const int32_t* projectionBias = nullptr;    ///< [outputSize]
  const int8_t* prevOutput = nullptr;         ///< [batch, outputSize]
  const int16_t* prevCellState = nullptr;     ///< [batch, numUnits]
  const int16_t* inputLayerNorm = nullptr;
  const int16_t* forgetLayerNorm = nullptr;
  const int16_t* cellLayerNorm = nullptr;
  const int16_t* outputLayerNorm = nullptr;  ///< [numUnits]
  int8_t* outputStateOut = nullptr;          ///< [batch, outputSize]
  int16_t* cellStateOut = nullptr;           ///< [batch, numUnits]
  int8_t* output = nullptr;                  ///< [batch, outputSize]
};

/// Bytes of scratch quantizedLstm needs (16-byte aligned sections).
size_t quantizedLstmScratchBytes(const QuantizedLstmParams& p);

/// One step of QUANTIZED_LSTM.
void quantizedLstm(const QuantizedLstmParams& p, const QuantizedLstmTensors& t,
                   void* scratch) noexcept;

/// The reference's integer layer normalization of `batch` rows of `size` int16 values
/// (in may equal out): mean and variance in 2^10 fixed point, inverse square root by
/// Newton-Raphson, then weights, bias and the layer norm scale.
void quantizedLayerNorm(const int16_t* in, const int16_t* weights, const int32_t* bias,
                        QuantizedMultiplier scale, int32_t varianceLimit, size_t batch, size_t size,
                        int16_t* out) noexcept;

/// 1 / sqrt(input) as a Q31 multiplier and shift (reverseShift -1: a right shift result),
/// as TFLite's GetInvSqrtQuantizedMultiplierExp computes it.
void inverseSqrtMultiplier(int32_t input, int reverseShift, int32_t* multiplier,
                           int* shift) noexcept;

}  // namespace nnhal::kernels
