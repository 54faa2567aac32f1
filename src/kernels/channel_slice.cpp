#include "kernels/channel_slice.h"

#include <cstring>

namespace nnhal::kernels {

void extractChannels(const uint8_t* src, size_t pixels, size_t depth, size_t begin, size_t count,
                     size_t elementBytes, uint8_t* dst) noexcept {
  if (pixels == 0) return;  // an empty tensor (zero batch) may have no buffer at all
  const size_t rowBytes = count * elementBytes;
  const size_t srcStride = depth * elementBytes;
  const uint8_t* s = src + begin * elementBytes;
  for (size_t p = 0; p < pixels; ++p) std::memcpy(dst + p * rowBytes, s + p * srcStride, rowBytes);
}

void insertChannels(const uint8_t* src, size_t pixels, size_t depth, size_t begin, size_t count,
                    size_t elementBytes, uint8_t* dst) noexcept {
  if (pixels == 0) return;  // an empty tensor (zero batch) may have no buffer at all
  const size_t rowBytes = count * elementBytes;
  const size_t dstStride = depth * elementBytes;
  uint8_t* d = dst + begin * elementBytes;
  for (size_t p = 0; p < pixels; ++p) std::memcpy(d + p * dstStride, src + p * rowBytes, rowBytes);
}

}  // namespace nnhal::kernels
