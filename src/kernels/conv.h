// kernels/conv.h — CONV_2D over NHWC tensors (float32, and 8-bit quantized through the
// GEMM of kernels/gemm.h).
//
// Shapes: input [batches, inHeight, inWidth, inDepth], filter [outDepth, filterHeight,
// filterWidth, inDepth] (OHWI), bias [outDepth], output [batches, outHeight, outWidth,
// outDepth]. Output pixel (b, y, x) reads input rows y * strideHeight - padTop +
// i * dilationHeight (i < filterHeight) and likewise for columns; positions outside the
// input contribute nothing (they read as the input zero point).
//
// The fast kernels view the convolution as a GEMM: rows are the output pixels in NHWC order
// (row m = (b * outHeight + y) * outWidth + x), the reduction runs over (i, j, inDepth) of
// the filter, columns are the output channels. A pointwise convolution reads its rows from
// the input directly; any other gathers chunks of rows (im2col) into caller scratch.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gemm.h"
#include "kernels/quantization.h"
#include "kernels/window_geometry.h"

namespace nnhal::kernels {

struct ConvGeometry : WindowGeometry {
  /// GEMM rows: batches * outHeight * outWidth.
  size_t outputRows() const { return size_t{batches} * outHeight * outWidth; }
  /// GEMM reduction length: filterHeight * filterWidth * inDepth.
  size_t reduction() const { return size_t{filterHeight} * filterWidth * inDepth; }
  /// 1x1 filter, unit strides, no padding: the input rows are the GEMM rows.
  bool isPointwise() const {
    return filterHeight == 1 && filterWidth == 1 && strideHeight == 1 && strideWidth == 1 &&
           padTop == 0 && padLeft == 0 && outHeight == inHeight && outWidth == inWidth;
  }
};

/// Rows gathered per im2col chunk by convQuant.
size_t convQuantChunkRows(const ConvGeometry& g);
/// Scratch bytes one concurrent convQuant call needs (0 possible).
size_t convQuantScratchBytes(const ConvGeometry& g, int32_t rowSumFactor, uint8_t inputXor);

/// Quantized convolution of output rows [rowBegin, rowEnd) and output-channel groups
/// [groupBegin, groupEnd) (of 16 channels). input: raw 8-bit values; inputXor = 0x80 for
/// int8 input (0 for uint8); padValue = input zero point byte xor inputXor. gemm: packed
/// filter [outDepth][reduction] and requantization (see gemm.h). scratch:
/// convQuantScratchBytes bytes, 64-byte aligned. output: raw 8-bit values.
void convQuant(const ConvGeometry& g, const uint8_t* input, uint8_t inputXor, uint8_t padValue,
               const QuantGemmParams& gemm, size_t rowBegin, size_t rowEnd, size_t groupBegin,
               size_t groupEnd, void* scratch, uint8_t* output) noexcept;

/// Rows gathered per im2col chunk by convFloat.
size_t convFloatChunkRows(const ConvGeometry& g);
/// Scratch bytes one concurrent convFloat call needs (0 for pointwise convolutions).
size_t convFloatScratchBytes(const ConvGeometry& g);

/// Float convolution of output rows [rowBegin, rowEnd) and output-channel groups
/// [groupBegin, groupEnd). gemm: packed filter, padded bias and activation clamp.
/// scratch: convFloatScratchBytes bytes, 64-byte aligned.
void convFloat(const ConvGeometry& g, const float* input, const FloatGemmParams& gemm,
               size_t rowBegin, size_t rowEnd, size_t groupBegin, size_t groupEnd, void* scratch,
               float* output) noexcept;

/// Plain reference of the quantized convolution (the NNAPI formula, element by element):
/// out = clamp(outputZeroPoint + multiplyByQuantizedMultiplier(sum (x - inputZeroPoint) *
/// (w - filterZeroPoint) + bias, multipliers[channel]), outputMin, outputMax).
/// In/Filter: uint8_t/uint8_t, int8_t/int8_t or (per-channel filters) uint8_t/int8_t.
template <typename In, typename Filter>
void convQuantReference(const ConvGeometry& g, const In* input, int32_t inputZeroPoint,
                        const Filter* filter, int32_t filterZeroPoint, const int32_t* bias,
                        const QuantizedMultiplier* multipliers, int32_t outputZeroPoint,
                        int32_t outputMin, int32_t outputMax, In* output) noexcept;

/// Plain reference of the float convolution; bias may be null.
void convFloatReference(const ConvGeometry& g, const float* input, const float* filter,
                        const float* bias, float outputMin, float outputMax,
                        float* output) noexcept;

}  // namespace nnhal::kernels
