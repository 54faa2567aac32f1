#include "kernels/value_range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace nnhal::kernels {
namespace {

TEST(ValueRange, EmptyRunIsZeroZero) {
  const auto [lo, hi] = minMaxWithZero<int16_t>(nullptr, 0);
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 0);
}

TEST(ValueRange, IncludesZeroEvenWhenAllValuesArePositive) {
  const std::vector<int32_t> values = {5, 9, 3};
  const auto [lo, hi] = minMaxWithZero(values.data(), values.size());
  EXPECT_EQ(lo, 0);
  EXPECT_EQ(hi, 9);
}

// Extremes placed in the vectorized blocks and in the scalar tail, for many lengths.
TEST(ValueRange, FindsExtremesAnywhere) {
  std::mt19937 random(7);
  for (size_t count : {1u, 63u, 64u, 65u, 127u, 128u, 1000u}) {
    for (size_t at = 0; at < count; at += std::max<size_t>(1, count / 7)) {
      std::vector<int16_t> values(count);
      for (int16_t& v : values) v = static_cast<int16_t>(random() % 200) - 100;
      values[at] = -300;
      values[count - 1 - at] = 250;
      const auto [lo, hi] = minMaxWithZero(values.data(), count);
      EXPECT_EQ(lo, count == 1 ? 0 : -300) << count << " " << at;
      EXPECT_EQ(hi, 250) << count << " " << at;
    }
  }
}

}  // namespace
}  // namespace nnhal::kernels
