#include "kernels/depthwise_conv.h"

#include "kernels/isa.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/kernel_test_util.h"
#include "kernels/quantization.h"

namespace nnhal::kernels {
namespace {

using testing::outSize;
using testing::randomBytes;
using testing::randomFloats;
using testing::randomInt;
using testing::randomInts;

DepthwiseGeometry randomGeometry(std::mt19937& rng, uint32_t depthMultiplier) {
  for (;;) {
    DepthwiseGeometry g;
    g.batches = randomInt(rng, 1, 2);
    g.inHeight = randomInt(rng, 1, 12);
    g.inWidth = randomInt(rng, 1, 12);
    g.inDepth = randomInt(rng, 1, 90);
    g.depthMultiplier = depthMultiplier;
    g.outDepth = g.inDepth * depthMultiplier;
    g.filterHeight = randomInt(rng, 1, 5);
    g.filterWidth = randomInt(rng, 1, 5);
    g.strideHeight = randomInt(rng, 1, 3);
    g.strideWidth = randomInt(rng, 1, 3);
    g.dilationHeight = randomInt(rng, 1, 3);
    g.dilationWidth = randomInt(rng, 1, 3);
    const int32_t effH = (g.filterHeight - 1) * g.dilationHeight + 1;
    const int32_t effW = (g.filterWidth - 1) * g.dilationWidth + 1;
    g.padTop = randomInt(rng, 0, effH - 1);
    g.padLeft = randomInt(rng, 0, effW - 1);
    g.outHeight = outSize(g.inHeight, g.filterHeight, g.strideHeight, g.dilationHeight, g.padTop,
                          randomInt(rng, 0, effH - 1));
    g.outWidth = outSize(g.inWidth, g.filterWidth, g.strideWidth, g.dilationWidth, g.padLeft,
                         randomInt(rng, 0, effW - 1));
    if (g.outHeight > 0 && g.outWidth > 0) return g;
  }
}

// Every test runs at each instruction-set level this CPU supports.
class DepthwiseQuantTest : public ::testing::TestWithParam<IsaLevel> {};
class DepthwiseFloatTest : public ::testing::TestWithParam<IsaLevel> {};

template <typename In, typename Filter>
void checkQuant(const DepthwiseGeometry& g, std::mt19937& rng, bool perChannel, IsaLevel level,
                std::optional<int32_t> filterZeroPoint = std::nullopt) {
  constexpr bool kSigned = std::is_signed_v<In>;
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const auto input = randomBytes<In>(rng, size_t{g.batches} * g.inHeight * g.inWidth * g.inDepth);
  const auto filter = randomBytes<Filter>(rng, taps * g.outDepth);
  const auto bias = randomInts<int32_t>(rng, g.outDepth, -5000, 5000);
  const int32_t zi = kSigned ? randomInt(rng, -128, 127) : randomInt(rng, 0, 255);
  const int32_t zf = filterZeroPoint            ? *filterZeroPoint
                     : perChannel               ? 0
                     : std::is_signed_v<Filter> ? randomInt(rng, -128, 127)
                                                : randomInt(rng, 0, 255);
  const int32_t qmin = kSigned ? -128 : 0, qmax = kSigned ? 127 : 255;
  const int32_t zo = randomInt(rng, qmin, qmax);
  // Half the cases clamp at or above the zero point, as a fused RELU does (the AVX-512
  // requantizer then leaves out the rounding of negatives).
  const int32_t hi = qmax - randomInt(rng, 0, 5);
  const int32_t lo = randomInt(rng, 0, 1) == 1 ? std::min(zo + randomInt(rng, 0, 3), hi)
                                               : qmin + randomInt(rng, 0, 5);
  const double center = 1.0 / (128.0 * std::sqrt(static_cast<double>(taps)) * 4);
  std::uniform_real_distribution<double> logDist(std::log(center / 8), std::log(center * 8));
  std::vector<QuantizedMultiplier> m(g.outDepth);
  std::vector<int32_t> mult(g.outDepth), shift(g.outDepth);
  bool anyLeft = false;
  QuantizedMultiplier shared;
  ASSERT_TRUE(quantizeMultiplier(std::exp(logDist(rng)), &shared));
  for (size_t c = 0; c < g.outDepth; ++c) {
    m[c] = shared;
    if (perChannel) {
      ASSERT_TRUE(quantizeMultiplier(c % 13 == 3 ? 2.5 : std::exp(logDist(rng)), &m[c]));
    }
    mult[c] = m[c].multiplier;
    shift[c] = m[c].shift;
    anyLeft |= shift[c] > 0;
  }
  std::vector<In> expected(size_t{g.batches} * g.outHeight * g.outWidth * g.outDepth);
  depthwiseQuantReference<In, Filter>(g, input.data(), zi, filter.data(), zf, bias.data(), m.data(),
                                      zo, lo, hi, expected.data());

  std::vector<int16_t> prepared(filter.size()), packed(depthwisePackedFilterCount(g, level));
  prepareDepthwiseFilter(reinterpret_cast<const uint8_t*>(filter.data()), filter.size(),
                         std::is_signed_v<Filter>, zf, prepared.data());
  packDepthwiseFilter(g, reinterpret_cast<const uint8_t*>(filter.data()), std::is_signed_v<Filter>,
                      zf, packed.data(), level);
  const std::vector<uint8_t> zeroRow(g.inDepth, static_cast<uint8_t>(zi));
  DepthwiseQuantParams p;
  p.filter = packed.data();
  p.zeroPointRow = zeroRow.data();
  p.bias = bias.data();
  p.multiplier = mult.data();
  p.shift = shift.data();
  p.anyLeftShift = anyLeft;
  p.inputZeroPoint = zi;
  p.inputSigned = kSigned;
  p.outputZeroPoint = zo;
  p.outputMin = lo;
  p.outputMax = hi;
  const auto* in = reinterpret_cast<const uint8_t*>(input.data());
  std::vector<uint8_t> fast(expected.size(), 0xEE), portable(expected.size(), 0xEE);
  const size_t lines = g.outputLines();
  const size_t cut = randomInt(rng, 0, lines);
  depthwiseQuant(g, p, in, 0, cut, fast.data(), level);
  depthwiseQuant(g, p, in, cut, lines, fast.data(), level);
  p.filter = prepared.data();
  depthwiseQuantPortable(g, p, in, 0, lines, portable.data());
  ASSERT_EQ(0, std::memcmp(fast.data(), expected.data(), fast.size()))
      << "in " << g.inHeight << "x" << g.inWidth << "x" << g.inDepth << " filter " << g.filterHeight
      << "x" << g.filterWidth << " dm " << g.depthMultiplier;
  ASSERT_EQ(0, std::memcmp(portable.data(), expected.data(), portable.size()));
}

TEST_P(DepthwiseQuantTest, Uint8MatchesReference) {
  std::mt19937 rng(21);
  for (int i = 0; i < 60; ++i) {
    SCOPED_TRACE(i);
    checkQuant<uint8_t, uint8_t>(randomGeometry(rng, i % 3 == 0 ? 2 : 1), rng, false, GetParam());
  }
}

TEST_P(DepthwiseQuantTest, Int8MatchesReference) {
  std::mt19937 rng(22);
  for (int i = 0; i < 60; ++i) {
    SCOPED_TRACE(i);
    checkQuant<int8_t, int8_t>(randomGeometry(rng, i % 3 == 0 ? 3 : 1), rng, false, GetParam());
  }
}

TEST_P(DepthwiseQuantTest, PerChannelMatchesReference) {
  std::mt19937 rng(23);
  for (int i = 0; i < 40; ++i) {
    SCOPED_TRACE(i);
    checkQuant<uint8_t, int8_t>(randomGeometry(rng, i % 4 == 0 ? 2 : 1), rng, true, GetParam());
    checkQuant<int8_t, int8_t>(randomGeometry(rng, 1), rng, true, GetParam());
  }
}

TEST_P(DepthwiseQuantTest, MobileNetShapedLayer) {
  std::mt19937 rng(24);
  DepthwiseGeometry g;
  g.inHeight = g.inWidth = 28;
  g.inDepth = g.outDepth = 144;
  g.filterHeight = g.filterWidth = 3;
  g.strideHeight = g.strideWidth = 2;
  g.outHeight = g.outWidth = 14;  // SAME: pad total 1, before 0
  checkQuant<uint8_t, uint8_t>(g, rng, false, GetParam());
  g.strideHeight = g.strideWidth = 1;
  g.padTop = g.padLeft = 1;
  g.outHeight = g.outWidth = 28;
  checkQuant<uint8_t, uint8_t>(g, rng, false, GetParam());
}

// Filter zero points at the ends of their range: the VNNI kernel's constant e = 128 - zw
// (uint8) or -zw (int8) is then 128, which is not an int8 (applied as 64 twice), and for
// uint8 filters with zero point 255, -127. (The VNNI kernel takes the depths that fill its
// blocks: see FullBlocksOfSixtyFourChannels.)
TEST_P(DepthwiseQuantTest, FilterZeroPointsAtTheEndsOfTheirRange) {
  std::mt19937 rng(27);
  for (int i = 0; i < 20; ++i) {
    SCOPED_TRACE(i);
    checkQuant<uint8_t, uint8_t>(randomGeometry(rng, 1), rng, false, GetParam(), 0);
    checkQuant<uint8_t, uint8_t>(randomGeometry(rng, 1), rng, false, GetParam(), 255);
    checkQuant<int8_t, int8_t>(randomGeometry(rng, 1), rng, false, GetParam(), -128);
    checkQuant<int8_t, int8_t>(randomGeometry(rng, 1), rng, false, GetParam(), 127);
  }
}

// Channel counts that fill blocks of 64 (the VNNI kernel's, kernels/depthwise_conv.h), at
// every type combination, zero point and clamp the other tests use.
TEST_P(DepthwiseQuantTest, FullBlocksOfSixtyFourChannels) {
  std::mt19937 rng(28);
  for (const uint32_t depth : {57u, 64u, 120u, 128u, 192u, 200u}) {
    for (int i = 0; i < 6; ++i) {
      SCOPED_TRACE(std::to_string(depth) + " / " + std::to_string(i));
      DepthwiseGeometry g = randomGeometry(rng, 1);
      g.inDepth = g.outDepth = depth;
      checkQuant<uint8_t, uint8_t>(g, rng, false, GetParam());
      checkQuant<int8_t, int8_t>(g, rng, false, GetParam());
      checkQuant<uint8_t, int8_t>(g, rng, true, GetParam());
      checkQuant<uint8_t, uint8_t>(g, rng, false, GetParam(), i % 2 == 0 ? 0 : 255);
      checkQuant<int8_t, int8_t>(g, rng, false, GetParam(), i % 2 == 0 ? -128 : 127);
    }
  }
}

TEST_P(DepthwiseQuantTest, LargeFilterUsesPortablePath) {
  std::mt19937 rng(26);
  DepthwiseGeometry g;
  g.inHeight = g.inWidth = 10;
  g.inDepth = g.outDepth = 20;
  g.filterHeight = g.filterWidth = 9;  // 81 taps
  g.padTop = g.padLeft = 4;
  g.outHeight = g.outWidth = 10;
  checkQuant<uint8_t, uint8_t>(g, rng, false, GetParam());
}

// One channel, 2x2 filter over a 2x2 input with padding 1 on the top-left: output (0, 0)
// sees only input (0, 0) under filter tap (1, 1).
TEST_P(DepthwiseQuantTest, PaddingCountsNothing) {
  DepthwiseGeometry g;
  g.inHeight = g.inWidth = 2;
  g.filterHeight = g.filterWidth = 2;
  g.padTop = g.padLeft = 1;
  g.outHeight = g.outWidth = 2;
  const std::vector<uint8_t> input{12, 14, 16, 18};  // zero point 10: 2, 4, 6, 8
  const std::vector<uint8_t> filter{1, 2, 3, 4};     // zero point 0
  QuantizedMultiplier one;
  ASSERT_TRUE(quantizeMultiplier(1.0, &one));
  const std::vector<QuantizedMultiplier> ms{one};
  std::vector<uint8_t> out(4);
  depthwiseQuantReference<uint8_t, uint8_t>(g, input.data(), 10, filter.data(), 0, nullptr,
                                            ms.data(), 0, 0, 255, out.data());
  // (0,0): 2*4 = 8; (0,1): 2*3 + 4*4 = 22; (1,0): 2*2 + 6*4 = 28; (1,1): 2*1+4*2+6*3+8*4 = 60
  EXPECT_EQ(out, (std::vector<uint8_t>{8, 22, 28, 60}));
  std::vector<int16_t> packed(depthwisePackedFilterCount(g, GetParam()));
  packDepthwiseFilter(g, filter.data(), false, 0, packed.data(), GetParam());
  const int32_t mult = one.multiplier, shift = one.shift;
  const uint8_t zeroRow = 10;
  DepthwiseQuantParams p;
  p.filter = packed.data();
  p.zeroPointRow = &zeroRow;
  p.multiplier = &mult;
  p.shift = &shift;
  p.anyLeftShift = shift > 0;
  p.inputZeroPoint = 10;
  std::vector<uint8_t> fast(4);
  depthwiseQuant(g, p, input.data(), 0, 2, fast.data(), GetParam());
  EXPECT_EQ(fast, out);
}

// A 1x40000 filter of 255s over 255s (zero points 0) sums 40000 x 65025 = 2,601,000,000:
// past INT32_MAX. The accumulator is int32 as in the HAL's reference, and wraps at every
// level (no undefined behaviour; a fuzzed model found the portable path overflowing).
TEST_P(DepthwiseQuantTest, AccumulatorPastInt32Wraps) {
  constexpr uint32_t kTaps = 40000;
  DepthwiseGeometry g;
  g.inHeight = 1;
  g.inWidth = kTaps;
  g.filterHeight = 1;
  g.filterWidth = kTaps;
  g.outHeight = g.outWidth = 1;
  const std::vector<uint8_t> input(kTaps, 255), filter(kTaps, 255);
  QuantizedMultiplier m;
  ASSERT_TRUE(quantizeMultiplier(1.0 / (1 << 24), &m));
  const auto wrapped = static_cast<int32_t>(uint32_t{kTaps} * 65025u);
  ASSERT_LT(wrapped, 0);
  const int32_t want = std::clamp(128 + multiplyByQuantizedMultiplier(wrapped, m), 0, 255);
  ASSERT_EQ(want, 27);  // 128 + round(-1,693,967,296 / 2^24)

  std::vector<uint8_t> reference(1);
  depthwiseQuantReference<uint8_t, uint8_t>(g, input.data(), 0, filter.data(), 0, nullptr, &m, 128,
                                            0, 255, reference.data());
  EXPECT_EQ(reference[0], want);

  std::vector<int16_t> packed(depthwisePackedFilterCount(g, GetParam())), prepared(kTaps);
  packDepthwiseFilter(g, filter.data(), false, 0, packed.data(), GetParam());
  prepareDepthwiseFilter(filter.data(), kTaps, false, 0, prepared.data());
  const int32_t mult = m.multiplier, shift = m.shift;
  const uint8_t zeroRow = 0;
  DepthwiseQuantParams p;
  p.filter = packed.data();
  p.zeroPointRow = &zeroRow;
  p.multiplier = &mult;
  p.shift = &shift;
  p.outputZeroPoint = 128;
  std::vector<uint8_t> fast(1), portable(1);
  depthwiseQuant(g, p, input.data(), 0, 1, fast.data(), GetParam());
  EXPECT_EQ(fast[0], want);
  p.filter = prepared.data();
  depthwiseQuantPortable(g, p, input.data(), 0, 1, portable.data());
  EXPECT_EQ(portable[0], want);
}

void checkFloat(const DepthwiseGeometry& g, std::mt19937& rng, IsaLevel level) {
  const size_t taps = size_t{g.filterHeight} * g.filterWidth;
  const auto input = randomFloats(rng, size_t{g.batches} * g.inHeight * g.inWidth * g.inDepth);
  const auto filter = randomFloats(rng, taps * g.outDepth);
  const auto bias = randomFloats(rng, g.outDepth);
  std::vector<float> expected(size_t{g.batches} * g.outHeight * g.outWidth * g.outDepth);
  depthwiseFloatReference(g, input.data(), filter.data(), bias.data(), -1.0f, 1.0f,
                          expected.data());
  const DepthwiseFloatParams p{filter.data(), bias.data(), -1.0f, 1.0f};
  std::vector<float> fast(expected.size()), portable(expected.size());
  const size_t cut = randomInt(rng, 0, g.outputLines());
  depthwiseFloat(g, p, input.data(), 0, cut, fast.data(), level);
  depthwiseFloat(g, p, input.data(), cut, g.outputLines(), fast.data(), level);
  depthwiseFloatPortable(g, p, input.data(), 0, g.outputLines(), portable.data());
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(fast[i], expected[i], 1e-5f) << i;
    ASSERT_NEAR(portable[i], expected[i], 1e-5f) << i;
  }
}

// 3x3 filters have their own path (weights held in registers across a line): every depth
// from 1 to 70 (partial blocks of 32 and of 16), both strides, dilation, padding.
TEST_P(DepthwiseFloatTest, ThreeByThreeMatchesReference) {
  std::mt19937 rng(27);
  for (uint32_t depth = 1; depth <= 70; ++depth) {
    DepthwiseGeometry g;
    g.batches = depth % 3 == 0 ? 2 : 1;
    g.inHeight = 5 + depth % 4;
    g.inWidth = 6 + depth % 5;
    g.inDepth = g.outDepth = depth;
    g.filterHeight = g.filterWidth = 3;
    g.strideHeight = g.strideWidth = 1 + depth % 2;
    g.dilationHeight = g.dilationWidth = depth % 7 == 0 ? 2 : 1;
    const uint32_t span = 2 * g.dilationWidth;
    g.padTop = g.padLeft = static_cast<int32_t>(depth % (span + 1));
    g.outHeight =
        outSize(g.inHeight, 3, g.strideHeight, g.dilationHeight, g.padTop, span - g.padTop);
    g.outWidth = outSize(g.inWidth, 3, g.strideWidth, g.dilationWidth, g.padLeft, span - g.padLeft);
    SCOPED_TRACE(depth);
    checkFloat(g, rng, GetParam());
  }
}

TEST_P(DepthwiseFloatTest, MatchesReference) {
  std::mt19937 rng(25);
  for (int i = 0; i < 60; ++i) {
    SCOPED_TRACE(i);
    checkFloat(randomGeometry(rng, i % 3 == 0 ? 2 : 1), rng, GetParam());
  }
}

std::string levelName(const ::testing::TestParamInfo<IsaLevel>& info) {
  return std::string(toString(info.param));
}
INSTANTIATE_TEST_SUITE_P(EveryLevel, DepthwiseQuantTest, ::testing::ValuesIn(supportedIsaLevels()),
                         levelName);
INSTANTIATE_TEST_SUITE_P(EveryLevel, DepthwiseFloatTest, ::testing::ValuesIn(supportedIsaLevels()),
                         levelName);

}  // namespace
}  // namespace nnhal::kernels
