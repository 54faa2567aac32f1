// The quantized depthwise convolution on AVX2 + FMA (depth multiplier 1): 8 channels per
// vector in int32, every filter tap a multiply-add, the requantization 8 lanes at a time
// (Requantizer8). Called through kernels/depthwise_conv.h only; reads the
// prepareDepthwiseFilter layout ([taps][outDepth] int16).
#include "kernels/internal/depthwise_lines.h"
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/x86_kernels.h"

namespace nnhal::kernels::x86 {
namespace {

using namespace internal;  // the depthwise line geometry (internal/depthwise_lines.h)

constexpr size_t kBlock = 32;  // channels per block: 4 vectors of 8

inline __m256i loadInt16x8(const int16_t* p, size_t count) {
  if (count >= 8)
    return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  alignas(16) int16_t values[8] = {};
  std::memcpy(values, p, (count < 8 ? count : 8) * sizeof(int16_t));
  return _mm256_cvtepi16_epi32(_mm_load_si128(reinterpret_cast<const __m128i*>(values)));
}

inline __m256i loadInt32x8(const int32_t* p, size_t count) {
  alignas(32) int32_t values[8] = {};
  std::memcpy(values, p, (count < 8 ? count : 8) * sizeof(int32_t));
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(values));
}

template <bool Signed>
void quantLines(const DepthwiseGeometry& g, const DepthwiseQuantParams& p, const uint8_t* input,
                size_t lineBegin, size_t lineEnd, uint8_t* output) noexcept {
  const size_t depth = g.outDepth;
  const __m256i inZero = _mm256_set1_epi32(p.inputZeroPoint);
  const __m256i outZero = _mm256_set1_epi32(p.outputZeroPoint);
  const __m256i lo = _mm256_set1_epi32(p.outputMin);
  const __m256i hi = _mm256_set1_epi32(p.outputMax);
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const LineInfo line = lineInfo(g, l);
    const uint8_t* image = input + line.batch * g.inHeight * g.inWidth * depth;
    uint8_t* outLine = output + l * g.outWidth * depth;
    for (size_t c0 = 0; c0 < depth; c0 += kBlock) {
      const size_t valid = depth - c0 < kBlock ? depth - c0 : kBlock;
      const size_t vectors = (valid + 7) / 8;
      size_t counts[4];
      __m256i bias[4];
      for (size_t q = 0; q < 4; ++q) {
        counts[q] = valid > 8 * q ? (valid - 8 * q < 8 ? valid - 8 * q : 8) : 0;
        bias[q] = p.bias != nullptr && counts[q] > 0 ? loadInt32x8(p.bias + c0 + 8 * q, counts[q])
                                                     : _mm256_setzero_si256();
      }
      const Requantizer8 requant[4] = {
          Requantizer8(loadInt32x8(p.multiplier + c0, counts[0]),
                       loadInt32x8(p.shift + c0, counts[0]), p.anyLeftShift),
          Requantizer8(loadInt32x8(p.multiplier + c0 + 8, counts[1]),
                       loadInt32x8(p.shift + c0 + 8, counts[1]), p.anyLeftShift),
          Requantizer8(loadInt32x8(p.multiplier + c0 + 16, counts[2]),
                       loadInt32x8(p.shift + c0 + 16, counts[2]), p.anyLeftShift),
          Requantizer8(loadInt32x8(p.multiplier + c0 + 24, counts[3]),
                       loadInt32x8(p.shift + c0 + 24, counts[3]), p.anyLeftShift)};
      for (size_t x = 0; x < g.outWidth; ++x) {
        const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
        const TapRange cols = validTaps(x0, g.dilationWidth, g.filterWidth, g.inWidth);
        __m256i acc[4] = {bias[0], bias[1], bias[2], bias[3]};
        for (uint32_t i = line.rows.first; i < line.rows.last; ++i) {
          const size_t iy = static_cast<size_t>(line.y0 + int64_t{i} * g.dilationHeight);
          for (uint32_t j = cols.first; j < cols.last; ++j) {
            const size_t ix = static_cast<size_t>(x0 + int64_t{j} * g.dilationWidth);
            const uint8_t* px = image + (iy * g.inWidth + ix) * depth + c0;
            const int16_t* f = p.filter + (size_t{i} * g.filterWidth + j) * depth + c0;
            for (size_t q = 0; q < vectors; ++q) {
              const __m256i xv =
                  _mm256_sub_epi32(loadBytes8<Signed>(px + 8 * q, counts[q]), inZero);
              acc[q] = _mm256_add_epi32(acc[q],
                                        _mm256_mullo_epi32(xv, loadInt16x8(f + 8 * q, counts[q])));
            }
          }
        }
        uint8_t* out = outLine + x * depth + c0;
        for (size_t q = 0; q < vectors; ++q) {
          storeLowBytes8(out + 8 * q, counts[q], requant[q].apply(acc[q], outZero, lo, hi));
        }
      }
    }
  }
}

}  // namespace

const DepthwiseQuantLines depthwiseQuantAvx2[2] = {quantLines<false>, quantLines<true>};

}  // namespace nnhal::kernels::x86
