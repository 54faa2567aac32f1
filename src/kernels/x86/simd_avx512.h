// kernels/x86/simd_avx512.h — AVX-512 helpers shared by the quantized kernels.
//
// Included only by the kernel files of src/kernels/x86/ compiled for AVX-512 (F + BW + VL +
// DQ, see CMakeLists.txt); every function here has a scalar twin in kernels/quantization.h
// that defines its exact result. Everything is in an unnamed namespace on purpose: each file
// compiled for its own instruction set gets its own copy, so the linker can never pick an
// AVX-512 copy of a shared inline function for code that runs on a lesser CPU.
#pragma once

#include <cstddef>
#include <cstdint>

#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__)
#error "kernels/x86/simd_avx512.h needs a file compiled for AVX-512 (F, BW, VL)"
#endif
// GCC 12 reports the _mm512_undefined_* placeholders inside its own AVX-512 intrinsics as
// (maybe) uninitialized once they are inlined; the warnings are spurious. This header is
// included only by kernel .cpp files, so the setting stays within them.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>

namespace nnhal::kernels::x86 {
namespace {

/// Sixteen lanes of multiplyByQuantizedMultiplier(x, {multiplier, shift}), bit-exact with
/// the scalar version, with everything that depends only on the multipliers and shifts
/// computed once. `multiplier` lanes are in [0, 2^31), `shift` lanes in [-31, 30];
/// `anyLeftShift` may be false only when every shift lane is <= 0.
class Requantizer16 {
 public:
  Requantizer16(__m512i multiplier, __m512i shift, bool anyLeftShift)
      : multiplier_(multiplier),
        multiplierOdd_(_mm512_srli_epi64(multiplier, 32)),
        anyLeftShift_(anyLeftShift) {
    const __m512i zero = _mm512_setzero_si512();
    left_ = _mm512_max_epi32(shift, zero);
    if (anyLeftShift) {
      hiLimit_ = _mm512_srav_epi32(_mm512_set1_epi32(INT32_MAX), left_);
      loLimit_ = _mm512_srav_epi32(_mm512_set1_epi32(INT32_MIN), left_);
    }
    // The right shift e of each 32-bit lane, as 64-bit lanes for the even and odd lanes.
    const __m512i right = _mm512_max_epi32(_mm512_sub_epi32(zero, shift), zero);
    const __m512i rightEven = _mm512_and_si512(right, _mm512_set1_epi64(0xFFFFFFFF));
    const __m512i rightOdd = _mm512_srli_epi64(right, 32);
    setHalf(rightEven, &addEven_, &subEven_, &shiftEven_);
    setHalf(rightOdd, &addOdd_, &subOdd_, &shiftOdd_);
  }

  /// multiplyByQuantizedMultiplier of each lane.
  ///
  /// The scalar version rounds twice: h = floor((x * m + 2^30) / 2^31) (the saturating
  /// doubling high multiply; its saturating case x == m == INT32_MIN cannot occur since
  /// m >= 0), then h / 2^e rounded half away from zero, which is
  /// floor((h + 2^(e-1) - [h < 0]) / 2^e) for e >= 1. Nested floors of integers fold into
  /// one: with t = x * m (exact in 64 bits) and [h < 0] = [t < -2^30],
  ///   result = (t + 2^30 + 2^(30+e) - [t < -2^30] * 2^31) >> (31 + e)   (e >= 1)
  ///   result = (t + 2^30) >> 31                                           (e = 0),
  /// all within int64 (|t| <= 2^62) and exactly the scalar result.
  ///
  /// RoundNegatives = false leaves out the [t < -2^30] term: exact only where the caller
  /// clamps every result whose h is negative to a bound at or above what any of them gives
  /// (see applyClamped).
  template <bool RoundNegatives = true>
  __m512i multiply(__m512i x) const {
    if (anyLeftShift_) {
      // x * 2^left, saturated to int32.
      const __mmask16 over = _mm512_cmpgt_epi32_mask(x, hiLimit_);
      const __mmask16 under = _mm512_cmplt_epi32_mask(x, loLimit_);
      x = _mm512_sllv_epi32(x, left_);
      x = _mm512_mask_mov_epi32(x, over, _mm512_set1_epi32(INT32_MAX));
      x = _mm512_mask_mov_epi32(x, under, _mm512_set1_epi32(INT32_MIN));
    }
    const __m512i even =
        roundHalf<RoundNegatives>(_mm512_mul_epi32(x, multiplier_), addEven_, subEven_, shiftEven_);
    const __m512i odd = roundHalf<RoundNegatives>(
        _mm512_mul_epi32(_mm512_srli_epi64(x, 32), multiplierOdd_), addOdd_, subOdd_, shiftOdd_);
    // The odd lanes' results sit in the low halves of their 64-bit lanes: move them up.
    return _mm512_mask_shuffle_epi32(even, 0xAAAA, odd, _MM_PERM_CDAB);
  }

  /// multiply, plus the output zero point, clamped to [lo, hi].
  __m512i apply(__m512i acc, __m512i zeroPoint, __m512i lo, __m512i hi) const {
    const __m512i v = _mm512_add_epi32(multiply(acc), zeroPoint);
    return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
  }

  /// apply for a clamp whose lower bound is at or above the zero point (fused RELU, RELU1
  /// and RELU6 of an asymmetric output): a negative h rounds to at most 0 either way, so its
  /// result is the lower bound whichever way it was rounded, and the rounding of negatives
  /// can be left out (4 instructions of 16). Exactly apply's result when lo >= zeroPoint.
  __m512i applyClamped(__m512i acc, __m512i zeroPoint, __m512i lo, __m512i hi) const {
    const __m512i v = _mm512_add_epi32(multiply<false>(acc), zeroPoint);
    return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi);
  }

 private:
  static void setHalf(__m512i e, __m512i* add, __m512i* sub, __m512i* shift) {
    const __m512i one = _mm512_set1_epi64(1);
    const __mmask8 positive = _mm512_cmpgt_epi64_mask(e, _mm512_setzero_si512());
    const __m512i base = _mm512_set1_epi64(int64_t{1} << 30);
    *add = _mm512_mask_add_epi64(
        base, positive, base, _mm512_sllv_epi64(one, _mm512_add_epi64(e, _mm512_set1_epi64(30))));
    *sub = _mm512_maskz_mov_epi64(positive, _mm512_set1_epi64(int64_t{1} << 31));
    *shift = _mm512_add_epi64(e, _mm512_set1_epi64(31));
  }

  template <bool RoundNegatives>
  static __m512i roundHalf(__m512i t, __m512i add, __m512i sub, __m512i shift) {
    if constexpr (RoundNegatives) {
      const __mmask8 negative = _mm512_cmplt_epi64_mask(t, _mm512_set1_epi64(-(int64_t{1} << 30)));
      t = _mm512_add_epi64(t, add);
      t = _mm512_mask_sub_epi64(t, negative, t, sub);
    } else {
      t = _mm512_add_epi64(t, add);
    }
    return _mm512_srav_epi64(t, shift);
  }

  __m512i multiplier_, multiplierOdd_;
  __m512i left_;
  __m512i hiLimit_ = _mm512_setzero_si512(), loLimit_ = _mm512_setzero_si512();
  __m512i addEven_, subEven_, shiftEven_, addOdd_, subOdd_, shiftOdd_;
  bool anyLeftShift_;
};

/// One-off form of Requantizer16::multiply.
inline __m512i multiplyByQuantizedMultiplier16(__m512i x, __m512i multiplier, __m512i shift,
                                               bool anyLeftShift) {
  return Requantizer16(multiplier, shift, anyLeftShift).multiply(x);
}

/// One-off form of Requantizer16::apply.
inline __m512i requantize16(__m512i acc, __m512i multiplier, __m512i shift, bool anyLeftShift,
                            __m512i zeroPoint, __m512i lo, __m512i hi) {
  return Requantizer16(multiplier, shift, anyLeftShift).apply(acc, zeroPoint, lo, hi);
}

/// Stores the low bytes of the first lanes of `v` selected by `mask` at p. The narrowing is
/// kept in a register: compilers otherwise fuse it into the memory form of vpmovdb, which is
/// microcoded and several times slower on AMD Zen 4.
inline void storeLowBytes16(void* p, __mmask16 mask, __m512i v) {
  __m128i bytes = _mm512_cvtepi32_epi8(v);
  asm("" : "+v"(bytes));
  _mm_mask_storeu_epi8(p, mask, bytes);
}

/// The same for the low bytes of 32 int16 lanes.
inline void storeLowBytes32(void* p, __mmask32 mask, __m512i v) {
  __m256i bytes = _mm512_cvtepi16_epi8(v);
  asm("" : "+v"(bytes));
  _mm256_mask_storeu_epi8(p, mask, bytes);
}

/// Mask of the first `n` (<= 16) lanes.
inline __mmask16 firstLanes16(size_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1u);
}

}  // namespace
}  // namespace nnhal::kernels::x86
