// kernels/pooling.h — AVERAGE_POOL_2D and MAX_POOL_2D over NHWC tensors.
//
// Shapes: input [batches, inHeight, inWidth, inDepth], output [batches, outHeight, outWidth,
// outDepth], outDepth = inDepth. Output pixel (b, y, x) pools input rows y * strideHeight - padTop
// + i (i < filterHeight) and columns x * strideWidth - padLeft + j (j < filterWidth) that lie
// inside the input; padding is never counted.
//  - average: float sum / count; quantized (same scale and zero point in and out, as the
//    NNAPI reference) rounds the int32 sum to nearest, half away from zero:
//    (sum + count/2) / count for sum > 0, (sum - count/2) / count otherwise.
//  - max: the largest value in the window.
// Then the fused-activation clamp [outputMin, outputMax]. A window with no input pixel
// (impossible when the filter is larger than the padding) yields 0 before the clamp.
// Work is split by output lines (line = b * outHeight + y); loops run over channels
// innermost so the compiler vectorizes them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/window_geometry.h"

namespace nnhal::kernels {

/// The window of WindowGeometry (no dilation: both factors stay 1); pooling keeps the
/// channels, so outDepth equals inDepth.
struct PoolGeometry : WindowGeometry {
  /// Units of work: batches * outHeight.
  size_t outputLines() const { return size_t{batches} * outHeight; }
};

void averagePoolFloat(const PoolGeometry& g, const float* input, float outputMin, float outputMax,
                      size_t lineBegin, size_t lineEnd, float* output) noexcept;
void maxPoolFloat(const PoolGeometry& g, const float* input, float outputMin, float outputMax,
                  size_t lineBegin, size_t lineEnd, float* output) noexcept;
/// T = uint8_t or int8_t.
template <typename T>
void averagePoolQuant(const PoolGeometry& g, const T* input, int32_t outputMin, int32_t outputMax,
                      size_t lineBegin, size_t lineEnd, T* output) noexcept;
template <typename T>
void maxPoolQuant(const PoolGeometry& g, const T* input, int32_t outputMin, int32_t outputMax,
                  size_t lineBegin, size_t lineEnd, T* output) noexcept;

/// Plain references (whole tensor, element by element).
void averagePoolFloatReference(const PoolGeometry& g, const float* input, float outputMin,
                               float outputMax, float* output) noexcept;
void maxPoolFloatReference(const PoolGeometry& g, const float* input, float outputMin,
                           float outputMax, float* output) noexcept;
template <typename T>
void averagePoolQuantReference(const PoolGeometry& g, const T* input, int32_t outputMin,
                               int32_t outputMax, T* output) noexcept;
template <typename T>
void maxPoolQuantReference(const PoolGeometry& g, const T* input, int32_t outputMin,
                           int32_t outputMax, T* output) noexcept;

}  // namespace nnhal::kernels
