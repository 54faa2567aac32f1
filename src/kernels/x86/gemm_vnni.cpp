// The quantized GEMM on AVX-512 VNNI: one vpdpbusd per 4 k steps of 16 columns. Compiled
// with -mavx512vnni (CMakeLists.txt); called through kernels::quantGemm only.
#include <cstring>

#include "kernels/internal/gemm_tiles.h"
#include "kernels/x86/quant_tile_avx512.h"
#include "kernels/x86/x86_kernels.h"

#if !defined(__AVX512VNNI__)
#error "gemm_vnni.cpp must be compiled with AVX-512 VNNI"
#endif

namespace nnhal::kernels::x86 {
namespace {

using internal::panelGroups;

template <int MR, int NV>
void quantTile(const uint8_t* a, size_t lda, const int32_t* rowSums, const QuantGemmParams& p,
               size_t group, size_t kPadded, uint8_t* out, size_t ldo) {
  const size_t k4Count = kPadded / 4;
  const size_t groupStride = kGemmGroup * kPadded;
  const int8_t* b = p.packedWeights + group * groupStride;
  // The accumulators start at the column offsets (vpdpbusd adds with wraparound).
  __m512i offset[NV];
  loadColumnOffsets(p, group, offset);
  __m512i acc[MR][NV];
#pragma GCC unroll 8
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 3
    for (int v = 0; v < NV; ++v) acc[r][v] = offset[v];
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

// The tile for `rows` (1..8) x `groups` (1..3).
auto quantTileFor(size_t rows, size_t groups) {
  return internal::tileFor<8, 3>(rows, groups, []<int MR, int NV>() { return &quantTile<MR, NV>; });
}

}  // namespace

void quantGemmVnni(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                   const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                   size_t ldo) noexcept {
  const size_t kPadded = quantPaddedK(p.k);
  for (size_t g = groupBegin; g < groupEnd;) {
    const size_t groups = panelGroups(groupEnd - g);
    const auto full = quantTileFor(kGemmRows, groups);
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
}

}  // namespace nnhal::kernels::x86
