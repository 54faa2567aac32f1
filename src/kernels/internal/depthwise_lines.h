// kernels/internal/depthwise_lines.h — geometry helpers of the depthwise kernels (portable
// and x86): which filter taps of an output line and column land inside the input.
//
// In an unnamed namespace on purpose: the files of src/kernels/x86/ are compiled for other
// instruction sets, and each must get its own copy (kernels/x86/simd_avx512.h says why).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/depthwise_conv.h"

namespace nnhal::kernels::internal {
namespace {

constexpr size_t kChannelBlock = 64;

// Filter taps [first, last) along one axis that land inside [0, size).
struct TapRange {
  uint32_t first = 0;
  uint32_t last = 0;
};

inline TapRange validTaps(int64_t origin, uint32_t dilation, uint32_t filter, uint32_t size) {
  TapRange r;
  r.first = origin < 0 ? static_cast<uint32_t>((-origin + dilation - 1) / dilation) : 0;
  const int64_t room = static_cast<int64_t>(size) - 1 - origin;
  r.last =
      room < 0
          ? 0
          : static_cast<uint32_t>((room / dilation + 1 < filter ? room / dilation + 1 : filter));
  if (r.first > r.last) r.first = r.last;
  return r;
}

inline int32_t readQuant(uint8_t v, bool isSigned) {
  return isSigned ? static_cast<int32_t>(static_cast<int8_t>(v)) : static_cast<int32_t>(v);
}

// Position of output line `line` and its valid filter rows.
struct LineInfo {
  size_t batch;
  size_t y;
  int64_t y0;
  TapRange rows;
};

inline LineInfo lineInfo(const DepthwiseGeometry& g, size_t line) {
  LineInfo info;
  info.batch = line / g.outHeight;
  info.y = line % g.outHeight;
  info.y0 = static_cast<int64_t>(info.y) * g.strideHeight - g.padTop;
  info.rows = validTaps(info.y0, g.dilationHeight, g.filterHeight, g.inHeight);
  return info;
}

}  // namespace
}  // namespace nnhal::kernels::internal
