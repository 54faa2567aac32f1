// kernels/transpose_conv.h — TRANSPOSE_CONV_2D (deconvolution) over NHWC tensors, float32
// and 8-bit quantized.
//
// Shapes: input [batches, inHeight, inWidth, inDepth], filter [outDepth, filterHeight,
// filterWidth, inDepth] (OHWI), bias [outDepth], output [batches, outHeight, outWidth,
// outDepth]. Input pixel (b, h, w) scatters input[b][h][w][:] . filter[k][i][j][:] into
// output pixel (b, h * strideHeight - padTop + i, w * strideWidth - padLeft + j), channel k;
// contributions that land outside the output are dropped. The output size is given by the
// caller (the NNAPI formula: in * stride + filter - stride - padHead - padTail).
//
// The kernels compute the same sums gathered per output pixel: output row y receives
// filter rows i with (y + padTop - i) divisible by strideHeight, from input row
// h = (y + padTop - i) / strideHeight (likewise for columns), so output rows can be split
// among threads without write conflicts. The filter is first repacked (transposeConvPack*)
// into [filterHeight][filterWidth][inDepth][outDepth] so that the innermost loop runs over
// contiguous output channels.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/quantization.h"
#include "kernels/window_geometry.h"

namespace nnhal::kernels {

struct TransposeConvGeometry : WindowGeometry {
  // Here padTop and padLeft are >= 0, and there is no dilation (both factors stay 1).
  /// Units of work: one output row (b, y) each; batches * outHeight.
  size_t outputRows() const { return size_t{batches} * outHeight; }
  /// Elements of the filter (and of its packed form).
  size_t filterElements() const { return size_t{outDepth} * filterHeight * filterWidth * inDepth; }
};

/// Repacks an OHWI float filter into [filterHeight][filterWidth][inDepth][outDepth]
/// (g.filterElements() floats).
void transposeConvPackFloat(const TransposeConvGeometry& g, const float* filter,
                            float* packed) noexcept;

/// Repacks an OHWI 8-bit filter (int8 when filterSigned, else uint8) into
/// [filterHeight][filterWidth][inDepth][outDepth] values (w - filterZeroPoint) as int16
/// (g.filterElements() values).
void transposeConvPackQuant(const TransposeConvGeometry& g, const uint8_t* filter,
                            bool filterSigned, int32_t filterZeroPoint, int16_t* packed) noexcept;

/// Float transposed convolution of output rows [rowBegin, rowEnd):
/// out = clamp(bias + sum, outputMin, outputMax). packed: transposeConvPackFloat layout;
/// bias: outDepth values or null (zero).
void transposeConvFloat(const TransposeConvGeometry& g, const float* input, const float* packed,
                        const float* bias, float outputMin, float outputMax, size_t rowBegin,
                        size_t rowEnd, float* output) noexcept;

/// Quantized parameters of transposeConvQuant.
struct TransposeConvQuantParams {
  bool inputSigned = false;  ///< int8 input and output (else uint8)
  int32_t inputZeroPoint = 0;
  const int16_t* packed = nullptr;                   ///< transposeConvPackQuant layout
  const int32_t* bias = nullptr;                     ///< outDepth values or null (zero)
  const QuantizedMultiplier* multipliers = nullptr;  ///< one per output channel
  int32_t outputZeroPoint = 0;
  int32_t outputMin = 0;  ///< clamp range (after adding the zero point)
  int32_t outputMax = 255;
};

/// Quantized transposed convolution of output rows [rowBegin, rowEnd), the NNAPI
/// arithmetic: acc = bias + sum (x - inputZeroPoint) * (w - filterZeroPoint) (int32,
/// wrapping), out = clamp(outputZeroPoint + multiplyByQuantizedMultiplier(acc,
/// multipliers[k]), outputMin, outputMax). input/output: raw 8-bit values.
/// accumulator: scratch for outDepth int32 values.
void transposeConvQuant(const TransposeConvGeometry& g, const uint8_t* input,
                        const TransposeConvQuantParams& p, size_t rowBegin, size_t rowEnd,
                        uint32_t* accumulator, uint8_t* output) noexcept;

}  // namespace nnhal::kernels
