// kernels/roi_pooling.h — ROI_POOLING: maximum over each output bin of a roi.
//
// Rois are [x1, y1, x2, y2] in image pixels (float; quantized rois are converted first).
// Scaled by 1 / stride and rounded (half away from zero) they give the feature-map corners
// (xs, ys, xe, ye); the roi covers max(xe - xs + 1, 1) x max(ye - ys + 1, 1) pixels, split
// into outHeight x outWidth bins. Bin (i, j) spans columns [floor(xs + j * step),
// ceil(xs + (j + 1) * step)) clipped to the map (likewise rows) and yields the maximum of
// its pixels, or `emptyValue` (the zero point) when it holds none. Output [numRois,
// outHeight, outWidth, depth] in the input's layout.
//
// A roi is malformed (the function returns false) when its batch id is outside the input's
// batches, a coordinate is negative or beyond the feature map after scaling, or x2 < x1 or
// y2 < y1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/roi_common.h"

namespace nnhal::kernels {

struct RoiPoolingParams : RoiWindow {};

/// T = float, uint8_t or int8_t. Computes rois [roiBegin, roiEnd) of rois [numRois, 4].
template <typename T>
bool roiPooling(const RoiPoolingParams& p, const T* input, T emptyValue, const float* rois,
                const int32_t* batchIds, uint32_t numRois, size_t roiBegin, size_t roiEnd,
                T* output) noexcept;

}  // namespace nnhal::kernels
