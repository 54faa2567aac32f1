// The requantization of nnhal's 8-bit operations, bit-exact with the CPU device's
// (kernels/quantization.h, gemmlowp's rounding), in 32-bit halves so that no device needs
// 64-bit integers; and the raw int32 view of the tensor buffer, where the plan keeps biases
// and (multiplier, shift) pairs.
layout(std430, set = 0, binding = 0) buffer TensorWords { int words[]; };

const int kMin = int(0x80000000u);
const int kMax = 0x7fffffff;

// round(a * b / 2^31), ties away from zero; kMin * kMin saturates.
int saturatingRoundingDoublingHighMul(int a, int b) {
  if (a == b && a == kMin) return kMax;
  int high;
  int low;
  imulExtended(a, b, high, low);
  // The 64-bit product plus 2^30 (non-negative) or 1 - 2^30 (negative), sign-extended.
  const bool negative = high < 0;
  const uint nudgeLow = negative ? uint(1 - 0x40000000) : 0x40000000u;
  uint carry;
  const uint sumLow = uaddCarry(uint(low), nudgeLow, carry);
  const int sumHigh = high + (negative ? -1 : 0) + int(carry);
  // Divided by 2^31, truncating toward zero as C++ does.
  const int floored = (sumHigh << 1) | int(sumLow >> 31);
  const bool inexact = (sumLow & 0x7fffffffu) != 0u;
  return sumHigh < 0 && inexact ? floored + 1 : floored;
}

// x / 2^exponent rounded to nearest, ties away from zero (exponent in [0, 31]).
int roundingDivideByPOT(int x, int exponent) {
  const int mask = int((1u << uint(exponent)) - 1u);
  const int remainder = x & mask;
  const int threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return (x >> exponent) + (remainder > threshold ? 1 : 0);
}

// x * multiplier * 2^(shift - 31), the left shift saturating first.
int requantize(int x, int multiplier, int shift) {
  if (shift > 0) {
    const int limit = kMax >> shift;
    x = x > limit ? kMax : (x < (kMin >> shift) ? kMin : x << shift);
  }
  return roundingDivideByPOT(saturatingRoundingDoublingHighMul(x, multiplier), max(-shift, 0));
}

// x rounded to the nearest integer, ties away from zero, as std::round (floor(|x| + 0.5)
// would round 0.49999997 up).
float roundHalfAway(float x) {
  const float whole = floor(abs(x));
  const float rounded = abs(x) - whole >= 0.5 ? whole + 1.0 : whole;
  return x < 0.0 ? -rounded : rounded;
}
