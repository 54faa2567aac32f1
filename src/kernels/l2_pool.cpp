#include "kernels/l2_pool.h"

#include <algorithm>
#include <cmath>

namespace nnhal::kernels {
namespace {

constexpr size_t kChannelBlock = 64;

}  // namespace

void l2PoolFloat(const PoolGeometry& g, const float* input, float outputMin, float outputMax,
                 size_t lineBegin, size_t lineEnd, float* output) noexcept {
  const size_t depth = g.inDepth;
  for (size_t line = lineBegin; line < lineEnd; ++line) {
    const size_t b = line / g.outHeight;
    const auto y = static_cast<int64_t>(line % g.outHeight);
    const int64_t yStart = y * g.strideHeight - g.padTop;
    const int64_t y0 = std::max<int64_t>(yStart, 0);
    const int64_t y1 = std::min<int64_t>(yStart + g.filterHeight, g.inHeight);
    for (uint32_t x = 0; x < g.outWidth; ++x) {
      const int64_t xStart = int64_t{x} * g.strideWidth - g.padLeft;
      const int64_t x0 = std::max<int64_t>(xStart, 0);
      const int64_t x1 = std::min<int64_t>(xStart + g.filterWidth, g.inWidth);
      float* out = output + (line * g.outWidth + x) * depth;
      const int64_t count = std::max<int64_t>(y1 - y0, 0) * std::max<int64_t>(x1 - x0, 0);
      // Channels in blocks, innermost, so the window loops vectorize over contiguous values.
      for (size_t c0 = 0; c0 < depth; c0 += kChannelBlock) {
        const size_t block = std::min(kChannelBlock, depth - c0);
        float sums[kChannelBlock] = {};
        for (int64_t iy = y0; iy < y1; ++iy) {
          const float* row =
              input + ((b * g.inHeight + static_cast<size_t>(iy)) * g.inWidth) * depth + c0;
          for (int64_t ix = x0; ix < x1; ++ix) {
            const float* p = row + static_cast<size_t>(ix) * depth;
            for (size_t c = 0; c < block; ++c) sums[c] += p[c] * p[c];
          }
        }
        for (size_t c = 0; c < block; ++c) {
          const float value = count > 0 ? std::sqrt(sums[c] / static_cast<float>(count)) : 0.0f;
          out[c0 + c] = std::min(std::max(value, outputMin), outputMax);
        }
      }
    }
  }
}

}  // namespace nnhal::kernels
