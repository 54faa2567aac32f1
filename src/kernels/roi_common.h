// kernels/roi_common.h — the feature-map addressing shared by ROI_ALIGN, ROI_POOLING and
// HEATMAP_MAX_KEYPOINT, which accept both the NHWC and the NCHW layout, and the output
// window of ROI_ALIGN and ROI_POOLING.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nnhal::kernels {

/// A 4-D tensor of logical shape [batches, height, width, depth], stored NHWC (default) or
/// NCHW ([batches, depth, height, width]).
struct FeatureMap {
  uint32_t batches = 0, height = 0, width = 0, depth = 0;
  bool nchw = false;

  /// Element offset of (b, y, x, c).
  size_t offset(uint32_t b, uint32_t y, uint32_t x, uint32_t c) const {
    return nchw ? ((size_t{b} * depth + c) * height + y) * width + x
                : ((size_t{b} * height + y) * width + x) * depth + c;
  }
  /// Distance between channels c and c + 1 of one pixel.
  size_t channelStride() const { return nchw ? size_t{height} * width : 1; }
  size_t elements() const { return size_t{batches} * height * width * depth; }
};

/// Calls visit(r, batch, roi) for rois [roiBegin, roiEnd), roi = rois + 4 r (x1, y1, x2, y2)
/// and batch = batchIds[r]. Returns false at the first roi whose batch index is outside the
/// input's batches or whose visit returns false (a malformed roi); true otherwise.
template <typename R, typename Visit>
bool forEachRoi(const FeatureMap& input, const R* rois, const int32_t* batchIds, size_t roiBegin,
                size_t roiEnd, Visit&& visit) {
  for (size_t r = roiBegin; r < roiEnd; ++r) {
    const int32_t batch = batchIds[r];
    if (batch < 0 || static_cast<uint32_t>(batch) >= input.batches) return false;
    if (!visit(static_cast<uint32_t>(r), static_cast<uint32_t>(batch), rois + r * 4)) return false;
  }
  return true;
}

/// What ROI_ALIGN and ROI_POOLING share: the feature map, the outHeight x outWidth bins of
/// each roi, and the scale from image pixels (the rois' unit) to feature-map pixels.
struct RoiWindow {
  FeatureMap input;
  uint32_t outHeight = 1;
  uint32_t outWidth = 1;
  float heightScale = 1.0f;  ///< 1 / height stride
  float widthScale = 1.0f;   ///< 1 / width stride

  /// The output map for `numRois` rois (same layout as the input).
  FeatureMap output(uint32_t numRois) const {
    return FeatureMap{numRois, outHeight, outWidth, input.depth, input.nchw};
  }
};

}  // namespace nnhal::kernels
