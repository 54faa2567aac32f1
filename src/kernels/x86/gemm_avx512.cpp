// The GEMM family on AVX-512 F/BW/VL/DQ without VNNI: float tiles with one FMA per k step of
// 16 columns; quantized tiles that widen to int16 and multiply-add pairs (vpmaddwd), which
// is exact, then add the pairs; row sums with vpsadbw. Called through kernels/gemm.h only.
#include <cstring>

#include "kernels/internal/gemm_tiles.h"
#include "kernels/x86/quant_tile_avx512.h"
#include "kernels/x86/simd_avx512.h"
#include "kernels/x86/x86_kernels.h"

namespace nnhal::kernels::x86 {
namespace {

using internal::panelGroups;

// --- float ---------------------------------------------------------------------------------

template <int MR, int NV>
void floatTile(const float* a, size_t lda, const FloatGemmParams& p, size_t group, float* out,
               size_t ldo) {
  const size_t k = p.k;
  const size_t groupStride = kGemmGroup * k;
  const float* b = p.packedWeights + group * groupStride;
  __m512 acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  for (size_t i = 0; i < k; ++i) {
    __m512 w[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) w[v] = _mm512_loadu_ps(b + v * groupStride + i * kGemmGroup);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * lda + i]);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(x, w[v], acc[r][v]);
    }
  }
  // Locals: the float stores below may alias the parameters.
  const __m512 lo = _mm512_set1_ps(p.outputMin);
  const __m512 hi = _mm512_set1_ps(p.outputMax);
  const size_t n = p.n;
  const float* const biasValues = p.bias;
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) {
    const size_t column = (group + v) * kGemmGroup;
    const __mmask16 mask = firstLanes16(n - column);
    const __m512 bias = _mm512_loadu_ps(biasValues + column);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      __m512 y = _mm512_add_ps(acc[r][v], bias);
      y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
      _mm512_mask_storeu_ps(out + r * ldo + column, mask, y);
    }
  }
}

// The float tile for `rows` (1..8) x `groups` (1..3).
auto floatTileFor(size_t rows, size_t groups) {
  return internal::tileFor<8, 3>(rows, groups, []<int MR, int NV>() { return &floatTile<MR, NV>; });
}

// --- quantized -----------------------------------------------------------------------------

// Rows per quantized tile: 4 rows x 3 groups x 2 half accumulators = 24 registers, plus 6
// widened weight vectors and the broadcast input.
constexpr size_t kQuantRows = 4;

// Four input bytes as four int16 values in each 64-bit lane.
inline __m512i broadcastQuad(const uint8_t* p) {
  uint32_t quad;
  std::memcpy(&quad, p, 4);
  return _mm512_broadcastq_epi64(_mm_cvtepu8_epi16(_mm_cvtsi32_si128(static_cast<int>(quad))));
}

// Accumulator lanes hold [column j: two partial sums] for 8 columns; this adds the partial
// sums of `first` (columns 0-7) and `second` (columns 8-15) into 16 columns in order.
inline __m512i sumPairs(__m512i first, __m512i second) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  return _mm512_add_epi32(_mm512_permutex2var_epi32(first, even, second),
                          _mm512_permutex2var_epi32(first, odd, second));
}

template <int MR, int NV>
void quantTile(const uint8_t* a, size_t lda, const int32_t* rowSums, const QuantGemmParams& p,
               size_t group, size_t kPadded, uint8_t* out, size_t ldo) {
  const size_t k4Count = kPadded / 4;
  const size_t groupStride = kGemmGroup * kPadded;
  const int8_t* b = p.packedWeights + group * groupStride;
  __m512i acc[MR][NV][2];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v][0] = acc[r][v][1] = _mm512_setzero_si512();
  }
  for (size_t k4 = 0; k4 < k4Count; ++k4) {
    __m512i w[NV][2];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      const int8_t* block = b + v * groupStride + k4 * 64;
      w[v][0] = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)));
      w[v][1] =
          _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 32)));
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const __m512i x = broadcastQuad(a + r * lda + 4 * k4);
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) {
        acc[r][v][0] = _mm512_add_epi32(acc[r][v][0], _mm512_madd_epi16(x, w[v][0]));
        acc[r][v][1] = _mm512_add_epi32(acc[r][v][1], _mm512_madd_epi16(x, w[v][1]));
      }
    }
  }
  __m512i offset[NV];
  loadColumnOffsets(p, group, offset);
  alignas(64) int32_t tile[MR * NV * kGemmGroup];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      _mm512_store_si512(tile + (r * NV + v) * kGemmGroup,
                         _mm512_add_epi32(sumPairs(acc[r][v][0], acc[r][v][1]), offset[v]));
    }
  }
  storeQuantTile(tile, MR, NV, rowSums, p, group, out, ldo);
}

// The quantized tile for `rows` (1..4) x `groups` (1..3).
auto quantTileFor(size_t rows, size_t groups) {
  return internal::tileFor<4, 3>(rows, groups, []<int MR, int NV>() { return &quantTile<MR, NV>; });
}

}  // namespace

void quantGemmAvx512(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                     const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                     size_t ldo) noexcept {
  const size_t kPadded = quantPaddedK(p.k);
  for (size_t g = groupBegin; g < groupEnd;) {
    const size_t groups = panelGroups(groupEnd - g);
    for (size_t m = 0; m < rows; m += kQuantRows) {
      const size_t count = rows - m < kQuantRows ? rows - m : kQuantRows;
      quantTileFor(count, groups)(a + m * lda, lda, rowSums != nullptr ? rowSums + m : nullptr, p,
                                  g, kPadded, out + m * ldo, ldo);
    }
    g += groups;
  }
}

void floatGemmAvx512(const float* a, size_t lda, size_t rows, const FloatGemmParams& p,
                     size_t groupBegin, size_t groupEnd, float* out, size_t ldo) noexcept {
  for (size_t g = groupBegin; g < groupEnd;) {
    const size_t groups = panelGroups(groupEnd - g);
    const auto full = floatTileFor(kGemmRows, groups);
    size_t m = 0;
    for (; m + kGemmRows <= rows; m += kGemmRows) {
      full(a + m * lda, lda, p, g, out + m * ldo, ldo);
    }
    if (m < rows) floatTileFor(rows - m, groups)(a + m * lda, lda, p, g, out + m * ldo, ldo);
    g += groups;
  }
}

void quantRowSumsAvx512(const uint8_t* a, size_t lda, size_t rows, size_t k,
                        int32_t* sums) noexcept {
  for (size_t m = 0; m < rows; ++m) {
    const uint8_t* row = a + m * lda;
    const __m512i zero = _mm512_setzero_si512();
    __m512i s = zero;
    size_t i = 0;
    for (; i + 64 <= k; i += 64) {
      s = _mm512_add_epi64(s, _mm512_sad_epu8(_mm512_loadu_si512(row + i), zero));
    }
    if (i < k) {
      const __mmask64 mask = (uint64_t{1} << (k - i)) - 1;
      s = _mm512_add_epi64(s, _mm512_sad_epu8(_mm512_maskz_loadu_epi8(mask, row + i), zero));
    }
    sums[m] = static_cast<int32_t>(_mm512_reduce_add_epi64(s));
  }
}

void multiplyByQuantizedMultiplier16Avx512(const int32_t* x, const int32_t* m, const int32_t* s,
                                           int32_t* out) noexcept {
  const __m512i r = multiplyByQuantizedMultiplier16(_mm512_loadu_si512(x), _mm512_loadu_si512(m),
                                                    _mm512_loadu_si512(s), true);
  _mm512_storeu_si512(out, r);
}

}  // namespace nnhal::kernels::x86
