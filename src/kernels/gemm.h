// kernels/gemm.h — the matrix-multiply core of CONV_2D and FULLY_CONNECTED.
//
// out[m][n] = act(sum_k A[m][k] * W[n][k] + bias[n]) for row-major A (rows = output pixels or
// batches) and weights W given as [N][K] (OHWI filters flattened, FC weights as they are).
// The weights are packed once (packQuantWeights / packFloatWeights) into groups of 16 columns
// so that the inner loop is one 16-lane multiply-add per 4 (quantized) or 1 (float) k steps.
//
// Quantized arithmetic. With A' = A xor aMask (uint8; aMask = 0x80 turns int8 into uint8 +
// 128) and W' = W xor wMask (int8; wMask = 0x80 turns uint8 into int8 - 128), the exact
// int32 accumulator of NNAPI,  sum_k (a_k - za) * (w_k - zw) + bias,  equals
//   sum_k a'_k w'_k  +  rowSumFactor * sum_k a'_k  +  columnOffset[n]
// with ZA = za + (aMask ? 128 : 0), ZW = zw - (wMask ? 128 : 0), rowSumFactor = -ZW and
//   columnOffset[n] = bias[n] - ZA * sum_k w'_k[n] + K * ZA * ZW
// (see quantColumnOffsets). All int32 arithmetic wraps, as the reference's does.
// The accumulator is then requantized per column with multiplyByQuantizedMultiplier,
// offset by the output zero point and clamped to [outputMin, outputMax]; the low byte of
// the result is stored (uint8 or int8 alike).
//
// All functions are pure and noexcept; callers split work by rows and column groups. The
// multiply kernels take the instruction-set level to run at (kernels/isa.h; default: the
// process's activeIsa()); the packed layouts are the same at every level.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/isa.h"

namespace nnhal::kernels {

/// Columns per packed weight group.
inline constexpr size_t kGemmGroup = 16;
/// Rows the quantized and float micro-kernels process at once.
inline constexpr size_t kGemmRows = 8;

inline constexpr size_t gemmGroups(size_t n) { return (n + kGemmGroup - 1) / kGemmGroup; }
/// K rounded up to a multiple of 4 (quantized rows and packed weights use this length).
inline constexpr size_t quantPaddedK(size_t k) { return (k + 3) / 4 * 4; }

// --- quantized ---------------------------------------------------------------------------

/// The byte transforms and corrected zero points of the header comment for one pair of
/// operand types.
struct QuantGemmOffsets {
  uint8_t aMask = 0;    ///< xor applied to input bytes (0x80 for int8 input)
  uint8_t wMask = 0;    ///< xor applied to weight bytes (0x80 for uint8 weights)
  int32_t zaPrime = 0;  ///< ZA: input zero point in the transformed (uint8) domain
  int32_t zwPrime = 0;  ///< ZW: weights zero point in the transformed (int8) domain
  /// The input zero point as a transformed byte (what padding reads as).
  uint8_t padByte() const { return static_cast<uint8_t>(zaPrime); }
};

inline QuantGemmOffsets quantGemmOffsets(bool inputSigned, int32_t inputZeroPoint,
                                         bool weightsSigned, int32_t weightsZeroPoint) {
  QuantGemmOffsets o;
  o.aMask = inputSigned ? 0x80 : 0;
  o.wMask = weightsSigned ? 0 : 0x80;
  o.zaPrime = inputZeroPoint + (inputSigned ? 128 : 0);
  o.zwPrime = weightsZeroPoint - (weightsSigned ? 0 : 128);
  return o;
}

/// Bytes of packed quantized weights for an [n][k] matrix: groups * 16 * quantPaddedK(k).
inline constexpr size_t quantPackedWeightsBytes(size_t n, size_t k) {
  return gemmGroups(n) * kGemmGroup * quantPaddedK(k);
}

/// Packs row-major [n][k] 8-bit weights (uint8 with wMask 0x80, int8 with wMask 0) into
/// `packed` (quantPackedWeightsBytes bytes, layout [group][k/4][16 columns][4]) and writes
/// the column sums of the packed int8 values to `columnSums` (gemmGroups(n) * 16 entries,
/// 0 for padding columns).
void packQuantWeights(const uint8_t* weights, size_t n, size_t k, uint8_t wMask, int8_t* packed,
                      int32_t* columnSums) noexcept;

/// packQuantWeights for the column groups [groupBegin, groupEnd) only (their packed bytes and
/// column sums), so that a long packing can stop between groups.
void packQuantWeightGroups(const uint8_t* weights, size_t n, size_t k, uint8_t wMask,
                           int8_t* packed, int32_t* columnSums, size_t groupBegin,
                           size_t groupEnd) noexcept;

/// Column groups per step of a packing that yields between steps: about 64 KiB of weights.
inline constexpr size_t quantPackGroupsPerStep(size_t k) {
  const size_t bytes = kGemmGroup * quantPaddedK(k);
  return bytes >= 65536 ? 1 : 65536 / bytes;
}

/// columnOffset[c] = bias[c] - za' * columnSums[c] + k * za' * zw' (wrapping), for the
/// gemmGroups(n) * 16 columns; `bias` (n entries) may be null (zero). za' and zw' are the ZA
/// and ZW of the header comment.
void quantColumnOffsets(const int32_t* bias, const int32_t* columnSums, size_t n, size_t k,
                        int32_t zaPrime, int32_t zwPrime, int32_t* columnOffset) noexcept;

/// Everything quantGemm needs besides A and the output.
struct QuantGemmParams {
  const int8_t* packedWeights = nullptr;  ///< packQuantWeights layout
  size_t k = 0;                           ///< reduction length (real, unpadded)
  size_t n = 0;                           ///< output columns
  const int32_t* columnOffset = nullptr;  ///< gemmGroups(n) * 16 entries
  const int32_t* multiplier = nullptr;    ///< gemmGroups(n) * 16 Q31 multipliers
  const int32_t* shift = nullptr;         ///< gemmGroups(n) * 16 shifts (> 0: left)
  bool anyLeftShift = false;              ///< some shift > 0
  int32_t rowSumFactor = 0;               ///< -ZW; 0 means rowSums is not read
  int32_t outputZeroPoint = 0;
  int32_t outputMin = 0;  ///< clamp range (after adding the zero point)
  int32_t outputMax = 255;
};

/// Computes rows [0, rows) x column groups [groupBegin, groupEnd) of the output at `level`.
/// a: rows of quantPaddedK(k) readable bytes (A' values; the bytes past k are multiplied by
/// zero weights, so only their readability matters) at stride lda (a multiple of 4 is not
/// required). rowSums[m] = sum of the first k bytes of row m (read only when
/// rowSumFactor != 0). out: row m at out + m * ldo, columns n < p.n written.
void quantGemm(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
               const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
               size_t ldo, IsaLevel level = activeIsa()) noexcept;
/// Same result with plain C++ (no intrinsics): the reference of every level, and the
/// kScalar level.
void quantGemmPortable(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                       const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                       size_t ldo) noexcept;

/// sums[m] = sum of bytes [0, k) of row m of a (stride lda), for m in [0, rows), at `level`.
void quantRowSums(const uint8_t* a, size_t lda, size_t rows, size_t k, int32_t* sums,
                  IsaLevel level = activeIsa()) noexcept;
/// Same with plain C++.
void quantRowSumsPortable(const uint8_t* a, size_t lda, size_t rows, size_t k,
                          int32_t* sums) noexcept;

/// Copies `count` bytes xor `mask` (mask 0 = plain copy).
void copyXor(const uint8_t* src, size_t count, uint8_t mask, uint8_t* dst) noexcept;

// --- float -------------------------------------------------------------------------------

/// Floats of packed float weights for an [n][k] matrix: groups * 16 * k.
inline constexpr size_t floatPackedWeightsCount(size_t n, size_t k) {
  return gemmGroups(n) * kGemmGroup * k;
}

/// Packs row-major [n][k] float weights into `packed` (layout [group][k][16 columns],
/// padding columns zero).
void packFloatWeights(const float* weights, size_t n, size_t k, float* packed) noexcept;

struct FloatGemmParams {
  const float* packedWeights = nullptr;  ///< packFloatWeights layout
  size_t k = 0;
  size_t n = 0;
  const float* bias = nullptr;  ///< gemmGroups(n) * 16 entries (padding ignored)
  float outputMin = 0.0f;       ///< fused activation clamp
  float outputMax = 0.0f;
};

/// Computes rows [0, rows) x column groups [groupBegin, groupEnd) of the output at `level`;
/// a: rows of k floats at stride lda; out: row m at out + m * ldo.
void floatGemm(const float* a, size_t lda, size_t rows, const FloatGemmParams& p, size_t groupBegin,
               size_t groupEnd, float* out, size_t ldo, IsaLevel level = activeIsa()) noexcept;
/// Same with plain C++ (no intrinsics).
void floatGemmPortable(const float* a, size_t lda, size_t rows, const FloatGemmParams& p,
                       size_t groupBegin, size_t groupEnd, float* out, size_t ldo) noexcept;

}  // namespace nnhal::kernels
