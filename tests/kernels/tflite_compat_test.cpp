// kernels/floor_div.h and kernels/gather_nd.h (the org.nnhal.tflite_compat extension) against
// hand-computed results and naive references.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "kernels/floor_div.h"
#include "kernels/gather_nd.h"

namespace nnhal::kernels {
namespace {

BroadcastLayout layoutOf(std::vector<uint32_t> a, std::vector<uint32_t> b) {
  auto layout = makeBroadcastLayout(a, b);
  EXPECT_TRUE(layout.has_value());
  return layout.value_or(BroadcastLayout{});
}

TEST(FloorDivTest, Int32RoundsTowardNegativeInfinity) {
  const std::vector<int32_t> a{7, -7, 7, -7, 6, 0, INT32_MIN, INT32_MAX};
  const std::vector<int32_t> b{2, 2, -2, -2, 3, -5, -1, -1};
  std::vector<int32_t> out(a.size(), 99);
  const BroadcastLayout layout = layoutOf({8}, {8});
  floorDivInt32(a.data(), b.data(), out.data(), layout, 0, 5);
  floorDivInt32(a.data(), b.data(), out.data(), layout, 5, 8);
  EXPECT_EQ(out, (std::vector<int32_t>{3, -4, -4, 3, 2, 0, INT32_MIN, -INT32_MAX}));
}

TEST(FloorDivTest, Int32BroadcastsAScalarDivisor) {
  // MoveNet: an ArgMax index [1, 17] divided by the constant 48 (a [1] tensor).
  const std::vector<int32_t> a{0, 47, 48, 95, 2303};
  const std::vector<int32_t> b{48};
  std::vector<int32_t> out(5);
  floorDivInt32(a.data(), b.data(), out.data(), layoutOf({1, 5}, {1}), 0, 5);
  EXPECT_EQ(out, (std::vector<int32_t>{0, 0, 1, 1, 47}));
}

TEST(FloorDivTest, Int32MatchesANaiveReference) {
  std::mt19937 rng(16);
  std::uniform_int_distribution<int32_t> value(-1000, 1000);
  std::vector<int32_t> a(24);
  std::vector<int32_t> b(4);
  for (int32_t& x : a) x = value(rng);
  for (int32_t& x : b) x = value(rng) | 1;  // odd: never zero
  std::vector<int32_t> out(24);
  floorDivInt32(a.data(), b.data(), out.data(), layoutOf({2, 3, 4}, {4}), 0, 24);
  for (size_t i = 0; i < 24; ++i) {
    const auto expected =
        static_cast<int32_t>(std::floor(static_cast<double>(a[i]) / static_cast<double>(b[i % 4])));
    EXPECT_EQ(out[i], expected) << a[i] << " / " << b[i % 4];
  }
}

TEST(FloorDivTest, FindsZeroDivisors) {
  const std::vector<int32_t> none{1, -1, 5};
  EXPECT_FALSE(findZeroDivisor(none.data(), none.size()));
  const std::vector<int32_t> some{1, 0, 0};
  EXPECT_EQ(findZeroDivisor(some.data(), some.size()), 1u);
  // The kernel itself never traps on one.
  std::vector<int32_t> out(3, 7);
  const std::vector<int32_t> a{5, 5, 5};
  floorDivInt32(a.data(), some.data(), out.data(), layoutOf({3}, {3}), 0, 3);
  EXPECT_EQ(out, (std::vector<int32_t>{5, 0, 0}));
}

TEST(FloorDivTest, Float32FloorsAndFollowsIeee) {
  const std::vector<float> a{7.0f, -7.0f, 7.5f, 1.0f, -1.0f, 0.0f};
  const std::vector<float> b{2.0f, 2.0f, -2.0f, 0.0f, 0.0f, 0.0f};
  std::vector<float> out(6);
  floorDivFloat32(a.data(), b.data(), out.data(), layoutOf({6}, {6}), 0, 6);
  EXPECT_EQ(out[0], 3.0f);
  EXPECT_EQ(out[1], -4.0f);
  EXPECT_EQ(out[2], -4.0f);
  EXPECT_EQ(out[3], INFINITY);
  EXPECT_EQ(out[4], -INFINITY);
  EXPECT_TRUE(std::isnan(out[5]));
}

TEST(GatherNdTest, GathersElementsAndSlices) {
  // params [2, 3, 2] = 0..11.
  std::vector<int32_t> params(12);
  std::iota(params.begin(), params.end(), 0);
  const std::vector<uint32_t> dims{2, 3, 2};
  // N = 3: single elements.
  const std::vector<int32_t> points{1, 2, 1, 0, 0, 0, 0, 1, 1};
  std::vector<int32_t> out(3, -1);
  ASSERT_FALSE(findGatherNdIndexOutOfRange(points.data(), 3, dims));
  gatherNd(params.data(), dims, sizeof(int32_t), points.data(), out.data(), 0, 3);
  EXPECT_EQ(out, (std::vector<int32_t>{11, 0, 3}));
  // N = 2: rows of 2.
  const std::vector<int32_t> rows{1, 0, 0, 2};
  out.assign(4, -1);
  const std::span<const uint32_t> first2(dims.data(), 2);
  gatherNd(params.data(), first2, 2 * sizeof(int32_t), rows.data(), out.data(), 0, 1);
  gatherNd(params.data(), first2, 2 * sizeof(int32_t), rows.data(), out.data(), 1, 2);
  EXPECT_EQ(out, (std::vector<int32_t>{6, 7, 4, 5}));
  // N = 1 over int8: whole [3, 2] blocks.
  std::vector<int8_t> bytes(12);
  std::iota(bytes.begin(), bytes.end(), int8_t{-6});
  const std::vector<int32_t> blocks{1};
  std::vector<int8_t> block(6);
  gatherNd(bytes.data(), std::span<const uint32_t>(dims.data(), 1), 6, blocks.data(), block.data(),
           0, 1);
  EXPECT_EQ(block, (std::vector<int8_t>{0, 1, 2, 3, 4, 5}));
}

TEST(GatherNdTest, FindsTheFirstIndexOutOfRange) {
  const std::vector<uint32_t> dims{2, 3};
  const std::vector<int32_t> tooLarge{0, 0, 1, 3};
  auto bad = findGatherNdIndexOutOfRange(tooLarge.data(), 2, dims);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->tuple, 1u);
  EXPECT_EQ(bad->component, 1u);
  const std::vector<int32_t> negative{-1, 0};
  bad = findGatherNdIndexOutOfRange(negative.data(), 1, dims);
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->tuple, 0u);
  EXPECT_EQ(bad->component, 0u);
  const std::vector<uint32_t> empty{0};
  const std::vector<int32_t> zero{0};
  EXPECT_TRUE(findGatherNdIndexOutOfRange(zero.data(), 1, empty));
}

}  // namespace
}  // namespace nnhal::kernels
