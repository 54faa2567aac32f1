// The quantized depthwise convolution on AVX-512 VNNI (depth multiplier 1): 64 channels at a
// time, four filter taps per vpdpbusd. Compiled with -mavx512vnni (CMakeLists.txt); called
// through kernels/depthwise_conv.h only, with the filter in the VNNI layout
// (packDepthwiseFilter at IsaLevel::kVnni).
//
// vpdpbusd multiplies unsigned bytes by signed bytes, four at a time, into one int32 lane.
// The input is the unsigned side: u = x (uint8) or x + 128 (int8, flipped with a xor). The
// filter is the signed side: w - zw = d + e, with d the stored byte (w - 128 for uint8
// filters, w for int8 ones) and e = 128 - zw or -zw one constant of the layer. So
//   sum_t (x_t - zx)(w_t - zw) = sum_t u_t d_t + e sum_t u_t - (s + zx) sum_t (w_t - zw)
// (s = 0 or 128): the first two terms are vpdpbusd against d and against e in every real tap
// position, the last is folded into the bias. Taps outside the input read the zero-point row,
// whose terms cancel exactly; int32 sums wrap like the reference's.
#include <cstring>

#include "kernels/internal/depthwise_lines.h"
#include "kernels/internal/wrapping_int.h"
#include "kernels/x86/simd_avx512.h"
#include "kernels/x86/x86_kernels.h"

#if !defined(__AVX512VNNI__)
#error "depthwise_vnni.cpp must be compiled with AVX-512 VNNI"
#endif

namespace nnhal::kernels::x86 {
namespace {

using namespace internal;  // the depthwise line geometry (internal/depthwise_lines.h)

constexpr size_t kBlock = kDepthwiseVnniBlock;
constexpr size_t kMaxTaps = kDepthwiseMaxPairedTaps;

// Puts four taps' bytes of 64 channels side by side: q[v], dword 4L + j (128-bit lane L, j =
// 0..3), holds (a, b, c, d) of channel 16L + 4v + j, the order of packDepthwiseFilter's VNNI
// layout.
inline void interleave4(__m512i a, __m512i b, __m512i c, __m512i d, __m512i q[4]) {
  const __m512i abLo = _mm512_unpacklo_epi8(a, b), abHi = _mm512_unpackhi_epi8(a, b);
  const __m512i cdLo = _mm512_unpacklo_epi8(c, d), cdHi = _mm512_unpackhi_epi8(c, d);
  q[0] = _mm512_unpacklo_epi16(abLo, cdLo);
  q[1] = _mm512_unpackhi_epi16(abLo, cdLo);
  q[2] = _mm512_unpacklo_epi16(abHi, cdHi);
  q[3] = _mm512_unpackhi_epi16(abHi, cdHi);
}

// The per-channel values of one block in the accumulators' order: out[v][4L + j] =
// values[16L + 4v + j]; channels past `valid` read as 0.
void permuteToAccumulators(const int32_t* values, size_t valid, int32_t (*out)[16]) {
  for (size_t v = 0; v < 4; ++v) {
    for (size_t lane = 0; lane < 4; ++lane) {
      for (size_t j = 0; j < 4; ++j) {
        const size_t c = 16 * lane + 4 * v + j;
        out[v][4 * lane + j] = c < valid ? values[c] : 0;
      }
    }
  }
}

template <bool Signed>
void quantLinesVnni(const DepthwiseGeometry& g, const DepthwiseQuantParams& p, const uint8_t* input,
                    size_t lineBegin, size_t lineEnd, uint8_t* output) noexcept {
  const size_t depth = g.outDepth;
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const size_t groups = (taps + 3) / 4;
  const size_t blocks = (depth + kBlock - 1) / kBlock;
  const auto* packed = reinterpret_cast<const int8_t*>(p.filter);
  int32_t e = 0;
  std::memcpy(&e, packed, sizeof e);
  const auto* filterSums = reinterpret_cast<const uint8_t*>(packed + kDepthwiseVnniHeaderBytes);
  const int8_t* filterBlocks = packed + kDepthwiseVnniHeaderBytes + blocks * kBlock * 4;
  // e * u summed over the real taps of a group: e in those byte positions (128, which is not
  // an int8, as 64 twice).
  const int eSteps = e == 0 ? 0 : e == 128 ? 2 : 1;
  const int8_t eByte = static_cast<int8_t>(e == 128 ? 64 : e);
  __m512i eWeights[kMaxTaps / 4];
  for (size_t q = 0; q < groups; ++q) {
    uint32_t pattern = 0;
    for (size_t k = 0; k < 4; ++k) {
      if (4 * q + k < taps) pattern |= uint32_t{static_cast<uint8_t>(eByte)} << (8 * k);
    }
    eWeights[q] = _mm512_set1_epi32(static_cast<int32_t>(pattern));
  }
  const int32_t inputShift = (Signed ? 128 : 0) + p.inputZeroPoint;
  const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));
  const __m512i outZero = _mm512_set1_epi32(p.outputZeroPoint);
  const __m512i lo = _mm512_set1_epi8(static_cast<char>(p.outputMin));
  const __m512i hi = _mm512_set1_epi8(static_cast<char>(p.outputMax));
  const bool clamped = p.outputMin >= p.outputZeroPoint;
  QuantLineWalk<kMaxTaps> walk(g, input, depth);

  for (size_t block = 0; block < blocks; ++block) {
    const size_t c0 = block * kBlock;
    const size_t valid = depth - c0 < kBlock ? depth - c0 : kBlock;
    const __mmask64 mask = valid == kBlock ? ~__mmask64{0} : (__mmask64{1} << valid) - 1;
    const int8_t* blockFilter = filterBlocks + block * groups * 4 * 64;
    // The bias with (s + zx) * sum_t (w_t - zw) taken out, in the accumulators' order.
    int32_t folded[kBlock];
    for (size_t c = 0; c < valid; ++c) {
      int32_t filterSum = 0;
      std::memcpy(&filterSum, filterSums + (c0 + c) * 4, sizeof filterSum);
      const int32_t bias = p.bias != nullptr ? p.bias[c0 + c] : 0;
      folded[c] = internal::wrapAdd(bias, -internal::wrapMul(inputShift, filterSum));
    }
    alignas(64) int32_t biasV[4][16], multV[4][16], shiftV[4][16];
    permuteToAccumulators(folded, valid, biasV);
    permuteToAccumulators(p.multiplier + c0, valid, multV);
    permuteToAccumulators(p.shift + c0, valid, shiftV);
    const Requantizer16 requant[4] = {
        Requantizer16(_mm512_load_si512(multV[0]), _mm512_load_si512(shiftV[0]), p.anyLeftShift),
        Requantizer16(_mm512_load_si512(multV[1]), _mm512_load_si512(shiftV[1]), p.anyLeftShift),
        Requantizer16(_mm512_load_si512(multV[2]), _mm512_load_si512(shiftV[2]), p.anyLeftShift),
        Requantizer16(_mm512_load_si512(multV[3]), _mm512_load_si512(shiftV[3]), p.anyLeftShift)};

    // One output pixel of the block from the taps at tapAt(0 .. taps - 1).
    const auto pixel = [&]<bool Clamped>(uint8_t * out, auto tapAt) __attribute__((always_inline)) {
      __m512i acc[4];
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) acc[v] = _mm512_load_si512(biasV[v]);
      for (size_t q = 0; q < groups; ++q) {
        __m512i x[4];
#pragma GCC unroll 4
        for (size_t k = 0; k < 4; ++k) {
          // Past the last tap: any readable bytes (their weights are 0).
          const size_t t = 4 * q + k < taps ? 4 * q + k : taps - 1;
          x[k] = _mm512_maskz_loadu_epi8(mask, tapAt(t));
          if constexpr (Signed) x[k] = _mm512_xor_si512(x[k], flip);
        }
        __m512i u[4];
        interleave4(x[0], x[1], x[2], x[3], u);
        const int8_t* f = blockFilter + q * 4 * 64;
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          acc[v] = _mm512_dpbusd_epi32(acc[v], u[v], _mm512_loadu_si512(f + v * 64));
        }
        for (int step = 0; step < eSteps; ++step) {
#pragma GCC unroll 4
          for (int v = 0; v < 4; ++v) acc[v] = _mm512_dpbusd_epi32(acc[v], u[v], eWeights[q]);
        }
      }
      __m512i y[4];
#pragma GCC unroll 4
      for (int v = 0; v < 4; ++v) {
        y[v] = _mm512_add_epi32(requant[v].template multiply<!Clamped>(acc[v]), outZero);
      }
      // packs keep each 128-bit lane's channels together: lane L of the bytes holds channels
      // 16L .. 16L + 15 in order, as the output wants them.
      const __m512i y01 = _mm512_packs_epi32(y[0], y[1]);
      const __m512i y23 = _mm512_packs_epi32(y[2], y[3]);
      __m512i bytes;
      if constexpr (Signed) {
        bytes = _mm512_min_epi8(_mm512_max_epi8(_mm512_packs_epi16(y01, y23), lo), hi);
      } else {
        bytes = _mm512_min_epu8(_mm512_max_epu8(_mm512_packus_epi16(y01, y23), lo), hi);
      }
      _mm512_mask_storeu_epi8(out, mask, bytes);
    };

    const auto lines = [&]<bool Clamped>() __attribute__((always_inline)) {
      for (size_t l = lineBegin; l < lineEnd; ++l) {
        walk.startLine(l);
        uint8_t* outLine = output + l * g.outWidth * depth + c0;
        walk.forEachPixel(
            c0, p.zeroPointRow, [&](size_t x, auto tapAt) __attribute__((always_inline)) {
              pixel.template operator()<Clamped>(outLine + x * depth, tapAt);
            });
      }
    };
    // A fused RELU (lower bound at or above the zero point) saves the rounding of negatives
    // (Requantizer16::applyClamped).
    if (clamped) {
      lines.template operator()<true>();
    } else {
      lines.template operator()<false>();
    }
  }
}

}  // namespace

const DepthwiseQuantLines depthwiseQuantVnni[2] = {quantLinesVnni<false>, quantLinesVnni<true>};

}  // namespace nnhal::kernels::x86
