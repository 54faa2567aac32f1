// The GEMM family on AVX2 + FMA: float tiles of up to 6 rows x 16 columns (two 8-lane
// vectors); quantized tiles of 2 rows x 16 columns that multiply-add int16 pairs (vpmaddwd,
// exact) over rows widened to int16 a block at a time, then add the pairs and requantize 8
// lanes at a time (Requantizer8, set up once per column group and block); row sums with
// vpsadbw. Called through kernels/gemm.h only.
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
  // One or two rows keep too few FMA chains to hide the FMA latency: they also split k into
  // KS interleaved partial sums (8 chains), added at the end.
  constexpr int KS = MR == 1 ? 4 : MR == 2 ? 2 : 1;
  __m256 acc[KS][MR][2];
#pragma GCC unroll 4
  for (int s = 0; s < KS; ++s) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) acc[s][r][0] = acc[s][r][1] = _mm256_setzero_ps();
  }
  const auto step = [&](size_t i, int s) __attribute__((always_inline)) {
    const __m256 w0 = _mm256_loadu_ps(b + i * kGemmGroup);
    const __m256 w1 = _mm256_loadu_ps(b + i * kGemmGroup + 8);
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + r * lda + i);
      acc[s][r][0] = _mm256_fmadd_ps(x, w0, acc[s][r][0]);
      acc[s][r][1] = _mm256_fmadd_ps(x, w1, acc[s][r][1]);
    }
  };
  size_t i = 0;
  for (; i + KS <= k; i += KS) {
#pragma GCC unroll 4
    for (int s = 0; s < KS; ++s) step(i + static_cast<size_t>(s), s);
  }
  for (; i < k; ++i) step(i, 0);
#pragma GCC unroll 4
  for (int s = 1; s < KS; ++s) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      acc[0][r][0] = _mm256_add_ps(acc[0][r][0], acc[s][r][0]);
      acc[0][r][1] = _mm256_add_ps(acc[0][r][1], acc[s][r][1]);
    }
  }
  const __m256 lo = _mm256_set1_ps(p.outputMin);
  const __m256 hi = _mm256_set1_ps(p.outputMax);
  const size_t column = group * kGemmGroup;
  const size_t valid = p.n - column < kGemmGroup ? p.n - column : kGemmGroup;
  const __m256 bias0 = _mm256_loadu_ps(p.bias + column);
  const __m256 bias1 = _mm256_loadu_ps(p.bias + column + 8);
  if (valid == kGemmGroup) {
#pragma GCC unroll 6
    for (int r = 0; r < MR; ++r) {
      float* dst = out + r * ldo + column;
      _mm256_storeu_ps(dst,
                       _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[0][r][0], bias0), lo), hi));
      _mm256_storeu_ps(dst + 8,
                       _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[0][r][1], bias1), lo), hi));
    }
    return;
  }
  // The last group of a width that is not a multiple of 16: masked stores.
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i mask0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid)), lane);
  const __m256i mask1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(valid) - 8), lane);
#pragma GCC unroll 6
  for (int r = 0; r < MR; ++r) {
    float* dst = out + r * ldo + column;
    _mm256_maskstore_ps(dst, mask0,
                        _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[0][r][0], bias0), lo), hi));
    _mm256_maskstore_ps(dst + 8, mask1,
                        _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(acc[0][r][1], bias1), lo), hi));
  }
}

// The float tile for `rows` (1..6) rows of one column group.
auto floatTileFor(size_t rows) {
  return internal::tileForRows<6, 1>(rows, []<int MR, int>() { return &floatTile<MR>; });
}

// --- quantized -----------------------------------------------------------------------------

// 2 rows x 4 vectors (4 columns x 2 partial sums each) = 8 accumulators, 4 weight vectors.
constexpr size_t kQuantRows = 2;
// The rows of A widened to int16 at once (on the stack): a tile then broadcasts four values
// with one load instead of a load, a widening and a broadcast per row and k step.
constexpr size_t kWideBytes = 16 * 1024;

// Four consecutive A values as int16, in every 64-bit lane.
inline __m256i broadcastQuad(const uint8_t* p) {
  uint32_t quad;
  std::memcpy(&quad, p, 4);
  return _mm256_broadcastq_epi64(_mm_cvtepu8_epi16(_mm_cvtsi32_si128(static_cast<int>(quad))));
}
inline __m256i broadcastQuad(const int16_t* p) {
  int64_t quad;
  std::memcpy(&quad, p, 8);
  return _mm256_set1_epi64x(quad);
}

// Rows [0, rows) of a (kPadded readable bytes each) as int16, at stride kPadded.
void widenRows(const uint8_t* a, size_t lda, size_t rows, size_t kPadded, int16_t* wide) {
  for (size_t m = 0; m < rows; ++m) {
    const uint8_t* src = a + m * lda;
    int16_t* dst = wide + m * kPadded;
    size_t i = 0;
    for (; i + 16 <= kPadded; i += 16) {
      _mm256_storeu_si256(
          reinterpret_cast<__m256i*>(dst + i),
          _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
    }
    for (; i < kPadded; i += 4) {
      uint32_t quad;
      std::memcpy(&quad, src + i, 4);
      _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + i),
                       _mm_cvtepu8_epi16(_mm_cvtsi32_si128(static_cast<int>(quad))));
    }
  }
}

// Two accumulators of [column j: two partial sums] (columns 0-3 and 4-7) as 8 columns.
inline __m256i sumPairs(__m256i first, __m256i second) {
  // hadd gives [c0 c1 c4 c5 | c2 c3 c6 c7]; the 64-bit permute restores the order.
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(first, second), 0xD8);
}

// The low bytes of 16 int32 lanes (columns 0-7 in `first`, 8-15 in `second`), the first
// `count` of them stored at p.
inline void storeLowBytes16(uint8_t* p, size_t count, __m256i first, __m256i second) {
  const __m256i byteMask = _mm256_set1_epi32(0xFF);
  // Per 128-bit lane: [first 0-3, second 0-3 | first 4-7, second 4-7] as int16, then bytes.
  const __m256i words =
      _mm256_packus_epi32(_mm256_and_si256(first, byteMask), _mm256_and_si256(second, byteMask));
  const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(words, words),
                                                    _mm256_setr_epi32(0, 4, 1, 5, 0, 0, 0, 0));
  const __m128i row = _mm256_castsi256_si128(bytes);
  if (count >= 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), row);
    return;
  }
  alignas(16) uint8_t staged[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(staged), row);
  std::memcpy(p, staged, count);
}

// What the tiles of one column group share: its requantizers, column offsets and clamp.
struct GroupEpilogue {
  GroupEpilogue(const QuantGemmParams& p, size_t group)
      : column(group * kGemmGroup),
        valid(p.n - column < kGemmGroup ? p.n - column : kGemmGroup),
        requant{Requantizer8(load(p.multiplier + column), load(p.shift + column), p.anyLeftShift),
                Requantizer8(load(p.multiplier + column + 8), load(p.shift + column + 8),
                             p.anyLeftShift)},
        offset{load(p.columnOffset + column), load(p.columnOffset + column + 8)},
        zeroPoint(_mm256_set1_epi32(p.outputZeroPoint)),
        lo(_mm256_set1_epi32(p.outputMin)),
        hi(_mm256_set1_epi32(p.outputMax)) {}

  static __m256i load(const int32_t* v) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(v));
  }

  size_t column;
  size_t valid;
  Requantizer8 requant[2];
  __m256i offset[2];
  __m256i zeroPoint, lo, hi;
};

// MR rows of one column group; A is uint8 (widened per k step) or already int16. NQ = 4
// vectors of 4 columns: the whole group; NQ = 2: its first 8 columns only, for a last group
// of at most 8 (N = 8, 24, ...), whose other half would multiply zero weights.
template <int MR, int NQ, typename A>
void quantTile(const A* a, size_t lda, const int32_t* rowSums, const QuantGemmParams& p,
               const GroupEpilogue& e, size_t kPadded, uint8_t* out, size_t ldo) {
  const size_t k4Count = kPadded / 4;
  const int8_t* b = p.packedWeights + e.column * kPadded;
  __m256i acc[MR][NQ];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 4
    for (int q = 0; q < NQ; ++q) acc[r][q] = _mm256_setzero_si256();
  }
  for (size_t k4 = 0; k4 < k4Count; ++k4) {
    __m256i w[NQ];
#pragma GCC unroll 4
    for (int q = 0; q < NQ; ++q) {
      w[q] = _mm256_cvtepi8_epi16(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + k4 * 64 + q * 16)));
    }
#pragma GCC unroll 4
    for (int r = 0; r < MR; ++r) {
      const __m256i x = broadcastQuad(a + r * lda + 4 * k4);
#pragma GCC unroll 4
      for (int q = 0; q < NQ; ++q) {
        acc[r][q] = _mm256_add_epi32(acc[r][q], _mm256_madd_epi16(x, w[q]));
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r) {
    const __m256i term = _mm256_set1_epi32(internal::rowTerm(p, rowSums, static_cast<size_t>(r)));
    __m256i result[NQ / 2];
#pragma GCC unroll 2
    for (int h = 0; h < NQ / 2; ++h) {
      const __m256i sums = sumPairs(acc[r][2 * h], acc[r][2 * h + 1]);
      const __m256i total = _mm256_add_epi32(_mm256_add_epi32(sums, term), e.offset[h]);
      result[h] = e.requant[h].apply(total, e.zeroPoint, e.lo, e.hi);
    }
    if constexpr (NQ == 4) {
      storeLowBytes16(out + r * ldo + e.column, e.valid, result[0], result[1]);
    } else {
      storeLowBytes8(out + r * ldo + e.column, e.valid, result[0]);
    }
  }
}

// The tiles of one column group over `rows` rows: MR rows at a time, then one by one.
template <int MR, int NQ, typename A>
void quantRows(const A* a, size_t lda, const int32_t* rowSums, size_t rows,
               const QuantGemmParams& p, const GroupEpilogue& e, size_t kPadded, uint8_t* out,
               size_t ldo) {
  const auto sumsAt = [rowSums](size_t m) { return rowSums != nullptr ? rowSums + m : nullptr; };
  size_t m = 0;
  for (; m + MR <= rows; m += MR) {
    quantTile<MR, NQ>(a + m * lda, lda, sumsAt(m), p, e, kPadded, out + m * ldo, ldo);
  }
  for (; m < rows; ++m) {
    quantTile<1, NQ>(a + m * lda, lda, sumsAt(m), p, e, kPadded, out + m * ldo, ldo);
  }
}

template <typename A>
void quantGroups(const A* a, size_t lda, const int32_t* rowSums, size_t rows,
                 const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, size_t kPadded,
                 uint8_t* out, size_t ldo) {
  for (size_t g = groupBegin; g < groupEnd; ++g) {
    const GroupEpilogue e(p, g);
    if (e.valid <= 8) {
      // Half the accumulators: 4 rows x 2 vectors (8 accumulators, 2 weight vectors).
      quantRows<4, 2>(a, lda, rowSums, rows, p, e, kPadded, out, ldo);
    } else {
      quantRows<kQuantRows, 4>(a, lda, rowSums, rows, p, e, kPadded, out, ldo);
    }
  }
}

}  // namespace

void quantGemmAvx2(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                   const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                   size_t ldo) noexcept {
  const size_t kPadded = quantPaddedK(p.k);
  // Rows per widened block, even so that only a block's last tile may have one row.
  const size_t blockRows = kWideBytes / (kPadded * sizeof(int16_t)) / kQuantRows * kQuantRows;
  if (blockRows == 0) {  // reductions over 4096: widen per k step
    quantGroups(a, lda, rowSums, rows, p, groupBegin, groupEnd, kPadded, out, ldo);
    return;
  }
  alignas(32) int16_t wide[kWideBytes / sizeof(int16_t)];
  for (size_t m0 = 0; m0 < rows; m0 += blockRows) {
    const size_t count = rows - m0 < blockRows ? rows - m0 : blockRows;
    widenRows(a + m0 * lda, lda, count, kPadded, wide);
    quantGroups(static_cast<const int16_t*>(wide), kPadded,
                rowSums != nullptr ? rowSums + m0 : nullptr, count, p, groupBegin, groupEnd,
                kPadded, out + m0 * ldo, ldo);
  }
}

void floatGemmAvx2(const float* a, size_t lda, size_t rows, const FloatGemmParams& p,
                   size_t groupBegin, size_t groupEnd, float* out, size_t ldo) noexcept {
  // A tile of 1 to 4 rows waits on the FMA latency (4 cycles per k step), one of 6 rows on
  // the FMA throughput (6 cycles): so the last 6 + r rows, r = 1..3, go to two tiles of
  // nearly equal height (8 rows as 4 + 4: 8 cycles, not 6 + 2: 10). The row ranges of a
  // parallel split are multiples of 8.
  const size_t tail = rows % kFloatRows;
  size_t wholeEnd = rows - tail;
  if (tail != 0 && tail < 4 && wholeEnd >= kFloatRows) wholeEnd -= kFloatRows;
  for (size_t g = groupBegin; g < groupEnd; ++g) {
    size_t m = 0;
    for (; m < wholeEnd; m += kFloatRows) {
      floatTile<kFloatRows>(a + m * lda, lda, p, g, out + m * ldo, ldo);
    }
    while (m < rows) {
      const size_t left = rows - m;
      const size_t count = left > kFloatRows ? (left + 1) / 2 : left;
      floatTileFor(count)(a + m * lda, lda, p, g, out + m * ldo, ldo);
      m += count;
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
    // The short rows of small layers (k of 8 to 31) take one 16- and one 8-byte step here.
    __m128i tail = _mm_setzero_si128();
    if (i + 16 <= k) {
      tail = _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + i)),
                          _mm_setzero_si128());
      i += 16;
    }
    if (i + 8 <= k) {
      tail = _mm_add_epi64(tail,
                           _mm_sad_epu8(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(row + i)),
                                        _mm_setzero_si128()));
      i += 8;
    }
    alignas(32) int64_t lanes[4];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    alignas(16) int64_t tails[2];
    _mm_store_si128(reinterpret_cast<__m128i*>(tails), tail);
    int64_t total = lanes[0] + lanes[1] + lanes[2] + lanes[3] + tails[0] + tails[1];
    for (; i < k; ++i) total += row[i];
    sums[m] = static_cast<int32_t>(total);
  }
}

}  // namespace nnhal::kernels::x86
