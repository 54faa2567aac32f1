// The quantized depthwise convolution on AVX2 with two filter taps per int16 multiply-add
// (depth multiplier 1): the AVX2 twin of depthwise_avx512.cpp's paired kernel, reading the
// same packed filter (kernels/depthwise_conv.h, packDepthwiseFilter). A block of 32 channels
// is two halves of 16; for taps t0, t1, unpack{lo,hi}_epi16 of a half's two input vectors put
// (x_t0[c], x_t1[c]) side by side, so one vpmaddwd against the packed filter pairs accumulates
// both taps of a channel into one int32 lane. In half h, the lo accumulator holds channels
// 16h + {0-3, 8-11} and the hi one 16h + {4-7, 12-15}: the first and second 16 values of the
// AVX-512 lo and hi filter vectors. Called through kernels/depthwise_conv.h only.
#include "kernels/internal/depthwise_lines.h"
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/x86_kernels.h"

namespace nnhal::kernels::x86 {
namespace {

using namespace internal;  // the depthwise line geometry (internal/depthwise_lines.h)

constexpr size_t kPairBlock = kDepthwisePairBlock;  // 32 channels: two halves of 16
constexpr size_t kHalf = 16;

template <typename T>
inline T lesser(T a, T b) {
  return b < a ? b : a;
}

/// `count` (<= 16) bytes at p as 16 int16 values (zeros past count); Width (16 or 8) when
/// count is known to be that at compile time, else 0.
template <bool Signed, size_t Width>
inline __m256i loadWidened16(const uint8_t* p, size_t count) {
  __m128i bytes;
  if constexpr (Width == kHalf) {
    bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  } else if constexpr (Width == 8) {
    bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  } else if (count >= kHalf) {
    bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  } else if (count == 8) {  // 8-channel layers (MobileNet v1 0.25's first blocks)
    bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p));
  } else {
    alignas(16) uint8_t padded[kHalf] = {};
    std::memcpy(padded, p, count);
    bytes = _mm_load_si128(reinterpret_cast<const __m128i*>(padded));
  }
  return Signed ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes);
}

inline __m256i madd16(__m256i acc, __m256i x, __m256i w) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(x, w));
}

inline __m256i load256(const int16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// Per-channel int32 values of one half (16 channels at `values`, zero-padded) in the lane
/// order of its lo and hi accumulators.
inline void loadPermuted(const int32_t* values, __m256i* lo, __m256i* hi) {
  const auto at = [values](size_t c) {
    return _mm_loadu_si128(reinterpret_cast<const __m128i*>(values + c));
  };
  *lo = _mm256_set_m128i(at(8), at(0));
  *hi = _mm256_set_m128i(at(12), at(4));
}

/// What a 32-channel block needs besides the input: its requantizers, its bias with the
/// input zero point folded in, and its filter.
struct HalfState {
  Requantizer8 lo;
  Requantizer8 hi;
  __m256i biasLo;
  __m256i biasHi;
};

template <bool Signed>
void quantLinesPaired(const DepthwiseGeometry& g, const DepthwiseQuantParams& p,
                      const uint8_t* input, size_t lineBegin, size_t lineEnd,
                      uint8_t* output) noexcept {
  const size_t depth = g.outDepth;
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const size_t pairs = (taps + 1) / 2;
  const size_t fullPairs = taps / 2;
  const bool oddTap = taps % 2 == 1;
  const size_t blocks = (depth + kPairBlock - 1) / kPairBlock;
  const __m256i inZero = _mm256_set1_epi16(static_cast<int16_t>(p.inputZeroPoint));
  const __m256i outZero = _mm256_set1_epi32(p.outputZeroPoint);
  const __m256i lo = _mm256_set1_epi32(p.outputMin);
  const __m256i hi = _mm256_set1_epi32(p.outputMax);
  QuantLineWalk<kDepthwiseMaxPairedTaps> walk(g, input, depth);
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    walk.startLine(l);
    uint8_t* outLine = output + l * g.outWidth * depth;
    for (size_t block = 0; block < blocks; ++block) {
      const size_t c0 = block * kPairBlock;
      const size_t valid = lesser<size_t>(kPairBlock, depth - c0);
      const int16_t* blockFilter = p.filter + block * pairs * 2 * kPairBlock;
      // Width 16: every half of the block is whole; 8: one half of 8 channels; 0: any count.
      // A whole-width block loads and stores without a branch per vector.
      const auto run = [&]<size_t Width>() __attribute__((always_inline)) {
        // The block's per-channel values, zero-padded to 32 channels.
        alignas(32) int32_t bias[kPairBlock] = {};
        alignas(32) int32_t multipliers[kPairBlock] = {};
        alignas(32) int32_t shifts[kPairBlock] = {};
        for (size_t c = 0; c < valid; ++c) {
          bias[c] = p.bias != nullptr ? p.bias[c0 + c] : 0;
          multipliers[c] = p.multiplier[c0 + c];
          shifts[c] = p.shift[c0 + c];
        }
        const size_t halves = valid > kHalf ? 2 : 1;
        HalfState state[2] = {{Requantizer8(_mm256_setzero_si256(), _mm256_setzero_si256(), false),
                               Requantizer8(_mm256_setzero_si256(), _mm256_setzero_si256(), false),
                               _mm256_setzero_si256(), _mm256_setzero_si256()},
                              {Requantizer8(_mm256_setzero_si256(), _mm256_setzero_si256(), false),
                               Requantizer8(_mm256_setzero_si256(), _mm256_setzero_si256(), false),
                               _mm256_setzero_si256(), _mm256_setzero_si256()}};
        for (size_t h = 0; h < halves; ++h) {
          __m256i multLo, multHi, shiftLo, shiftHi;
          loadPermuted(multipliers + h * kHalf, &multLo, &multHi);
          loadPermuted(shifts + h * kHalf, &shiftLo, &shiftHi);
          state[h].lo = Requantizer8(multLo, shiftLo, p.anyLeftShift);
          state[h].hi = Requantizer8(multHi, shiftHi, p.anyLeftShift);
          loadPermuted(bias + h * kHalf, &state[h].biasLo, &state[h].biasHi);
          // sum (x - za) w = sum x w - za sum w: fold the second term into the bias. Taps
          // outside the input read za itself, so their products cancel exactly.
          for (size_t q = 0; q < pairs; ++q) {
            const int16_t* f = blockFilter + q * 2 * kPairBlock + h * kHalf;
            state[h].biasLo =
                _mm256_sub_epi32(state[h].biasLo, _mm256_madd_epi16(inZero, load256(f)));
            state[h].biasHi = _mm256_sub_epi32(state[h].biasHi,
                                               _mm256_madd_epi16(inZero, load256(f + kPairBlock)));
          }
        }
        // Accumulates the taps at tapAt(0 .. taps - 1), requantizes and stores output pixel x
        // of this block.
        const auto pixel = [&](size_t x, auto tapAt) __attribute__((always_inline)) {
          uint8_t* out = outLine + x * depth + c0;
          for (size_t h = 0; h < halves; ++h) {
            const size_t offset = h * kHalf;
            const size_t count =
                Width != 0 ? Width : (valid - offset < kHalf ? valid - offset : kHalf);
            __m256i accLo = state[h].biasLo, accHi = state[h].biasHi;
            const int16_t* f = blockFilter + offset;
            for (size_t q = 0; q < fullPairs; ++q, f += 2 * kPairBlock) {
              const __m256i x0v = loadWidened16<Signed, Width>(tapAt(2 * q) + offset, count);
              const __m256i x1v = loadWidened16<Signed, Width>(tapAt(2 * q + 1) + offset, count);
              accLo = madd16(accLo, _mm256_unpacklo_epi16(x0v, x1v), load256(f));
              accHi = madd16(accHi, _mm256_unpackhi_epi16(x0v, x1v), load256(f + kPairBlock));
            }
            if (oddTap) {  // the partner tap's weights are 0: pair the last tap with zeros
              const __m256i x0v = loadWidened16<Signed, Width>(tapAt(taps - 1) + offset, count);
              const __m256i zero = _mm256_setzero_si256();
              accLo = madd16(accLo, _mm256_unpacklo_epi16(x0v, zero), load256(f));
              accHi = madd16(accHi, _mm256_unpackhi_epi16(x0v, zero), load256(f + kPairBlock));
            }
            const __m256i yLo = state[h].lo.apply(accLo, outZero, lo, hi);
            const __m256i yHi = state[h].hi.apply(accHi, outZero, lo, hi);
            // packs_epi32 restores the channel order within each 128-bit lane; the values are
            // within the output type's range, so the byte pack is exact.
            const __m256i words = _mm256_packs_epi32(yLo, yHi);
            const __m256i bytes =
                Signed ? _mm256_packs_epi16(words, words) : _mm256_packus_epi16(words, words);
            const __m128i ordered = _mm256_castsi256_si128(_mm256_permute4x64_epi64(bytes, 0xD8));
            if (count == kHalf) {
              _mm_storeu_si128(reinterpret_cast<__m128i*>(out + offset), ordered);
            } else if (count == 8) {
              _mm_storel_epi64(reinterpret_cast<__m128i*>(out + offset), ordered);
            } else {
              alignas(16) uint8_t staged[kHalf];
              _mm_store_si128(reinterpret_cast<__m128i*>(staged), ordered);
              std::memcpy(out + offset, staged, count);
            }
          }
        };
        walk.forEachPixel(c0, p.zeroPointRow, pixel);
      };
      if (valid == kPairBlock || valid == kHalf) {
        run.template operator()<kHalf>();
      } else if (valid == 8) {
        run.template operator()<8>();
      } else {
        run.template operator()<0>();
      }
    }
  }
}

}  // namespace

const DepthwiseQuantLines depthwiseQuantPairedAvx2[2] = {quantLinesPaired<false>,
                                                         quantLinesPaired<true>};

}  // namespace nnhal::kernels::x86
