#include "kernels/quantized_lstm.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

#include "kernels/fixed_point.h"

namespace nnhal::kernels {
namespace {

using fixedpoint::Fixed;

int16_t saturate16(int64_t v) {
  return static_cast<int16_t>(std::clamp<int64_t>(v, -32768, 32767));
}

int32_t saturateToInt32(int64_t v) {
  return static_cast<int32_t>(std::clamp<int64_t>(v, std::numeric_limits<int32_t>::min(),
                                                  std::numeric_limits<int32_t>::max()));
}

// --- QUANTIZED_LSTM helpers (the reference's QuantUtils) ---------------------------------

/// out[r] = (bias ? bias[r] : 0) + zeroPoint * sum_c weights[r][c].
void effectiveBias(int32_t zeroPoint, const int8_t* weights, size_t rows, size_t cols,
                   const int32_t* bias, int32_t* out) {
  for (size_t r = 0; r < rows; ++r) {
    // 64-bit, saturated: the bias is the model's, any int32.
    int64_t value = bias != nullptr ? bias[r] : 0;
    if (zeroPoint != 0) {
      int64_t rowSum = 0;
      for (size_t c = 0; c < cols; ++c) rowSum += weights[r * cols + c];
      value += rowSum * zeroPoint;
    }
    out[r] = saturateToInt32(value);
  }
}

/// out[b][r] = clamp(out[b][r] + requantize(bias[r] + sum_c in[b][c] * w[r][c]) + zeroPoint).
template <typename T>
void matmulAccumulate(const int8_t* in, const int32_t* bias, const int8_t* weights,
                      QuantizedMultiplier m, size_t batch, size_t cols, size_t rows,
                      int32_t zeroPoint, T* out) {
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  for (size_t b = 0; b < batch; ++b) {
    for (size_t r = 0; r < rows; ++r) {
      // The sum is exact in 64 bits and saturated to int32 before requantization (the
      // bias comes from the model: a sum past int32 is the model's overflow, not ours).
      int64_t sum = bias[r];
      for (size_t c = 0; c < cols; ++c) {
        sum += int32_t{in[b * cols + c]} * int32_t{weights[r * cols + c]};
      }
      int64_t acc = multiplyByQuantizedMultiplier(saturateToInt32(sum), m);
      acc += zeroPoint;
      acc += out[b * rows + r];
      out[b * rows + r] = static_cast<T>(std::clamp<int64_t>(acc, kMin, kMax));
    }
  }
}

/// gate[b][v] = saturate(gate[b][v] + requantize(weights[v] * cell[b][v])).
void peepholeAccumulate(const int16_t* weights, const int16_t* cell, QuantizedMultiplier m,
                        size_t batch, size_t size, int16_t* gate) {
  for (size_t b = 0; b < batch; ++b) {
    for (size_t v = 0; v < size; ++v) {
      const int32_t product = int32_t{weights[v]} * int32_t{cell[b * size + v]};
      const int64_t value = int64_t{multiplyByQuantizedMultiplier(product, m)} + gate[b * size + v];
      gate[b * size + v] = saturate16(value);
    }
  }
}

void sigmoidQ3(int16_t* values, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    values[i] = fixedpoint::logistic(Fixed<int16_t, 3>::fromRaw(values[i])).raw;
  }
}

template <int IntegerBits>
void tanhQ(const int16_t* in, size_t n, int16_t* out) {
  for (size_t i = 0; i < n; ++i) {
    out[i] = fixedpoint::tanh(Fixed<int16_t, IntegerBits>::fromRaw(in[i])).raw;
  }
}

/// tanh of values with `integerBits` integer bits (0..6).
void tanhQ(int integerBits, const int16_t* in, size_t n, int16_t* out) {
  switch (integerBits) {
    case 0:
      return tanhQ<0>(in, n, out);
    case 1:
      return tanhQ<1>(in, n, out);
    case 2:
      return tanhQ<2>(in, n, out);
    case 3:
      return tanhQ<3>(in, n, out);
    case 4:
      return tanhQ<4>(in, n, out);
    case 5:
      return tanhQ<5>(in, n, out);
    case 6:
      return tanhQ<6>(in, n, out);
    default:
      std::fill(out, out + n, int16_t{0});
  }
}

/// out = roundingDivideByPOT(a * b, shift), truncated to int16.
void multiplyShift(const int16_t* a, const int16_t* b, size_t n, int shift, int16_t* out) {
  for (size_t i = 0; i < n; ++i) {
    const int32_t value = int32_t{a[i]} * int32_t{b[i]};
    out[i] = static_cast<int16_t>(fixedpoint::roundingDivideByPOT<int32_t>(value, shift));
  }
}

size_t alignUp(size_t v) { return (v + 15) / 16 * 16; }

/// The sections of QUANTIZED_LSTM's scratch.
struct QlstmScratch {
  int16_t* inputGate;
  int16_t* forgetGate;
  int16_t* cellGate;
  int16_t* outputGate;
  int8_t* hidden;
  int32_t* biases;  // 8 * numUnits + outputSize
};

size_t qlstmLayout(const QuantizedLstmParams& p, void* base, QlstmScratch* out) {
  const size_t gate = alignUp(p.batch * p.numUnits * sizeof(int16_t));
  const size_t hidden = alignUp(p.batch * p.numUnits);
  const size_t biases = alignUp((8 * p.numUnits + p.outputSize) * sizeof(int32_t));
  if (out != nullptr) {
    auto* bytes = static_cast<uint8_t*>(base);
    out->inputGate = reinterpret_cast<int16_t*>(bytes);
    out->forgetGate = reinterpret_cast<int16_t*>(bytes + gate);
    out->cellGate = reinterpret_cast<int16_t*>(bytes + 2 * gate);
    out->outputGate = reinterpret_cast<int16_t*>(bytes + 3 * gate);
    out->hidden = reinterpret_cast<int8_t*>(bytes + 4 * gate);
    out->biases = reinterpret_cast<int32_t*>(bytes + 4 * gate + hidden);
  }
  return 4 * gate + hidden + biases;
}

/// Computes one gate's pre-activation: input and recurrent products, peephole, layer
/// normalization (which adds the bias; without it the bias is in the effective biases).
struct GateInputs {
  const int8_t* inputWeights;
  const int8_t* recurrentWeights;
  const int32_t* inputBias;      // effective
  const int32_t* recurrentBias;  // effective
  QuantizedMultiplier inputScale;
  QuantizedMultiplier recurrentScale;
  const int16_t* peepholeWeights;  // null: none
  const int16_t* peepholeCell;
  QuantizedMultiplier peepholeScale;
  const int16_t* layerNormWeights;  // null: none
  const int32_t* gateBias;
  QuantizedMultiplier layerNormScale;
  int32_t varianceLimit;
};

void computeGate(const QuantizedLstmParams& p, const QuantizedLstmTensors& t, const GateInputs& g,
                 int16_t* gate) {
  const size_t n = p.batch * p.numUnits;
  std::fill(gate, gate + n, int16_t{0});
  matmulAccumulate(t.input, g.inputBias, g.inputWeights, g.inputScale, p.batch, p.inputSize,
                   p.numUnits, 0, gate);
  matmulAccumulate(t.prevOutput, g.recurrentBias, g.recurrentWeights, g.recurrentScale, p.batch,
                   p.outputSize, p.numUnits, 0, gate);
  if (g.peepholeWeights != nullptr) {
    peepholeAccumulate(g.peepholeWeights, g.peepholeCell, g.peepholeScale, p.batch, p.numUnits,
                       gate);
  }
  if (g.layerNormWeights != nullptr) {
    quantizedLayerNorm(gate, g.layerNormWeights, g.gateBias, g.layerNormScale, g.varianceLimit,
                       p.batch, p.numUnits, gate);
  }
}

}  // namespace

// --- QUANTIZED_16BIT_LSTM ----------------------------------------------------------------

void quantized16BitLstm(const Quantized16BitLstmShape& s, const Quantized16BitLstmTensors& t,
                        int16_t* scratch) noexcept {
  const size_t in = s.inputSize;
  const size_t out = s.outputSize;
  const size_t depth = in + out;  // columns of the concatenated weights
  const uint8_t* inputWeights[4] = {t.inputToInput, t.inputToCell, t.inputToForget,
                                    t.inputToOutput};
  const uint8_t* recurrentWeights[4] = {t.recurrentToInput, t.recurrentToCell, t.recurrentToForget,
                                        t.recurrentToOutput};
  const int32_t* biases[4] = {t.inputGateBias, t.cellGateBias, t.forgetGateBias, t.outputGateBias};
  // Fully connected layer: accumulators in Q3.12 (16 bits, 3 integer bits).
  for (size_t b = 0; b < s.batch; ++b) {
    const uint8_t* x = t.input + b * in;
    const uint8_t* h = t.prevOutput + b * out;
    for (size_t g = 0; g < 4; ++g) {
      for (size_t u = 0; u < out; ++u) {
        int64_t sum = biases[g][u];  // the model's bias: any int32, so 64-bit and saturated
        for (size_t d = 0; d < depth; ++d) {
          // The concatenated input is [input, prevOutput]; the concatenated weight row is
          // [recurrent-to-gate row, input-to-gate row].
          const int32_t value = (d < in ? x[d] : h[d - in]) - 128;
          const int32_t weight =
              (d < out ? recurrentWeights[g][u * out + d] : inputWeights[g][u * in + d - out]) -
              s.weightsZeroPoint;
          sum += value * weight;
        }
        const int32_t acc = multiplyByQuantizedMultiplier(saturateToInt32(sum), s.accumulator);
        scratch[b * 4 * out + g * out + u] = saturate16(acc);
      }
    }
  }
  using F0 = Fixed<int16_t, 0>;
  using F3 = Fixed<int16_t, 3>;
  using F4 = Fixed<int16_t, 4>;  // the cell state: 4 integer bits
  for (size_t b = 0; b < s.batch; ++b) {
    const int16_t* gates = scratch + b * 4 * out;
    for (size_t u = 0; u < out; ++u) {
      const F0 inputGate = fixedpoint::logistic(F3::fromRaw(gates[u]));
      const F0 modulation = fixedpoint::tanh(F3::fromRaw(gates[out + u]));
      const F0 forgetGate = fixedpoint::logistic(F3::fromRaw(gates[2 * out + u]));
      const F0 outputGate = fixedpoint::logistic(F3::fromRaw(gates[3 * out + u]));
      const F0 inputTimesModulation = inputGate * modulation;
      const F4 prevCell = F4::fromRaw(t.prevCellState[b * out + u]);
      const F4 prevCellTimesForget = forgetGate * prevCell;
      const F4 newCell = fixedpoint::saturatingAdd(fixedpoint::rescale<4>(inputTimesModulation),
                                                   prevCellTimesForget);
      const F0 activation = outputGate * fixedpoint::tanh(fixedpoint::rescale<3>(newCell));
      t.cellStateOut[b * out + u] = newCell.raw;
      const int16_t rescaled = fixedpoint::roundingDivideByPOT<int16_t>(activation.raw, 8);
      const int16_t clamped = std::clamp<int16_t>(rescaled, -128, 127);
      t.output[b * out + u] = static_cast<uint8_t>(128 + clamped);
    }
  }
}

// --- QUANTIZED_LSTM ----------------------------------------------------------------------

void inverseSqrtMultiplier(int32_t input, int reverseShift, int32_t* multiplier,
                           int* shift) noexcept {
  int outputShift = 11;
  while (input >= (1 << 29)) {
    input /= 4;
    ++outputShift;
  }
  const unsigned maxLeftShiftBits = std::countl_zero(static_cast<uint32_t>(input)) - 1;
  const unsigned maxLeftShiftBitPairs = maxLeftShiftBits / 2;
  const unsigned leftShiftBitPairs = maxLeftShiftBitPairs - 1;
  outputShift -= static_cast<int>(leftShiftBitPairs);
  input = static_cast<int32_t>(static_cast<uint32_t>(input) << (2 * leftShiftBitPairs));

  using F3 = Fixed<int32_t, 3>;
  using F0 = Fixed<int32_t, 0>;
  const F3 fixedInput = F3::fromRaw(input >> 1);
  const F3 halfInput = fixedpoint::saturatingRoundingMultiplyByPOT<-1>(fixedInput);
  const F3 halfThree = F3::constant((1 << 28) + (1 << 27));  // 1.5
  F3 x = F3::one();
  for (int i = 0; i < 5; ++i) {
    const F3 x3 = fixedpoint::rescale<3>(x * x * x);
    x = fixedpoint::rescale<3>(halfThree * x - halfInput * x3);
  }
  const F0 halfSqrt2 = F0::constant(1518500250);  // sqrt(2) / 2
  x = x * halfSqrt2;
  int32_t result = x.raw;
  if (outputShift < 0) {
    result = static_cast<int32_t>(static_cast<uint32_t>(result) << -outputShift);
    outputShift = 0;
  }
  *multiplier = result;
  *shift = outputShift * reverseShift;
}

void quantizedLayerNorm(const int16_t* in, const int16_t* weights, const int32_t* bias,
                        QuantizedMultiplier scale, int32_t varianceLimit, size_t batch, size_t size,
                        int16_t* out) noexcept {
  constexpr int64_t kOverflowGuard = int64_t{1} << 20;
  if (size == 0) return;
  const auto n = static_cast<int64_t>(size);
  const QuantizedMultiplier outputScale{scale.multiplier, scale.shift + 12};
  for (size_t b = 0; b < batch; ++b) {
    const int16_t* row = in + b * size;
    int64_t sum = 0;
    int64_t sumSquares = 0;
    for (size_t j = 0; j < size; ++j) {
      const int32_t v = row[j];
      sum += v;
      sumSquares += v * v;
    }
    const auto mean = static_cast<int32_t>(sum * 1024 / n);
    const int64_t temp = kOverflowGuard / n;
    const int64_t variance = sumSquares * temp - int64_t{mean} * int64_t{mean};
    auto variance2 = static_cast<int32_t>(variance / kOverflowGuard);
    if (variance2 < 1) variance2 = varianceLimit;
    QuantizedMultiplier inverse;
    inverseSqrtMultiplier(variance2, -1, &inverse.multiplier, &inverse.shift);
    int16_t* dst = out + b * size;
    for (size_t j = 0; j < size; ++j) {
      const int32_t shifted = 1024 * int32_t{row[j]} - mean;
      const int32_t rescaled = multiplyByQuantizedMultiplier(shifted, inverse);
      const int64_t value = int64_t{rescaled} * weights[j] + bias[j];
      const auto rounded = static_cast<int32_t>((value > 0 ? value + 512 : value - 512) / 1024);
      dst[j] = saturate16(multiplyByQuantizedMultiplier(rounded, outputScale));
    }
  }
}

size_t quantizedLstmScratchBytes(const QuantizedLstmParams& p) {
  return qlstmLayout(p, nullptr, nullptr);
}

void quantizedLstm(const QuantizedLstmParams& p, const QuantizedLstmTensors& t,
                   void* scratch) noexcept {
  QlstmScratch s{};
  qlstmLayout(p, scratch, &s);
  const size_t units = p.numUnits;
  const size_t n = p.batch * units;
  int32_t* bias = s.biases;  // [gate][input, recurrent][units], then projection
  auto inputBias = [&](size_t gate) { return bias + (2 * gate) * units; };
  auto recurrentBias = [&](size_t gate) { return bias + (2 * gate + 1) * units; };
  int32_t* projectionBias = bias + 8 * units;

  // Effective biases: the zero point terms, plus the gate bias when there is no layer
  // normalization (which adds the bias itself).
  const int8_t* inputWeights[4] = {t.inputToInput, t.inputToForget, t.inputToCell, t.inputToOutput};
  const int8_t* recurrentWeights[4] = {t.recurrentToInput, t.recurrentToForget, t.recurrentToCell,
                                       t.recurrentToOutput};
  const int32_t* gateBias[4] = {t.inputGateBias, t.forgetGateBias, t.cellGateBias,
                                t.outputGateBias};
  for (size_t g = p.cifg ? 1 : 0; g < 4; ++g) {
    effectiveBias(-p.inputZeroPoint, inputWeights[g], units, p.inputSize,
                  p.layerNorm ? nullptr : gateBias[g], inputBias(g));
    effectiveBias(-p.prevOutputZeroPoint, recurrentWeights[g], units, p.outputSize, nullptr,
                  recurrentBias(g));
  }
  if (p.projection) {
    effectiveBias(p.hiddenZeroPoint, t.projectionWeights, p.outputSize, units, t.projectionBias,
                  projectionBias);
  }

  auto gateInputs =
      [&](size_t g, QuantizedMultiplier inputScale, QuantizedMultiplier recurrentScale,
          const int16_t* peephole, const int16_t* peepholeCell, QuantizedMultiplier peepholeScale,
          const int16_t* layerNorm, QuantizedMultiplier layerNormScale, int32_t varianceLimit) {
        return GateInputs{inputWeights[g],
                          recurrentWeights[g],
                          inputBias(g),
                          recurrentBias(g),
                          inputScale,
                          recurrentScale,
                          p.peephole ? peephole : nullptr,
                          peepholeCell,
                          peepholeScale,
                          p.layerNorm ? layerNorm : nullptr,
                          gateBias[g],
                          layerNormScale,
                          varianceLimit};
      };

  // Forget gate.
  computeGate(
      p, t,
      gateInputs(1, p.inputToForget, p.recurrentToForget, t.cellToForget, t.prevCellState,
                 p.cellToForget, t.forgetLayerNorm, p.forgetLayerNorm, p.forgetVarianceLimit),
      s.forgetGate);
  sigmoidQ3(s.forgetGate, n);

  // Cell (modulation) gate.
  computeGate(p, t,
              gateInputs(2, p.inputToCell, p.recurrentToCell, nullptr, nullptr, {}, t.cellLayerNorm,
                         p.cellLayerNorm, p.cellVarianceLimit),
              s.cellGate);
  tanhQ<3>(s.cellGate, n, s.cellGate);

  // Input gate.
  if (p.cifg) {
    for (size_t i = 0; i < n; ++i) s.inputGate[i] = static_cast<int16_t>(32767 - s.forgetGate[i]);
  } else {
    computeGate(p, t,
                gateInputs(0, p.inputToInput, p.recurrentToInput, t.cellToInput, t.prevCellState,
                           p.cellToInput, t.inputLayerNorm, p.inputLayerNorm, p.inputVarianceLimit),
                s.inputGate);
    sigmoidQ3(s.inputGate, n);
  }

  // Cell state.
  multiplyShift(s.forgetGate, t.prevCellState, n, 15, s.forgetGate);
  multiplyShift(s.inputGate, s.cellGate, n, 30 + p.cellShift, s.cellGate);
  for (size_t i = 0; i < n; ++i) {
    t.cellStateOut[i] = saturate16(int32_t{s.forgetGate[i]} + int32_t{s.cellGate[i]});
  }
  if (p.cellClip > 0) {
    for (size_t i = 0; i < n; ++i) {
      t.cellStateOut[i] =
          std::clamp<int16_t>(t.cellStateOut[i], static_cast<int16_t>(-p.cellClip), p.cellClip);
    }
  }

  // Output gate (its peephole sees the new cell state).
  computeGate(
      p, t,
      gateInputs(3, p.inputToOutput, p.recurrentToOutput, t.cellToOutput, t.cellStateOut,
                 p.cellToOutput, t.outputLayerNorm, p.outputLayerNorm, p.outputVarianceLimit),
      s.outputGate);
  sigmoidQ3(s.outputGate, n);

  // Hidden state: outputGate * tanh(cell), requantized to int8.
  tanhQ(p.cellShift + 15, t.cellStateOut, n, s.inputGate);
  for (size_t i = 0; i < n; ++i) {
    const int32_t product = int32_t{s.outputGate[i]} * int32_t{s.inputGate[i]};
    // In int64: a large hidden scale saturates the product at the int32 limits.
    const int64_t value =
        int64_t{multiplyByQuantizedMultiplier(product, p.hiddenScale)} - p.hiddenZeroPoint;
    s.hidden[i] = static_cast<int8_t>(std::clamp<int64_t>(value, -128, 127));
  }

  // Projection.
  const size_t outputCount = p.batch * p.outputSize;
  if (p.projection) {
    std::fill(t.output, t.output + outputCount, int8_t{0});
    matmulAccumulate(s.hidden, projectionBias, t.projectionWeights, p.projectionScale, p.batch,
                     units, p.outputSize, p.prevOutputZeroPoint, t.output);
    if (p.projectionClip > 0) {
      for (size_t i = 0; i < outputCount; ++i) {
        t.output[i] = std::clamp<int8_t>(t.output[i], static_cast<int8_t>(-p.projectionClip),
                                         p.projectionClip);
      }
    }
  } else {
    std::copy(s.hidden, s.hidden + outputCount, t.output);
  }
  std::copy(t.output, t.output + outputCount, t.outputStateOut);
}

}  // namespace nnhal::kernels
