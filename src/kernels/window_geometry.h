// kernels/window_geometry.h — the geometry every sliding-window convolution shares
// (CONV_2D and GROUPED_CONV_2D through ConvGeometry, DEPTHWISE_CONV_2D through
// DepthwiseGeometry, TRANSPOSE_CONV_2D through TransposeConvGeometry).
//
// Shapes are NHWC: input [batches, inHeight, inWidth, inDepth], output [batches, outHeight,
// outWidth, outDepth], a filter window of filterHeight x filterWidth taps. Output pixel
// (b, y, x) of a convolution reads input rows y * strideHeight - padTop + i * dilationHeight
// (i < filterHeight) and likewise for columns; a transposed convolution scatters the other
// way (kernels/transpose_conv.h) and has no dilation (both factors stay 1). Paddings are in
// input pixels; only the leading ones (top, left) are kept: the output size, computed at
// preparation, already accounts for the trailing ones.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nnhal::kernels {

struct WindowGeometry {
  uint32_t batches = 1;
  uint32_t inHeight = 1, inWidth = 1, inDepth = 1;
  uint32_t filterHeight = 1, filterWidth = 1;
  uint32_t outHeight = 1, outWidth = 1, outDepth = 1;
  int32_t padTop = 0, padLeft = 0;  ///< leading paddings, input pixels
  uint32_t strideHeight = 1, strideWidth = 1;
  uint32_t dilationHeight = 1, dilationWidth = 1;
};

/// Calls visit(i, j, inputPixel) for each filter tap (i, j) of output pixel (b, y, x) that
/// falls inside the input, rows then columns; inputPixel is the tap's NHWC pixel index
/// ((b * inHeight + iy) * inWidth + ix). Taps on the padding are skipped. The reference
/// kernels' window walk: written for clarity, not speed.
template <typename Visit>
void forEachInputTap(const WindowGeometry& g, uint32_t b, uint32_t y, uint32_t x,
                     Visit&& visit) noexcept {
  for (uint32_t i = 0; i < g.filterHeight; ++i) {
    const int64_t iy = int64_t{y} * g.strideHeight - g.padTop + int64_t{i} * g.dilationHeight;
    if (iy < 0 || iy >= g.inHeight) continue;
    for (uint32_t j = 0; j < g.filterWidth; ++j) {
      const int64_t ix = int64_t{x} * g.strideWidth - g.padLeft + int64_t{j} * g.dilationWidth;
      if (ix < 0 || ix >= g.inWidth) continue;
      visit(
          i, j,
          (size_t{b} * g.inHeight + static_cast<size_t>(iy)) * g.inWidth + static_cast<size_t>(ix));
    }
  }
}

/// Stores compute(b, y, x, c) at every element of the NHWC output [batches, outHeight,
/// outWidth, outDepth], in storage order: the reference kernels' outer loop.
template <typename T, typename Compute>
void fillOutput(const WindowGeometry& g, T* output, Compute&& compute) noexcept {
  size_t o = 0;
  for (uint32_t b = 0; b < g.batches; ++b) {
    for (uint32_t y = 0; y < g.outHeight; ++y) {
      for (uint32_t x = 0; x < g.outWidth; ++x) {
        for (uint32_t c = 0; c < g.outDepth; ++c) output[o++] = compute(b, y, x, c);
      }
    }
  }
}

}  // namespace nnhal::kernels
