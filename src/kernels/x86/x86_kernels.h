// kernels/x86/x86_kernels.h — the optimized x86 variants of the kernel families, one per
// instruction-set level (kernels/isa.h).
//
// Each function here is defined in a file of this folder compiled for its level
// (`*_avx2.cpp`: AVX2 + FMA; `*_avx512.cpp`: AVX-512 F/BW/VL/DQ; `*_vnni.cpp`: plus VNNI) and
// must only be called when activeIsa() (or the level a test asks for) is at least that
// level. Callers go through the dispatch point of the family (kernels/gemm.h,
// kernels/depthwise_conv.h), never here directly. Each variant gives exactly the result of
// the family's portable version (bit for bit for the quantized ones; float sums may be
// ordered differently).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/depthwise_conv.h"
#include "kernels/elementwise.h"
#include "kernels/gemm.h"

namespace nnhal::kernels::x86 {

// --- GEMM (kernels/gemm.h; same parameters as quantGemm / floatGemm / quantRowSums) ------

void quantGemmVnni(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                   const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                   size_t ldo) noexcept;
void quantGemmAvx512(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                     const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                     size_t ldo) noexcept;
void quantGemmAvx2(const uint8_t* a, size_t lda, const int32_t* rowSums, size_t rows,
                   const QuantGemmParams& p, size_t groupBegin, size_t groupEnd, uint8_t* out,
                   size_t ldo) noexcept;

void floatGemmAvx512(const float* a, size_t lda, size_t rows, const FloatGemmParams& p,
                     size_t groupBegin, size_t groupEnd, float* out, size_t ldo) noexcept;
void floatGemmAvx2(const float* a, size_t lda, size_t rows, const FloatGemmParams& p,
                   size_t groupBegin, size_t groupEnd, float* out, size_t ldo) noexcept;

void quantRowSumsAvx512(const uint8_t* a, size_t lda, size_t rows, size_t k,
                        int32_t* sums) noexcept;
void quantRowSumsAvx2(const uint8_t* a, size_t lda, size_t rows, size_t k, int32_t* sums) noexcept;

/// out[i] = multiplyByQuantizedMultiplier(x[i], {m[i], s[i]}) for 16 lanes, with the AVX-512
/// requantizer the quantized tiles use (any shifts allowed): exposed for its bit-exactness
/// test.
void multiplyByQuantizedMultiplier16Avx512(const int32_t* x, const int32_t* m, const int32_t* s,
                                           int32_t* out) noexcept;

/// The 8-lane AVX2 twin of multiplyByQuantizedMultiplier16Avx512 (Requantizer8).
void multiplyByQuantizedMultiplier8Avx2(const int32_t* x, const int32_t* m, const int32_t* s,
                                        int32_t* out) noexcept;

// --- depthwise (kernels/depthwise_conv.h) ------------------------------------------------

/// depthwiseQuant of output lines [lineBegin, lineEnd). Each kernel below is a pair indexed
/// by p.inputSigned: [0] reads uint8 input, [1] int8.
using DepthwiseQuantLines = void (*)(const DepthwiseGeometry& g, const DepthwiseQuantParams& p,
                                     const uint8_t* input, size_t lineBegin, size_t lineEnd,
                                     uint8_t* output) noexcept;

/// depthwiseQuant for geometries with depthwisePairedLayout(g, kAvx512); p.filter in the
/// paired layout.
extern const DepthwiseQuantLines depthwiseQuantPairedAvx512[2];
/// depthwiseQuant for geometries with depthwiseVnniLayout(g, kVnni); p.filter in the VNNI
/// layout of packDepthwiseFilter.
extern const DepthwiseQuantLines depthwiseQuantVnni[2];

/// The AVX2 twin of depthwiseQuantPairedAvx512 (same paired filter layout).
extern const DepthwiseQuantLines depthwiseQuantPairedAvx2[2];
/// depthwiseQuant for depth multiplier 1 on AVX2 where the paired layout does not apply
/// (more than kDepthwiseMaxPairedTaps taps); p.filter in the prepareDepthwiseFilter layout.
extern const DepthwiseQuantLines depthwiseQuantAvx2[2];
/// depthwiseFloat for depth multiplier 1.
void depthwiseFloatAvx512(const DepthwiseGeometry& g, const DepthwiseFloatParams& p,
                          const float* input, size_t lineBegin, size_t lineEnd,
                          float* output) noexcept;
/// depthwiseFloat for depth multiplier 1 on AVX2 + FMA.
void depthwiseFloatAvx2(const DepthwiseGeometry& g, const DepthwiseFloatParams& p,
                        const float* input, size_t lineBegin, size_t lineEnd,
                        float* output) noexcept;

// --- elementwise (kernels/elementwise.h) -------------------------------------------------

/// addQuant8 of one contiguous run: out[i] = a[i] + b[i] requantized as p says, i < count;
/// bytes are int8 when `isSigned`, uint8 otherwise.
void addQuant8Avx512(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t count,
                     const QuantAddParams& p, bool isSigned) noexcept;
/// The 8-lane AVX2 twin of addQuant8Avx512 (any count: the last lanes are padded).
void addQuant8Avx2(const uint8_t* a, const uint8_t* b, uint8_t* out, size_t count,
                   const QuantAddParams& p, bool isSigned) noexcept;

}  // namespace nnhal::kernels::x86
