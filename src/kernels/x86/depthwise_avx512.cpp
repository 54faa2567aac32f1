// The depthwise convolutions on AVX-512 F/BW/VL/DQ (depth multiplier 1): quantized with two
// filter taps per int16 multiply-add, float with one FMA per tap of 16 channels. Called
// through kernels/depthwise_conv.h only.
#include "kernels/internal/depthwise_lines.h"
#include "kernels/x86/simd_avx512.h"
#include "kernels/x86/x86_kernels.h"

namespace nnhal::kernels::x86 {
namespace {

using namespace internal;  // the depthwise line geometry (internal/depthwise_lines.h)

// The quantized fast path (depth multiplier 1): 32 channels at a time as int16, two filter
// taps per multiply-add. For taps t0, t1, unpack{lo,hi}_epi16 of the two input vectors put
// (x_t0[c], x_t1[c]) side by side, so one pairwise int16 multiply-add (vpmaddwd + add) against the
// packed filter pairs accumulates both taps of a channel into one int32 lane. unpacklo covers
// channels 8L..8L+3 of each 128-bit lane L and unpackhi 8L+4..8L+7; packs_epi32(lo, hi) restores
// the channel order. Interior pixels find their taps at fixed offsets; at the borders, taps outside
// the input read the zero-point row instead.
constexpr size_t kPairBlock = kDepthwisePairBlock;
constexpr size_t kMaxPairedTaps = kDepthwiseMaxPairedTaps;

inline __m512i madd16(__m512i acc, __m512i x, __m512i w) {
  return _mm512_add_epi32(acc, _mm512_madd_epi16(x, w));
}

template <typename T>
inline T lesser(T a, T b) {
  return b < a ? b : a;
}

// Loads `mask` bytes at p as 32 int16 values.
template <bool Signed>
inline __m512i loadWidened(const uint8_t* p, __mmask32 mask) {
  const __m256i bytes = _mm256_maskz_loadu_epi8(mask, p);
  return Signed ? _mm512_cvtepi8_epi16(bytes) : _mm512_cvtepu8_epi16(bytes);
}

// Per-channel int32 values of a 32-channel block in the (lo, hi) lane order of the
// accumulators; masked-off channels read as zero.
inline void loadPermuted(const int32_t* values, __mmask32 mask, __m512i* lo, __m512i* hi) {
  const __m512i idxLo = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27);
  const __m512i idxHi =
      _mm512_setr_epi32(4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31);
  const __m512i a = _mm512_maskz_loadu_epi32(static_cast<__mmask16>(mask), values);
  const __m512i b = _mm512_maskz_loadu_epi32(static_cast<__mmask16>(mask >> 16), values + 16);
  *lo = _mm512_permutex2var_epi32(a, idxLo, b);
  *hi = _mm512_permutex2var_epi32(a, idxHi, b);
}

template <bool Signed>
void quantLinesPaired(const DepthwiseGeometry& g, const DepthwiseQuantParams& p,
                      const uint8_t* input, size_t lineBegin, size_t lineEnd,
                      uint8_t* output) noexcept {
  const size_t depth = g.outDepth;
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const size_t pairs = (taps + 1) / 2;
  const size_t blocks = (depth + kPairBlock - 1) / kPairBlock;
  const uint8_t* const zeroRow = p.zeroPointRow;
  const int16_t* const filter = p.filter;
  const int32_t* const bias = p.bias;
  const int32_t* const multipliers = p.multiplier;
  const int32_t* const shifts = p.shift;
  const bool anyLeftShift = p.anyLeftShift;
  const __m512i inZero = _mm512_set1_epi16(static_cast<int16_t>(p.inputZeroPoint));
  const __m512i outZero = _mm512_set1_epi32(p.outputZeroPoint);
  const __m512i lo = _mm512_set1_epi32(p.outputMin);
  const __m512i hi = _mm512_set1_epi32(p.outputMax);
  // A fused RELU (lower bound at or above the zero point) saves the rounding of negatives.
  const bool clamped = p.outputMin >= p.outputZeroPoint;
  const size_t fullPairs = taps / 2;
  const bool oddTap = taps % 2 == 1;
  QuantLineWalk<kMaxPairedTaps> walk(g, input, depth);
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    walk.startLine(l);
    uint8_t* outLine = output + l * g.outWidth * depth;
    for (size_t block = 0; block < blocks; ++block) {
      const size_t c0 = block * kPairBlock;
      const size_t valid = lesser<size_t>(kPairBlock, depth - c0);
      const __mmask32 mask = valid >= 32 ? ~__mmask32{0} : (__mmask32{1} << valid) - 1;
      __m512i biasLo = _mm512_setzero_si512(), biasHi = _mm512_setzero_si512();
      if (bias != nullptr) loadPermuted(bias + c0, mask, &biasLo, &biasHi);
      __m512i multLo, multHi, shiftLo, shiftHi;
      loadPermuted(multipliers + c0, mask, &multLo, &multHi);
      loadPermuted(shifts + c0, mask, &shiftLo, &shiftHi);
      const Requantizer16 requantLo(multLo, shiftLo, anyLeftShift);
      const Requantizer16 requantHi(multHi, shiftHi, anyLeftShift);
      const int16_t* blockFilter = filter + block * pairs * 2 * kPairBlock;
      // sum (x - za) w = sum x w - za sum w: fold the second term into the bias. Taps
      // outside the input read za itself, so their products cancel exactly.
      for (size_t q = 0; q < pairs; ++q) {
        const int16_t* f = blockFilter + q * 2 * kPairBlock;
        biasLo =
            _mm512_sub_epi32(biasLo, madd16(_mm512_setzero_si512(), inZero, _mm512_loadu_si512(f)));
        biasHi = _mm512_sub_epi32(
            biasHi, madd16(_mm512_setzero_si512(), inZero, _mm512_loadu_si512(f + kPairBlock)));
      }
      // The pixels of this block; Clamped: the requantizer may leave out the rounding of
      // negatives (Requantizer16::applyClamped).
      const auto runBlock = [&]<bool Clamped>() __attribute__((always_inline)) {
        // Accumulates the taps at tapAt(0 .. taps - 1), requantizes and stores output pixel
        // x of this block.
        const auto pixel = [&](size_t x, auto tapAt) __attribute__((always_inline)) {
          __m512i accLo = biasLo, accHi = biasHi;
          const int16_t* f = blockFilter;
          for (size_t q = 0; q < fullPairs; ++q, f += 2 * kPairBlock) {
            const __m512i x0v = loadWidened<Signed>(tapAt(2 * q), mask);
            const __m512i x1v = loadWidened<Signed>(tapAt(2 * q + 1), mask);
            accLo = madd16(accLo, _mm512_unpacklo_epi16(x0v, x1v), _mm512_loadu_si512(f));
            accHi =
                madd16(accHi, _mm512_unpackhi_epi16(x0v, x1v), _mm512_loadu_si512(f + kPairBlock));
          }
          if (oddTap) {  // the partner tap's weights are 0: pair the last tap with zeros
            const __m512i x0v = loadWidened<Signed>(tapAt(taps - 1), mask);
            const __m512i zero = _mm512_setzero_si512();
            accLo = madd16(accLo, _mm512_unpacklo_epi16(x0v, zero), _mm512_loadu_si512(f));
            accHi =
                madd16(accHi, _mm512_unpackhi_epi16(x0v, zero), _mm512_loadu_si512(f + kPairBlock));
          }
          const __m512i yLo = Clamped ? requantLo.applyClamped(accLo, outZero, lo, hi)
                                      : requantLo.apply(accLo, outZero, lo, hi);
          const __m512i yHi = Clamped ? requantHi.applyClamped(accHi, outZero, lo, hi)
                                      : requantHi.apply(accHi, outZero, lo, hi);
          storeLowBytes32(outLine + x * depth + c0, mask, _mm512_packs_epi32(yLo, yHi));
        };
        walk.forEachPixel(c0, zeroRow, pixel);
      };
      if (clamped) {
        runBlock.template operator()<true>();
      } else {
        runBlock.template operator()<false>();
      }
    }
  }
}

template <int NV>
void floatBlock(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* image,
                const LineInfo& line, int64_t x0, TapRange cols, size_t c0, size_t valid,
                float* out) {
  const size_t depth = g.outDepth;
  __mmask16 masks[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) masks[v] = firstLanes16(valid - 16 * v);
  __m512 acc[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) acc[v] = _mm512_setzero_ps();
  for (uint32_t i = line.rows.first; i < line.rows.last; ++i) {
    const size_t iy = static_cast<size_t>(line.y0 + int64_t{i} * g.dilationHeight);
    const float* row = image + iy * g.inWidth * depth;
    const float* filterRow = p.filter + size_t{i} * g.filterWidth * depth;
    for (uint32_t j = cols.first; j < cols.last; ++j) {
      const size_t ix = static_cast<size_t>(x0 + int64_t{j} * g.dilationWidth);
      const float* px = row + ix * depth + c0;
      const float* f = filterRow + size_t{j} * depth + c0;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const __m512 x = _mm512_maskz_loadu_ps(masks[v], px + 16 * v);
        const __m512 w = _mm512_maskz_loadu_ps(masks[v], f + 16 * v);
        acc[v] = _mm512_fmadd_ps(x, w, acc[v]);
      }
    }
  }
  const __m512 lo = _mm512_set1_ps(p.outputMin);
  const __m512 hi = _mm512_set1_ps(p.outputMax);
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const size_t c = c0 + 16 * v;
    __m512 y = acc[v];
    if (p.bias != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(masks[v], p.bias + c));
    y = _mm512_min_ps(_mm512_max_ps(y, lo), hi);
    _mm512_mask_storeu_ps(out + c, masks[v], y);
  }
}

void floatLines(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* input,
                size_t lineBegin, size_t lineEnd, float* output) {
  const size_t depth = g.outDepth;
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const LineInfo line = lineInfo(g, l);
    const float* image = input + line.batch * g.inHeight * g.inWidth * depth;
    float* outLine = output + l * g.outWidth * depth;
    for (size_t x = 0; x < g.outWidth; ++x) {
      const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
      const TapRange cols = validTaps(x0, g.dilationWidth, g.filterWidth, g.inWidth);
      float* out = outLine + x * depth;
      for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
        const size_t valid = lesser<size_t>(kChannelBlock, depth - c0);
        switch ((valid + 15) / 16) {
          case 1:
            floatBlock<1>(g, p, image, line, x0, cols, c0, valid, out);
            break;
          case 2:
            floatBlock<2>(g, p, image, line, x0, cols, c0, valid, out);
            break;
          case 3:
            floatBlock<3>(g, p, image, line, x0, cols, c0, valid, out);
            break;
          default:
            floatBlock<4>(g, p, image, line, x0, cols, c0, valid, out);
            break;
        }
      }
    }
  }
}

// 3x3 filters (MobileNet's depthwise layers): per block of 32 channels, the nine taps'
// weights stay in registers while the line's pixels stream past; interior pixels read
// their taps at fixed offsets, border pixels take floatBlock.
void floatLines3x3(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* input,
                   size_t lineBegin, size_t lineEnd, float* output) {
  constexpr int kTaps = 9;
  const size_t depth = g.outDepth;
  const InteriorColumns interior = interiorColumns(g);
  size_t tapOffset[kTaps];
  tapOffsets(g, depth, tapOffset);
  const __m512 lo = _mm512_set1_ps(p.outputMin);
  const __m512 hi = _mm512_set1_ps(p.outputMax);
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const LineInfo line = lineInfo(g, l);
    const float* image = input + line.batch * g.inHeight * g.inWidth * depth;
    float* outLine = output + l * g.outWidth * depth;
    const bool lineInside = line.rows.first == 0 && line.rows.last == 3;
    for (size_t c0 = 0; c0 < depth; c0 += 32) {
      const size_t valid = lesser<size_t>(32, depth - c0);
      const __mmask16 m0 = firstLanes16(valid);
      const __mmask16 m1 = firstLanes16(valid > 16 ? valid - 16 : 0);
      __m512 w0[kTaps], w1[kTaps];
#pragma GCC unroll 9
      for (int t = 0; t < kTaps; ++t) {
        w0[t] = _mm512_maskz_loadu_ps(m0, p.filter + t * depth + c0);
        w1[t] = _mm512_maskz_loadu_ps(m1, p.filter + t * depth + c0 + 16);
      }
      const __m512 b0 =
          p.bias != nullptr ? _mm512_maskz_loadu_ps(m0, p.bias + c0) : _mm512_setzero_ps();
      const __m512 b1 =
          p.bias != nullptr ? _mm512_maskz_loadu_ps(m1, p.bias + c0 + 16) : _mm512_setzero_ps();
      const auto border = [&](size_t x) {
        const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
        const TapRange cols = validTaps(x0, g.dilationWidth, g.filterWidth, g.inWidth);
        if (valid > 16) {  // floatBlock<NV> takes more than 16 * (NV - 1) channels
          floatBlock<2>(g, p, image, line, x0, cols, c0, valid, outLine + x * depth);
        } else {
          floatBlock<1>(g, p, image, line, x0, cols, c0, valid, outLine + x * depth);
        }
      };
      size_t x = 0;
      if (lineInside) {
        for (; x < interior.begin; ++x) border(x);
        const float* corner = image + static_cast<size_t>(line.y0) * g.inWidth * depth + c0;
        for (; x < interior.end; ++x) {
          const float* base = corner + (x * g.strideWidth - g.padLeft) * depth;
          __m512 acc0 = b0, acc1 = b1;
#pragma GCC unroll 9
          for (int t = 0; t < kTaps; ++t) {
            acc0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, base + tapOffset[t]), w0[t], acc0);
            acc1 =
                _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, base + tapOffset[t] + 16), w1[t], acc1);
          }
          float* out = outLine + x * depth + c0;
          _mm512_mask_storeu_ps(out, m0, _mm512_min_ps(_mm512_max_ps(acc0, lo), hi));
          _mm512_mask_storeu_ps(out + 16, m1, _mm512_min_ps(_mm512_max_ps(acc1, lo), hi));
        }
      }
      for (; x < g.outWidth; ++x) border(x);
    }
  }
}

}  // namespace

const DepthwiseQuantLines depthwiseQuantPairedAvx512[2] = {quantLinesPaired<false>,
                                                           quantLinesPaired<true>};

void depthwiseFloatAvx512(const DepthwiseGeometry& g, const DepthwiseFloatParams& p,
                          const float* input, size_t lineBegin, size_t lineEnd,
                          float* output) noexcept {
  if (g.filterHeight == 3 && g.filterWidth == 3) {
    floatLines3x3(g, p, input, lineBegin, lineEnd, output);
    return;
  }
  floatLines(g, p, input, lineBegin, lineEnd, output);
}

}  // namespace nnhal::kernels::x86
