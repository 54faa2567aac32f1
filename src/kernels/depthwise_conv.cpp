// The dispatch point of the depthwise family and its portable kernels; the AVX-512 variants
// are in src/kernels/x86/depthwise_avx512.cpp.
#include "kernels/depthwise_conv.h"

#include <algorithm>
#include <cstring>

#include "kernels/internal/depthwise_lines.h"
#include "kernels/internal/wrapping_int.h"
#if defined(NNHAL_X86_KERNELS)
#include "kernels/x86/x86_kernels.h"
#endif

namespace nnhal::kernels {
namespace {

using internal::kChannelBlock;
using internal::LineInfo;
using internal::lineInfo;
using internal::readQuant;
using internal::TapRange;
using internal::validTaps;

constexpr size_t kPairBlock = kDepthwisePairBlock;

}  // namespace

void prepareDepthwiseFilter(const uint8_t* filter, size_t count, bool filterSigned,
                            int32_t filterZeroPoint, int16_t* out) noexcept {
  for (size_t i = 0; i < count; ++i) {
    out[i] = static_cast<int16_t>(readQuant(filter[i], filterSigned) - filterZeroPoint);
  }
}

namespace {

// Depth multiplier 1 and few enough taps for the x86 kernels' tap arrays.
bool x86DepthwiseShape(const DepthwiseGeometry& g) {
  return g.depthMultiplier == 1 &&
         size_t{g.filterHeight} * g.filterWidth <= kDepthwiseMaxPairedTaps &&
         g.filterHeight <= kDepthwiseMaxPairedTaps;
}

}  // namespace

bool depthwisePairedLayout(const DepthwiseGeometry& g, IsaLevel level) noexcept {
#if defined(NNHAL_X86_KERNELS)
  return level >= IsaLevel::kAvx2 && x86DepthwiseShape(g) && !depthwiseVnniLayout(g, level);
#else
  (void)g;
  (void)level;
  return false;
#endif
}

bool depthwiseVnniLayout(const DepthwiseGeometry& g, IsaLevel level) noexcept {
#if defined(NNHAL_X86_KERNELS)
  // Blocks of 64 channels that are at least 7/8 full: a block that is half empty (32 or 96
  // channels) does the work of a full one, and the 32-channel paired kernel is faster there.
  const size_t blocks = (size_t{g.outDepth} + kDepthwiseVnniBlock - 1) / kDepthwiseVnniBlock;
  const bool full = (blocks * kDepthwiseVnniBlock - g.outDepth) * 8 <= g.outDepth;
  return level >= IsaLevel::kVnni && x86DepthwiseShape(g) && full;
#else
  (void)g;
  (void)level;
  return false;
#endif
}

size_t depthwisePackedFilterCount(const DepthwiseGeometry& g, IsaLevel level) {
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  if (depthwiseVnniLayout(g, level)) {
    const size_t blocks = (g.outDepth + kDepthwiseVnniBlock - 1) / kDepthwiseVnniBlock;
    const size_t bytes = kDepthwiseVnniHeaderBytes + blocks * kDepthwiseVnniBlock * 4 +
                         blocks * ((taps + 3) / 4) * 4 * 64;
    return bytes / sizeof(int16_t);
  }
  if (depthwisePairedLayout(g, level)) {
    const size_t blocks = (g.outDepth + kPairBlock - 1) / kPairBlock;
    return blocks * ((taps + 1) / 2) * 2 * kPairBlock;
  }
  return taps * g.outDepth;
}

namespace {

size_t depthwisePackedFilterBlocks(size_t depth) {
  return (depth + kDepthwiseVnniBlock - 1) / kDepthwiseVnniBlock;
}

// The VNNI layout of packDepthwiseFilter (kernels/depthwise_conv.h).
void packVnniFilter(const DepthwiseGeometry& g, const uint8_t* filter, bool filterSigned,
                    int32_t filterZeroPoint, int16_t* out) {
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const size_t depth = g.outDepth;
  const size_t groups = (taps + 3) / 4;
  auto* bytes = reinterpret_cast<int8_t*>(out);
  std::fill(bytes, bytes + depthwisePackedFilterCount(g, IsaLevel::kVnni) * sizeof(int16_t),
            int8_t{0});
  const int32_t e = (filterSigned ? 0 : 128) - filterZeroPoint;
  std::memcpy(bytes, &e, sizeof e);
  auto* sums = reinterpret_cast<int32_t*>(bytes + kDepthwiseVnniHeaderBytes);
  int8_t* blocksStart = bytes + kDepthwiseVnniHeaderBytes +
                        depthwisePackedFilterBlocks(depth) * kDepthwiseVnniBlock * 4;
  for (size_t c = 0; c < depth; ++c) {
    const size_t block = c / kDepthwiseVnniBlock, within = c % kDepthwiseVnniBlock;
    const size_t lane = within / 16, v = within % 16 / 4, j = within % 4;
    int32_t sum = 0;
    for (size_t t = 0; t < taps; ++t) {
      const int32_t w = readQuant(filter[t * depth + c], filterSigned);
      sum += w - filterZeroPoint;
      blocksStart[((block * groups + t / 4) * 4 + v) * 64 + 16 * lane + 4 * j + t % 4] =
          static_cast<int8_t>(w - (filterSigned ? 0 : 128));
    }
    sums[c] = sum;
  }
}

}  // namespace

void packDepthwiseFilter(const DepthwiseGeometry& g, const uint8_t* filter, bool filterSigned,
                         int32_t filterZeroPoint, int16_t* out, IsaLevel level) noexcept {
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const size_t depth = g.outDepth;
  if (depthwiseVnniLayout(g, level)) {
    packVnniFilter(g, filter, filterSigned, filterZeroPoint, out);
    return;
  }
  if (depthwisePairedLayout(g, level)) {
    const size_t pairs = (taps + 1) / 2;
    const size_t blocks = (depth + kPairBlock - 1) / kPairBlock;
    std::fill(out, out + depthwisePackedFilterCount(g, level), int16_t{0});
    for (size_t block = 0; block < blocks; ++block) {
      for (size_t q = 0; q < pairs; ++q) {
        int16_t* dst = out + (block * pairs + q) * 2 * kPairBlock;
        // Position of channel c of the block: lane L = c / 8, within it c % 8; the first
        // four channels of a lane go to the lo vector, the others to hi.
        for (size_t c = 0; c < kPairBlock; ++c) {
          const size_t channel = block * kPairBlock + c;
          if (channel >= depth) continue;
          const size_t lane = c / 8, within = c % 8;
          const size_t half = within / 4, slot = within % 4;
          int16_t* pair = dst + half * kPairBlock + lane * 8 + slot * 2;
          for (size_t k = 0; k < 2; ++k) {
            const size_t t = 2 * q + k;
            if (t >= taps) continue;
            pair[k] = static_cast<int16_t>(readQuant(filter[t * depth + channel], filterSigned) -
                                           filterZeroPoint);
          }
        }
      }
    }
    return;
  }
  prepareDepthwiseFilter(filter, taps * depth, filterSigned, filterZeroPoint, out);
}

void depthwiseQuantPortable(const DepthwiseGeometry& g, const DepthwiseQuantParams& p,
                            const uint8_t* input, size_t lineBegin, size_t lineEnd,
                            uint8_t* output) noexcept {
  const size_t inDepth = g.inDepth;
  const size_t depth = g.outDepth;
  const size_t multiplier = g.depthMultiplier;
  int32_t acc[kChannelBlock];
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const LineInfo line = lineInfo(g, l);
    const uint8_t* image = input + line.batch * g.inHeight * g.inWidth * inDepth;
    for (size_t x = 0; x < g.outWidth; ++x) {
      const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
      const TapRange cols = validTaps(x0, g.dilationWidth, g.filterWidth, g.inWidth);
      uint8_t* out = output + (l * g.outWidth + x) * depth;
      for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
        const size_t n = std::min(kChannelBlock, depth - c0);
        for (size_t c = 0; c < n; ++c) acc[c] = p.bias != nullptr ? p.bias[c0 + c] : 0;
        for (uint32_t i = line.rows.first; i < line.rows.last; ++i) {
          const size_t iy = static_cast<size_t>(line.y0 + int64_t{i} * g.dilationHeight);
          for (uint32_t j = cols.first; j < cols.last; ++j) {
            const size_t ix = static_cast<size_t>(x0 + int64_t{j} * g.dilationWidth);
            const uint8_t* px = image + (iy * g.inWidth + ix) * inDepth;
            const int16_t* f = p.filter + (size_t{i} * g.filterWidth + j) * depth + c0;
            for (size_t c = 0; c < n; ++c) {
              const int32_t v = readQuant(px[(c0 + c) / multiplier], p.inputSigned);
              acc[c] = internal::wrapAdd(acc[c], (v - p.inputZeroPoint) * f[c]);
            }
          }
        }
        for (size_t c = 0; c < n; ++c) {
          const size_t oc = c0 + c;
          const int32_t v =
              internal::wrapAdd(multiplyByQuantizedMultiplier(
                                    acc[c], QuantizedMultiplier{p.multiplier[oc], p.shift[oc]}),
                                p.outputZeroPoint);
          out[oc] = static_cast<uint8_t>(std::clamp(v, p.outputMin, p.outputMax));
        }
      }
    }
  }
}

void depthwiseQuant(const DepthwiseGeometry& g, const DepthwiseQuantParams& p, const uint8_t* input,
                    size_t lineBegin, size_t lineEnd, uint8_t* output, IsaLevel level) noexcept {
#if defined(NNHAL_X86_KERNELS)
  const size_t sign = p.inputSigned ? 1 : 0;  // which kernel of each signed/unsigned pair
  if (depthwiseVnniLayout(g, level)) {
    x86::depthwiseQuantVnni[sign](g, p, input, lineBegin, lineEnd, output);
    return;
  }
  if (depthwisePairedLayout(g, level)) {
    if (level >= IsaLevel::kAvx512) {
      x86::depthwiseQuantPairedAvx512[sign](g, p, input, lineBegin, lineEnd, output);
    } else {
      x86::depthwiseQuantPairedAvx2[sign](g, p, input, lineBegin, lineEnd, output);
    }
    return;
  }
  if (level == IsaLevel::kAvx2 && g.depthMultiplier == 1) {
    x86::depthwiseQuantAvx2[sign](g, p, input, lineBegin, lineEnd, output);
    return;
  }
#endif
  depthwiseQuantPortable(g, p, input, lineBegin, lineEnd, output);
}

void depthwiseFloatPortable(const DepthwiseGeometry& g, const DepthwiseFloatParams& p,
                            const float* input, size_t lineBegin, size_t lineEnd,
                            float* output) noexcept {
  const size_t inDepth = g.inDepth;
  const size_t depth = g.outDepth;
  const size_t multiplier = g.depthMultiplier;
  float acc[kChannelBlock];
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const LineInfo line = lineInfo(g, l);
    const float* image = input + line.batch * g.inHeight * g.inWidth * inDepth;
    for (size_t x = 0; x < g.outWidth; ++x) {
      const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
      const TapRange cols = validTaps(x0, g.dilationWidth, g.filterWidth, g.inWidth);
      float* out = output + (l * g.outWidth + x) * depth;
      for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
        const size_t n = std::min(kChannelBlock, depth - c0);
        std::fill(acc, acc + n, 0.0f);
        for (uint32_t i = line.rows.first; i < line.rows.last; ++i) {
          const size_t iy = static_cast<size_t>(line.y0 + int64_t{i} * g.dilationHeight);
          for (uint32_t j = cols.first; j < cols.last; ++j) {
            const size_t ix = static_cast<size_t>(x0 + int64_t{j} * g.dilationWidth);
            const float* px = image + (iy * g.inWidth + ix) * inDepth;
            const float* f = p.filter + (size_t{i} * g.filterWidth + j) * depth + c0;
            for (size_t c = 0; c < n; ++c) acc[c] += px[(c0 + c) / multiplier] * f[c];
          }
        }
        for (size_t c = 0; c < n; ++c) {
          const float v = acc[c] + (p.bias != nullptr ? p.bias[c0 + c] : 0.0f);
          out[c0 + c] = std::min(std::max(v, p.outputMin), p.outputMax);
        }
      }
    }
  }
}

void depthwiseFloat(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* input,
                    size_t lineBegin, size_t lineEnd, float* output, IsaLevel level) noexcept {
#if defined(NNHAL_X86_KERNELS)
  if (g.depthMultiplier == 1 && level >= IsaLevel::kAvx512) {
    x86::depthwiseFloatAvx512(g, p, input, lineBegin, lineEnd, output);
    return;
  }
  if (g.depthMultiplier == 1 && level >= IsaLevel::kAvx2) {
    x86::depthwiseFloatAvx2(g, p, input, lineBegin, lineEnd, output);
    return;
  }
#else
  (void)level;
#endif
  depthwiseFloatPortable(g, p, input, lineBegin, lineEnd, output);
}

template <typename In, typename Filter>
void depthwiseQuantReference(const DepthwiseGeometry& g, const In* input, int32_t inputZeroPoint,
                             const Filter* filter, int32_t filterZeroPoint, const int32_t* bias,
                             const QuantizedMultiplier* multipliers, int32_t outputZeroPoint,
                             int32_t outputMin, int32_t outputMax, In* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    const uint32_t ic = c / g.depthMultiplier;
    int32_t sum = 0;
    forEachInputTap(g, b, y, x, [&](uint32_t i, uint32_t j, size_t pixel) {
      const int32_t v = input[pixel * g.inDepth + ic];
      const int32_t w = filter[(size_t{i} * g.filterWidth + j) * g.outDepth + c];
      sum = internal::wrapAdd(sum, (v - inputZeroPoint) * (w - filterZeroPoint));
    });
    if (bias != nullptr) sum = internal::wrapAdd(sum, bias[c]);
    const int32_t v =
        internal::wrapAdd(multiplyByQuantizedMultiplier(sum, multipliers[c]), outputZeroPoint);
    return static_cast<In>(std::clamp(v, outputMin, outputMax));
  });
}

template void depthwiseQuantReference<uint8_t, uint8_t>(const DepthwiseGeometry&, const uint8_t*,
                                                        int32_t, const uint8_t*, int32_t,
                                                        const int32_t*, const QuantizedMultiplier*,
                                                        int32_t, int32_t, int32_t,
                                                        uint8_t*) noexcept;
template void depthwiseQuantReference<int8_t, int8_t>(const DepthwiseGeometry&, const int8_t*,
                                                      int32_t, const int8_t*, int32_t,
                                                      const int32_t*, const QuantizedMultiplier*,
                                                      int32_t, int32_t, int32_t, int8_t*) noexcept;
template void depthwiseQuantReference<uint8_t, int8_t>(const DepthwiseGeometry&, const uint8_t*,
                                                       int32_t, const int8_t*, int32_t,
                                                       const int32_t*, const QuantizedMultiplier*,
                                                       int32_t, int32_t, int32_t,
                                                       uint8_t*) noexcept;

void depthwiseFloatReference(const DepthwiseGeometry& g, const float* input, const float* filter,
                             const float* bias, float outputMin, float outputMax,
                             float* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    const uint32_t ic = c / g.depthMultiplier;
    float sum = 0.0f;
    forEachInputTap(g, b, y, x, [&](uint32_t i, uint32_t j, size_t pixel) {
      sum +=
          input[pixel * g.inDepth + ic] * filter[(size_t{i} * g.filterWidth + j) * g.outDepth + c];
    });
    if (bias != nullptr) sum += bias[c];
    return std::min(std::max(sum, outputMin), outputMax);
  });
}

}  // namespace nnhal::kernels
