// kernels/x86/quant_tile_avx512.h — the requantize-and-store step shared by the AVX-512
// quantized GEMM tiles (gemm_vnni.cpp, gemm_avx512.cpp). Unnamed namespace on purpose (see
// kernels/x86/simd_avx512.h).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gemm.h"
#include "kernels/internal/gemm_tiles.h"
#include "kernels/x86/simd_avx512.h"

namespace nnhal::kernels::x86 {
namespace {

// The column offsets of column groups group .. group + NV - 1, which the multiply loops add
// to their sums before storeQuantTile (int32 sums wrap, as the reference's do, so where they
// are added does not matter).
template <int NV>
inline void loadColumnOffsets(const QuantGemmParams& p, size_t group, __m512i (&offset)[NV]) {
#pragma GCC unroll 3
  for (int v = 0; v < NV; ++v) {
    offset[v] = _mm512_loadu_si512(p.columnOffset + (group + v) * kGemmGroup);
  }
}

// Requantizes a tile of int32 accumulators ([rows][groups][16], column offsets already
// added by the multiply loop, row terms not yet) and stores the bytes. Kept out of line so
// that the multiply loop of quantTile has the whole register file for its accumulators.
// Every parameter is copied into locals first: the byte stores may alias anything, so
// fields read through `p` would be reloaded after each store.
[[gnu::noinline]] void storeQuantTile(const int32_t* tile, int rows, int groups,
                                      const int32_t* rowSums, const QuantGemmParams& p,
                                      size_t group, uint8_t* out, size_t ldo) {
  const int32_t rowSumFactor = p.rowSumFactor;
  const bool anyLeftShift = p.anyLeftShift;
  const size_t n = p.n;
  const int32_t* const multipliers = p.multiplier;
  const int32_t* const shifts = p.shift;
  const __m512i zeroPoint = _mm512_set1_epi32(p.outputZeroPoint);
  const __m512i lo = _mm512_set1_epi32(p.outputMin);
  const __m512i hi = _mm512_set1_epi32(p.outputMax);
  const bool rowTermsUsed = rowSumFactor != 0;
  int32_t rowTerms[kGemmRows];
  for (int r = 0; r < rows; ++r) {
    rowTerms[r] = rowTermsUsed ? internal::wrapMul(rowSumFactor, rowSums[r]) : 0;
  }
  // A fused RELU (lower bound at or above the zero point) saves the rounding of negatives.
  const bool clamped = p.outputMin >= p.outputZeroPoint;
  for (int v = 0; v < groups; ++v) {
    const size_t column = (group + v) * kGemmGroup;
    const __mmask16 mask = firstLanes16(n - column);
    const Requantizer16 requant(_mm512_loadu_si512(multipliers + column),
                                _mm512_loadu_si512(shifts + column), anyLeftShift);
    const auto rowsOf = [&](auto requantize) __attribute__((always_inline)) {
      for (int r = 0; r < rows; ++r) {
        __m512i x = _mm512_load_si512(tile + (r * groups + v) * kGemmGroup);
        if (rowTermsUsed) x = _mm512_add_epi32(x, _mm512_set1_epi32(rowTerms[r]));
        storeLowBytes16(out + r * ldo + column, mask, requantize(x));
      }
    };
    if (clamped) {
      rowsOf([&](__m512i x) __attribute__((always_inline)) {
        return requant.applyClamped(x, zeroPoint, lo, hi);
      });
    } else {
      rowsOf([&](__m512i x)
                 __attribute__((always_inline)) { return requant.apply(x, zeroPoint, lo, hi); });
    }
  }
}

}  // namespace
}  // namespace nnhal::kernels::x86
