#include "kernels/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace nnhal::kernels {
namespace {

float resizeScale(uint32_t in, uint32_t out, bool alignCorners) {
  if (alignCorners && out > 1) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
  return static_cast<float>(in) / static_cast<float>(out);
}

/// Bilinear source position of output index `dst` along one axis.
struct Sample {
  uint32_t lower;
  uint32_t upper;
  float fraction;  ///< weight of `upper` (src - lower)
};

Sample bilinearSample(uint32_t dst, float scale, uint32_t in, bool halfPixelCenters) {
  const float src = halfPixelCenters ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f
                                     : static_cast<float>(dst) * scale;
  const auto lower = static_cast<int64_t>(std::floor(src));
  const auto upper = static_cast<int64_t>(std::ceil(src));
  Sample s;
  s.lower = static_cast<uint32_t>(std::clamp<int64_t>(lower, 0, int64_t{in} - 1));
  s.upper = static_cast<uint32_t>(std::clamp<int64_t>(upper, 0, int64_t{in} - 1));
  s.fraction = src - static_cast<float>(std::max<int64_t>(lower, 0));
  return s;
}

uint32_t nearestIndex(uint32_t dst, float scale, uint32_t in, bool alignCorners,
                      bool halfPixelCenters) {
  const float src =
      halfPixelCenters ? (static_cast<float>(dst) + 0.5f) * scale : static_cast<float>(dst) * scale;
  const float index = alignCorners ? std::round(src) : std::floor(src);
  return static_cast<uint32_t>(
      std::clamp<int64_t>(static_cast<int64_t>(index), 0, int64_t{in} - 1));
}

template <typename T>
T fromFloat(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else {
    const float lo = std::numeric_limits<T>::min();
    const float hi = std::numeric_limits<T>::max();
    return static_cast<T>(std::clamp(std::round(v), lo, hi));
  }
}

// Calls visit(line, inputImage, y, heightScale, widthScale) for output lines [lineBegin,
// lineEnd): the line's batch image of the NHWC input and its output row y.
template <typename T, typename Visit>
void forEachOutputLine(const ResizeGeometry& g, const T* input, size_t lineBegin, size_t lineEnd,
                       Visit&& visit) {
  const float heightScale = resizeScale(g.inHeight, g.outHeight, g.alignCorners);
  const float widthScale = resizeScale(g.inWidth, g.outWidth, g.alignCorners);
  const size_t imageSize = size_t{g.inHeight} * g.inWidth * g.channels;
  for (size_t line = lineBegin; line < lineEnd; ++line) {
    visit(line, input + line / g.outHeight * imageSize, static_cast<uint32_t>(line % g.outHeight),
          heightScale, widthScale);
  }
}

}  // namespace

template <typename T>
void resizeBilinear(const ResizeGeometry& g, const T* input, size_t lineBegin, size_t lineEnd,
                    T* output) noexcept {
  const size_t channels = g.channels;
  forEachOutputLine(
      g, input, lineBegin, lineEnd,
      [&](size_t line, const T* image, uint32_t y, float heightScale, float widthScale) {
        const Sample sy = bilinearSample(y, heightScale, g.inHeight, g.halfPixelCenters);
        const T* row0 = image + size_t{sy.lower} * g.inWidth * channels;
        const T* row1 = image + size_t{sy.upper} * g.inWidth * channels;
        for (uint32_t x = 0; x < g.outWidth; ++x) {
          const Sample sx = bilinearSample(x, widthScale, g.inWidth, g.halfPixelCenters);
          const float w00 = (1.0f - sy.fraction) * (1.0f - sx.fraction);
          const float w10 = sy.fraction * (1.0f - sx.fraction);
          const float w01 = (1.0f - sy.fraction) * sx.fraction;
          const float w11 = sy.fraction * sx.fraction;
          const T* p00 = row0 + size_t{sx.lower} * channels;
          const T* p01 = row0 + size_t{sx.upper} * channels;
          const T* p10 = row1 + size_t{sx.lower} * channels;
          const T* p11 = row1 + size_t{sx.upper} * channels;
          T* out = output + (line * g.outWidth + x) * channels;
          for (size_t c = 0; c < channels; ++c) {
            const float v = static_cast<float>(p00[c]) * w00 + static_cast<float>(p10[c]) * w10 +
                            static_cast<float>(p01[c]) * w01 + static_cast<float>(p11[c]) * w11;
            out[c] = fromFloat<T>(v);
          }
        }
      });
}

template <typename T>
void resizeNearestNeighbor(const ResizeGeometry& g, const T* input, size_t lineBegin,
                           size_t lineEnd, T* output) noexcept {
  const size_t channels = g.channels;
  forEachOutputLine(
      g, input, lineBegin, lineEnd,
      [&](size_t line, const T* image, uint32_t y, float heightScale, float widthScale) {
        const uint32_t inY =
            nearestIndex(y, heightScale, g.inHeight, g.alignCorners, g.halfPixelCenters);
        const T* row = image + size_t{inY} * g.inWidth * channels;
        for (uint32_t x = 0; x < g.outWidth; ++x) {
          const uint32_t inX =
              nearestIndex(x, widthScale, g.inWidth, g.alignCorners, g.halfPixelCenters);
          std::memcpy(output + (line * g.outWidth + x) * channels, row + size_t{inX} * channels,
                      channels * sizeof(T));
        }
      });
}

template void resizeBilinear<float>(const ResizeGeometry&, const float*, size_t, size_t,
                                    float*) noexcept;
template void resizeBilinear<uint8_t>(const ResizeGeometry&, const uint8_t*, size_t, size_t,
                                      uint8_t*) noexcept;
template void resizeBilinear<int8_t>(const ResizeGeometry&, const int8_t*, size_t, size_t,
                                     int8_t*) noexcept;
template void resizeNearestNeighbor<float>(const ResizeGeometry&, const float*, size_t, size_t,
                                           float*) noexcept;
template void resizeNearestNeighbor<uint8_t>(const ResizeGeometry&, const uint8_t*, size_t, size_t,
                                             uint8_t*) noexcept;
template void resizeNearestNeighbor<int8_t>(const ResizeGeometry&, const int8_t*, size_t, size_t,
                                            int8_t*) noexcept;

}  // namespace nnhal::kernels
