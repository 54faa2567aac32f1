// kernels/recurrent.h — float32 building blocks of the recurrent operations: the RNN cell
// (RNN, UNIDIRECTIONAL_SEQUENCE_RNN, BIDIRECTIONAL_SEQUENCE_RNN), the LSTM cell (LSTM and its
// sequence forms) and the SVDF step.
//
// The arithmetic follows the order of the NNAPI CPU reference so that float results agree
// to the last bits wherever the compiler allows: gate pre-activations start from the bias
// (or zero with layer normalization), each matrix-vector product is summed into a local
// value before it is added, and so on.
//
// Batch rows of inputs and outputs may be strided (row b starts at base + b * stride), which
// lets the sequence operations address time-major and batch-major tensors in place. State
// tensors are dense [batch, size]. All functions are pure and noexcept.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nnhal::kernels {

/// Activation functions of the recurrent operations (the numbering of NNAPI's
/// FusedActivationFunc extended by TFLite's tanh and sigmoid, as LSTM's input 20 uses it).
enum class RecurrentActivation : int32_t {
  kNone = 0,
  kRelu = 1,
  kRelu1 = 2,
  kRelu6 = 3,
  kTanh = 4,
  kSigmoid = 6,
};

/// True for the values of RecurrentActivation.
bool isRecurrentActivation(int32_t value) noexcept;

/// Applies `activation` to one value.
float activate(RecurrentActivation activation, float x) noexcept;

/// Applies `activation` to values[0, n) in place.
void activateInPlace(RecurrentActivation activation, float* values, size_t n) noexcept;

/// For each batch b and matrix row r: result[b * resultStride + r] += dot(matrix row r,
/// vector b), where the matrix is row-major [rows, cols] and vector b starts at
/// vectors + b * vectorStride. Each dot product is summed on its own before it is added.
void matrixBatchVectorAccumulate(const float* matrix, size_t rows, size_t cols,
                                 const float* vectors, size_t vectorStride, size_t batch,
                                 float* result, size_t resultStride) noexcept;

/// Normalizes each of the `batch` dense rows of `size` values in place to zero mean and unit
/// standard deviation (population variance; a zero variance uses epsilon 1e-8).
void meanStddevNormalize(float* values, size_t size, size_t batch) noexcept;

// --- RNN -------------------------------------------------------------------------------

/// One time step of a basic RNN cell for every batch:
///   output = activation(input * weights' + aux * auxWeights' + hiddenIn * recurrent' + bias)
/// and hiddenOut = output. `hiddenIn` and `hiddenOut` may be the same buffer.
struct RnnStep {
  const float* input = nullptr;  ///< row b at input + b * inputStride, inputSize values
  size_t inputStride = 0;
  size_t inputSize = 0;
  const float* aux = nullptr;  ///< optional auxiliary input rows (null: none)
  size_t auxStride = 0;
  size_t auxSize = 0;
  const float* weights = nullptr;           ///< [units, inputSize]
  const float* auxWeights = nullptr;        ///< [units, auxSize], read when aux is set
  const float* recurrentWeights = nullptr;  ///< [units, units]
  const float* bias = nullptr;              ///< [units]
  const float* hiddenIn = nullptr;          ///< dense [batch, units]
  float* output = nullptr;                  ///< row b at output + b * outputStride
  size_t outputStride = 0;
  float* hiddenOut = nullptr;  ///< dense [batch, units]; null: not written
  size_t batch = 0;
  size_t units = 0;
  RecurrentActivation activation = RecurrentActivation::kNone;
};
void rnnStep(const RnnStep& step) noexcept;

// --- LSTM ------------------------------------------------------------------------------

/// The weights of one LSTM cell (one direction). Optional tensors are null when absent.
struct LstmWeights {
  const float* inputToInput = nullptr;  ///< [cells, inputSize]; null with CIFG
  const float* inputToForget = nullptr;
  const float* inputToCell = nullptr;
  const float* inputToOutput = nullptr;
  const float* recurrentToInput = nullptr;  ///< [cells, outputSize]; null with CIFG
  const float* recurrentToForget = nullptr;
  const float* recurrentToCell = nullptr;
  const float* recurrentToOutput = nullptr;
  const float* cellToInput = nullptr;  ///< [cells] peephole weights (null: no peephole)
  const float* cellToForget = nullptr;
  const float* cellToOutput = nullptr;
  const float* auxToInput = nullptr;  ///< [cells, auxSize] (null: no auxiliary input)
  const float* auxToForget = nullptr;
  const float* auxToCell = nullptr;
  const float* auxToOutput = nullptr;
  const float* inputGateBias = nullptr;  ///< [cells]; null with CIFG
  const float* forgetGateBias = nullptr;
  const float* cellBias = nullptr;
  const float* outputGateBias = nullptr;
  const float* projectionWeights = nullptr;  ///< [outputSize, cells] (null: no projection)
  const float* projectionBias = nullptr;     ///< [outputSize] (null: zero)
  const float* inputLayerNorm = nullptr;     ///< [cells] (null: no layer normalization)
  const float* forgetLayerNorm = nullptr;
  const float* cellLayerNorm = nullptr;
  const float* outputLayerNorm = nullptr;
};

/// Sizes and options of one LSTM cell.
struct LstmShape {
  size_t batch = 0, inputSize = 0, auxSize = 0;
  size_t cells = 0, outputSize = 0;
  bool cifg = false;       ///< coupled input and forget gate (input gate = 1 - forget gate)
  bool peephole = false;   ///< cellTo* weights are used
  bool layerNorm = false;  ///< gate pre-activations are layer-normalized
  RecurrentActivation activation = RecurrentActivation::kTanh;
  float cellClip = 0.0f;  ///< > 0: cell state clipped to [-cellClip, cellClip]
  float projClip = 0.0f;  ///< > 0: projected output clipped to [-projClip, projClip]
};

/// Floats of gate scratch lstmStep needs: (cifg ? 3 : 4) * batch * cells. The layout is
/// the LSTM scratch-buffer output's: [input,] cell, forget, output gate blocks of
/// batch * cells values each.
inline size_t lstmGateScratchSize(const LstmShape& s) {
  return (s.cifg ? 3 : 4) * s.batch * s.cells;
}

/// One time step of an LSTM cell for every batch (the equations of NNAPI's LSTM). Input
/// row b is at input + b * inputStride (aux likewise, null when absent); output row b at
/// output + b * outputStride. States are dense; outputStateOut may equal outputStateIn and
/// cellStateOut may equal cellStateIn. `gates` has lstmGateScratchSize(shape) floats.
void lstmStep(const LstmShape& shape, const LstmWeights& w, const float* input, size_t inputStride,
              const float* aux, size_t auxStride, const float* outputStateIn,
              const float* cellStateIn, float* outputStateOut, float* cellStateOut, float* output,
              size_t outputStride, float* gates) noexcept;

// --- SVDF ------------------------------------------------------------------------------

/// Sizes of an SVDF layer: filters = units * rank.
struct SvdfShape {
  size_t batch = 0, inputSize = 0;
  size_t units = 0, rank = 0, memory = 0;
  RecurrentActivation activation = RecurrentActivation::kNone;
};

/// One SVDF step. stateIn/stateOut: [batch, memory * filters] (filter f's memory is the
/// row segment [f * memory, (f + 1) * memory), newest last); weightsFeature [filters,
/// inputSize]; weightsTime [filters, memory]; bias [units] or null; output [batch, units];
/// scratch: batch * filters floats. stateIn and stateOut must not overlap.
void svdfStep(const SvdfShape& shape, const float* input, const float* weightsFeature,
              const float* weightsTime, const float* bias, const float* stateIn, float* stateOut,
              float* output, float* scratch) noexcept;

}  // namespace nnhal::kernels
