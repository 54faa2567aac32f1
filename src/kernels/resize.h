// kernels/resize.h — RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR over NHWC tensors
// [batches, height, width, channels], for float32 and 8-bit asymmetric quantized values
// (input and output share scale and zero point, so stored values are interpolated directly).
//
// Coordinates (per axis, in float as the NNAPI reference): scale = in / out, or
// (in - 1) / (out - 1) with alignCorners and out > 1.
//  - bilinear: src = (dst + 0.5) * scale - 0.5 with halfPixelCenters, else dst * scale;
//    lower = max(floor(src), 0), upper = min(ceil(src), in - 1); the value interpolates the
//    four neighbours with weights (src - lower); quantized results round to nearest.
//  - nearest: src = (dst + 0.5) * scale with halfPixelCenters, else dst * scale; the index is
//    round(src) with alignCorners, else floor(src), then clamped to [0, in - 1].
// Work is split by output lines (line = b * outHeight + y).
#pragma once

#include <cstddef>
#include <cstdint>

namespace nnhal::kernels {

struct ResizeGeometry {
  uint32_t batches = 1, channels = 1;
  uint32_t inHeight = 1, inWidth = 1;
  uint32_t outHeight = 1, outWidth = 1;
  bool alignCorners = false;
  bool halfPixelCenters = false;

  size_t outputLines() const { return size_t{batches} * outHeight; }
};

/// T = float, uint8_t or int8_t.
template <typename T>
void resizeBilinear(const ResizeGeometry& g, const T* input, size_t lineBegin, size_t lineEnd,
                    T* output) noexcept;

/// T = float, uint8_t or int8_t (any trivially copyable element works).
template <typename T>
void resizeNearestNeighbor(const ResizeGeometry& g, const T* input, size_t lineBegin,
                           size_t lineEnd, T* output) noexcept;

}  // namespace nnhal::kernels
