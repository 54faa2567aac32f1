#include "kernels/floor_div.h"

#include <cmath>

#include "kernels/internal/broadcast_loop.h"

namespace nnhal::kernels {

void floorDivFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                     size_t begin, size_t end) noexcept {
  internal::broadcastBinary(a, b, out, layout, begin, end,
                            [](float x, float y) { return std::floor(x / y); });
}

void floorDivInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
                   size_t begin, size_t end) noexcept {
  internal::broadcastBinary(a, b, out, layout, begin, end, [](int32_t x, int32_t y) -> int32_t {
    if (y == 0) return 0;
    // In 64 bits INT32_MIN / -1 = 2^31 does not overflow; the cast wraps it to INT32_MIN.
    const int64_t wide = int64_t{x} / int64_t{y};  // truncates toward zero
    const bool inexact = int64_t{x} % int64_t{y} != 0;
    const int64_t floored = (inexact && ((x < 0) != (y < 0))) ? wide - 1 : wide;
    return static_cast<int32_t>(static_cast<uint32_t>(floored));
  });
}

std::optional<size_t> findZeroDivisor(const int32_t* b, size_t count) noexcept {
  for (size_t i = 0; i < count; ++i) {
    if (b[i] == 0) return i;
  }
  return std::nullopt;
}

}  // namespace nnhal::kernels
