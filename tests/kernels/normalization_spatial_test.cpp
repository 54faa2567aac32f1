// INSTANCE_NORMALIZATION, L2_POOL_2D, RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/instance_norm.h"
#include "kernels/l2_pool.h"
#include "kernels/resize.h"

namespace nnhal::kernels {
namespace {

TEST(NormalizationSpatialTest, InstanceNormNhwcAndNchwAgree) {
  std::mt19937 rng(9);
  const size_t batches = 2, channels = 3, spatial = 6;
  const std::vector<float> nhwc = testing::randomFloats(rng, batches * spatial * channels, -4, 4);
  std::vector<float> nchw(nhwc.size());
  for (size_t b = 0; b < batches; ++b)
    for (size_t s = 0; s < spatial; ++s)
      for (size_t c = 0; c < channels; ++c)
        nchw[(b * channels + c) * spatial + s] = nhwc[(b * spatial + s) * channels + c];
  const InstanceNormParams params{2.0f, 0.5f, 1e-4f};
  InstanceNormShape shape{batches, channels, spatial, false};
  std::vector<float> outNhwc(nhwc.size()), outNchw(nhwc.size());
  instanceNormFloat32(nhwc.data(), outNhwc.data(), shape, params, 0, shape.items());
  shape.nchw = true;
  instanceNormFloat32(nchw.data(), outNchw.data(), shape, params, 0, 3);
  instanceNormFloat32(nchw.data(), outNchw.data(), shape, params, 3, shape.items());
  for (size_t b = 0; b < batches; ++b) {
    for (size_t c = 0; c < channels; ++c) {
      double mean = 0.0, var = 0.0;
      for (size_t s = 0; s < spatial; ++s) mean += nhwc[(b * spatial + s) * channels + c];
      mean /= spatial;
      for (size_t s = 0; s < spatial; ++s) {
        const double d = nhwc[(b * spatial + s) * channels + c] - mean;
        var += d * d;
      }
      var /= spatial;
      for (size_t s = 0; s < spatial; ++s) {
        const size_t i = (b * spatial + s) * channels + c;
        const double expected = (nhwc[i] - mean) * 2.0 / std::sqrt(var + 1e-4) + 0.5;
        EXPECT_NEAR(outNhwc[i], expected, 1e-5);
        EXPECT_EQ(outNchw[(b * channels + c) * spatial + s], outNhwc[i]);
      }
    }
  }
}

TEST(NormalizationSpatialTest, L2PoolMatchesNaive) {
  std::mt19937 rng(10);
  PoolGeometry g;
  g.batches = 2;
  g.inHeight = 5;
  g.inWidth = 4;
  g.inDepth = g.outDepth = 3;
  g.filterHeight = 3;
  g.filterWidth = 2;
  g.strideHeight = 2;
  g.strideWidth = 1;
  g.padTop = 1;
  g.padLeft = 1;
  g.outHeight = 3;
  g.outWidth = 4;
  const std::vector<float> x = testing::randomFloats(rng, 2 * 5 * 4 * 3, -2.0f, 2.0f);
  std::vector<float> y(2 * 3 * 4 * 3);
  l2PoolFloat(g, x.data(), 0.0f, 1.5f, 0, 3, y.data());
  l2PoolFloat(g, x.data(), 0.0f, 1.5f, 3, g.outputLines(), y.data());
  for (uint32_t b = 0; b < 2; ++b) {
    for (int oy = 0; oy < 3; ++oy) {
      for (int ox = 0; ox < 4; ++ox) {
        for (uint32_t c = 0; c < 3; ++c) {
          double sum = 0.0;
          int count = 0;
          for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 2; ++j) {
              const int iy = oy * 2 - 1 + i, ix = ox - 1 + j;
              if (iy < 0 || iy >= 5 || ix < 0 || ix >= 4) continue;
              const double v = x[((b * 5 + iy) * 4 + ix) * 3 + c];
              sum += v * v;
              ++count;
            }
          }
          const double expected = std::min(std::sqrt(sum / count), 1.5);
          EXPECT_NEAR(y[((b * 3 + oy) * 4 + ox) * 3 + c], expected, 1e-6);
        }
      }
    }
  }
}

ResizeGeometry geometry(uint32_t inH, uint32_t inW, uint32_t outH, uint32_t outW,
                        bool alignCorners = false, bool halfPixel = false) {
  ResizeGeometry g;
  g.batches = 1;
  g.inHeight = inH;
  g.inWidth = inW;
  g.channels = 1;
  g.outHeight = outH;
  g.outWidth = outW;
  g.alignCorners = alignCorners;
  g.halfPixelCenters = halfPixel;
  return g;
}

TEST(NormalizationSpatialTest, BilinearLegacyUpscale) {
  // 2x2 -> 3x3 with scale 2/3: source rows 0, 2/3, 4/3 (the last clamps to row 1).
  const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  const ResizeGeometry g = geometry(2, 2, 3, 3);
  std::vector<float> y(9);
  resizeBilinear<float>(g, x.data(), 0, 3, y.data());
  const float t = 2.0f / 3.0f;
  const std::vector<float> expected{1.0f,         1.0f + t, 2.0f,     1.0f + 2 * t, 1.0f + 3 * t,
                                    2.0f + 2 * t, 3.0f,     3.0f + t, 4.0f};
  for (size_t i = 0; i < 9; ++i) EXPECT_NEAR(y[i], expected[i], 1e-6) << i;
}

TEST(NormalizationSpatialTest, BilinearAlignCornersKeepsCorners) {
  const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  std::vector<float> y(9);
  resizeBilinear<float>(geometry(2, 2, 3, 3, true), x.data(), 0, 3, y.data());
  EXPECT_EQ(y, (std::vector<float>{1.0f, 1.5f, 2.0f, 2.0f, 2.5f, 3.0f, 3.0f, 3.5f, 4.0f}));
}

TEST(NormalizationSpatialTest, BilinearHalfPixelDownscaleAverages) {
  // 2x2 -> 1x1 with half-pixel centers samples the middle: the mean of the four values.
  const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f};
  float y = 0.0f;
  resizeBilinear<float>(geometry(2, 2, 1, 1, false, true), x.data(), 0, 1, &y);
  EXPECT_FLOAT_EQ(y, 2.5f);
}

TEST(NormalizationSpatialTest, BilinearQuantRoundsToNearest) {
  const std::vector<uint8_t> x{0, 1, 2, 3};
  std::vector<uint8_t> y(3);
  // 1x2 -> 1x3 with align corners: 0, 0.5, 1 -> 0, round(0.5)=1, 1.
  resizeBilinear<uint8_t>(geometry(1, 2, 1, 3, true), x.data(), 0, 1, y.data());
  EXPECT_EQ(y, (std::vector<uint8_t>{0, 1, 1}));
  const std::vector<int8_t> s{-3, -2};
  std::vector<int8_t> sy(3);
  resizeBilinear<int8_t>(geometry(1, 2, 1, 3, true), s.data(), 0, 1, sy.data());
  EXPECT_EQ(sy, (std::vector<int8_t>{-3, -3, -2}));  // -2.5 rounds away from zero
}

TEST(NormalizationSpatialTest, NearestNeighborModes) {
  const std::vector<float> x{1, 2, 3, 4, 5, 6, 7, 8, 9};  // 3x3
  std::vector<float> y(4);
  // Legacy: scale 1.5, indices floor(0), floor(1.5) = 0, 1.
  resizeNearestNeighbor<float>(geometry(3, 3, 2, 2), x.data(), 0, 2, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 2, 4, 5}));
  // Align corners: scale 2, indices round(0), round(2) = 0, 2.
  resizeNearestNeighbor<float>(geometry(3, 3, 2, 2, true), x.data(), 0, 2, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 3, 7, 9}));
  // Half-pixel: floor(0.75) = 0, floor(2.25) = 2.
  resizeNearestNeighbor<float>(geometry(3, 3, 2, 2, false, true), x.data(), 0, 2, y.data());
  EXPECT_EQ(y, (std::vector<float>{1, 3, 7, 9}));
  // Upscale 1x2 -> 1x5 (scale 0.4): 0, 0, 0, 1, 1.
  const std::vector<int8_t> q{-5, 9};
  std::vector<int8_t> qy(5);
  resizeNearestNeighbor<int8_t>(geometry(1, 2, 1, 5), q.data(), 0, 1, qy.data());
  EXPECT_EQ(qy, (std::vector<int8_t>{-5, -5, -5, 9, 9}));
}

}  // namespace
}  // namespace nnhal::kernels
