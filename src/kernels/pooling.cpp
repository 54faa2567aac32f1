#include "kernels/pooling.h"

#include <algorithm>
#include <limits>

namespace nnhal::kernels {
namespace {

constexpr size_t kChannelBlock = 256;

struct Window {
  uint32_t rowFirst, rowLast, colFirst, colLast;
  uint32_t count() const { return (rowLast - rowFirst) * (colLast - colFirst); }
};

Window window(const PoolGeometry& g, size_t y, size_t x) {
  const int64_t y0 = static_cast<int64_t>(y) * g.strideHeight - g.padTop;
  const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
  const auto clampTo = [](int64_t v, int64_t hi) {
    return static_cast<uint32_t>(std::clamp<int64_t>(v, 0, hi));
  };
  Window w;
  w.rowFirst = clampTo(y0, g.inHeight);
  w.rowLast = clampTo(y0 + g.filterHeight, g.inHeight);
  w.colFirst = clampTo(x0, g.inWidth);
  w.colLast = clampTo(x0 + g.filterWidth, g.inWidth);
  if (w.rowLast < w.rowFirst) w.rowLast = w.rowFirst;
  if (w.colLast < w.colFirst) w.colLast = w.colFirst;
  return w;
}

inline int32_t roundedAverage(int32_t sum, int32_t count) {
  return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

// Runs `pixel(image, window, out)` for every output pixel of the lines.
template <typename T, typename PixelFn>
void forEachPixel(const PoolGeometry& g, const T* input, size_t lineBegin, size_t lineEnd,
                  T* output, PixelFn pixel) {
  const size_t depth = g.inDepth;
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const size_t b = l / g.outHeight;
    const size_t y = l % g.outHeight;
    const T* image = input + b * g.inHeight * g.inWidth * depth;
    for (size_t x = 0; x < g.outWidth; ++x) {
      pixel(image, window(g, y, x), output + (l * g.outWidth + x) * depth);
    }
  }
}

}  // namespace

void averagePoolFloat(const PoolGeometry& g, const float* input, float outputMin, float outputMax,
                      size_t lineBegin, size_t lineEnd, float* output) noexcept {
  const size_t depth = g.inDepth;
  forEachPixel(g, input, lineBegin, lineEnd, output,
               [&](const float* image, const Window& w, float* out) {
                 float acc[kChannelBlock];
                 const float count = static_cast<float>(w.count());
                 for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
                   const size_t n = std::min(kChannelBlock, depth - c0);
                   std::fill(acc, acc + n, 0.0f);
                   for (uint32_t iy = w.rowFirst; iy < w.rowLast; ++iy) {
                     for (uint32_t ix = w.colFirst; ix < w.colLast; ++ix) {
                       const float* px = image + (size_t{iy} * g.inWidth + ix) * depth + c0;
                       for (size_t c = 0; c < n; ++c) acc[c] += px[c];
                     }
                   }
                   for (size_t c = 0; c < n; ++c) {
                     const float v = w.count() == 0 ? 0.0f : acc[c] / count;
                     out[c0 + c] = std::min(std::max(v, outputMin), outputMax);
                   }
                 }
               });
}

void maxPoolFloat(const PoolGeometry& g, const float* input, float outputMin, float outputMax,
                  size_t lineBegin, size_t lineEnd, float* output) noexcept {
  const size_t depth = g.inDepth;
  forEachPixel(
      g, input, lineBegin, lineEnd, output, [&](const float* image, const Window& w, float* out) {
        float acc[kChannelBlock];
        for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
          const size_t n = std::min(kChannelBlock, depth - c0);
          std::fill(acc, acc + n, w.count() == 0 ? 0.0f : std::numeric_limits<float>::lowest());
          for (uint32_t iy = w.rowFirst; iy < w.rowLast; ++iy) {
            for (uint32_t ix = w.colFirst; ix < w.colLast; ++ix) {
              const float* px = image + (size_t{iy} * g.inWidth + ix) * depth + c0;
              for (size_t c = 0; c < n; ++c) acc[c] = std::max(acc[c], px[c]);
            }
          }
          for (size_t c = 0; c < n; ++c) {
            out[c0 + c] = std::min(std::max(acc[c], outputMin), outputMax);
          }
        }
      });
}

namespace {

// Sums of a channel block over a window: `n` channels, in steps of 16 with a fixed count so
// that the compiler vectorizes the widening adds, then the rest.
template <typename T>
void accumulateWindow(const T* image, size_t rowStride, size_t depth, const Window& w, size_t n,
                      int32_t* acc) {
  constexpr size_t kStep = 16;
  std::fill(acc, acc + n, 0);
  for (uint32_t iy = w.rowFirst; iy < w.rowLast; ++iy) {
    for (uint32_t ix = w.colFirst; ix < w.colLast; ++ix) {
      const T* px = image + size_t{iy} * rowStride + size_t{ix} * depth;
      size_t c = 0;
      for (; c + kStep <= n; c += kStep) {
        for (size_t k = 0; k < kStep; ++k) acc[c + k] += px[c + k];
      }
      for (; c < n; ++c) acc[c] += px[c];
    }
  }
}

// roundedAverage(sum, count) for every channel, without a division per channel: with
// |sum| < 2^24 and count <= 2^16 (8-bit values, windows of at most 2^16 pixels),
// floor((|sum| + count / 2 + 0.5) / count) computed as a product with the double reciprocal
// is exact: the rounding error of the product (a few units in 2^-52) stays far below the
// distance 0.5 / count of the true quotient from the next integer.
inline void roundedAverages(const int32_t* acc, size_t n, int32_t count, int32_t* out) {
  if (count == 0) {
    std::fill(out, out + n, 0);
    return;
  }
  if (count > (1 << 16)) {
    for (size_t c = 0; c < n; ++c) out[c] = roundedAverage(acc[c], count);
    return;
  }
  const double inverse = 1.0 / count;
  const double half = count / 2 + 0.5;
  for (size_t c = 0; c < n; ++c) {
    const int32_t magnitude = acc[c] < 0 ? -acc[c] : acc[c];
    const auto q = static_cast<int32_t>((magnitude + half) * inverse);
    out[c] = acc[c] < 0 ? -q : q;
  }
}

}  // namespace

template <typename T>
void averagePoolQuant(const PoolGeometry& g, const T* input, int32_t outputMin, int32_t outputMax,
                      size_t lineBegin, size_t lineEnd, T* output) noexcept {
  const size_t depth = g.inDepth;
  const size_t rowStride = size_t{g.inWidth} * depth;
  forEachPixel(g, input, lineBegin, lineEnd, output, [&](const T* image, const Window& w, T* out) {
    int32_t acc[kChannelBlock];
    int32_t average[kChannelBlock];
    const auto count = static_cast<int32_t>(w.count());
    for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
      const size_t n = std::min(kChannelBlock, depth - c0);
      accumulateWindow(image + c0, rowStride, depth, w, n, acc);
      roundedAverages(acc, n, count, average);
      for (size_t c = 0; c < n; ++c) {
        out[c0 + c] = static_cast<T>(std::clamp(average[c], outputMin, outputMax));
      }
    }
  });
}

template <typename T>
void maxPoolQuant(const PoolGeometry& g, const T* input, int32_t outputMin, int32_t outputMax,
                  size_t lineBegin, size_t lineEnd, T* output) noexcept {
  const size_t depth = g.inDepth;
  forEachPixel(g, input, lineBegin, lineEnd, output, [&](const T* image, const Window& w, T* out) {
    T acc[kChannelBlock];
    for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
      const size_t n = std::min(kChannelBlock, depth - c0);
      std::fill(acc, acc + n, w.count() == 0 ? T{0} : std::numeric_limits<T>::lowest());
      for (uint32_t iy = w.rowFirst; iy < w.rowLast; ++iy) {
        for (uint32_t ix = w.colFirst; ix < w.colLast; ++ix) {
          const T* px = image + (size_t{iy} * g.inWidth + ix) * depth + c0;
          for (size_t c = 0; c < n; ++c) acc[c] = std::max(acc[c], px[c]);
        }
      }
      for (size_t c = 0; c < n; ++c) {
        out[c0 + c] =
            static_cast<T>(std::clamp(static_cast<int32_t>(acc[c]), outputMin, outputMax));
      }
    }
  });
}

template void averagePoolQuant<uint8_t>(const PoolGeometry&, const uint8_t*, int32_t, int32_t,
                                        size_t, size_t, uint8_t*) noexcept;
template void averagePoolQuant<int8_t>(const PoolGeometry&, const int8_t*, int32_t, int32_t, size_t,
                                       size_t, int8_t*) noexcept;
template void maxPoolQuant<uint8_t>(const PoolGeometry&, const uint8_t*, int32_t, int32_t, size_t,
                                    size_t, uint8_t*) noexcept;
template void maxPoolQuant<int8_t>(const PoolGeometry&, const int8_t*, int32_t, int32_t, size_t,
                                   size_t, int8_t*) noexcept;

// --- references --------------------------------------------------------------------------

namespace {

// Calls visit(value) for each in-bounds input value of output (b, y, x, c); returns count.
template <typename T, typename Visit>
uint32_t visitWindow(const PoolGeometry& g, const T* input, uint32_t b, uint32_t y, uint32_t x,
                     uint32_t c, Visit visit) {
  uint32_t count = 0;
  forEachInputTap(g, b, y, x, [&](uint32_t, uint32_t, size_t pixel) {
    visit(input[pixel * g.inDepth + c]);
    ++count;
  });
  return count;
}

}  // namespace

void averagePoolFloatReference(const PoolGeometry& g, const float* input, float outputMin,
                               float outputMax, float* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    float sum = 0.0f;
    const uint32_t count = visitWindow(g, input, b, y, x, c, [&](float v) { sum += v; });
    const float avg = count == 0 ? 0.0f : sum / static_cast<float>(count);
    return std::min(std::max(avg, outputMin), outputMax);
  });
}

void maxPoolFloatReference(const PoolGeometry& g, const float* input, float outputMin,
                           float outputMax, float* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    float best = std::numeric_limits<float>::lowest();
    const uint32_t count =
        visitWindow(g, input, b, y, x, c, [&](float v) { best = std::max(best, v); });
    if (count == 0) best = 0.0f;
    return std::min(std::max(best, outputMin), outputMax);
  });
}

template <typename T>
void averagePoolQuantReference(const PoolGeometry& g, const T* input, int32_t outputMin,
                               int32_t outputMax, T* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    int32_t sum = 0;
    const uint32_t count = visitWindow(g, input, b, y, x, c, [&](T v) { sum += v; });
    const int32_t avg = count == 0 ? 0 : roundedAverage(sum, static_cast<int32_t>(count));
    return static_cast<T>(std::clamp(avg, outputMin, outputMax));
  });
}

template <typename T>
void maxPoolQuantReference(const PoolGeometry& g, const T* input, int32_t outputMin,
                           int32_t outputMax, T* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    int32_t best = std::numeric_limits<T>::lowest();
    const uint32_t count =
        visitWindow(g, input, b, y, x, c, [&](T v) { best = std::max<int32_t>(best, v); });
    if (count == 0) best = 0;
    return static_cast<T>(std::clamp(best, outputMin, outputMax));
  });
}

template void averagePoolQuantReference<uint8_t>(const PoolGeometry&, const uint8_t*, int32_t,
                                                 int32_t, uint8_t*) noexcept;
template void averagePoolQuantReference<int8_t>(const PoolGeometry&, const int8_t*, int32_t,
                                                int32_t, int8_t*) noexcept;
template void maxPoolQuantReference<uint8_t>(const PoolGeometry&, const uint8_t*, int32_t, int32_t,
                                             uint8_t*) noexcept;
template void maxPoolQuantReference<int8_t>(const PoolGeometry&, const int8_t*, int32_t, int32_t,
                                            int8_t*) noexcept;

}  // namespace nnhal::kernels
