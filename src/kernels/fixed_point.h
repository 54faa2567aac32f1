// kernels/fixed_point.h — gemmlowp-compatible fixed-point arithmetic on int16 and int32
// (Q-format values with a compile-time number of integer bits) and the fixed-point
// logistic and tanh the quantized LSTM operations use. Results are bit-exact with
// gemmlowp's scalar implementation: the same rounding, saturation and wrapping.
//
// Fixed<Raw, N> holds raw / 2^(bits(Raw) - 1 - N); its range is [-2^N, 2^N).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace nnhal::kernels::fixedpoint {

template <typename Raw>
constexpr int kRawBits = 8 * sizeof(Raw);

/// Wrapping conversion of a wide value to Raw (two's complement), as C++ does for the
/// narrowing of int16 sums and as gemmlowp's int32 arithmetic behaves in practice.
template <typename Raw>
constexpr Raw wrap(int64_t v) {
  return static_cast<Raw>(static_cast<std::make_unsigned_t<Raw>>(static_cast<uint64_t>(v)));
}

/// round(a * b / 2^(bits-1)), ties away from zero; min * min saturates to max.
template <typename Raw>
constexpr Raw saturatingRoundingDoublingHighMul(Raw a, Raw b) {
  constexpr Raw kMin = std::numeric_limits<Raw>::min();
  if (a == b && a == kMin) return std::numeric_limits<Raw>::max();
  const int64_t ab = static_cast<int64_t>(a) * static_cast<int64_t>(b);
  constexpr int64_t kHalf = int64_t{1} << (kRawBits<Raw> - 2);
  const int64_t nudge = ab >= 0 ? kHalf : 1 - kHalf;
  return static_cast<Raw>((ab + nudge) / (int64_t{1} << (kRawBits<Raw> - 1)));
}

/// x / 2^exponent rounded to nearest, ties away from zero (exponent in [0, bits - 1]).
template <typename Raw>
constexpr Raw roundingDivideByPOT(Raw x, int exponent) {
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = static_cast<int64_t>(x) & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return wrap<Raw>((static_cast<int64_t>(x) >> exponent) + (remainder > threshold ? 1 : 0));
}

/// x * 2^Exponent: saturating for Exponent > 0, rounding for Exponent < 0.
template <int Exponent, typename Raw>
constexpr Raw saturatingRoundingMultiplyByPOT(Raw x) {
  if constexpr (Exponent == 0) {
    return x;
  } else if constexpr (Exponent < 0) {
    return roundingDivideByPOT<Raw>(x, -Exponent);
  } else {
    constexpr int64_t kThreshold = (int64_t{1} << (kRawBits<Raw> - 1 - Exponent)) - 1;
    if (x > kThreshold) return std::numeric_limits<Raw>::max();
    if (x < -kThreshold) return std::numeric_limits<Raw>::min();
    return static_cast<Raw>(static_cast<int64_t>(x) * (int64_t{1} << Exponent));
  }
}

/// (a + b) / 2 rounded away from zero.
template <typename Raw>
constexpr Raw roundingHalfSum(Raw a, Raw b) {
  const int64_t sum = static_cast<int64_t>(a) + static_cast<int64_t>(b);
  const int64_t sign = sum >= 0 ? 1 : -1;
  return static_cast<Raw>((sum + sign) / 2);
}

/// A fixed-point value with `IntegerBits` integer bits (sign bit excluded).
template <typename Raw, int IntegerBits>
struct Fixed {
  static_assert(std::is_same_v<Raw, int16_t> || std::is_same_v<Raw, int32_t>);
  static_assert(IntegerBits >= 0 && IntegerBits < kRawBits<Raw>);
  static constexpr int kIntegerBits = IntegerBits;
  static constexpr int kFractionalBits = kRawBits<Raw> - 1 - IntegerBits;

  Raw raw = 0;

  static constexpr Fixed fromRaw(Raw r) { return Fixed{r}; }
  static constexpr Fixed zero() { return Fixed{0}; }
  static constexpr Fixed one() {
    if constexpr (IntegerBits == 0) {
      return Fixed{std::numeric_limits<Raw>::max()};
    } else {
      return Fixed{static_cast<Raw>(Raw{1} << kFractionalBits)};
    }
  }
  /// 2^Exponent, exactly representable.
  template <int Exponent>
  static constexpr Fixed constantPot() {
    static_assert(kFractionalBits + Exponent >= 0 && kFractionalBits + Exponent < 31);
    return Fixed{static_cast<Raw>(Raw{1} << (kFractionalBits + Exponent))};
  }
  /// A constant given as the raw value of its 32-bit representation (gemmlowp's
  /// convention); for int16 it is rounding-shifted right by 16 bits.
  static constexpr Fixed constant(int32_t raw32) {
    return Fixed{static_cast<Raw>(roundingDivideByPOT<int32_t>(raw32, 32 - kRawBits<Raw>))};
  }
};

template <typename Raw, int N>
constexpr Fixed<Raw, N> operator+(Fixed<Raw, N> a, Fixed<Raw, N> b) {
  return {wrap<Raw>(static_cast<int64_t>(a.raw) + b.raw)};
}
template <typename Raw, int N>
constexpr Fixed<Raw, N> operator-(Fixed<Raw, N> a, Fixed<Raw, N> b) {
  return {wrap<Raw>(static_cast<int64_t>(a.raw) - b.raw)};
}
template <typename Raw, int N>
constexpr Fixed<Raw, N> operator-(Fixed<Raw, N> a) {
  return {wrap<Raw>(-static_cast<int64_t>(a.raw))};
}
template <typename Raw, int N>
constexpr Fixed<Raw, N> operator&(Fixed<Raw, N> a, Fixed<Raw, N> b) {
  return {static_cast<Raw>(a.raw & b.raw)};
}
/// The product's integer bits add up.
template <typename Raw, int A, int B>
constexpr Fixed<Raw, A + B> operator*(Fixed<Raw, A> a, Fixed<Raw, B> b) {
  return {saturatingRoundingDoublingHighMul<Raw>(a.raw, b.raw)};
}

/// Exact multiplication by 2^Exponent: only the format changes.
template <int Exponent, typename Raw, int N>
constexpr Fixed<Raw, N + Exponent> exactMulByPot(Fixed<Raw, N> a) {
  return {a.raw};
}

/// Same format, times 2^Exponent with saturation / rounding.
template <int Exponent, typename Raw, int N>
constexpr Fixed<Raw, N> saturatingRoundingMultiplyByPOT(Fixed<Raw, N> a) {
  return {saturatingRoundingMultiplyByPOT<Exponent, Raw>(a.raw)};
}

/// Changes the number of integer bits, rescaling the raw value.
template <int Dst, typename Raw, int Src>
constexpr Fixed<Raw, Dst> rescale(Fixed<Raw, Src> x) {
  return {saturatingRoundingMultiplyByPOT<Src - Dst, Raw>(x.raw)};
}

template <typename Raw, int N>
constexpr Fixed<Raw, N> roundingHalfSum(Fixed<Raw, N> a, Fixed<Raw, N> b) {
  return {roundingHalfSum<Raw>(a.raw, b.raw)};
}

/// Saturating addition for int16, plain (wrapping) addition for int32.
template <typename Raw, int N>
constexpr Fixed<Raw, N> addSaturatingIf16Bit(Fixed<Raw, N> a, Fixed<Raw, N> b) {
  if constexpr (std::is_same_v<Raw, int16_t>) {
    const int32_t sum = int32_t{a.raw} + int32_t{b.raw};
    return {static_cast<int16_t>(std::clamp(sum, -32768, 32767))};
  } else {
    return a + b;
  }
}

/// Saturating addition (int16).
template <int N>
constexpr Fixed<int16_t, N> saturatingAdd(Fixed<int16_t, N> a, Fixed<int16_t, N> b) {
  const int32_t sum = int32_t{a.raw} + int32_t{b.raw};
  return {static_cast<int16_t>(std::clamp(sum, -32768, 32767))};
}

/// exp(a) for a in [-1/4, 0).
template <typename Raw>
constexpr Fixed<Raw, 0> expOnIntervalNegativeQuarterTo0(Fixed<Raw, 0> a) {
  using F = Fixed<Raw, 0>;
  const F constantTerm = F::constant(1895147668);  // exp(-1/8)
  const F oneThird = F::constant(715827883);       // 1/3
  // Taylor expansion around -1/8.
  const F x = a + F::template constantPot<-3>();
  const F x2 = x * x;
  const F x3 = x2 * x;
  const F x4 = x2 * x2;
  const F x4Over4 = saturatingRoundingMultiplyByPOT<-2>(x4);
  const F poly = saturatingRoundingMultiplyByPOT<-1>(((x4Over4 + x3) * oneThird) + x2);
  return addSaturatingIf16Bit(constantTerm, constantTerm * (x + poly));
}

/// exp(a) for a <= 0 (1 for a == 0).
template <typename Raw, int N>
constexpr Fixed<Raw, 0> expOnNegativeValues(Fixed<Raw, N> a) {
  using InputF = Fixed<Raw, N>;
  using ResultF = Fixed<Raw, 0>;
  constexpr int kFractionalBits = InputF::kFractionalBits;
  const InputF oneQuarter = InputF::template constantPot<-2>();
  const InputF mask = oneQuarter - InputF::fromRaw(1);
  const InputF aModQuarterMinusQuarter = (a & mask) - oneQuarter;
  ResultF result = expOnIntervalNegativeQuarterTo0(rescale<0>(aModQuarterMinusQuarter));
  const Raw remainder = (aModQuarterMinusQuarter - a).raw;

  // Multiplies by exp(-2^E) when bit (fractional bits + E) of the remainder is set.
  auto barrel = [&](auto exponentTag, int32_t multiplier32) {
    constexpr int kExponent = decltype(exponentTag)::value;
    if constexpr (N > kExponent) {
      constexpr int kShift = kFractionalBits + kExponent;
      if ((static_cast<int64_t>(remainder) & (int64_t{1} << kShift)) != 0) {
        result = result * ResultF::constant(multiplier32);
      }
    }
  };
  barrel(std::integral_constant<int, -2>{}, 1672461947);  // exp(-1/4)
  barrel(std::integral_constant<int, -1>{}, 1302514674);  // exp(-1/2)
  barrel(std::integral_constant<int, 0>{}, 790015084);    // exp(-1)
  barrel(std::integral_constant<int, 1>{}, 290630308);    // exp(-2)
  barrel(std::integral_constant<int, 2>{}, 39332535);     // exp(-4)
  barrel(std::integral_constant<int, 3>{}, 720401);       // exp(-8)
  barrel(std::integral_constant<int, 4>{}, 242);          // exp(-16)

  if constexpr (N > 5) {
    constexpr int kClampBits = 36 - N;
    const InputF clamp = InputF::constant(-(int32_t{1} << kClampBits));  // -32
    if (a.raw < clamp.raw) result = ResultF::zero();
  }
  if (a.raw == 0) result = ResultF::one();
  return result;
}

/// 1 / d in Q2 for d = (1 + x) / 2, x in (0, 1): three Newton-Raphson steps from
/// 48/17 - 32/17 d (gemmlowp's division).
template <typename Raw>
constexpr Fixed<Raw, 2> reciprocalOfHalfDenominator(Fixed<Raw, 0> halfDenominator) {
  using F2 = Fixed<Raw, 2>;
  const F2 c48Over17 = F2::constant(1515870810);
  const F2 cNeg32Over17 = F2::constant(-1010580540);
  F2 x = c48Over17 + halfDenominator * cNeg32Over17;
  for (int i = 0; i < 3; ++i) {
    const F2 halfDenominatorTimesX = halfDenominator * x;
    const F2 oneMinus = F2::one() - halfDenominatorTimesX;
    x = x + rescale<2>(x * oneMinus);
  }
  return x;
}

/// 1 / (1 + x) for x in (0, 1) (Newton-Raphson division).
template <typename Raw>
constexpr Fixed<Raw, 0> oneOverOnePlusX(Fixed<Raw, 0> a) {
  using F0 = Fixed<Raw, 0>;
  return rescale<0>(exactMulByPot<-1>(reciprocalOfHalfDenominator(roundingHalfSum(a, F0::one()))));
}

/// (1 - x) / (1 + x) for x in (0, 1).
template <typename Raw>
constexpr Fixed<Raw, 0> oneMinusXOverOnePlusX(Fixed<Raw, 0> a) {
  using F0 = Fixed<Raw, 0>;
  using F2 = Fixed<Raw, 2>;
  const F2 x = reciprocalOfHalfDenominator(roundingHalfSum(a, F0::one()));
  return rescale<0>(x - F2::one());
}

/// tanh(a).
template <typename Raw, int N>
constexpr Fixed<Raw, 0> tanh(Fixed<Raw, N> a) {
  using InputF = Fixed<Raw, N>;
  using ResultF = Fixed<Raw, 0>;
  if (a.raw == 0) return ResultF::zero();
  const bool negative = a.raw < 0;
  const InputF n = negative ? a : -a;  // n <= 0
  const ResultF t = oneMinusXOverOnePlusX(expOnNegativeValues(exactMulByPot<1>(n)));
  return negative ? -t : t;
}

/// logistic(a) = 1 / (1 + exp(-a)).
template <typename Raw, int N>
constexpr Fixed<Raw, 0> logistic(Fixed<Raw, N> a) {
  using ResultF = Fixed<Raw, 0>;
  if (a.raw == 0) return ResultF::constant(1 << 30);  // 1/2
  const bool positive = a.raw > 0;
  const Fixed<Raw, N> absolute = positive ? a : -a;
  const ResultF ifPositive = oneOverOnePlusX(expOnNegativeValues(-absolute));
  return positive ? ifPositive : ResultF::one() - ifPositive;
}

}  // namespace nnhal::kernels::fixedpoint
