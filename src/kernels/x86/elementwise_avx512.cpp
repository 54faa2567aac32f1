// Elementwise kernels on AVX-512 F/BW/VL/DQ: the quantized ADD of MobileNet v2's residual
// connections, 16 lanes at a time with the bit-exact vector requantizer. Called through
// kernels/elementwise.h only.
#include "kernels/x86/simd_avx512.h"
#include "kernels/x86/x86_kernels.h"

namespace nnhal::kernels::x86 {
namespace {

Requantizer16 uniform(const QuantizedMultiplier& m) {
  return Requantizer16(_mm512_set1_epi32(m.multiplier), _mm512_set1_epi32(m.shift), m.shift > 0);
}

template <bool Signed>
inline __m512i widen(const uint8_t* p, __mmask16 mask) {
  const __m128i bytes = _mm_maskz_loadu_epi8(mask, p);
  return Signed ? _mm512_cvtepi8_epi32(bytes) : _mm512_cvtepu8_epi32(bytes);
}

template <bool Signed>
void addRun(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t count,
            const QuantAddParams& p) {
  const Requantizer16 input1 = uniform(p.inputMultiplier1);
  const Requantizer16 input2 = uniform(p.inputMultiplier2);
  const Requantizer16 output = uniform(p.outputMultiplier);
  const __m512i offset1 = _mm512_set1_epi32(p.inputOffset1);
  const __m512i offset2 = _mm512_set1_epi32(p.inputOffset2);
  const __m512i leftShift = _mm512_set1_epi32(p.leftShift);
  const __m512i zeroPoint = _mm512_set1_epi32(p.outputZeroPoint);
  const __m512i lo = _mm512_set1_epi32(p.outputMin);
  const __m512i hi = _mm512_set1_epi32(p.outputMax);
  for (size_t i = 0; i < count; i += 16) {
    const __mmask16 mask = firstLanes16(count - i);
    // (x + offset) << leftShift stays within int32: |x + offset| <= 255, leftShift 20.
    const __m512i x =
        _mm512_sllv_epi32(_mm512_add_epi32(widen<Signed>(a + i, mask), offset1), leftShift);
    const __m512i y =
        _mm512_sllv_epi32(_mm512_add_epi32(widen<Signed>(b + i, mask), offset2), leftShift);
    const __m512i sum = _mm512_add_epi32(input1.multiply(x), input2.multiply(y));
    const __m512i result = output.apply(sum, zeroPoint, lo, hi);
    storeLowBytes16(out + i, mask, result);
  }
}

}  // namespace

void addQuant8Avx512(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t count,
                     const QuantAddParams& p, bool isSigned) noexcept {
  if (isSigned) {
    addRun<true>(a, b, out, count, p);
  } else {
    addRun<false>(a, b, out, count, p);
  }
}

}  // namespace nnhal::kernels::x86
