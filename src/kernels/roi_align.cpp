#include "kernels/roi_align.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/quantization.h"

namespace nnhal::kernels {
namespace {

// Channels accumulated at once (keeps the accumulators on the stack).
constexpr uint32_t kChannelBlock = 64;
// Sample weights of the quantized kernel are multiples of this.
constexpr float kWeightScale = 1.0f / 255.0f;

// Bin and sample spacing of one roi, in feature-map pixels.
struct RoiBins {
  float xStart = 0.0f, yStart = 0.0f;  // roi corner
  float xStep = 0.0f, yStep = 0.0f;    // bin size
  float xBin = 0.0f, yBin = 0.0f;      // sample spacing inside a bin
  uint32_t xSamples = 1, ySamples = 1;
};

RoiBins makeBins(const RoiAlignParams& p, float x1, float y1, float x2, float y2) noexcept {
  RoiBins r;
  r.xStart = x1;
  r.yStart = y1;
  const float roiWidth = std::max(x2 - x1, 1.0f);
  const float roiHeight = std::max(y2 - y1, 1.0f);
  r.xStep = roiWidth / static_cast<float>(p.outWidth);
  r.yStep = roiHeight / static_cast<float>(p.outHeight);
  r.xSamples = p.widthSamplingRatio > 0 ? static_cast<uint32_t>(p.widthSamplingRatio)
                                        : static_cast<uint32_t>(std::ceil(r.xStep));
  r.ySamples = p.heightSamplingRatio > 0 ? static_cast<uint32_t>(p.heightSamplingRatio)
                                         : static_cast<uint32_t>(std::ceil(r.yStep));
  r.xBin = r.xStep / static_cast<float>(r.xSamples);
  r.yBin = r.yStep / static_cast<float>(r.ySamples);
  return r;
}

// The four pixels around a sample point and their bilinear weights.
struct Sample {
  size_t offsets[4];  // pixel offsets of channel 0 within the batch image
  float weights[4];
};

Sample sampleAt(const FeatureMap& in, uint32_t batch, float x, float y) noexcept {
  auto x1 = static_cast<uint32_t>(std::floor(x));
  auto y1 = static_cast<uint32_t>(std::floor(y));
  uint32_t x2 = x1 + 1;
  uint32_t y2 = y1 + 1;
  float dx = x - static_cast<float>(x1);
  float dy = y - static_cast<float>(y1);
  if (x1 >= in.width - 1) {
    x1 = x2 = in.width - 1;
    dx = 0.0f;
  }
  if (y1 >= in.height - 1) {
    y1 = y2 = in.height - 1;
    dy = 0.0f;
  }
  const float rx = 1.0f - dx;
  const float ry = 1.0f - dy;
  return Sample{{in.offset(batch, y1, x1, 0), in.offset(batch, y1, x2, 0),
                 in.offset(batch, y2, x1, 0), in.offset(batch, y2, x2, 0)},
                {rx * ry, dx * ry, rx * dy, dx * dy}};
}

// Visits the samples of bin (i, j): fn(const Sample&).
template <typename Fn>
void forEachSample(const FeatureMap& in, uint32_t batch, const RoiBins& r, uint32_t i, uint32_t j,
                   Fn&& fn) noexcept {
  const float xBinStart = r.xStep * static_cast<float>(j) + r.xStart;
  const float yBinStart = r.yStep * static_cast<float>(i) + r.yStart;
  for (uint32_t sy = 0; sy < r.ySamples; ++sy) {
    for (uint32_t sx = 0; sx < r.xSamples; ++sx) {
      const float y = yBinStart + r.yBin / 2 + r.yBin * static_cast<float>(sy);
      const float x = xBinStart + r.xBin / 2 + r.xBin * static_cast<float>(sx);
      fn(sampleAt(in, batch, x, y));
    }
  }
}

bool floatRoiValid(const RoiAlignParams& p, const float* roi) noexcept {
  const auto width = static_cast<float>(p.input.width);
  const auto height = static_cast<float>(p.input.height);
  return roi[0] >= 0 && roi[1] >= 0 && roi[2] >= 0 && roi[3] >= 0 &&
         roi[0] * p.widthScale <= width && roi[1] * p.heightScale <= height &&
         roi[2] * p.widthScale <= width && roi[3] * p.heightScale <= height && roi[0] <= roi[2] &&
         roi[1] <= roi[3];
}

// Calls block(pixel, i, j, c0, n) for every output bin (i, j) of roi r and every block of
// channels [c0, c0 + n), n <= kChannelBlock; pixel is the bin's channel-0 element of `output`.
template <typename T, typename Block>
void forEachBinBlock(const RoiAlignParams& p, const FeatureMap& out, uint32_t r, T* output,
                     Block&& block) {
  for (uint32_t i = 0; i < p.outHeight; ++i) {
    for (uint32_t j = 0; j < p.outWidth; ++j) {
      T* pixel = output + out.offset(r, i, j, 0);
      for (uint32_t c0 = 0; c0 < out.depth; c0 += kChannelBlock) {
        block(pixel, i, j, c0, std::min(kChannelBlock, out.depth - c0));
      }
    }
  }
}

}  // namespace

bool roiAlignFloat(const RoiAlignParams& p, const float* input, const float* rois,
                   const int32_t* batchIds, uint32_t numRois, size_t roiBegin, size_t roiEnd,
                   float* output) noexcept {
  const FeatureMap& in = p.input;
  const FeatureMap out = p.output(numRois);
  const size_t inStride = in.channelStride();
  const size_t outStride = out.channelStride();
  return forEachRoi(
      in, rois, batchIds, roiBegin, roiEnd, [&](uint32_t r, uint32_t batch, const float* roi) {
        if (!floatRoiValid(p, roi)) return false;
        const RoiBins bins = makeBins(p, roi[0] * p.widthScale, roi[1] * p.heightScale,
                                      roi[2] * p.widthScale, roi[3] * p.heightScale);
        const auto samples = static_cast<float>(bins.xSamples * bins.ySamples);
        forEachBinBlock(p, out, r, output,
                        [&](float* pixel, uint32_t i, uint32_t j, uint32_t c0, uint32_t n) {
                          float acc[kChannelBlock] = {};
                          forEachSample(in, batch, bins, i, j, [&](const Sample& s) {
                            for (uint32_t k = 0; k < n; ++k) {
                              const size_t channel = (c0 + k) * inStride;
                              float value = 0.0f;
                              for (int t = 0; t < 4; ++t) {
                                value += s.weights[t] * input[s.offsets[t] + channel];
                              }
                              acc[k] += value;
                            }
                          });
                          for (uint32_t k = 0; k < n; ++k) {
                            pixel[(c0 + k) * outStride] = acc[k] / samples;
                          }
                        });
        return true;
      });
}

template <typename T>
bool roiAlignQuant(const RoiAlignParams& p, const RoiAlignQuant& q, const T* input,
                   const uint16_t* rois, const int32_t* batchIds, uint32_t numRois, size_t roiBegin,
                   size_t roiEnd, T* output) noexcept {
  const FeatureMap& in = p.input;
  const FeatureMap out = p.output(numRois);
  const size_t inStride = in.channelStride();
  const size_t outStride = out.channelStride();
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  return forEachRoi(
      in, rois, batchIds, roiBegin, roiEnd, [&](uint32_t r, uint32_t batch, const uint16_t* roi) {
        const float x1 = static_cast<float>(roi[0]) * p.widthScale * 0.125f;
        const float y1 = static_cast<float>(roi[1]) * p.heightScale * 0.125f;
        const float x2 = static_cast<float>(roi[2]) * p.widthScale * 0.125f;
        const float y2 = static_cast<float>(roi[3]) * p.heightScale * 0.125f;
        const auto width = static_cast<float>(in.width);
        const auto height = static_cast<float>(in.height);
        if (!(x1 <= width && y1 <= height && x2 <= width && y2 <= height && x1 <= x2 && y1 <= y2)) {
          return false;
        }
        const RoiBins bins = makeBins(p, x1, y1, x2, y2);
        const auto samples = static_cast<float>(uint64_t{bins.xSamples} * bins.ySamples);
        const float real = q.inputScale * kWeightScale / q.outputScale / samples;
        QuantizedMultiplier multiplier;
        if (!(real < 1.0f) || !quantizeMultiplier(real, &multiplier)) return false;
        forEachBinBlock(
            p, out, r, output, [&](T* pixel, uint32_t i, uint32_t j, uint32_t c0, uint32_t n) {
              // A sample adds at most 4 * 255 * 255; past ~8000 samples per value the sum leaves
              // int32 and is requantized in floating point instead.
              int64_t acc[kChannelBlock] = {};
              forEachSample(in, batch, bins, i, j, [&](const Sample& s) {
                int32_t weights[4];
                for (int t = 0; t < 4; ++t) {
                  weights[t] = static_cast<int32_t>(std::round(s.weights[t] / kWeightScale));
                }
                for (uint32_t k = 0; k < n; ++k) {
                  const size_t channel = (c0 + k) * inStride;
                  int32_t value = 0;
                  for (int t = 0; t < 4; ++t) {
                    value += weights[t] * (static_cast<int32_t>(input[s.offsets[t] + channel]) -
                                           q.inputZeroPoint);
                  }
                  acc[k] += value;
                }
              });
              for (uint32_t k = 0; k < n; ++k) {
                int64_t v = 0;
                if (acc[k] >= std::numeric_limits<int32_t>::min() &&
                    acc[k] <= std::numeric_limits<int32_t>::max()) {
                  v = multiplyByQuantizedMultiplier(static_cast<int32_t>(acc[k]), multiplier);
                } else {
                  v = std::llround(static_cast<double>(acc[k]) * real);
                }
                v += q.outputZeroPoint;
                pixel[(c0 + k) * outStride] = static_cast<T>(std::clamp<int64_t>(v, kMin, kMax));
              }
            });
        return true;
      });
}

template bool roiAlignQuant<uint8_t>(const RoiAlignParams&, const RoiAlignQuant&, const uint8_t*,
                                     const uint16_t*, const int32_t*, uint32_t, size_t, size_t,
                                     uint8_t*) noexcept;
template bool roiAlignQuant<int8_t>(const RoiAlignParams&, const RoiAlignQuant&, const int8_t*,
                                    const uint16_t*, const int32_t*, uint32_t, size_t, size_t,
                                    int8_t*) noexcept;

}  // namespace nnhal::kernels
