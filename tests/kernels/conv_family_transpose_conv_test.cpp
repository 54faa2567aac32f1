#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "kernels/quantization.h"
#include "kernels/transpose_conv.h"

namespace nnhal::kernels {
namespace {

using testing::randomBytes;
using testing::randomFloats;
using testing::randomInt;
using testing::randomInts;

// Scatter form of the transposed convolution (each input pixel adds its contributions to
// the output), computed in double / int64 and then finished like the kernels.
std::vector<double> scatterSums(const TransposeConvGeometry& g, const std::vector<double>& input,
                                const std::vector<double>& filter) {
  std::vector<double> out(size_t{g.batches} * g.outHeight * g.outWidth * g.outDepth, 0.0);
  for (uint32_t b = 0; b < g.batches; ++b) {
    for (uint32_t h = 0; h < g.inHeight; ++h) {
      for (uint32_t w = 0; w < g.inWidth; ++w) {
        for (uint32_t k = 0; k < g.outDepth; ++k) {
          for (uint32_t i = 0; i < g.filterHeight; ++i) {
            for (uint32_t j = 0; j < g.filterWidth; ++j) {
              const int64_t y = int64_t{h} * g.strideHeight - g.padTop + i;
              const int64_t x = int64_t{w} * g.strideWidth - g.padLeft + j;
              if (y < 0 || y >= g.outHeight || x < 0 || x >= g.outWidth) continue;
              for (uint32_t d = 0; d < g.inDepth; ++d) {
                out[((size_t{b} * g.outHeight + y) * g.outWidth + x) * g.outDepth + k] +=
                    input[((size_t{b} * g.inHeight + h) * g.inWidth + w) * g.inDepth + d] *
                    filter[((size_t{k} * g.filterHeight + i) * g.filterWidth + j) * g.inDepth + d];
              }
            }
          }
        }
      }
    }
  }
  return out;
}

TransposeConvGeometry randomGeometry(std::mt19937& rng) {
  TransposeConvGeometry g;
  g.batches = randomInt(rng, 1, 2);
  g.inHeight = randomInt(rng, 1, 5);
  g.inWidth = randomInt(rng, 1, 5);
  g.inDepth = randomInt(rng, 1, 5);
  g.filterHeight = randomInt(rng, 1, 4);
  g.filterWidth = randomInt(rng, 1, 4);
  g.outDepth = randomInt(rng, 1, 6);
  g.strideHeight = randomInt(rng, 1, 3);
  g.strideWidth = randomInt(rng, 1, 3);
  g.padTop = randomInt(rng, 0, static_cast<int32_t>(g.filterHeight) - 1);
  g.padLeft = randomInt(rng, 0, static_cast<int32_t>(g.filterWidth) - 1);
  // Tail paddings in [-stride + 1, filter - 1] (negative ones enlarge the output).
  const int32_t padBottom = randomInt(rng, 1 - static_cast<int32_t>(g.strideHeight),
                                      static_cast<int32_t>(g.filterHeight) - 1 - g.padTop);
  const int32_t padRight = randomInt(rng, 1 - static_cast<int32_t>(g.strideWidth),
                                     static_cast<int32_t>(g.filterWidth) - 1 - g.padLeft);
  g.outHeight = (g.inHeight - 1) * g.strideHeight + g.filterHeight - g.padTop - padBottom;
  g.outWidth = (g.inWidth - 1) * g.strideWidth + g.filterWidth - g.padLeft - padRight;
  return g;
}

TEST(TransposeConvKernelTest, FloatMatchesScatterReference) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const TransposeConvGeometry g = randomGeometry(rng);
    const auto input =
        randomFloats(rng, size_t{g.batches} * g.inHeight * g.inWidth * g.inDepth, -2.0f, 2.0f);
    const auto filter = randomFloats(rng, g.filterElements(), -1.0f, 1.0f);
    const auto bias = randomFloats(rng, g.outDepth, -1.0f, 1.0f);
    const bool withBias = trial % 3 != 0;
    const bool relu6 = trial % 4 == 1;
    std::vector<float> packed(g.filterElements());
    transposeConvPackFloat(g, filter.data(), packed.data());
    std::vector<float> out(g.outputRows() * g.outWidth * g.outDepth, -99.0f);
    const float lo = relu6 ? 0.0f : std::numeric_limits<float>::lowest();
    const float hi = relu6 ? 6.0f : std::numeric_limits<float>::max();
    // Two row ranges to check the split.
    const size_t split = g.outputRows() / 2;
    transposeConvFloat(g, input.data(), packed.data(), withBias ? bias.data() : nullptr, lo, hi, 0,
                       split, out.data());
    transposeConvFloat(g, input.data(), packed.data(), withBias ? bias.data() : nullptr, lo, hi,
                       split, g.outputRows(), out.data());
    const auto sums = scatterSums(g, std::vector<double>(input.begin(), input.end()),
                                  std::vector<double>(filter.begin(), filter.end()));
    for (size_t e = 0; e < out.size(); ++e) {
      double expected = sums[e] + (withBias ? bias[e % g.outDepth] : 0.0);
      expected = std::clamp<double>(expected, lo, hi);
      ASSERT_NEAR(out[e], expected, 1e-4) << "trial " << trial << " element " << e;
    }
  }
}

template <typename T>
void checkQuant(uint32_t seed, bool perChannel) {
  std::mt19937 rng(seed);
  constexpr bool kSigned = std::is_signed_v<T>;
  size_t total = 0, unclamped = 0;  // the clamp must not hide the sums
  for (int trial = 0; trial < 150; ++trial) {
    const TransposeConvGeometry g = randomGeometry(rng);
    const auto input = randomBytes<T>(rng, size_t{g.batches} * g.inHeight * g.inWidth * g.inDepth);
    // Per-channel filters are int8 with zero point 0; per-tensor ones have the input's type.
    const bool filterSigned = perChannel || kSigned;
    std::vector<uint8_t> filterBytes(g.filterElements());
    std::vector<double> filterValues(g.filterElements());
    const int32_t filterZeroPoint =
        perChannel ? 0 : (kSigned ? randomInt(rng, -20, 20) : randomInt(rng, 100, 150));
    for (size_t e = 0; e < filterBytes.size(); ++e) {
      const int32_t v = filterSigned ? randomInt(rng, -127, 127) : randomInt(rng, 0, 255);
      filterBytes[e] = static_cast<uint8_t>(v);
      filterValues[e] = v - filterZeroPoint;
    }
    const int32_t inputZeroPoint = kSigned ? randomInt(rng, -30, 30) : randomInt(rng, 100, 150);
    std::vector<double> inputValues(input.size());
    for (size_t e = 0; e < input.size(); ++e) inputValues[e] = int32_t{input[e]} - inputZeroPoint;
    const auto bias = randomInts<int32_t>(rng, g.outDepth, -5000, 5000);
    std::vector<QuantizedMultiplier> multipliers(g.outDepth);
    for (auto& m : multipliers) {
      ASSERT_TRUE(quantizeMultiplier(std::ldexp(randomInt(rng, 1, 60), -16), &m));
    }
    std::vector<int16_t> packed(g.filterElements());
    transposeConvPackQuant(g, filterBytes.data(), filterSigned, filterZeroPoint, packed.data());
    TransposeConvQuantParams p;
    p.inputSigned = kSigned;
    p.inputZeroPoint = inputZeroPoint;
    p.packed = packed.data();
    p.bias = bias.data();
    p.multipliers = multipliers.data();
    p.outputZeroPoint = kSigned ? 3 : 128;
    p.outputMin = kSigned ? -120 : 5;
    p.outputMax = kSigned ? 100 : 250;
    std::vector<T> out(g.outputRows() * g.outWidth * g.outDepth);
    std::vector<uint32_t> acc(g.outDepth);
    transposeConvQuant(g, reinterpret_cast<const uint8_t*>(input.data()), p, 0, g.outputRows(),
                       acc.data(), reinterpret_cast<uint8_t*>(out.data()));
    const auto sums = scatterSums(g, inputValues, filterValues);
    for (size_t e = 0; e < out.size(); ++e) {
      const size_t k = e % g.outDepth;
      const auto sum = static_cast<int32_t>(sums[e]) + bias[k];
      const int32_t unbounded =
          multiplyByQuantizedMultiplier(sum, multipliers[k]) + p.outputZeroPoint;
      const int32_t expected = std::clamp(unbounded, p.outputMin, p.outputMax);
      ++total;
      unclamped += expected == unbounded;
      ASSERT_EQ(int32_t{out[e]}, expected) << "trial " << trial << " element " << e;
    }
  }
  EXPECT_GT(unclamped, total * 3 / 4);
}

TEST(TransposeConvKernelTest, Uint8MatchesScatterReference) { checkQuant<uint8_t>(11, false); }
TEST(TransposeConvKernelTest, Int8MatchesScatterReference) { checkQuant<int8_t>(12, false); }
TEST(TransposeConvKernelTest, Uint8PerChannelMatchesScatterReference) {
  checkQuant<uint8_t>(13, true);
}
TEST(TransposeConvKernelTest, Int8PerChannelMatchesScatterReference) {
  checkQuant<int8_t>(14, true);
}

// The largest multiplier (2^30) saturates 255 * 2^30 at INT32_MAX - 1; adding the output
// zero point wraps, as the convolutions' int32 arithmetic does, instead of overflowing.
TEST(TransposeConvKernelTest, OutputOffsetWrapsInsteadOfOverflowing) {
  TransposeConvGeometry g;  // one pixel, one channel, a 1x1 filter
  const uint8_t filter = 1;
  int16_t packed = 0;
  transposeConvPackQuant(g, &filter, false, 0, &packed);
  const QuantizedMultiplier multiplier{std::numeric_limits<int32_t>::max(), 30};
  TransposeConvQuantParams p;
  p.packed = &packed;
  p.multipliers = &multiplier;
  p.outputZeroPoint = 120;
  for (const auto& [input, expected] : {std::pair<uint8_t, int>{255, 0}, {0, 120}}) {
    uint8_t out = 7;
    uint32_t acc = 0;
    transposeConvQuant(g, &input, p, 0, 1, &acc, &out);
    EXPECT_EQ(out, expected) << int{input};
  }
}

// A hand-computed case: 2x2 input, 3x3 filter of ones, stride 2, no padding: each input
// value fills a 3x3 block, overlapping blocks add.
TEST(TransposeConvKernelTest, HandComputedOverlap) {
  TransposeConvGeometry g;
  g.inHeight = 2;
  g.inWidth = 2;
  g.filterHeight = 3;
  g.filterWidth = 3;
  g.strideHeight = 2;
  g.strideWidth = 2;
  g.outHeight = 5;
  g.outWidth = 5;
  const std::vector<float> input{1, 2, 3, 4};
  const std::vector<float> filter(9, 1.0f);
  std::vector<float> packed(9);
  transposeConvPackFloat(g, filter.data(), packed.data());
  std::vector<float> out(25);
  transposeConvFloat(g, input.data(), packed.data(), nullptr, -100.0f, 100.0f, 0, 5, out.data());
  const std::vector<float> expected{1, 1, 3,  2, 2,  //
                                    1, 1, 3,  2, 2,  //
                                    4, 4, 10, 6, 6,  //
                                    3, 3, 7,  4, 4,  //
                                    3, 3, 7,  4, 4};
  EXPECT_EQ(out, expected);
}

}  // namespace
}  // namespace nnhal::kernels
