// The GEMM family on AVX2 + FMA: float tiles of up to 6 rows x 16 columns (two 8-lane
// vectors); quantized tiles that widen to int16 and multiply-add pairs (vpmaddwd, exact),
// then add the pairs and requantize 8 lanes at a time (Requantizer8); row sums with vpsadbw. Called
// through kernels/gemm.h only.
#include <immintrin.h>

#include <cstring>

#include "kernels/internal/gemm_tiles.h"
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/x86_kernels.h"

#if !defined(__AVX2__) || !defined(__FMA__)
#error "gemm_avx2.cpp must be compiled with AVX2 and FMA"
#endif

namespace nnhal::kernels::x86 {
namespace {

// --- float ---------------------------------------------------------------------------------

// 6 rows x 2 vectors = 12 accumulators, 2 weight vectors and the broadcast: 15 of 16.
constexpr size_t kFloatRows = 6;

template <int MR>
void floatTile(const float* a, size_t lda, const FloatGemmParams& p, size_t group, float* out,
               size_t ldo) {
  const size_t k = p.k;
  const float* b = p.packedWeights + group * kGemmGroup * k;
  __m256 acc[MR][2];
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (size_t i = 0; i < k; ++i) {
    const __m256 w0 = _mm256_loadu_ps(b + i * kGemmGroup);
    const __m256 w1 = _mm256_loadu_ps(b + i * kGemmGroup + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * lda + i);
      acc[r][0] = _mm256_fmadd_ps(x, w0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, w1, acc[r][1]);
    }
  }
  const __m256 lo = _mm256_set1_ps(p.outputMin);
  const __m256 hi = _mm256_set1_ps(p.outputMax);
  const size_t column = group * kGemmGroup;
  const size_t valid = p.n - column < kGemmGroup ? p.n - column : kGemmGroup;
  const __m256 bias0 = _mm256_loadu_ps(p.bias + column);
  const __m256 bias1 = _mm256_loadu_ps(p.bias + column + 8);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    alignas(32) float row[kGemmGroup];
    _mm256_store_ps(row, _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[r][0], bias0), lo), hi));
    _mm256_store_ps(row + 8, _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[r][1], bias1), lo), hi));
    std::memcpy(out + r * ldo + column, row, valid * sizeof(float));
  }
}

// The float tile for `rows` (1..6) rows of one column group.
auto floatTileFor(size_t rows) {
  return internal::tileForRows<6, 1>(rows, []<int MR, int>() { return &floatTile<MR>; });
}

// --- quantized -----------------------------------------------------------------------------

// 2 rows x 4 vectors (4 columns x 2 partial sums each) = 8 accumulators, 4 weight vectors.
constexpr size_t kQuantRows = 2;

inline __m256i broadcastQuad(const uint8_t* p) {
  uint32_t quad;
  std::memcpy(&quad, p, 4);
  return _mm256_broadcastq_epi64(_mm_cvtepu8_epi16(_mm_cvtsi32_si128(static_cast<int>(quad))));
}

// Two accumulators of [column j: two partial sums] (columns 0-3 and 4-7) as 8 columns.
inline __m256i sumPairs(__m256i first, __m256i second) {
  // hadd gives [c0 c1 c4 c5 | c2 c3 c6 c7]; the 64-bit permute restores the order.
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(first, second), 0xD8);
}

template <int MR>
void quantTile(const uint8_t* a, size_t lda, const int32_t* rowSums, const QuantGemmParams& p,
               size_t group, size_t kPadded, uint8_t* out, size_t ldo) {
  const size_t k4Count = kPadded / 4;
  const int8_t* b = p.packedWeights + group * kGemmGroup * kPadded;
  __m256i acc[MR][4];
#pragma GCC unroll 2
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) acc[r][q] = _mm256_setzero_si256();
  }
  for (size_t k4 = 0; k4 < k4Count; ++k4) {
    __m256i w[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; ++q) {
      w[q] = _mm256_cvtepi8_epi16(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k4 * 64 + q * 16)));
    }
#pragma GCC unroll 2
    for (int r = 0; r < MR; ++r) {
      const __m256i x = broadcastQuad(a + r * lda + 4 * k4);
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(x, w[q]));
      }
    }
  }
  const size_t column0 = group * kGemmGroup;
  const size_t valid = p.n - column0 < kGemmGroup ? p.n - column0 : kGemmGroup;
  const __m256i zeroPoint = _mm256_set1_epi32(p.outputZeroPoint);
  const __m256i lo = _mm256_set1_epi32(p.outputMin);
  const __m256i hi = _mm256_set1_epi32(p.outputMax);
  __m256i offset[2];
  const Requantizer8* requant[2];
  const auto load = [](const int32_t* v) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
  };
  const Requantizer8 first(load(p.multiplier + column0), load(p.shift + column0), p.anyLeftShift);
  const Requantizer8 second(load(p.multiplier + column0 + 8), load(p.shift + column0 + 8),
                            p.anyLeftShift);
  requant[0] = &first;
  requant[1] = &second;
  offset[0] = load(p.columnOffset + column0);
  offset[1] = load(p.columnOffset + column0 + 8);
#pragma GCC unroll 2
  for (int r = 0; r < MR; ++r) {
    const __m256i term = _mm256_set1_epi32(internal::rowTerm(p, rowSums, static_cast<size_t>(r)));
    const __m256i sums[2] = {sumPairs(acc[r][0], acc[r][1]), sumPairs(acc[r][2], acc[r][3])};
    for (int h = 0; h < 2; ++h) {
      const size_t count = valid > 8 * static_cast<size_t>(h) ? valid - 8 * h : 0;
      if (count == 0) break;
      const __m256i total = _mm256_add_epi32(_mm256_add_epi32(sums[h], term), offset[h]);
      storeLowBytes8(out + r * ldo + column0 + 8 * h, count,
                     requant[h]->apply(total, zeroPoint, lo, hi));
    }
  }
}

}  // namespace

void quantGemmAvx2(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                   const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                   size_t ldo) noexcept {
  const size_t kPadded = quantPaddedK(p.k);
  for (size_t g = groupBegin; g < groupEnd; ++g) {
    size_t m = 0;
    for (; m + kQuantRows <= rows; m += kQuantRows) {
      quantTile<kQuantRows>(a + m * lda, lda, rowSums != nullptr ? rowSums + m : nullptr, p, g,
                            kPadded, out + m * ldo, ldo);
    }
    if (m < rows) {
      quantTile<1>(a + m * lda, lda, rowSums != nullptr ? rowSums + m : nullptr, p, g, kPadded,
                   out + m * ldo, ldo);
    }
  }
}

void floatGemmAvx2(const float* a, size_t lda, size_t rows, const FloatGemmParams& p,
                   size_t groupBegin, size_t groupEnd, float* out, size_t ldo) noexcept {
  for (size_t g = groupBegin; g < groupEnd; ++g) {
    for (size_t m = 0; m < rows; m += kFloatRows) {
      const size_t count = rows - m < kFloatRows ? rows - m : kFloatRows;
      floatTileFor(count)(a + m * lda, lda, p, g, out + m * ldo, ldo);
    }
  }
}

void multiplyByQuantizedMultiplier8Avx2(const int32_t* x, const int32_t* m, const int32_t* s,
                                        int32_t* out) noexcept {
  const auto load = [](const int32_t* v) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
  };
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                      Requantizer8(load(m), load(s), true).multiply(load(x)));
}

void quantRowSumsAvx2(const uint8_t* a, size_t lda, size_t rows, size_t k, int32_t* sums) noexcept {
  for (size_t m = 0; m < rows; ++m) {
    const uint8_t* row = a + m * lda;
    __m256i s = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= k; i += 32) {
      s = _mm256_add_epi64(
          s, _mm256_sad_epu8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + i)),
                             _mm256_setzero_si256()));
    }
    alignas(32) int64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    int64_t total = lanes[0] + lanes[1] + lanes[2] + lanes[3];
    for (; i < k; ++i) total += row[i];
    sums[m] = static_cast<int32_t>(total);
  }
}

}  // namespace nnhal::kernels::x86
