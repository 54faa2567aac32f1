#include "kernels/gemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/internal/simd.h"

#include "kernels/quantization.h"

namespace nnhal::kernels {
namespace {

// Wrapping int32 addition (the reference's accumulators wrap the same way).
inline int32_t wrapAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrapMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

inline uint8_t requantizeScalar(int32_t acc, const QuantGemmParams& p, size_t column) {
  const int32_t scaled = multiplyByQuantizedMultiplier(
      acc, QuantizedMultiplier{p.multiplier[column], p.shift[column]});
  const int32_t v = std::clamp(wrapAdd(scaled, p.outputZeroPoint), p.outputMin, p.outputMax);
  return static_cast<uint8_t>(v);
}

// How many column groups the next panel takes (the micro-kernels handle 1..3).
inline size_t panelGroups(size_t remaining) {
  if (remaining == 4) return 2;
  return std::min<size_t>(remaining, 3);
}

#if defined(NNHAL_KERNELS_AVX512_VNNI)

// Requantizes a tile of int32 accumulators ([rows][groups][16], column offsets not yet
// added) and stores the bytes. Kept out of line so that the multiply loop of quantTile has
// the whole register file for its accumulators. Every parameter is copied into locals
// first: the byte stores may alias anything, so fields read through `p` would be reloaded
// after each store.
[[gnu::noinline]] void storeQuantTile(const int32_t* tile, int rows, int groups,
                                      const int32_t* rowSums, const QuantGemmParams& p,
                                      size_t group, uint8_t* out, size_t ldo) {
  const int32_t rowSumFactor = p.rowSumFactor;
  const bool anyLeftShift = p.anyLeftShift;
  const size_t n = p.n;
  const int32_t* const columnOffset = p.columnOffset;
  const int32_t* const multipliers = p.multiplier;
  const int32_t* const shifts = p.shift;
  const __m512i zeroPoint = _mm512_set1_epi32(p.outputZeroPoint);
  const __m512i lo = _mm512_set1_epi32(p.outputMin);
  const __m512i hi = _mm512_set1_epi32(p.outputMax);
  int32_t rowTerms[kGemmRows];
  for (int r = 0; r < rows; ++r) {
    rowTerms[r] = rowSumFactor != 0 ? wrapMul(rowSumFactor, rowSums[r]) : 0;
  }
  for (int v = 0; v < groups; ++v) {
    const size_t column = (group + v) * kGemmGroup;
    const __mmask16 mask = internal::firstLanes16(n - column);
    const __m512i offset = _mm512_loadu_si512(columnOffset + column);
    const internal::Requantizer16 requant(_mm512_loadu_si512(multipliers + column),
                                          _mm512_loadu_si512(shifts + column), anyLeftShift);
    for (int r = 0; r < rows; ++r) {
      __m512i x = _mm512_load_si512(tile + (r * groups + v) * kGemmGroup);
      x = _mm512_add_epi32(x, _mm512_add_epi32(offset, _mm512_set1_epi32(rowTerms[r])));
      const __m512i y = requant.apply(x, zeroPoint, lo, hi);
      _mm_mask_storeu_epi8(out + r * ldo + column, mask, _mm512_cvtepi32_epi8(y));
    }
  }
}

template <int MR, int NV>
void quantTile(const uint8_t* a, size_t lda, const int32_t* rowSums, const QuantGemmParams& p,
               size_t group, size_t kPadded, uint8_t* out, size_t ldo) {
  const size_t k4Count = kPadded / 4;
  const size_t groupStride = kGemmGroup * kPadded;
  const int8_t* b = p.packedWeights + group * groupStride;
  __m512i acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_si512();
  }
  for (size_t k4 = 0; k4 < k4Count; ++k4) {
    __m512i w[NV];
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) {
      w[v] = _mm512_loadu_si512(b + v * groupStride + k4 * 64);
    }
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      uint32_t quad;
      std::memcpy(&quad, a + r * lda + 4 * k4, 4);
      const __m512i x = _mm512_set1_epi32(static_cast<int32_t>(quad));
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], x, w[v]);
    }
  }
  alignas(64) int32_t tile[MR * NV * kGemmGroup];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) _mm512_store_si512(tile + (r * NV + v) * kGemmGroup, acc[r][v]);
  }
  storeQuantTile(tile, MR, NV, rowSums, p, group, out, ldo);
}

using QuantTileFn = void (*)(const uint8_t*, size_t, const int32_t*, const QuantGemmParams&, size_t,
                             size_t, uint8_t*, size_t);

template <int NV>
QuantTileFn quantTileFor(size_t rows) {
  switch (rows) {
    case 1:
      return &quantTile<1, NV>;
    case 2:
      return &quantTile<2, NV>;
    case 3:
      return &quantTile<3, NV>;
    case 4:
      return &quantTile<4, NV>;
    case 5:
      return &quantTile<5, NV>;
    case 6:
      return &quantTile<6, NV>;
    case 7:
      return &quantTile<7, NV>;
    default:
      return &quantTile<8, NV>;
  }
}

QuantTileFn quantTileFor(size_t rows, size_t groups) {
  switch (groups) {
    case 1:
      return quantTileFor<1>(rows);
    case 2:
      return quantTileFor<2>(rows);
    default:
      return quantTileFor<3>(rows);
  }
}

#endif  // NNHAL_KERNELS_AVX512_VNNI

#if defined(NNHAL_KERNELS_AVX512)

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
    const __mmask16 mask = internal::firstLanes16(n - column);
    const __m512 bias = _mm512_loadu_ps(biasValues + column);
#pragma GCC unroll 8
    for (int r = 0; r < MR; ++r) {
      __m512 y = _mm512_add_ps(acc[r][v], bias);
      y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
      _mm512_mask_storeu_ps(out + r * ldo + column, mask, y);
    }
  }
}

using FloatTileFn = void (*)(const float*, size_t, const FloatGemmParams&, size_t, float*, size_t);

template <int NV>
FloatTileFn floatTileFor(size_t rows) {
  switch (rows) {
    case 1:
      return &floatTile<1, NV>;
    case 2:
      return &floatTile<2, NV>;
    case 3:
      return &floatTile<3, NV>;
    case 4:
      return &floatTile<4, NV>;
    case 5:
      return &floatTile<5, NV>;
    case 6:
      return &floatTile<6, NV>;
    case 7:
      return &floatTile<7, NV>;
    default:
      return &floatTile<8, NV>;
  }
}

FloatTileFn floatTileFor(size_t rows, size_t groups) {
  switch (groups) {
    case 1:
      return floatTileFor<1>(rows);
    case 2:
      return floatTileFor<2>(rows);
    default:
      return floatTileFor<3>(rows);
  }
}

#endif  // NNHAL_KERNELS_AVX512

}  // namespace

void packQuantWeightGroups(const uint8_t* weights, size_t n, size_t k, uint8_t wMask,
                           int8_t* packed, int32_t* columnSums, size_t groupBegin,
                           size_t groupEnd) noexcept {
  const size_t kPadded = quantPaddedK(k);
  const uint32_t mask4 = wMask * 0x01010101u;
  for (size_t g = groupBegin; g < groupEnd; ++g) {
    int8_t* group = packed + g * kGemmGroup * kPadded;
    std::memset(group, 0, kGemmGroup * kPadded);
    for (size_t j = 0; j < kGemmGroup; ++j) {
      const size_t c = g * kGemmGroup + j;
      if (c >= n) {
        columnSums[c] = 0;
        continue;
      }
      // Column c's k values go 4 at a time into its slot of each 64-byte [16][4] block.
      const uint8_t* src = weights + c * k;
      int8_t* dst = group + j * 4;
      int32_t sum = 0;
      size_t i = 0;
      for (; i + 4 <= k; i += 4) {
        uint32_t word;
        std::memcpy(&word, src + i, 4);
        word ^= mask4;
        std::memcpy(dst + (i / 4) * kGemmGroup * 4, &word, 4);
        for (int b = 0; b < 4; ++b) sum += static_cast<int8_t>(word >> (8 * b));
      }
      for (; i < k; ++i) {
        const auto v = static_cast<int8_t>(src[i] ^ wMask);
        dst[(i / 4) * kGemmGroup * 4 + i % 4] = v;
        sum += v;
      }
      columnSums[c] = sum;
    }
  }
}

void packQuantWeights(const uint8_t* weights, size_t n, size_t k, uint8_t wMask, int8_t* packed,
                      int32_t* columnSums) noexcept {
  packQuantWeightGroups(weights, n, k, wMask, packed, columnSums, 0, gemmGroups(n));
}

void quantColumnOffsets(const int32_t* bias, const int32_t* columnSums, size_t n, size_t k,
                        int32_t zaPrime, int32_t zwPrime, int32_t* columnOffset) noexcept {
  const size_t columns = gemmGroups(n) * kGemmGroup;
  const int64_t constant = static_cast<int64_t>(k) * zaPrime * zwPrime;
  for (size_t c = 0; c < columns; ++c) {
    if (c >= n) {
      columnOffset[c] = 0;
      continue;
    }
    const int64_t b = bias != nullptr ? bias[c] : 0;
    const int64_t v = b - static_cast<int64_t>(zaPrime) * columnSums[c] + constant;
    columnOffset[c] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
  }
}

void quantGemmPortable(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                       const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                       size_t ldo) noexcept {
  const size_t kPadded = quantPaddedK(p.k);
  for (size_t g = groupBegin; g < groupEnd; ++g) {
    const int8_t* b = p.packedWeights + g * kGemmGroup * kPadded;
    const size_t column0 = g * kGemmGroup;
    const size_t valid = std::min(kGemmGroup, p.n - column0);
    for (size_t m = 0; m < rows; ++m) {
      const uint8_t* row = a + m * lda;
      int32_t acc[kGemmGroup] = {};
      for (size_t k4 = 0; k4 < kPadded / 4; ++k4) {
        const int8_t* w = b + k4 * kGemmGroup * 4;
        const uint8_t* x = row + 4 * k4;
        for (size_t j = 0; j < kGemmGroup; ++j) {
          acc[j] +=
              x[0] * w[4 * j] + x[1] * w[4 * j + 1] + x[2] * w[4 * j + 2] + x[3] * w[4 * j + 3];
        }
      }
      const int32_t rowTerm = p.rowSumFactor != 0 ? wrapMul(p.rowSumFactor, rowSums[m]) : 0;
      for (size_t j = 0; j < valid; ++j) {
        const size_t column = column0 + j;
        const int32_t total = wrapAdd(wrapAdd(acc[j], rowTerm), p.columnOffset[column]);
        out[m * ldo + column] = requantizeScalar(total, p, column);
      }
    }
  }
}

void quantGemm(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
               const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
               size_t ldo) noexcept {
#if defined(NNHAL_KERNELS_AVX512_VNNI)
  const size_t kPadded = quantPaddedK(p.k);
  for (size_t g = groupBegin; g < groupEnd;) {
    const size_t groups = panelGroups(groupEnd - g);
    const QuantTileFn full = quantTileFor(kGemmRows, groups);
    size_t m = 0;
    for (; m + kGemmRows <= rows; m += kGemmRows) {
      full(a + m * lda, lda, rowSums != nullptr ? rowSums + m : nullptr, p, g, kPadded,
           out + m * ldo, ldo);
    }
    if (m < rows) {
      quantTileFor(rows - m, groups)(a + m * lda, lda, rowSums != nullptr ? rowSums + m : nullptr,
                                     p, g, kPadded, out + m * ldo, ldo);
    }
    g += groups;
  }
#else
  quantGemmPortable(a, lda, rowSums, rows, p, groupBegin, groupEnd, out, ldo);
#endif
}

void quantRowSums(const uint8_t* a, size_t lda, size_t rows, size_t k, int32_t* sums) noexcept {
  for (size_t m = 0; m < rows; ++m) {
    const uint8_t* row = a + m * lda;
#if defined(NNHAL_KERNELS_AVX512)
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
#else
    int32_t s = 0;
    for (size_t i = 0; i < k; ++i) s += row[i];
    sums[m] = s;
#endif
  }
}

void copyXor(const uint8_t* src, size_t count, uint8_t mask, uint8_t* dst) noexcept {
  if (mask == 0) {
    std::memcpy(dst, src, count);
    return;
  }
  for (size_t i = 0; i < count; ++i) dst[i] = src[i] ^ mask;
}

void packFloatWeights(const float* weights, size_t n, size_t k, float* packed) noexcept {
  const size_t columns = gemmGroups(n) * kGemmGroup;
  std::fill(packed, packed + columns * k, 0.0f);
  for (size_t c = 0; c < n; ++c) {
    float* dst = packed + (c / kGemmGroup) * kGemmGroup * k + c % kGemmGroup;
    const float* src = weights + c * k;
    for (size_t i = 0; i < k; ++i) dst[i * kGemmGroup] = src[i];
  }
}

void floatGemmPortable(const float* a, size_t lda, size_t rows, const FloatGemmParams& p,
                       size_t groupBegin, size_t groupEnd, float* out, size_t ldo) noexcept {
  for (size_t g = groupBegin; g < groupEnd; ++g) {
    const float* b = p.packedWeights + g * kGemmGroup * p.k;
    const size_t column0 = g * kGemmGroup;
    const size_t valid = std::min(kGemmGroup, p.n - column0);
    for (size_t m = 0; m < rows; ++m) {
      const float* row = a + m * lda;
      float acc[kGemmGroup] = {};
      for (size_t i = 0; i < p.k; ++i) {
        const float x = row[i];
        for (size_t j = 0; j < kGemmGroup; ++j) acc[j] += x * b[i * kGemmGroup + j];
      }
      for (size_t j = 0; j < valid; ++j) {
        const float v = acc[j] + p.bias[column0 + j];
        out[m * ldo + column0 + j] = std::min(std::max(v, p.outputMin), p.outputMax);
      }
    }
  }
}

void floatGemm(const float* a, size_t lda, size_t rows, const FloatGemmParams& p, size_t groupBegin,
               size_t groupEnd, float* out, size_t ldo) noexcept {
#if defined(NNHAL_KERNELS_AVX512)
  for (size_t g = groupBegin; g < groupEnd;) {
    const size_t groups = panelGroups(groupEnd - g);
    const FloatTileFn full = floatTileFor(kGemmRows, groups);
    size_t m = 0;
    for (; m + kGemmRows <= rows; m += kGemmRows) {
      full(a + m * lda, lda, p, g, out + m * ldo, ldo);
    }
    if (m < rows) floatTileFor(rows - m, groups)(a + m * lda, lda, p, g, out + m * ldo, ldo);
    g += groups;
  }
#else
  floatGemmPortable(a, lda, rows, p, groupBegin, groupEnd, out, ldo);
#endif
}

}  // namespace nnhal::kernels
