#include "kernels/roi_pooling.h"

#include <algorithm>
#include <cmath>

namespace nnhal::kernels {
namespace {

struct Span {
  uint32_t begin = 0, end = 0;
};

// Pixels [floor(start + step * bin), ceil(start + step * (bin + 1))) of bin `bin` along an
// axis of `size` pixels, both ends clamped to size.
Span binSpan(float step, uint32_t bin, int32_t start, uint32_t size) {
  const auto origin = static_cast<float>(start);
  return {
      std::min(static_cast<uint32_t>(std::floor(step * static_cast<float>(bin) + origin)), size),
      std::min(static_cast<uint32_t>(std::ceil(step * static_cast<float>(bin + 1) + origin)),
               size)};
}

}  // namespace

template <typename T>
bool roiPooling(const RoiPoolingParams& p, const T* input, T emptyValue, const float* rois,
                const int32_t* batchIds, uint32_t numRois, size_t roiBegin, size_t roiEnd,
                T* output) noexcept {
  const FeatureMap& in = p.input;
  const FeatureMap out = p.output(numRois);
  const size_t inStride = in.channelStride();
  const size_t outStride = out.channelStride();
  const auto width = static_cast<float>(in.width);
  const auto height = static_cast<float>(in.height);
  return forEachRoi(in, rois, batchIds, roiBegin, roiEnd,
                    [&](uint32_t r, uint32_t batch, const float* roi) {
                      if (!(roi[0] >= 0 && roi[1] >= 0 && roi[2] >= 0 && roi[3] >= 0 &&
                            roi[0] * p.widthScale <= width && roi[1] * p.heightScale <= height &&
                            roi[2] * p.widthScale <= width && roi[3] * p.heightScale <= height &&
                            roi[0] <= roi[2] && roi[1] <= roi[3])) {
                        return false;
                      }
                      const auto xStart = static_cast<int32_t>(std::round(roi[0] * p.widthScale));
                      const auto yStart = static_cast<int32_t>(std::round(roi[1] * p.heightScale));
                      const auto xEnd = static_cast<int32_t>(std::round(roi[2] * p.widthScale));
                      const auto yEnd = static_cast<int32_t>(std::round(roi[3] * p.heightScale));
                      const auto roiWidth = static_cast<float>(std::max(xEnd - xStart + 1, 1));
                      const auto roiHeight = static_cast<float>(std::max(yEnd - yStart + 1, 1));
                      const float xStep = roiWidth / static_cast<float>(p.outWidth);
                      const float yStep = roiHeight / static_cast<float>(p.outHeight);
                      for (uint32_t i = 0; i < p.outHeight; ++i) {
                        const auto [rowBegin, rowEnd] = binSpan(yStep, i, yStart, in.height);
                        for (uint32_t j = 0; j < p.outWidth; ++j) {
                          const auto [colBegin, colEnd] = binSpan(xStep, j, xStart, in.width);
                          T* pixel = output + out.offset(r, i, j, 0);
                          for (uint32_t c = 0; c < in.depth; ++c) {
                            T best = emptyValue;
                            bool first = true;
                            for (uint32_t y = rowBegin; y < rowEnd; ++y) {
                              for (uint32_t x = colBegin; x < colEnd; ++x) {
                                const T value = input[in.offset(batch, y, x, 0) + c * inStride];
                                if (first || value > best) {
                                  best = value;
                                  first = false;
                                }
                              }
                            }
                            pixel[c * outStride] = best;
                          }
                        }
                      }
                      return true;
                    });
}

template bool roiPooling<float>(const RoiPoolingParams&, const float*, float, const float*,
                                const int32_t*, uint32_t, size_t, size_t, float*) noexcept;
template bool roiPooling<uint8_t>(const RoiPoolingParams&, const uint8_t*, uint8_t, const float*,
                                  const int32_t*, uint32_t, size_t, size_t, uint8_t*) noexcept;
template bool roiPooling<int8_t>(const RoiPoolingParams&, const int8_t*, int8_t, const float*,
                                 const int32_t*, uint32_t, size_t, size_t, int8_t*) noexcept;

}  // namespace nnhal::kernels
