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

}  // namespace nnhal::kernels
