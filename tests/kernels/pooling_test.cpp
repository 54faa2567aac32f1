#include "kernels/pooling.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "kernels/kernel_test_util.h"

namespace nnhal::kernels {
namespace {

using testing::outSize;
using testing::randomBytes;
using testing::randomFloats;
using testing::randomInt;

PoolGeometry randomGeometry(std::mt19937& rng) {
  for (;;) {
    PoolGeometry g;
    g.batches = randomInt(rng, 1, 2);
    g.inHeight = randomInt(rng, 1, 12);
    g.inWidth = randomInt(rng, 1, 12);
    g.inDepth = g.outDepth = randomInt(rng, 1, 300);
    g.filterHeight = randomInt(rng, 1, 5);
    g.filterWidth = randomInt(rng, 1, 5);
    g.strideHeight = randomInt(rng, 1, 3);
    g.strideWidth = randomInt(rng, 1, 3);
    g.padTop = randomInt(rng, 0, g.filterHeight - 1);
    g.padLeft = randomInt(rng, 0, g.filterWidth - 1);
    g.outHeight = outSize(g.inHeight, g.filterHeight, g.strideHeight, 1, g.padTop,
                          randomInt(rng, 0, g.filterHeight - 1));
    g.outWidth = outSize(g.inWidth, g.filterWidth, g.strideWidth, 1, g.padLeft,
                         randomInt(rng, 0, g.filterWidth - 1));
    if (g.outHeight > 0 && g.outWidth > 0) return g;
  }
}

size_t outputCount(const PoolGeometry& g) {
  return size_t{g.batches} * g.outHeight * g.outWidth * g.inDepth;
}
size_t inputCount(const PoolGeometry& g) {
  return size_t{g.batches} * g.inHeight * g.inWidth * g.inDepth;
}

template <typename T>
void checkQuant(const PoolGeometry& g, std::mt19937& rng) {
  const auto input = randomBytes<T>(rng, inputCount(g));
  const int32_t lo = std::is_signed_v<T> ? -120 : 4, hi = std::is_signed_v<T> ? 100 : 240;
  std::vector<T> expected(outputCount(g)), out(outputCount(g));
  const size_t cut = randomInt(rng, 0, g.outputLines());
  averagePoolQuantReference<T>(g, input.data(), lo, hi, expected.data());
  averagePoolQuant<T>(g, input.data(), lo, hi, 0, cut, out.data());
  averagePoolQuant<T>(g, input.data(), lo, hi, cut, g.outputLines(), out.data());
  ASSERT_EQ(out, expected);
  maxPoolQuantReference<T>(g, input.data(), lo, hi, expected.data());
  maxPoolQuant<T>(g, input.data(), lo, hi, 0, cut, out.data());
  maxPoolQuant<T>(g, input.data(), lo, hi, cut, g.outputLines(), out.data());
  ASSERT_EQ(out, expected);
}

TEST(PoolingTest, QuantMatchesReference) {
  std::mt19937 rng(31);
  for (int i = 0; i < 50; ++i) {
    SCOPED_TRACE(i);
    checkQuant<uint8_t>(randomGeometry(rng), rng);
    checkQuant<int8_t>(randomGeometry(rng), rng);
  }
}

// Whole-plane windows of up to 16 x 16 pixels (MobileNet's 7 x 7 global pool among them):
// every rounded average, computed without a division, equals the reference's, on random
// bytes and on bytes that put the sums at the ends of their range.
TEST(PoolingTest, GlobalAveragesOfLargeWindowsMatchReference) {
  std::mt19937 rng(32);
  for (uint32_t size = 1; size <= 16; ++size) {
    PoolGeometry g;
    g.inHeight = g.filterHeight = size;
    g.inWidth = g.filterWidth = randomInt(rng, 1, 16);
    g.inDepth = g.outDepth = randomInt(rng, 1, 600);
    g.outHeight = g.outWidth = 1;
    for (int fill = 0; fill < 3; ++fill) {
      SCOPED_TRACE(std::to_string(size) + " fill " + std::to_string(fill));
      auto u8 = randomBytes<uint8_t>(rng, inputCount(g));
      auto s8 = randomBytes<int8_t>(rng, inputCount(g));
      if (fill == 1) {
        std::fill(u8.begin(), u8.end(), 255);
        std::fill(s8.begin(), s8.end(), -128);
      }
      if (fill == 2) {
        std::fill(u8.begin(), u8.end(), 0);
        std::fill(s8.begin(), s8.end(), 127);
      }
      std::vector<uint8_t> expectedU(g.inDepth), outU(g.inDepth);
      averagePoolQuantReference<uint8_t>(g, u8.data(), 0, 255, expectedU.data());
      averagePoolQuant<uint8_t>(g, u8.data(), 0, 255, 0, 1, outU.data());
      ASSERT_EQ(outU, expectedU);
      std::vector<int8_t> expectedS(g.inDepth), outS(g.inDepth);
      averagePoolQuantReference<int8_t>(g, s8.data(), -128, 127, expectedS.data());
      averagePoolQuant<int8_t>(g, s8.data(), -128, 127, 0, 1, outS.data());
      ASSERT_EQ(outS, expectedS);
    }
  }
}

TEST(PoolingTest, FloatMatchesReference) {
  std::mt19937 rng(32);
  for (int i = 0; i < 50; ++i) {
    SCOPED_TRACE(i);
    const PoolGeometry g = randomGeometry(rng);
    const auto input = randomFloats(rng, inputCount(g), -3.0f, 3.0f);
    std::vector<float> expected(outputCount(g)), out(outputCount(g));
    averagePoolFloatReference(g, input.data(), -2.0f, 2.0f, expected.data());
    averagePoolFloat(g, input.data(), -2.0f, 2.0f, 0, g.outputLines(), out.data());
    for (size_t j = 0; j < out.size(); ++j) ASSERT_NEAR(out[j], expected[j], 1e-5f);
    maxPoolFloatReference(g, input.data(), -2.0f, 2.0f, expected.data());
    maxPoolFloat(g, input.data(), -2.0f, 2.0f, 0, g.outputLines(), out.data());
    ASSERT_EQ(out, expected);
  }
}

// 3x3 average with padding 1 at the corner counts 4 inputs; rounding is half away from
// zero on the integer sum.
TEST(PoolingTest, AverageCountsOnlyInputPixelsAndRounds) {
  PoolGeometry g;
  g.inHeight = g.inWidth = 2;
  g.filterHeight = g.filterWidth = 3;
  g.padTop = g.padLeft = 1;
  g.outHeight = g.outWidth = 1;
  {
    const std::vector<uint8_t> in{1, 2, 2, 2};  // sum 7 / 4 = 1.75 -> 2
    std::vector<uint8_t> out(1);
    averagePoolQuant<uint8_t>(g, in.data(), 0, 255, 0, 1, out.data());
    EXPECT_EQ(out[0], 2);
  }
  {
    const std::vector<uint8_t> in{1, 1, 1, 3};  // 6 / 4 = 1.5 -> 2 (half up)
    std::vector<uint8_t> out(1);
    averagePoolQuant<uint8_t>(g, in.data(), 0, 255, 0, 1, out.data());
    EXPECT_EQ(out[0], 2);
  }
  {
    const std::vector<int8_t> in{-1, -1, -1, -3};  // -6 / 4 = -1.5 -> -2 (away from zero)
    std::vector<int8_t> out(1);
    averagePoolQuant<int8_t>(g, in.data(), -128, 127, 0, 1, out.data());
    EXPECT_EQ(out[0], -2);
  }
  {
    const std::vector<int8_t> in{-1, 0, 0, -1};  // -2 / 4 = -0.5 -> -1
    std::vector<int8_t> out(1);
    averagePoolQuant<int8_t>(g, in.data(), -128, 127, 0, 1, out.data());
    EXPECT_EQ(out[0], -1);
  }
  {
    const std::vector<float> in{1.0f, 2.0f, 3.0f, 4.0f};
    std::vector<float> out(1);
    averagePoolFloat(g, in.data(), -10.0f, 10.0f, 0, 1, out.data());
    EXPECT_FLOAT_EQ(out[0], 2.5f);
  }
}

TEST(PoolingTest, MaxOfNegativeFloatsIgnoresPadding) {
  PoolGeometry g;
  g.inHeight = g.inWidth = 2;
  g.filterHeight = g.filterWidth = 2;
  g.padTop = g.padLeft = 1;
  g.outHeight = g.outWidth = 2;
  const std::vector<float> in{-5.0f, -4.0f, -3.0f, -2.0f};
  std::vector<float> out(4);
  maxPoolFloat(g, in.data(), -100.0f, 100.0f, 0, 2, out.data());
  EXPECT_EQ(out, (std::vector<float>{-5.0f, -4.0f, -3.0f, -2.0f}));
}

}  // namespace
}  // namespace nnhal::kernels
