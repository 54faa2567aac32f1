// kernels/roi_align.h — ROI_ALIGN: average of bilinear samples over each output bin.
//
// Rois are [x1, y1, x2, y2] in image pixels; multiplied by 1 / stride they address the
// feature map. Roi r (batch batchIds[r]) spans max(x2 - x1, 1) x max(y2 - y1, 1) feature
// pixels, split into outHeight x outWidth bins; each bin averages samplingRatio samples per
// axis (0: ceil(bin size)) placed at the centres of a regular sub-grid. A sample at (x, y)
// interpolates bilinearly between pixels floor(x), floor(x) + 1 (clamped to the last pixel;
// likewise y). Output [numRois, outHeight, outWidth, depth] in the input's layout.
//
// A roi is malformed (the function returns false, leaving its output unspecified) when its
// batch id is outside the input's batches, a coordinate is negative (float rois) or beyond
// the feature map after scaling, or x2 < x1 or y2 < y1.
//
// The quantized kernel follows the NNAPI reference's integer arithmetic: sample weights
// quantized to 1/255 steps, int32 sums of weight * (q - inputZeroPoint), and one
// requantization by inputScale / 255 / outputScale / samples.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/roi_common.h"

namespace nnhal::kernels {

struct RoiAlignParams : RoiWindow {
  int32_t heightSamplingRatio = 0;
  int32_t widthSamplingRatio = 0;
};

/// Float rois [numRois, 4]; computes rois [roiBegin, roiEnd). Returns false if one of them
/// is malformed.
bool roiAlignFloat(const RoiAlignParams& p, const float* input, const float* rois,
                   const int32_t* batchIds, uint32_t numRois, size_t roiBegin, size_t roiEnd,
                   float* output) noexcept;

/// Quantization of the quantized ROI_ALIGN (rois are QUANT16_ASYMM with scale 0.125).
struct RoiAlignQuant {
  float inputScale = 1.0f;
  int32_t inputZeroPoint = 0;
  float outputScale = 1.0f;
  int32_t outputZeroPoint = 0;
};

/// T = uint8_t or int8_t. Also returns false when a roi's requantization multiplier is not
/// below 1.
template <typename T>
bool roiAlignQuant(const RoiAlignParams& p, const RoiAlignQuant& q, const T* input,
                   const uint16_t* rois, const int32_t* batchIds, uint32_t numRois, size_t roiBegin,
                   size_t roiEnd, T* output) noexcept;

}  // namespace nnhal::kernels
