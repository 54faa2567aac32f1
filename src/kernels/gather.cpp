#include "kernels/gather.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace nnhal::kernels {

std::optional<size_t> findIndexOutOfRange(const int32_t* indices, size_t count,
                                          size_t limit) noexcept {
  for (size_t i = 0; i < count; ++i) {
    if (indices[i] < 0 || static_cast<size_t>(indices[i]) >= limit) return i;
  }
  return std::nullopt;
}

std::string indexOutOfRangeMessage(std::string_view what, size_t position, int64_t value,
                                   size_t limit) {
  return std::string(what) + " element " + std::to_string(position) + " is " +
         std::to_string(value) + ", outside [0, " + std::to_string(limit) + ")";
}

void gatherBlocks(const void* src, size_t axisSize, size_t innerBytes, const int32_t* indices,
                  size_t indexCount, void* dst, size_t begin, size_t end) noexcept {
  if (innerBytes == 0 || indexCount == 0) return;
  const auto* source = static_cast<const uint8_t*>(src);
  auto* out = static_cast<uint8_t*>(dst);
  for (size_t item = begin; item < end; ++item) {
    const size_t outer = item / indexCount;
    const auto index = static_cast<size_t>(indices[item % indexCount]);
    std::memcpy(out + item * innerBytes, source + (outer * axisSize + index) * innerBytes,
                innerBytes);
  }
}

void hashtableLookup(const int32_t* lookups, const int32_t* keys, size_t keyCount,
                     const void* values, size_t rowBytes, void* dst, uint8_t* hits, size_t begin,
                     size_t end) noexcept {
  const auto* source = static_cast<const uint8_t*>(values);
  auto* out = static_cast<uint8_t*>(dst);
  for (size_t i = begin; i < end; ++i) {
    const int32_t* keysEnd = keys + keyCount;
    const int32_t* found = std::lower_bound(keys, keysEnd, lookups[i]);
    const bool hit = found != keysEnd && *found == lookups[i];
    hits[i] = hit ? 1 : 0;
    if (rowBytes == 0) continue;
    if (hit) {
      std::memcpy(out + i * rowBytes, source + static_cast<size_t>(found - keys) * rowBytes,
                  rowBytes);
    } else {
      std::memset(out + i * rowBytes, 0, rowBytes);
    }
  }
}

}  // namespace nnhal::kernels
