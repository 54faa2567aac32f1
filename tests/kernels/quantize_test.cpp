#include "kernels/quantize.h"
#include "kernels/quantization.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace nnhal::kernels {
namespace {

// Any positive scale is valid, even a denormal one: 6 / scale leaves float's range (found by
// fuzz_model as a float -> int conversion of infinity). The range saturates instead.
TEST(ActivationRangeTest, TinyScaleSaturates) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  int32_t lo = 0, hi = 0;
  activationRangeQuantized(FusedActivationFunc::RELU6, tiny, 10, 0, 255, &lo, &hi);
  EXPECT_EQ(lo, 10);
  EXPECT_EQ(hi, 255);
  activationRangeQuantized(FusedActivationFunc::RELU1, tiny, 0, -128, 127, &lo, &hi);
  EXPECT_EQ(lo, -128);
  EXPECT_EQ(hi, 127);
}

// TFLite's QuantizeMultiplier: below 2^-31 a multiplier flushes to 0; one of 2^31 or more
// (an output scale of 1e-35 under inputs of 0.5) is not refused: it becomes the largest
// representable, and every nonzero product saturates an 8-bit output as the exact one would.
TEST(QuantizeMultiplierTest, TinyFlushesToZeroAndHugeSaturates) {
  QuantizedMultiplier m;
  ASSERT_TRUE(quantizeMultiplier(1e-12, &m));
  EXPECT_EQ(m.multiplier, 0);
  EXPECT_EQ(multiplyByQuantizedMultiplier(1000000, m), 0);
  ASSERT_TRUE(quantizeMultiplier(0.25 / 3e-35, &m));
  EXPECT_EQ(m.multiplier, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(m.shift, 30);
  for (const int32_t product : {1, 9, 25, 10000}) {
    EXPECT_GT(multiplyByQuantizedMultiplier(product, m), 127) << product;
    EXPECT_LT(multiplyByQuantizedMultiplier(-product, m), -128) << product;
  }
  EXPECT_EQ(multiplyByQuantizedMultiplier(0, m), 0);
  EXPECT_FALSE(quantizeMultiplier(-1.0, &m));
  EXPECT_FALSE(quantizeMultiplier(std::numeric_limits<double>::infinity(), &m));
}

TEST(QuantizeTest, Uint8RoundsHalfAwayAndSaturates) {
  const std::vector<float> in{0.0f, 0.25f, -0.25f, 1.0f, 100.0f, -100.0f, std::nanf("")};
  std::vector<uint8_t> out(in.size());
  quantizeFloat32<uint8_t>(in.data(), out.data(), 0.5f, 10, 0, in.size());
  EXPECT_EQ(out, (std::vector<uint8_t>{10, 11, 9, 12, 210, 0, 10}));
}

TEST(QuantizeTest, Int8) {
  const std::vector<float> in{0.0f, 1.0f, -1.0f, 1000.0f, -1000.0f};
  std::vector<int8_t> out(in.size());
  quantizeFloat32<int8_t>(in.data(), out.data(), 0.1f, -5, 0, in.size());
  EXPECT_EQ(out, (std::vector<int8_t>{-5, 5, -15, 127, -128}));
}

TEST(QuantizeTest, DequantizeAsymm) {
  const std::vector<uint8_t> in{0, 10, 255};
  std::vector<float> out(3);
  dequantizeToFloat32<uint8_t>(in.data(), out.data(), 0.5f, 10, 0, 3);
  EXPECT_EQ(out, (std::vector<float>{-5.0f, 0.0f, 122.5f}));
  const std::vector<int8_t> sin{-128, 0, 127};
  dequantizeToFloat32<int8_t>(sin.data(), out.data(), 2.0f, -1, 0, 3);
  EXPECT_EQ(out, (std::vector<float>{-254.0f, 2.0f, 256.0f}));
}

TEST(QuantizeTest, DequantizePerChannelMiddleDimension) {
  // Shape [2, 3, 2] with channelDim 1: scales repeat every 2 elements, cycle of 3.
  const std::vector<int8_t> in{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2};
  const float scales[] = {1.0f, 10.0f, 100.0f};
  std::vector<float> out(in.size());
  dequantizePerChannelToFloat32(in.data(), out.data(), scales, 3, 2, 0, 6);
  dequantizePerChannelToFloat32(in.data(), out.data(), scales, 3, 2, 6, 12);
  EXPECT_EQ(out, (std::vector<float>{1, 1, 10, 10, 100, 100, 2, 2, 20, 20, 200, 200}));
}

TEST(QuantizeTest, SaturateHelper) {
  EXPECT_EQ(saturateToQuant8<uint8_t>(300.0f, 7), 255);
  EXPECT_EQ(saturateToQuant8<uint8_t>(-3.0f, 7), 0);
  EXPECT_EQ(saturateToQuant8<int8_t>(std::numeric_limits<float>::infinity(), 0), 127);
  EXPECT_EQ(saturateToQuant8<int8_t>(std::nanf(""), 3), 3);
}

}  // namespace
}  // namespace nnhal::kernels
