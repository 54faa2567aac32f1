#include "kernels/gather_nd.h"

#include <cstring>

namespace nnhal::kernels {

std::optional<GatherNdBadIndex> findGatherNdIndexOutOfRange(
    const int32_t* indices, size_t tupleCount, std::span<const uint32_t> dims) noexcept {
  const size_t n = dims.size();
  for (size_t t = 0; t < tupleCount; ++t) {
    for (size_t j = 0; j < n; ++j) {
      const int32_t index = indices[t * n + j];
      if (index < 0 || static_cast<uint32_t>(index) >= dims[j]) return GatherNdBadIndex{t, j};
    }
  }
  return std::nullopt;
}

void gatherNd(const void* params, std::span<const uint32_t> dims, size_t sliceBytes,
              const int32_t* indices, void* out, size_t begin, size_t end) noexcept {
  const auto* src = static_cast<const uint8_t*>(params);
  auto* dst = static_cast<uint8_t*>(out);
  const size_t n = dims.size();
  for (size_t t = begin; t < end; ++t) {
    // Row-major position of the selected slice among the slices of params.
    size_t slice = 0;
    for (size_t j = 0; j < n; ++j) {
      slice = slice * dims[j] + static_cast<size_t>(indices[t * n + j]);
    }
    if (sliceBytes > 0) std::memcpy(dst + t * sliceBytes, src + slice * sliceBytes, sliceBytes);
  }
}

}  // namespace nnhal::kernels
