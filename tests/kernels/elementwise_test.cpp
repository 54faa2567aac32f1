#include "kernels/elementwise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace nnhal::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

size_t product(const std::vector<uint32_t>& dims) {
  size_t p = 1;
  for (uint32_t d : dims) p *= d;
  return p;
}

/// Naive broadcast index: flat output index -> flat index into `in` (NumPy rules).
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

TEST(BroadcastLayoutTest, SameShapesMergeIntoOneContiguousDimension) {
  const std::vector<uint32_t> a{2, 3, 4};
  const auto l = makeBroadcastLayout(a, a);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->rank, 1);
  EXPECT_EQ(l->dims[0], 24u);
  EXPECT_EQ(l->strides1[0], 1u);
  EXPECT_EQ(l->strides2[0], 1u);
  EXPECT_EQ(l->outputCount, 24u);
}

TEST(BroadcastLayoutTest, TrailingVectorBroadcastsOverLeadingDimensions) {
  const std::vector<uint32_t> a{2, 3, 4};
  const std::vector<uint32_t> b{4};
  const auto l = makeBroadcastLayout(a, b);
  ASSERT_TRUE(l);
  ASSERT_EQ(l->rank, 2);
  EXPECT_EQ(l->dims[0], 6u);
  EXPECT_EQ(l->dims[1], 4u);
  EXPECT_EQ(l->strides1[0], 4u);
  EXPECT_EQ(l->strides2[0], 0u);
  EXPECT_EQ(l->strides2[1], 1u);
}

TEST(BroadcastLayoutTest, HalExampleShape) {
  // types.hal: {4, 1, 2} and {5, 4, 3, 1} give {5, 4, 3, 2}.
  const std::vector<uint32_t> a{4, 1, 2};
  const std::vector<uint32_t> b{5, 4, 3, 1};
  const auto l = makeBroadcastLayout(a, b);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->outputCount, 5u * 4 * 3 * 2);
}

TEST(BroadcastLayoutTest, ScalarsAndEmptyShapes) {
  const std::vector<uint32_t> none;
  const std::vector<uint32_t> one{1};
  auto l = makeBroadcastLayout(none, none);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->outputCount, 1u);
  l = makeBroadcastLayout(one, std::vector<uint32_t>{1, 1, 1});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->outputCount, 1u);
}

TEST(BroadcastLayoutTest, ZeroSizedDimensionGivesNoOutput) {
  const auto l = makeBroadcastLayout(std::vector<uint32_t>{0, 3}, std::vector<uint32_t>{1, 3});
  ASSERT_TRUE(l);
  EXPECT_EQ(l->outputCount, 0u);
}

TEST(BroadcastLayoutTest, RejectsIncompatibleShapesAndHighRanks) {
  EXPECT_FALSE(makeBroadcastLayout(std::vector<uint32_t>{2, 3}, std::vector<uint32_t>{4}));
  EXPECT_FALSE(makeBroadcastLayout(std::vector<uint32_t>{0}, std::vector<uint32_t>{2}));
  EXPECT_FALSE(
      makeBroadcastLayout(std::vector<uint32_t>{1, 1, 1, 1, 1, 1, 1}, std::vector<uint32_t>{1}));
}

/// Compares addFloat32 over random broadcast shapes with the naive definition, computing
/// the output in several uneven pieces.
TEST(ElementwiseFloatTest, AddMatchesNaiveBroadcastInPieces) {
  const std::vector<std::pair<std::vector<uint32_t>, std::vector<uint32_t>>> cases = {
      {{2, 3, 4}, {2, 3, 4}},       {{2, 3, 4}, {4}}, {{2, 1, 4}, {3, 1}},
      {{5, 1, 3, 1}, {4, 1, 2}},    {{1}, {3, 5}},    {{3, 5}, {}},
      {{2, 1, 3, 1}, {1, 4, 1, 5}},
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
  for (const auto& [da, db] : cases) {
    const auto layout = makeBroadcastLayout(da, db);
    ASSERT_TRUE(layout);
    std::vector<float> a(product(da)), b(product(db));
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    // Output shape: max of aligned dims.
    const size_t rank = std::max(da.size(), db.size());
    std::vector<uint32_t> outDims(rank);
    for (size_t k = 0; k < rank; ++k) {
      const uint32_t x = k < da.size() ? da[da.size() - 1 - k] : 1;
      const uint32_t y = k < db.size() ? db[db.size() - 1 - k] : 1;
      outDims[rank - 1 - k] = std::max(x, y);
    }
    const size_t n = product(outDims);
    ASSERT_EQ(layout->outputCount, n);
    std::vector<float> out(n, -1.0f);
    for (size_t begin = 0; begin < n; begin += 7) {
      addFloat32(a.data(), b.data(), out.data(), *layout, -kInf, kInf, begin,
                 std::min(n, begin + 7));
    }
    for (size_t o = 0; o < n; ++o) {
      EXPECT_EQ(out[o], a[sourceIndex(o, outDims, da)] + b[sourceIndex(o, outDims, db)])
          << "element " << o;
    }
  }
}

TEST(ElementwiseFloatTest, MulAppliesClamp) {
  const std::vector<uint32_t> dims{4};
  const auto layout = makeBroadcastLayout(dims, std::vector<uint32_t>{1});
  ASSERT_TRUE(layout);
  const std::vector<float> a{-3.0f, 0.25f, 2.0f, 10.0f};
  const float b = 2.0f;
  std::vector<float> out(4);
  mulFloat32(a.data(), &b, out.data(), *layout, -1.0f, 6.0f, 0, 4);
  EXPECT_EQ(out, (std::vector<float>{-1.0f, 0.5f, 4.0f, 6.0f}));
  addFloat32(a.data(), &b, out.data(), *layout, 0.0f, kInf, 0, 4);
  EXPECT_EQ(out, (std::vector<float>{0.0f, 2.25f, 4.0f, 12.0f}));
}

TEST(ElementwiseInt32Test, AddAndMulWrapAround) {
  const std::vector<uint32_t> dims{3};
  const auto layout = makeBroadcastLayout(dims, dims);
  ASSERT_TRUE(layout);
  const std::vector<int32_t> a{std::numeric_limits<int32_t>::max(), -7, 65536};
  const std::vector<int32_t> b{1, 3, 65536};
  std::vector<int32_t> out(3);
  addInt32(a.data(), b.data(), out.data(), *layout, 0, 3);
  EXPECT_EQ(out, (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), -4, 131072}));
  mulInt32(a.data(), b.data(), out.data(), *layout, 0, 3);
  EXPECT_EQ(out, (std::vector<int32_t>{std::numeric_limits<int32_t>::max(), -21, 0}));
}

TEST(QuantParamsTest, RejectBadScales) {
  EXPECT_FALSE(makeQuantAddParams(0.0f, 0, 1.0f, 0, 1.0f, 0, 0, 255));
  EXPECT_FALSE(makeQuantAddParams(1.0f, 0, -1.0f, 0, 1.0f, 0, 0, 255));
  EXPECT_FALSE(makeQuantAddParams(1.0f, 0, 1.0f, 0, std::nanf(""), 0, 0, 255));
  EXPECT_FALSE(makeQuantMulParams(1.0f, 0, 1.0f, 0, 0.0f, 0, 0, 255));
  EXPECT_FALSE(makeQuantMulParams(kInf, 0, 1.0f, 0, 1.0f, 0, 0, 255));
  EXPECT_TRUE(makeQuantAddParams(0.5f, 3, 0.25f, 7, 0.1f, 2, 0, 255));
  // A multiplier above 1 (product scale larger than the output scale) is allowed.
  EXPECT_TRUE(makeQuantMulParams(2.0f, 0, 2.0f, 0, 0.5f, 0, 0, 255));
}

/// Quantized ADD/MUL are within one output step of the exact real result (before clamping).
template <typename T>
void checkQuantAgainstReal(bool add) {
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  const float s1 = 0.05f, s2 = 0.13f, so = add ? 0.2f : 0.5f;
  const int32_t z1 = kMin + 100, z2 = kMin + 7, zo = kMin + 128;
  const std::vector<uint32_t> dims{256};
  const auto layout = makeBroadcastLayout(dims, dims);
  ASSERT_TRUE(layout);
  std::vector<T> a(256), b(256), out(256);
  for (int i = 0; i < 256; ++i) {
    a[i] = static_cast<T>(kMin + i);
    b[i] = static_cast<T>(kMin + (i * 37) % 256);
  }
  if (add) {
    const auto p = makeQuantAddParams(s1, z1, s2, z2, so, zo, kMin, kMax);
    ASSERT_TRUE(p);
    addQuant8<T>(a.data(), b.data(), out.data(), *layout, *p, 0, 256);
  } else {
    const auto p = makeQuantMulParams(s1, z1, s2, z2, so, zo, kMin, kMax);
    ASSERT_TRUE(p);
    mulQuant8<T>(a.data(), b.data(), out.data(), *layout, *p, 0, 256);
  }
  for (int i = 0; i < 256; ++i) {
    const double x = s1 * (a[i] - z1);
    const double y = s2 * (b[i] - z2);
    const double real = add ? x + y : x * y;
    const double q = std::clamp<double>(std::round(real / so) + zo, kMin, kMax);
    EXPECT_NEAR(out[i], q, 1.0) << "element " << i;
  }
}

TEST(ElementwiseQuantTest, AddUint8WithinOneStep) { checkQuantAgainstReal<uint8_t>(true); }
TEST(ElementwiseQuantTest, AddInt8WithinOneStep) { checkQuantAgainstReal<int8_t>(true); }
TEST(ElementwiseQuantTest, MulUint8WithinOneStep) { checkQuantAgainstReal<uint8_t>(false); }
TEST(ElementwiseQuantTest, MulInt8WithinOneStep) { checkQuantAgainstReal<int8_t>(false); }

// The quantized ADD at every instruction-set level equals the scalar formula bit for bit:
// random scales (output multipliers above 1 included), zero points, lengths that leave a
// tail, a subrange, and a broadcast layout (whose contiguous runs take the vector path).
template <typename T>
void checkAddAtEveryLevel(std::mt19937& rng) {
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  std::uniform_int_distribution<int32_t> byte(kMin, kMax);
  std::uniform_real_distribution<float> scale(0.002f, 0.5f);
  for (int iter = 0; iter < 200; ++iter) {
    const uint32_t inner = std::uniform_int_distribution<uint32_t>(1, 90)(rng);
    const uint32_t outer = std::uniform_int_distribution<uint32_t>(1, 5)(rng);
    const bool broadcast = iter % 3 == 0;
    const std::vector<uint32_t> da{outer, inner};
    const std::vector<uint32_t> db = broadcast ? std::vector<uint32_t>{1, inner} : da;
    const auto layout = makeBroadcastLayout(da, db);
    ASSERT_TRUE(layout);
    std::vector<T> a(size_t{outer} * inner), b(broadcast ? inner : a.size());
    for (T& v : a) v = static_cast<T>(byte(rng));
    for (T& v : b) v = static_cast<T>(byte(rng));
    const float outputScale = iter % 4 == 0 ? scale(rng) * 0.01f : scale(rng);
    const auto p = makeQuantAddParams(scale(rng), byte(rng), scale(rng), byte(rng), outputScale,
                                      byte(rng), kMin + iter % 7, kMax - iter % 5);
    ASSERT_TRUE(p);
    const size_t begin = iter % 2 == 0 ? 0 : a.size() / 3;
    std::vector<T> expected(a.size(), T{7});
    addQuant8<T>(a.data(), b.data(), expected.data(), *layout, *p, begin, a.size(),
                 IsaLevel::kScalar);
    for (IsaLevel level : supportedIsaLevels()) {
      std::vector<T> out(a.size(), T{7});
      addQuant8<T>(a.data(), b.data(), out.data(), *layout, *p, begin, a.size(), level);
      ASSERT_EQ(out, expected) << "level " << toString(level) << " iteration " << iter;
    }
  }
}

TEST(ElementwiseQuantTest, AddIsBitExactAtEveryLevel) {
  std::mt19937 rng(31);
  checkAddAtEveryLevel<uint8_t>(rng);
  checkAddAtEveryLevel<int8_t>(rng);
}

TEST(ElementwiseQuantTest, AddClampsToActivationRange) {
  const std::vector<uint32_t> dims{3};
  const auto layout = makeBroadcastLayout(dims, dims);
  ASSERT_TRUE(layout);
  const auto p = makeQuantAddParams(1.0f, 0, 1.0f, 0, 1.0f, 0, 2, 10);
  ASSERT_TRUE(p);
  const std::vector<uint8_t> a{0, 4, 200};
  const std::vector<uint8_t> b{1, 3, 50};
  std::vector<uint8_t> out(3);
  addQuant8<uint8_t>(a.data(), b.data(), out.data(), *layout, *p, 0, 3);
  EXPECT_EQ(out, (std::vector<uint8_t>{2, 7, 10}));
}

TEST(ElementwiseQuantTest, BroadcastMulMatchesCtsExample) {
  // [1,2] scale 1.0 times [2,2] scale 1.0 -> scale 2.0 (V1_0 mul_broadcast_quant8 shapes):
  // products 1, 4, 3, 8 halve to 0.5, 2, 1.5, 4.
  const std::vector<uint32_t> da{1, 2};
  const std::vector<uint32_t> db{2, 2};
  const auto layout = makeBroadcastLayout(da, db);
  ASSERT_TRUE(layout);
  const auto p = makeQuantMulParams(1.0f, 0, 1.0f, 0, 2.0f, 0, 0, 255);
  ASSERT_TRUE(p);
  const std::vector<uint8_t> a{1, 2};
  const std::vector<uint8_t> b{1, 2, 3, 4};
  std::vector<uint8_t> out(4);
  mulQuant8<uint8_t>(a.data(), b.data(), out.data(), *layout, *p, 0, 4);
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 2, 2, 4}));  // 0.5 rounds away from zero
  // The CTS model's own data.
  const std::vector<uint8_t> ctsA{2, 4};
  const std::vector<uint8_t> ctsB{1, 2, 4, 8};
  mulQuant8<uint8_t>(ctsA.data(), ctsB.data(), out.data(), *layout, *p, 0, 4);
  EXPECT_EQ(out, (std::vector<uint8_t>{1, 4, 4, 16}));
}

}  // namespace
}  // namespace nnhal::kernels
