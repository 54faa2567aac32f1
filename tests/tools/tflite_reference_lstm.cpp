// TFLite's integer LSTM step and gemmlowp's 16-bit fixed-point functions, written for the
// operation-level check (tflite_reference_lstm.h). Plain loops: a yardstick, not an engine.
#include "tools/tflite_reference_lstm.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

namespace nnhal::tflite_reference {
namespace {

// --- gemmlowp's fixed point on int16 raw values ------------------------------------------
// A value with I integer bits is raw * 2^(I - 15). Additions and negations wrap as gemmlowp's
// int16 operators do; multiplications are saturating rounding doubling high multiplies.

int16_t wrap(int32_t v) { return static_cast<int16_t>(static_cast<uint16_t>(v)); }

int16_t saturate16(int32_t v) {
  return static_cast<int16_t>(std::clamp<int32_t>(v, std::numeric_limits<int16_t>::min(),
                                                  std::numeric_limits<int16_t>::max()));
}

/// SaturatingRoundingDoublingHighMul for int16.
int16_t highMul(int16_t a, int16_t b) {
  if (a == b && a == std::numeric_limits<int16_t>::min()) {
    return std::numeric_limits<int16_t>::max();
  }
  const int32_t product = int32_t{a} * int32_t{b};
  const int32_t nudge = product >= 0 ? (1 << 14) : (1 - (1 << 14));
  return static_cast<int16_t>((product + nudge) / (1 << 15));
}

/// SaturatingRoundingMultiplyByPOT<exponent> for int16.
int16_t multiplyByPowerOfTwo(int16_t x, int exponent) {
  if (exponent < 0) return static_cast<int16_t>(roundingDivideByPowerOfTwo(x, -exponent));
  if (exponent == 0) return x;
  const int32_t threshold = (1 << (15 - exponent)) - 1;
  if (x > threshold) return std::numeric_limits<int16_t>::max();
  if (x < -threshold) return std::numeric_limits<int16_t>::min();
  return wrap(int32_t{x} * (1 << exponent));
}

/// Rescale from `from` integer bits to `to`.
int16_t rescale(int16_t x, int from, int to) { return multiplyByPowerOfTwo(x, from - to); }

/// A constant gemmlowp writes as a 32-bit raw value, in the int16 format: rounded right
/// shift by 16 (RescaleConstantInitializer).
int16_t constant(int32_t raw32) {
  return static_cast<int16_t>(roundingDivideByPowerOfTwo(raw32, 16));
}

/// One in a format with `integerBits` integer bits (the largest raw value when 0).
int16_t one(int integerBits) {
  return integerBits == 0 ? std::numeric_limits<int16_t>::max()
                          : static_cast<int16_t>(1 << (15 - integerBits));
}

/// RoundingHalfSum for int16.
int16_t roundingHalfSum(int16_t a, int16_t b) {
  const int32_t sum = int32_t{a} + int32_t{b};
  return static_cast<int16_t>((sum + (sum >= 0 ? 1 : -1)) / 2);
}

/// exp(a) for a in [-1/4, 0), a with 0 integer bits.
int16_t expOnQuarterInterval(int16_t a) {
  const int16_t constantTerm = constant(1895147668);  // exp(-1/8)
  const int16_t oneThird = constant(715827883);
  const int16_t x = wrap(a + (1 << 12));  // a + 1/8
  const int16_t x2 = highMul(x, x);
  const int16_t x3 = highMul(x2, x);
  const int16_t x4 = highMul(x2, x2);
  const int16_t x4Over4 = multiplyByPowerOfTwo(x4, -2);
  const int16_t polynomial =
      multiplyByPowerOfTwo(wrap(highMul(wrap(x4Over4 + x3), oneThird) + x2), -1);
  return saturate16(int32_t{constantTerm} + highMul(constantTerm, wrap(x + polynomial)));
}

/// exp(a) for a <= 0 with `integerBits` integer bits, as Q0.15.
int16_t expOnNegativeValues(int16_t a, int integerBits) {
  const int fractionalBits = 15 - integerBits;
  const int16_t oneQuarter = static_cast<int16_t>(1 << (fractionalBits - 2));
  const int16_t mask = static_cast<int16_t>(oneQuarter - 1);
  const int16_t aModQuarterMinusQuarter = wrap((a & mask) - oneQuarter);
  int16_t result = expOnQuarterInterval(rescale(aModQuarterMinusQuarter, integerBits, 0));
  const int16_t remainder = wrap(aModQuarterMinusQuarter - a);
  // exp(-2^e) for e = -2 .. 4, applied for each bit of the remainder.
  constexpr std::array<std::pair<int, int32_t>, 7> kBarrel = {{{-2, 1672461947},
                                                               {-1, 1302514674},
                                                               {0, 790015084},
                                                               {1, 290630308},
                                                               {2, 39332535},
                                                               {3, 720401},
                                                               {4, 242}}};
  for (const auto& [exponent, multiplier] : kBarrel) {
    if (integerBits <= exponent) continue;
    const int shift = fractionalBits + exponent;
    if ((remainder & (1 << shift)) != 0) result = highMul(result, constant(multiplier));
  }
  if (integerBits > 5) {
    const int16_t minusThirtyTwo = constant(-(1 << (36 - integerBits)));
    if (a < minusThirtyTwo) result = 0;
  }
  if (a == 0) result = one(0);
  return result;
}

/// The Newton-Raphson iterate of 1 / half_denominator in Q2.13 for x in (0, 1).
int16_t reciprocalOfHalfDenominator(int16_t halfDenominator) {
  const int16_t c48over17 = constant(1515870810);
  const int16_t cMinus32over17 = constant(-1010580540);
  int16_t x = wrap(c48over17 + highMul(halfDenominator, cMinus32over17));
  for (int i = 0; i < 3; ++i) {
    const int16_t halfDenominatorTimesX = highMul(halfDenominator, x);
    const int16_t oneMinus = wrap(one(2) - halfDenominatorTimesX);
    x = wrap(x + rescale(highMul(x, oneMinus), 4, 2));
  }
  return x;
}

/// 1 / (1 + a) for a in (0, 1), Q0.15.
int16_t oneOverOnePlusX(int16_t a) {
  const int16_t x = reciprocalOfHalfDenominator(roundingHalfSum(a, one(0)));
  return rescale(x, 1, 0);  // x / 2: the same raw value read with one integer bit
}

/// (1 - a) / (1 + a) for a in (0, 1), Q0.15.
int16_t oneMinusXOverOnePlusX(int16_t a) {
  const int16_t x = reciprocalOfHalfDenominator(roundingHalfSum(a, one(0)));
  return rescale(wrap(x - one(2)), 2, 0);
}

// --- TFLite's tensor utilities for the integer LSTM ------------------------------------------

std::vector<int32_t> zeros(size_t n) { return std::vector<int32_t>(n, 0); }

/// gate[b, u] += requantize(bias[u] + sum (x[b, i] - zeroPoint) * w[u, i]), saturated to
/// int16 (MatrixBatchVectorMultiplyAccumulate with the zero point folded into the bias).
void accumulateProduct(const QuantTensor& x, int32_t zeroPoint, const QuantTensor& weights,
                       const std::vector<int32_t>* bias, Multiplier m, size_t batch, size_t units,
                       std::vector<int32_t>& gate) {
  const size_t size = weights.values.size() / units;
  for (size_t b = 0; b < batch; ++b) {
    for (size_t u = 0; u < units; ++u) {
      int32_t acc = bias != nullptr && !bias->empty() ? (*bias)[u] : 0;
      for (size_t i = 0; i < size; ++i) {
        acc += (x.values[b * size + i] - zeroPoint) * weights.values[u * size + i];
      }
      const int32_t sum = multiplyByQuantizedMultiplier(acc, m) + gate[b * units + u];
      gate[b * units + u] = saturate16(sum);
    }
  }
}

Multiplier effective(float scale) { return quantizeMultiplier(static_cast<double>(scale)); }

}  // namespace

int16_t fixedPointLogistic(int16_t raw, int integerBits) {
  if (raw == 0) return constant(1 << 30);  // one half
  const bool positive = raw > 0;
  const int16_t absolute = positive ? raw : wrap(-raw);
  const int16_t onPositive = oneOverOnePlusX(expOnNegativeValues(wrap(-absolute), integerBits));
  return positive ? onPositive : wrap(one(0) - onPositive);
}

int16_t fixedPointTanh(int16_t raw, int integerBits) {
  if (raw == 0) return 0;
  const bool negative = raw < 0;
  const int16_t negativeInput = negative ? raw : wrap(-raw);
  // exp(2n): the same raw value read with one more integer bit.
  const int16_t t = oneMinusXOverOnePlusX(expOnNegativeValues(negativeInput, integerBits + 1));
  return negative ? wrap(-t) : t;
}

QuantizedLstmResult quantizedLstm(const QuantizedLstmStep& s) {
  const size_t batch = s.input.dims[0];
  const size_t units = s.inputWeights[3].dims[0];
  const size_t outputSize = s.outputState.dims.back();
  const bool cifg = s.inputWeights[0].values.empty();
  const bool peephole = !s.peepholeWeights[1].values.empty();
  const bool projection = !s.projectionWeights.values.empty();
  const int cellShift = static_cast<int>(std::lround(std::log2(s.cellState.scale)));
  const float gateScale = std::pow(2.0f, -12.0f);  // Q3.12 without layer normalization
  const float cellScale = std::pow(2.0f, static_cast<float>(cellShift));

  // One gate: the products of the input and of the output state, the peephole term from
  // `cell` (the output gate reads the updated cell state), then its activation.
  const auto gate = [&](size_t g, int peepholeIndex, bool isTanh,
                        const std::vector<int32_t>& cell) {
    std::vector<int32_t> values = zeros(batch * units);
    accumulateProduct(s.input, s.input.zeroPoint, s.inputWeights[g], &s.biases[g],
                      effective(s.inputWeights[g].scale * s.input.scale / gateScale), batch, units,
                      values);
    accumulateProduct(s.outputState, s.outputState.zeroPoint, s.recurrentWeights[g], nullptr,
                      effective(s.recurrentWeights[g].scale * s.outputState.scale / gateScale),
                      batch, units, values);
    if (peephole && peepholeIndex >= 0) {
      const QuantTensor& w = s.peepholeWeights[static_cast<size_t>(peepholeIndex)];
      const Multiplier m = effective(cellScale * w.scale / gateScale);
      for (size_t k = 0; k < batch * units; ++k) {
        const int32_t product = w.values[k % units] * cell[k];
        values[k] = saturate16(multiplyByQuantizedMultiplier(product, m) + values[k]);
      }
    }
    for (int32_t& v : values) {
      const auto raw = static_cast<int16_t>(v);
      v = isTanh ? fixedPointTanh(raw, 3) : fixedPointLogistic(raw, 3);
    }
    return values;
  };
  // In the order of lstm_eval.cc: input, forget, cell, the cell update, output.
  const std::vector<int32_t>& cellIn = s.cellState.values;
  const std::vector<int32_t> inputGate = cifg ? std::vector<int32_t>{} : gate(0, 0, false, cellIn);
  const std::vector<int32_t> forgetGate = gate(1, 1, false, cellIn);
  const std::vector<int32_t> cellGate = gate(2, -1, true, cellIn);

  QuantizedLstmResult r;
  r.cellState.resize(batch * units);
  const auto clip16 =
      static_cast<int16_t>(std::min(std::max(s.cellClip / s.cellState.scale, -32768.0f), 32767.0f));
  for (size_t k = 0; k < batch * units; ++k) {
    const auto forgetTimesCell =
        static_cast<int16_t>(roundingDivideByPowerOfTwo(forgetGate[k] * cellIn[k], 15));
    const int32_t inputFactor = cifg ? 32767 - forgetGate[k] : inputGate[k];
    const auto inputTimesCellGate =
        static_cast<int16_t>(roundingDivideByPowerOfTwo(inputFactor * cellGate[k], 30 + cellShift));
    int32_t cell = saturate16(int32_t{forgetTimesCell} + inputTimesCellGate);
    if (clip16 > 0) cell = std::clamp<int32_t>(cell, -clip16, clip16);
    r.cellState[k] = cell;
  }
  const std::vector<int32_t> outputGate = gate(3, 2, false, r.cellState);

  // The hidden state: output gate x tanh(cell state), to the hidden scale.
  const float twoToMinus15 = std::pow(2.0f, -15.0f);
  const Multiplier hiddenScale = effective(twoToMinus15 / s.hiddenScale * twoToMinus15);
  std::vector<int32_t> hidden(batch * units);
  for (size_t k = 0; k < batch * units; ++k) {
    const int32_t tanhCell = fixedPointTanh(static_cast<int16_t>(r.cellState[k]), 15 + cellShift);
    const int32_t zeroPointTerm = projection ? -s.hiddenZeroPoint : s.hiddenZeroPoint;
    const int32_t v =
        multiplyByQuantizedMultiplier(outputGate[k] * tanhCell, hiddenScale) - zeroPointTerm;
    hidden[k] = std::clamp(v, -128, 127);
  }
  if (!projection) {
    r.outputState = hidden;
  } else {
    const Multiplier m = effective(s.projectionWeights.scale * s.hiddenScale / s.outputState.scale);
    const auto clip8 = static_cast<int8_t>(
        std::min(std::max(s.projectionClip / s.outputState.scale, -128.0f), 127.0f));
    r.outputState.resize(batch * outputSize);
    for (size_t b = 0; b < batch; ++b) {
      for (size_t o = 0; o < outputSize; ++o) {
        int32_t acc = s.projectionBias.empty() ? 0 : s.projectionBias[o];
        for (size_t u = 0; u < units; ++u) {
          acc += (hidden[b * units + u] - s.hiddenZeroPoint) *
                 s.projectionWeights.values[o * units + u];
        }
        int32_t v =
            std::clamp(multiplyByQuantizedMultiplier(acc, m) + s.outputState.zeroPoint, -128, 127);
        if (clip8 > 0) v = std::clamp<int32_t>(v, -clip8, clip8);
        r.outputState[b * outputSize + o] = v;
      }
    }
  }
  r.output = r.outputState;
  return r;
}

}  // namespace nnhal::tflite_reference
