#include "kernels/transpose_conv.h"

#include <algorithm>

#include "kernels/internal/wrapping_int.h"

namespace nnhal::kernels {
namespace {

// Calls fn(filterIndex, inputIndex) for every filter tap i that reaches output position
// `out` along one axis: i = out + pad - in * stride for an input position in < inSize.
template <typename Fn>
inline void forEachTap(uint32_t out, int32_t pad, uint32_t stride, uint32_t filterSize,
                       uint32_t inSize, Fn fn) {
  const int64_t t = int64_t{out} + pad;  // >= 0 since pad >= 0
  for (int64_t i = t % stride; i < filterSize && i <= t; i += stride) {
    const int64_t in = (t - i) / stride;
    if (in < inSize) fn(static_cast<size_t>(i), static_cast<size_t>(in));
  }
}

// Packs OHWI [o][i][j][d] into [i][j][d][o].
template <typename Src, typename Dst, typename Convert>
void packFilter(const TransposeConvGeometry& g, const Src* filter, Dst* packed, Convert convert) {
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const size_t depth = g.inDepth, outDepth = g.outDepth;
  for (size_t o = 0; o < outDepth; ++o) {
    for (size_t tap = 0; tap < taps; ++tap) {
      const Src* src = filter + (o * taps + tap) * depth;
      Dst* dst = packed + tap * depth * outDepth + o;
      for (size_t d = 0; d < depth; ++d) dst[d * outDepth] = convert(src[d]);
    }
  }
}

// Visits output rows [rowBegin, rowEnd) pixel by pixel: start(out) with the pixel's outDepth
// outputs, then tap(out, inputPixel, tap) for every input pixel and filter tap (i * filterWidth +
// j) that reach it, then finish(out).
template <typename In, typename Out, typename Start, typename Tap, typename Finish>
void forEachOutputPixel(const TransposeConvGeometry& g, const In* input, size_t rowBegin,
                        size_t rowEnd, Out* output, Start&& start, Tap&& tap, Finish&& finish) {
  const size_t depth = g.inDepth, outDepth = g.outDepth;
  for (size_t row = rowBegin; row < rowEnd; ++row) {
    const auto y = static_cast<uint32_t>(row % g.outHeight);
    const In* image = input + row / g.outHeight * g.inHeight * g.inWidth * depth;
    for (uint32_t x = 0; x < g.outWidth; ++x) {
      Out* out = output + (row * g.outWidth + x) * outDepth;
      start(out);
      forEachTap(y, g.padTop, g.strideHeight, g.filterHeight, g.inHeight, [&](size_t i, size_t h) {
        forEachTap(x, g.padLeft, g.strideWidth, g.filterWidth, g.inWidth, [&](size_t j, size_t w) {
          tap(out, image + (h * g.inWidth + w) * depth, i * g.filterWidth + j);
        });
      });
      finish(out);
    }
  }
}

template <typename T>
void quantRows(const TransposeConvGeometry& g, const T* input, const TransposeConvQuantParams& p,
               size_t rowBegin, size_t rowEnd, uint32_t* acc, T* output) {
  const size_t depth = g.inDepth, outDepth = g.outDepth;
  forEachOutputPixel(
      g, input, rowBegin, rowEnd, output,
      [&](T*) {
        for (size_t k = 0; k < outDepth; ++k) {
          acc[k] = p.bias != nullptr ? static_cast<uint32_t>(p.bias[k]) : 0u;
        }
      },
      [&](T*, const T* pixel, size_t tap) {
        const int16_t* taps = p.packed + tap * depth * outDepth;
        for (size_t d = 0; d < depth; ++d) {
          const int32_t xv = static_cast<int32_t>(pixel[d]) - p.inputZeroPoint;
          const int16_t* wv = taps + d * outDepth;
          for (size_t k = 0; k < outDepth; ++k) {
            acc[k] += static_cast<uint32_t>(xv * static_cast<int32_t>(wv[k]));
          }
        }
      },
      [&](T* out) {
        for (size_t k = 0; k < outDepth; ++k) {
          int32_t v = multiplyByQuantizedMultiplier(static_cast<int32_t>(acc[k]), p.multipliers[k]);
          v = std::clamp(internal::wrapAdd(v, p.outputZeroPoint), p.outputMin, p.outputMax);
          out[k] = static_cast<T>(v);
        }
      });
}

}  // namespace

void transposeConvPackFloat(const TransposeConvGeometry& g, const float* filter,
                            float* packed) noexcept {
  packFilter(g, filter, packed, [](float v) { return v; });
}

void transposeConvPackQuant(const TransposeConvGeometry& g, const uint8_t* filter,
                            bool filterSigned, int32_t filterZeroPoint, int16_t* packed) noexcept {
  if (filterSigned) {
    packFilter(g, reinterpret_cast<const int8_t*>(filter), packed, [filterZeroPoint](int8_t v) {
      return static_cast<int16_t>(int32_t{v} - filterZeroPoint);
    });
  } else {
    packFilter(g, filter, packed, [filterZeroPoint](uint8_t v) {
      return static_cast<int16_t>(int32_t{v} - filterZeroPoint);
    });
  }
}

void transposeConvFloat(const TransposeConvGeometry& g, const float* input, const float* packed,
                        const float* bias, float outputMin, float outputMax, size_t rowBegin,
                        size_t rowEnd, float* output) noexcept {
  const size_t depth = g.inDepth, outDepth = g.outDepth;
  forEachOutputPixel(
      g, input, rowBegin, rowEnd, output, [&](float* out) { std::fill(out, out + outDepth, 0.0f); },
      [&](float* out, const float* pixel, size_t tap) {
        const float* taps = packed + tap * depth * outDepth;
        for (size_t d = 0; d < depth; ++d) {
          const float xv = pixel[d];
          const float* wv = taps + d * outDepth;
          for (size_t k = 0; k < outDepth; ++k) out[k] += xv * wv[k];
        }
      },
      [&](float* out) {
        for (size_t k = 0; k < outDepth; ++k) {
          const float v = bias != nullptr ? out[k] + bias[k] : out[k];
          out[k] = std::min(std::max(v, outputMin), outputMax);
        }
      });
}

void transposeConvQuant(const TransposeConvGeometry& g, const uint8_t* input,
                        const TransposeConvQuantParams& p, size_t rowBegin, size_t rowEnd,
                        uint32_t* accumulator, uint8_t* output) noexcept {
  if (p.inputSigned) {
    quantRows(g, reinterpret_cast<const int8_t*>(input), p, rowBegin, rowEnd, accumulator,
              reinterpret_cast<int8_t*>(output));
  } else {
    quantRows(g, input, p, rowBegin, rowEnd, accumulator, output);
  }
}

}  // namespace nnhal::kernels
