// Broadcasting binary kernels (kernels/binary_math.h) against naive references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "kernel_test_util.h"
#include "kernels/binary_math.h"

namespace nnhal::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

size_t product(const std::vector<uint32_t>& dims) {
  size_t p = 1;
  for (uint32_t d : dims) p *= d;
  return p;
}

/// Naive NumPy broadcast: flat output index -> flat index into an input of dims `in`.
size_t sourceIndex(size_t o, const std::vector<uint32_t>& out, const std::vector<uint32_t>& in) {
  size_t index = 0;
  size_t stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t d = out.size() - 1 - k;
    const size_t coord = o % out[d];
    o /= out[d];
    if (k < in.size()) {
      const size_t size = in[in.size() - 1 - k];
      if (size != 1) index += coord * stride;
      stride *= size;
    }
  }
  return index;
}

struct Shapes {
  std::vector<uint32_t> a, b, out;
};

const std::vector<Shapes> kShapes = {
    {{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, {{2, 1, 4}, {3, 1}, {2, 3, 4}},          {{5}, {1}, {5}},
    {{1}, {2, 2, 3}, {2, 2, 3}},       {{2, 1, 3, 1}, {4, 1, 5}, {2, 4, 3, 5}},
};

TEST(BinaryMathTest, FloatOpsMatchNaiveBroadcastInSplitRanges) {
  std::mt19937 rng(11);
  for (const Shapes& s : kShapes) {
    const auto layout = makeBroadcastLayout(s.a, s.b);
    ASSERT_TRUE(layout);
    const size_t n = product(s.out);
    ASSERT_EQ(layout->outputCount, n);
    const auto a = testing::randomFloats(rng, product(s.a), 0.5f, 3.0f);
    auto b = testing::randomFloats(rng, product(s.b), -2.0f, 2.0f);
    std::vector<float> sub(n), div(n), pow(n), mn(n), mx(n), prelu(n);
    for (size_t begin = 0; begin < n; begin += 7) {  // odd chunks cross row boundaries
      const size_t end = std::min(n, begin + 7);
      subFloat32(a.data(), b.data(), sub.data(), *layout, -kInf, kInf, begin, end);
      divFloat32(a.data(), b.data(), div.data(), *layout, -kInf, kInf, begin, end);
      powFloat32(a.data(), b.data(), pow.data(), *layout, begin, end);
      minMaxFloat32(a.data(), b.data(), mn.data(), *layout, true, begin, end);
      minMaxFloat32(a.data(), b.data(), mx.data(), *layout, false, begin, end);
      preluFloat32(b.data(), a.data(), prelu.data(), *makeBroadcastLayout(s.b, s.a), begin, end);
    }
    for (size_t o = 0; o < n; ++o) {
      const float x = a[sourceIndex(o, s.out, s.a)];
      const float y = b[sourceIndex(o, s.out, s.b)];
      EXPECT_EQ(sub[o], x - y);
      EXPECT_EQ(div[o], x / y);
      EXPECT_EQ(pow[o], std::pow(x, y));
      EXPECT_EQ(mn[o], std::min(x, y));
      EXPECT_EQ(mx[o], std::max(x, y));
      EXPECT_EQ(prelu[o], y >= 0 ? y : y * x);
    }
  }
}

TEST(BinaryMathTest, SubAndDivClampToActivationRange) {
  const std::vector<uint32_t> dims{4};
  const auto layout = makeBroadcastLayout(dims, dims);
  const std::vector<float> a{-3.0f, 0.5f, 2.0f, 9.0f};
  const std::vector<float> b{1.0f, 1.0f, 0.5f, 1.0f};
  std::vector<float> sub(4), div(4);
  subFloat32(a.data(), b.data(), sub.data(), *layout, 0.0f, 6.0f, 0, 4);
  divFloat32(a.data(), b.data(), div.data(), *layout, -1.0f, 1.0f, 0, 4);
  EXPECT_EQ(sub, (std::vector<float>{0.0f, 0.0f, 1.5f, 6.0f}));
  EXPECT_EQ(div, (std::vector<float>{-1.0f, 0.5f, 1.0f, 1.0f}));
}

TEST(BinaryMathTest, Int32DivFloorsAndSubWraps) {
  const std::vector<uint32_t> dims{6};
  const auto layout = makeBroadcastLayout(dims, dims);
  const std::vector<int32_t> a{7, -7, 7, -7, 6, std::numeric_limits<int32_t>::min()};
  const std::vector<int32_t> b{2, 2, -2, -2, 3, -1};
  std::vector<int32_t> div(6), sub(6);
  divInt32(a.data(), b.data(), div.data(), *layout, 0, 6);
  subInt32(a.data(), b.data(), sub.data(), *layout, 0, 6);
  EXPECT_EQ(div, (std::vector<int32_t>{3, -4, -4, 3, 2, std::numeric_limits<int32_t>::min()}));
  EXPECT_EQ(sub[0], 5);
  EXPECT_EQ(sub[1], -9);
  EXPECT_EQ(sub[5], std::numeric_limits<int32_t>::min() + 1);
}

TEST(BinaryMathTest, QuantSubMatchesRealDifferenceWithinOneStep) {
  std::mt19937 rng(3);
  const std::vector<uint32_t> da{3, 5};
  const std::vector<uint32_t> db{5};
  const auto layout = makeBroadcastLayout(da, db);
  const float s1 = 0.1f, s2 = 0.07f, so = 0.15f;
  const int32_t z1 = 120, z2 = 90, zo = 128;
  const auto params = makeQuantSubParams(s1, z1, s2, z2, so, zo, 0, 255);
  ASSERT_TRUE(params);
  const auto a = testing::randomBytes<uint8_t>(rng, 15);
  const auto b = testing::randomBytes<uint8_t>(rng, 5);
  std::vector<uint8_t> out(15);
  addQuant8<uint8_t>(a.data(), b.data(), out.data(), *layout, *params, 0, 15);
  for (size_t o = 0; o < 15; ++o) {
    const double real = s1 * (a[o] - z1) - s2 * (b[o % 5] - z2);
    const double expected = std::clamp(std::round(real / so) + zo, 0.0, 255.0);
    EXPECT_NEAR(out[o], expected, 1.0) << o;
  }
}

TEST(BinaryMathTest, RequantizeTableRoundsAndSaturates) {
  const auto table = makeRequantizeTable<int8_t>(0.5f, -10, 0.25f, 5);
  // real = 0.5 * (q + 10); out = real / 0.25 + 5 = 2q + 25.
  EXPECT_EQ(table[static_cast<uint8_t>(int8_t{0})], 25);
  EXPECT_EQ(table[static_cast<uint8_t>(int8_t{-20})], -15);
  EXPECT_EQ(table[static_cast<uint8_t>(int8_t{100})], 127);
  EXPECT_EQ(table[static_cast<uint8_t>(int8_t{-100})], -128);
  const auto half = makeRequantizeTable<uint8_t>(1.0f, 0, 2.0f, 0);
  EXPECT_EQ(half[3], 2);  // 1.5 rounds away from zero
  EXPECT_EQ(half[5], 3);  // 2.5 rounds away from zero
}

TEST(BinaryMathTest, QuantMinMaxComparesRequantizedValues) {
  const std::vector<uint32_t> dims{3};
  const auto layout = makeBroadcastLayout(dims, dims);
  // Input a: scale 1, zp 0; input b: scale 2, zp 0; output: scale 1, zp 0.
  const auto ta = makeRequantizeTable<uint8_t>(1.0f, 0, 1.0f, 0);
  const auto tb = makeRequantizeTable<uint8_t>(2.0f, 0, 1.0f, 0);
  const std::vector<uint8_t> a{10, 3, 200};
  const std::vector<uint8_t> b{4, 1, 120};  // real 8, 2, 240
  std::vector<uint8_t> mx(3), mn(3);
  minMaxQuant8<uint8_t>(a.data(), b.data(), mx.data(), *layout, ta, tb, false, 0, 3);
  minMaxQuant8<uint8_t>(a.data(), b.data(), mn.data(), *layout, ta, tb, true, 0, 3);
  EXPECT_EQ(mx, (std::vector<uint8_t>{10, 3, 240}));
  EXPECT_EQ(mn, (std::vector<uint8_t>{8, 2, 200}));
}

TEST(BinaryMathTest, QuantPreluMatchesRealWithinOneStep) {
  std::mt19937 rng(5);
  const std::vector<uint32_t> da{4, 6};
  const std::vector<uint32_t> db{6};
  const auto layout = makeBroadcastLayout(da, db);
  const float si = 0.2f, sa = 0.01f, so = 0.1f;
  const int32_t zi = 128, za = 50, zo = 120;
  const auto params = makeQuantPreluParams(si, zi, sa, za, so, zo);
  ASSERT_TRUE(params);
  const auto x = testing::randomBytes<uint8_t>(rng, 24);
  const auto alpha = testing::randomBytes<uint8_t>(rng, 6);
  std::vector<uint8_t> out(24);
  preluQuant8<uint8_t>(x.data(), alpha.data(), out.data(), *layout, *params, 0, 24);
  for (size_t o = 0; o < 24; ++o) {
    const double real = si * (x[o] - zi);
    const double slope = sa * (alpha[o % 6] - za);
    const double y = real >= 0 ? real : real * slope;
    const double expected = std::clamp(std::round(y / so) + zo, 0.0, 255.0);
    EXPECT_NEAR(out[o], expected, 1.0) << o;
  }
  EXPECT_FALSE(makeQuantPreluParams(0.0f, 0, 1.0f, 0, 1.0f, 0));
}

// fuzz_model found this: input scale / output scale = 2^30 saturates the requantized value
// at INT32_MAX - 1, and adding the output zero point overflowed (undefined behaviour). The
// addition wraps in two's complement, as the NN HAL reference's int32 arithmetic does on
// every target and as the other quantized kernels' output offset does.
TEST(BinaryMathTest, QuantPreluOutputOffsetWrapsInsteadOfOverflowing) {
  const std::vector<uint32_t> dims{2};
  const auto layout = makeBroadcastLayout(dims, dims);
  const float outputScale = std::ldexp(1.0f, -30);
  const auto params = makeQuantPreluParams(1.0f, 0, 1.0f, 0, outputScale, 120);
  ASSERT_TRUE(params);
  const std::vector<uint8_t> x{255, 0};
  const std::vector<uint8_t> alpha{1, 1};
  std::vector<uint8_t> out(2, 7);
  preluQuant8<uint8_t>(x.data(), alpha.data(), out.data(), *layout, *params, 0, 2);
  // 255 * 2^30 saturates to INT32_MAX - 1; + 120 wraps negative and clamps to 0.
  EXPECT_EQ(out[0], 0);
  EXPECT_EQ(out[1], 120);  // a real 0 is the output zero point
}

TEST(BinaryMathTest, LogicalOpsBroadcast) {
  const std::vector<uint32_t> da{2, 2};
  const std::vector<uint32_t> db{2};
  const auto layout = makeBroadcastLayout(da, db);
  const std::vector<uint8_t> a{0, 1, 1, 0};
  const std::vector<uint8_t> b{1, 0};
  std::vector<uint8_t> land(4), lor(4);
  logicalAnd(a.data(), b.data(), land.data(), *layout, 0, 4);
  logicalOr(a.data(), b.data(), lor.data(), *layout, 0, 4);
  EXPECT_EQ(land, (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(lor, (std::vector<uint8_t>{1, 1, 1, 0}));
}

}  // namespace
}  // namespace nnhal::kernels
