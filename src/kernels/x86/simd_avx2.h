// kernels/x86/simd_avx2.h — AVX2 helpers of the quantized kernels: the 8-lane twin of
// kernels/x86/simd_avx512.h's Requantizer16, bit-exact with multiplyByQuantizedMultiplier
// (kernels/quantization.h). Included only by files compiled for AVX2 + FMA; everything is in
// an unnamed namespace on purpose (simd_avx512.h says why).
#pragma once

#if !defined(__AVX2__)
#error "kernels/x86/simd_avx2.h needs a file compiled for AVX2"
#endif

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace nnhal::kernels::x86 {
namespace {

/// Eight lanes of multiplyByQuantizedMultiplier(x, {multiplier, shift}); multiplier lanes
/// in [0, 2^31), shift lanes in [-31, 30]; `anyLeftShift` may be false only when every shift
/// lane is <= 0. Its two roundings, as AVX2 computes them without 64-bit arithmetic shifts:
///  - SaturatingRoundingDoublingHighMul(x, m): for m >= 0 it never saturates, and its
///    "nudge, then divide truncating" equals floor((x * m + 2^30) / 2^31) for either sign of
///    x * m; so bits 31..62 of x * m + 2^30, which a logical shift reaches as well as an
///    arithmetic one;
///  - RoundingDivideByPOT(y, e): (y >> e) plus one where the remainder y & (2^e - 1) exceeds
///    half of 2^e - 1 (plus one for negative y): a 32-bit arithmetic shift and two compares.
class Requantizer8 {
 public:
  Requantizer8(__m256i multiplier, __m256i shift, bool anyLeftShift)
      : multiplier_(multiplier),
        multiplierOdd_(_mm256_srli_epi64(multiplier, 32)),
        anyLeftShift_(anyLeftShift) {
    const __m256i zero = _mm256_setzero_si256();
    left_ = _mm256_max_epi32(shift, zero);
    if (anyLeftShift) {
      hiLimit_ = _mm256_srav_epi32(_mm256_set1_epi32(INT32_MAX), left_);
      loLimit_ = _mm256_srav_epi32(_mm256_set1_epi32(INT32_MIN), left_);
    }
    right_ = _mm256_max_epi32(_mm256_sub_epi32(zero, shift), zero);
    // 2^e - 1 for e in [0, 31]: 1 << 31 wraps to INT32_MIN, and minus one gives INT32_MAX.
    mask_ = _mm256_sub_epi32(_mm256_sllv_epi32(_mm256_set1_epi32(1), right_), _mm256_set1_epi32(1));
    halfMask_ = _mm256_srli_epi32(mask_, 1);
  }

  __m256i multiply(__m256i x) const {
    if (anyLeftShift_) {
      const __m256i over = _mm256_cmpgt_epi32(x, hiLimit_);
      const __m256i under = _mm256_cmpgt_epi32(loLimit_, x);
      x = _mm256_sllv_epi32(x, left_);
      x = _mm256_blendv_epi8(x, _mm256_set1_epi32(INT32_MAX), over);
      x = _mm256_blendv_epi8(x, _mm256_set1_epi32(INT32_MIN), under);
    }
    const __m256i nudge = _mm256_set1_epi64x(int64_t{1} << 30);
    const __m256i even = _mm256_add_epi64(_mm256_mul_epi32(x, multiplier_), nudge);
    const __m256i odd =
        _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(x, 32), multiplierOdd_), nudge);
    const __m256i high =
        _mm256_blend_epi32(_mm256_srli_epi64(even, 31), _mm256_slli_epi64(odd, 1), 0xAA);
    const __m256i remainder = _mm256_and_si256(high, mask_);
    const __m256i threshold =
        _mm256_sub_epi32(halfMask_, _mm256_cmpgt_epi32(_mm256_setzero_si256(), high));
    return _mm256_sub_epi32(_mm256_srav_epi32(high, right_),
                            _mm256_cmpgt_epi32(remainder, threshold));
  }

  /// multiply, plus the output zero point, clamped to [lo, hi].
  __m256i apply(__m256i acc, __m256i zeroPoint, __m256i lo, __m256i hi) const {
    const __m256i v = _mm256_add_epi32(multiply(acc), zeroPoint);
    return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi);
  }

 private:
  __m256i multiplier_, multiplierOdd_;
  __m256i left_;
  __m256i hiLimit_ = _mm256_setzero_si256(), loLimit_ = _mm256_setzero_si256();
  __m256i right_, mask_, halfMask_;
  bool anyLeftShift_;
};

/// `count` (<= 8) bytes at p as eight int32 lanes (zeros past count); never reads past count.
template <bool Signed>
inline __m256i loadBytes8(const uint8_t* p, size_t count) {
  uint64_t word = 0;
  if (count >= 8) {
    std::memcpy(&word, p, 8);
  } else {
    std::memcpy(&word, p, count);
  }
  const __m128i bytes = _mm_cvtsi64_si128(static_cast<long long>(word));
  return Signed ? _mm256_cvtepi8_epi32(bytes) : _mm256_cvtepu8_epi32(bytes);
}

/// Stores the low bytes of the first `count` (<= 8) lanes of v at p.
inline void storeLowBytes8(uint8_t* p, size_t count, __m256i v) {
  const __m256i pick =
      _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                       -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
  const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(v, pick),
                                                    _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
  const uint64_t word = static_cast<uint64_t>(_mm256_extract_epi64(bytes, 0));
  if (count >= 8) {
    std::memcpy(p, &word, 8);
  } else {
    std::memcpy(p, &word, count);
  }
}

}  // namespace
}  // namespace nnhal::kernels::x86
