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

// The input row of each filter row of output line `line` in `rows` (null where it falls on
// the padding), for an NHWC input `depth` elements per pixel; true when none does.
template <typename T>
inline bool filterRows(const DepthwiseGeometry& g, const LineInfo& line, const T* input,
                       size_t depth, const T** rows) {
  const T* image = input + line.batch * g.inHeight * g.inWidth * depth;
  bool allInside = true;
  for (uint32_t i = 0; i < g.filterHeight; ++i) {
    const int64_t iy = line.y0 + int64_t{i} * g.dilationHeight;
    const bool inside = iy >= 0 && iy < g.inHeight;
    rows[i] = inside ? image + static_cast<size_t>(iy) * g.inWidth * depth : nullptr;
    allInside = allInside && inside;
  }
  return allInside;
}

// Output columns [begin, end) whose filter columns all land inside the input (the
// interior, where every tap is at a fixed offset from the window's corner).
struct InteriorColumns {
  size_t begin = 0;
  size_t end = 0;
};

inline InteriorColumns interiorColumns(const DepthwiseGeometry& g) {
  const int64_t span = (int64_t{g.filterWidth} - 1) * g.dilationWidth;
  const int64_t firstInside = (int64_t{g.padLeft} + g.strideWidth - 1) / g.strideWidth;
  const int64_t lastStart = int64_t{g.inWidth} - 1 - span + g.padLeft;  // max x * stride
  InteriorColumns c;
  if (lastStart >= 0) {
    const int64_t end = lastStart / g.strideWidth + 1;
    c.end = static_cast<size_t>(end < g.outWidth ? end : g.outWidth);
  }
  c.begin = static_cast<size_t>(
      firstInside < static_cast<int64_t>(c.end) ? firstInside : static_cast<int64_t>(c.end));
  return c;
}

// Offsets (in elements) of every filter tap from the window's corner, row by row, for an
// image `depth` elements per pixel; `out` holds filterHeight * filterWidth values.
inline void tapOffsets(const DepthwiseGeometry& g, size_t depth, size_t* out) {
  for (uint32_t i = 0, t = 0; i < g.filterHeight; ++i) {
    for (uint32_t j = 0; j < g.filterWidth; ++j, ++t) {
      out[t] = (size_t{i} * g.dilationHeight * g.inWidth + size_t{j} * g.dilationWidth) * depth;
    }
  }
}

// The column walk of the quantized depthwise kernels over an NHWC uint8 input `depth` bytes
// per pixel, for filters of at most MaxTaps taps: startLine(l) finds output line l's filter
// rows, then forEachPixel(c0, zeroRow, pixel) calls pixel(x, tapAt) for every output column x
// of that line, in order, where tapAt(t) is the address of filter tap t's channel c0 (taps
// row by row):
//  - border columns: the tap's input pixel, or zeroRow + c0 where it falls on the padding
//    (the zero-point row, so that its products cancel);
//  - interior columns of a line whose filter rows all lie inside: the window corner plus a
//    fixed offset per tap.
template <size_t MaxTaps>
class QuantLineWalk {
 public:
  QuantLineWalk(const DepthwiseGeometry& g, const uint8_t* input, size_t depth)
      : g_(g), input_(input), depth_(depth), interior_(interiorColumns(g)) {
    tapOffsets(g, depth, tapOffset_);
  }

  void startLine(size_t line) {
    lineInside_ = filterRows(g_, lineInfo(g_, line), input_, depth_, rows_);
  }

  template <typename Pixel>
  __attribute__((always_inline)) void forEachPixel(size_t c0, const uint8_t* zeroRow,
                                                   Pixel&& pixel) {
    const DepthwiseGeometry& g = g_;
    const auto borderPixel = [&](size_t x) __attribute__((always_inline)) {
      const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
      for (uint32_t i = 0, t = 0; i < g.filterHeight; ++i) {
        for (uint32_t j = 0; j < g.filterWidth; ++j, ++t) {
          const int64_t ix = x0 + int64_t{j} * g.dilationWidth;
          tapPtr_[t] = rows_[i] != nullptr && ix >= 0 && ix < g.inWidth
                           ? rows_[i] + static_cast<size_t>(ix) * depth_ + c0
                           : zeroRow + c0;
        }
      }
      pixel(
          x, [&](size_t tap) __attribute__((always_inline)) { return tapPtr_[tap]; });
    };
    size_t x = 0;
    if (lineInside_) {
      for (; x < interior_.begin; ++x) borderPixel(x);
      const uint8_t* corner = rows_[0] + c0;
      for (; x < interior_.end; ++x) {
        const uint8_t* base =
            corner + (static_cast<size_t>(x) * g.strideWidth - g.padLeft) * depth_;
        pixel(
            x, [&](size_t tap) __attribute__((always_inline)) { return base + tapOffset_[tap]; });
      }
    }
    for (; x < g.outWidth; ++x) borderPixel(x);
  }

 private:
  const DepthwiseGeometry& g_;
  const uint8_t* input_;
  size_t depth_;
  InteriorColumns interior_;
  size_t tapOffset_[MaxTaps];       // from the window corner, for interior pixels
  const uint8_t* rows_[MaxTaps];    // per filter row: input row start, or null
  const uint8_t* tapPtr_[MaxTaps];  // a border pixel's taps
  bool lineInside_ = false;
};

}  // namespace
}  // namespace nnhal::kernels::internal
