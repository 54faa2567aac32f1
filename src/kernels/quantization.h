// kernels/quantization.h — fixed-point requantization, as the NNAPI CPU reference
// (and TFLite's integer kernels) compute it.
//
// A real multiplier M in (0, 1) (or any positive M) is represented as a Q31 integer
// `multiplier` in [2^30, 2^31) and a power-of-two `shift`:  M = multiplier * 2^(shift-31).
// Requantizing an int32 accumulator x then is
//   roundingDivideByPOT(saturatingRoundingDoublingHighMul(x * 2^max(shift,0), multiplier),
//                       max(-shift, 0))
// with round-half-away-from-zero in the high multiply and round-half-up-away-from-zero in
// the divide, bit-exact with gemmlowp.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "nnhal/types.h"

namespace nnhal::kernels {

struct QuantizedMultiplier {
  int32_t multiplier = 0;  ///< Q31, in [2^30, 2^31) or 0
  int shift = 0;           ///< left shift if > 0, right shift if < 0
};

/// Splits a non-negative real multiplier into Q31 multiplier and shift, as TFLite's
/// QuantizeMultiplier does: one below 2^-31 flushes to 0 (every product rounds to zero). One of
/// 2^31 or more (an output scale far below its inputs', such as the 1e-35 scales converters
/// write) becomes the largest representable, 2^31 - 2^0: any nonzero product then saturates
/// an 8- or 16-bit output, as it does with the exact multiplier in TFLite.
/// Returns false for negative, NaN or infinite input.
inline bool quantizeMultiplier(double real, QuantizedMultiplier* out) {
  if (!(real >= 0.0) || std::isinf(real)) return false;
  if (real == 0.0) {
    *out = {0, 0};
    return true;
  }
  int shift = 0;
  const double q = std::frexp(real, &shift);  // real = q * 2^shift, q in [0.5, 1)
  auto qFixed = static_cast<int64_t>(std::llround(q * (1LL << 31)));
  if (qFixed == (1LL << 31)) {
    qFixed /= 2;
    ++shift;
  }
  if (shift < -31) {  // too small to represent: it rounds to zero
    *out = {0, 0};
    return true;
  }
  if (shift > 30) {
    *out = {std::numeric_limits<int32_t>::max(), 30};
    return true;
  }
  *out = {static_cast<int32_t>(qFixed), shift};
  return true;
}

/// The real requantization multiplier of a convolution or FULLY_CONNECTED as the NNAPI
/// reference computes it: input scale times filter scale in float, divided by the output
/// scale in double. Every device derives it here, so that all give the same results.
inline double convolutionRealMultiplier(float inputScale, float filterScale, float outputScale) {
  return static_cast<double>(inputScale * filterScale) / static_cast<double>(outputScale);
}

/// Whether a per-tensor convolution's bias scale is input scale * filter scale, as the
/// reference checks it: the product in float, compared in double within 1e-6 relative.
inline bool biasScaleMatches(float inputScale, float filterScale, float biasScale) {
  const double product = static_cast<double>(inputScale * filterScale);
  const double bias = biasScale;
  return std::abs(product - bias) <= 1e-6 * std::min(product, bias);
}

/// gemmlowp SaturatingRoundingDoublingHighMul: round(a * b / 2^31), saturating.
inline int32_t saturatingRoundingDoublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == std::numeric_limits<int32_t>::min()) {
    return std::numeric_limits<int32_t>::max();
  }
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  const int64_t nudge = ab >= 0 ? (1LL << 30) : (1 - (1LL << 30));
  return static_cast<int32_t>((ab + nudge) / (1LL << 31));
}

/// gemmlowp RoundingDivideByPOT: x / 2^exponent rounded to nearest, ties away from zero.
inline int32_t roundingDivideByPOT(int32_t x, int exponent) {
  const int32_t mask = static_cast<int32_t>((1LL << exponent) - 1);
  const int32_t remainder = x & mask;
  const int32_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

/// x * M for M = multiplier * 2^(shift-31), with gemmlowp rounding.
inline int32_t multiplyByQuantizedMultiplier(int32_t x, QuantizedMultiplier m) {
  const int leftShift = m.shift > 0 ? m.shift : 0;
  const int rightShift = m.shift > 0 ? 0 : -m.shift;
  const int64_t shifted = static_cast<int64_t>(x) * (int64_t{1} << leftShift);
  const auto clamped = static_cast<int32_t>(std::clamp<int64_t>(
      shifted, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
  return roundingDivideByPOT(saturatingRoundingDoublingHighMul(clamped, m.multiplier), rightShift);
}

/// Output range [min, max] of quantized values after a fused activation, for an output
/// with `scale` and `zeroPoint` whose type spans [qmin, qmax]. Follows the NNAPI
/// reference: RELU clamps at real 0, RELU1 at [-1, 1], RELU6 at [0, 6].
inline void activationRangeQuantized(FusedActivationFunc activation, float scale, int32_t zeroPoint,
                                     int32_t qmin, int32_t qmax, int32_t* outMin, int32_t* outMax) {
  // In double and clamped: a tiny (even denormal) scale is valid and makes real / scale
  // leave the int32 range, or float's.
  auto quantize = [&](float real) {
    const double q = std::round(static_cast<double>(real) / scale) + zeroPoint;
    if (std::isnan(q)) return qmin;
    return static_cast<int32_t>(std::clamp<double>(q, std::numeric_limits<int32_t>::min(),
                                                   std::numeric_limits<int32_t>::max()));
  };
  int32_t lo = qmin;
  int32_t hi = qmax;
  switch (activation) {
    case FusedActivationFunc::NONE:
      break;
    case FusedActivationFunc::RELU:
      lo = std::max(qmin, quantize(0.0f));
      break;
    case FusedActivationFunc::RELU1:
      lo = std::max(qmin, quantize(-1.0f));
      hi = std::min(qmax, quantize(1.0f));
      break;
    case FusedActivationFunc::RELU6:
      lo = std::max(qmin, quantize(0.0f));
      hi = std::min(qmax, quantize(6.0f));
      break;
  }
  *outMin = lo;
  *outMax = hi;
}

/// Output range of a float fused activation.
inline void activationRangeFloat(FusedActivationFunc activation, float* outMin, float* outMax) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (activation) {
    case FusedActivationFunc::NONE:
      *outMin = -kInf;
      *outMax = kInf;
      return;
    case FusedActivationFunc::RELU:
      *outMin = 0.0f;
      *outMax = kInf;
      return;
    case FusedActivationFunc::RELU1:
      *outMin = -1.0f;
      *outMax = 1.0f;
      return;
    case FusedActivationFunc::RELU6:
      *outMin = 0.0f;
      *outMax = 6.0f;
      return;
  }
  *outMin = -kInf;
  *outMax = kInf;
}

}  // namespace nnhal::kernels
