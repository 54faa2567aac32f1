// Elementwise kernels on AVX2: the quantized ADD of MobileNet v2's residual connections, 8
// lanes at a time with the bit-exact vector requantizer (the AVX2 twin of
// elementwise_avx512.cpp). Called through kernels/elementwise.h only.
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/x86_kernels.h"

namespace nnhal::kernels::x86 {
namespace {

Requantizer8 uniform(const QuantizedMultiplier& m) {
  return Requantizer8(_mm256_set1_epi32(m.multiplier), _mm256_set1_epi32(m.shift), m.shift > 0);
}

template <bool Signed>
void addRun(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t count,
            const QuantAddParams& p) {
  const Requantizer8 input1 = uniform(p.inputMultiplier1);
  const Requantizer8 input2 = uniform(p.inputMultiplier2);
  const Requantizer8 output = uniform(p.outputMultiplier);
  const __m256i offset1 = _mm256_set1_epi32(p.inputOffset1);
  const __m256i offset2 = _mm256_set1_epi32(p.inputOffset2);
  const __m256i leftShift = _mm256_set1_epi32(p.leftShift);
  const __m256i zeroPoint = _mm256_set1_epi32(p.outputZeroPoint);
  const __m256i lo = _mm256_set1_epi32(p.outputMin);
  const __m256i hi = _mm256_set1_epi32(p.outputMax);
  for (size_t i = 0; i < count; i += 8) {
    const size_t lanes = count - i < 8 ? count - i : 8;
    // (x + offset) << leftShift stays within int32: |x + offset| <= 255, leftShift 20.
    const __m256i x =
        _mm256_sllv_epi32(_mm256_add_epi32(loadBytes8<Signed>(a + i, lanes), offset1), leftShift);
    const __m256i y =
        _mm256_sllv_epi32(_mm256_add_epi32(loadBytes8<Signed>(b + i, lanes), offset2), leftShift);
    const __m256i sum = _mm256_add_epi32(input1.multiply(x), input2.multiply(y));
    storeLowBytes8(out + i, lanes, output.apply(sum, zeroPoint, lo, hi));
  }
}

}  // namespace

void addQuant8Avx2(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t count,
                   const QuantAddParams& p, bool isSigned) noexcept {
  if (isSigned) {
    addRun<true>(a, b, out, count, p);
  } else {
    addRun<false>(a, b, out, count, p);
  }
}

}  // namespace nnhal::kernels::x86
