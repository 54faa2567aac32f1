// The dispatch point of the GEMM family and its portable kernels; the optimized variants
// are in src/kernels/x86/gemm_{vnni,avx512,avx2}.cpp.
#include "kernels/gemm.h"

#include <algorithm>
#include <cstring>

#include "kernels/internal/gemm_tiles.h"
#include "kernels/quantization.h"
#if defined(NNHAL_X86_KERNELS)
#include "kernels/x86/x86_kernels.h"
#endif

namespace nnhal::kernels {
namespace {

using internal::wrapAdd;
using internal::wrapMul;

inline uint8_t requantizeScalar(int32_t acc, const QuantGemmParams& p, size_t column) {
  const int32_t scaled = multiplyByQuantizedMultiplier(
      acc, QuantizedMultiplier{p.multiplier[column], p.shift[column]});
  const int32_t v = std::clamp(wrapAdd(scaled, p.outputZeroPoint), p.outputMin, p.outputMax);
  return static_cast<uint8_t>(v);
}

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
               size_t ldo, IsaLevel level) noexcept {
#if defined(NNHAL_X86_KERNELS)
  switch (level) {
    case IsaLevel::kVnni:
      return x86::quantGemmVnni(a, lda, rowSums, rows, p, groupBegin, groupEnd, out, ldo);
    case IsaLevel::kAvx512:
      return x86::quantGemmAvx512(a, lda, rowSums, rows, p, groupBegin, groupEnd, out, ldo);
    case IsaLevel::kAvx2:
      return x86::quantGemmAvx2(a, lda, rowSums, rows, p, groupBegin, groupEnd, out, ldo);
    case IsaLevel::kScalar:
      break;
  }
#else
  (void)level;
#endif
  quantGemmPortable(a, lda, rowSums, rows, p, groupBegin, groupEnd, out, ldo);
}

void quantRowSumsPortable(const uint8_t* a, size_t lda, size_t rows, size_t k,
                          int32_t* sums) noexcept {
  for (size_t m = 0; m < rows; ++m) {
    const uint8_t* row = a + m * lda;
    int32_t s = 0;
    for (size_t i = 0; i < k; ++i) s += row[i];
    sums[m] = s;
  }
}

void quantRowSums(const uint8_t* a, size_t lda, size_t rows, size_t k, int32_t* sums,
                  IsaLevel level) noexcept {
#if defined(NNHAL_X86_KERNELS)
  if (level >= IsaLevel::kAvx512) return x86::quantRowSumsAvx512(a, lda, rows, k, sums);
  if (level == IsaLevel::kAvx2) return x86::quantRowSumsAvx2(a, lda, rows, k, sums);
#else
  (void)level;
#endif
  quantRowSumsPortable(a, lda, rows, k, sums);
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
               size_t groupEnd, float* out, size_t ldo, IsaLevel level) noexcept {
#if defined(NNHAL_X86_KERNELS)
  if (level >= IsaLevel::kAvx512) {
    return x86::floatGemmAvx512(a, lda, rows, p, groupBegin, groupEnd, out, ldo);
  }
  if (level == IsaLevel::kAvx2) {
    return x86::floatGemmAvx2(a, lda, rows, p, groupBegin, groupEnd, out, ldo);
  }
#else
  (void)level;
#endif
  floatGemmPortable(a, lda, rows, p, groupBegin, groupEnd, out, ldo);
}

}  // namespace nnhal::kernels
