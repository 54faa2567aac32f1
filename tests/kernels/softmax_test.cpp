#include "kernels/softmax.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace nnhal::kernels {
namespace {

/// Softmax of tensor [outer, axis, inner] in double, along the middle index.
std::vector<double> referenceSoftmax(const std::vector<double>& x, const AxisShape& s,
                                     double beta) {
  std::vector<double> y(x.size());
  for (size_t o = 0; o < s.outer; ++o) {
    for (size_t i = 0; i < s.inner; ++i) {
      auto at = [&](size_t k) { return (o * s.axisSize + k) * s.inner + i; };
      double m = -1e300;
      for (size_t k = 0; k < s.axisSize; ++k) m = std::max(m, x[at(k)]);
      double sum = 0;
      for (size_t k = 0; k < s.axisSize; ++k) sum += std::exp(beta * (x[at(k)] - m));
      for (size_t k = 0; k < s.axisSize; ++k) y[at(k)] = std::exp(beta * (x[at(k)] - m)) / sum;
    }
  }
  return y;
}

TEST(SoftmaxTest, FloatLastAxis) {
  const AxisShape shape{2, 4, 1};
  const std::vector<float> in{1, 2, 3, 4, -1, -1, -1, -1};
  std::vector<float> out(in.size());
  softmaxFloat32(in.data(), out.data(), shape, 1.0f, 0, shape.items());
  const auto ref = referenceSoftmax(std::vector<double>(in.begin(), in.end()), shape, 1.0);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-6) << i;
  EXPECT_FLOAT_EQ(out[4], 0.25f);
}

TEST(SoftmaxTest, FloatInnerAxisWithBetaInPieces) {
  const AxisShape shape{3, 5, 4};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-5.0f, 5.0f);
  std::vector<float> in(shape.outer * shape.axisSize * shape.inner);
  for (float& v : in) v = dist(rng);
  std::vector<float> out(in.size(), -1.0f);
  for (size_t w = 0; w < shape.items(); w += 5) {
    softmaxFloat32(in.data(), out.data(), shape, 0.7f, w, std::min(shape.items(), w + 5));
  }
  const auto ref = referenceSoftmax(std::vector<double>(in.begin(), in.end()), shape, 0.7);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_NEAR(out[i], ref[i], 1e-6) << i;
}

template <typename T>
void checkQuant(float scale, float beta) {
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  const AxisShape shape{4, 6, 2};
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> dist(kMin, std::numeric_limits<T>::max());
  std::vector<T> in(shape.outer * shape.axisSize * shape.inner);
  for (T& v : in) v = static_cast<T>(dist(rng));
  std::vector<T> out(in.size());
  const auto table = makeSoftmaxExpTable(beta, scale);
  softmaxQuant8<T>(in.data(), out.data(), shape, table, 0, shape.items());
  std::vector<double> real(in.size());
  for (size_t i = 0; i < in.size(); ++i) real[i] = scale * in[i];  // zero point cancels out
  const auto ref = referenceSoftmax(real, shape, beta);
  for (size_t i = 0; i < in.size(); ++i) {
    const double expected = std::min(255.0, std::round(ref[i] * 256.0)) + kMin;
    EXPECT_NEAR(out[i], expected, 1.0) << i;
  }
}

TEST(SoftmaxTest, QuantUint8WithinOneStep) { checkQuant<uint8_t>(0.05f, 1.0f); }
TEST(SoftmaxTest, QuantInt8WithinOneStep) { checkQuant<int8_t>(0.1f, 0.5f); }

TEST(SoftmaxTest, QuantSaturatesACertainClass) {
  const AxisShape shape{1, 3, 1};
  const std::vector<uint8_t> in{0, 255, 0};
  std::vector<uint8_t> out(3);
  softmaxQuant8<uint8_t>(in.data(), out.data(), shape, makeSoftmaxExpTable(1.0f, 1.0f), 0, 1);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 255, 0}));
  const std::vector<int8_t> same{5, 5, 5, 5};
  std::vector<int8_t> sout(4);
  softmaxQuant8<int8_t>(same.data(), sout.data(), AxisShape{1, 4, 1},
                        makeSoftmaxExpTable(1.0f, 1.0f), 0, 1);
  EXPECT_EQ(sout, (std::vector<int8_t>{-64, -64, -64, -64}));  // 0.25 * 256 - 128
}

TEST(SoftmaxTest, ExpTable) {
  const auto table = makeSoftmaxExpTable(2.0f, 0.5f);
  EXPECT_EQ(table[0], 1.0f);
  EXPECT_NEAR(table[1], std::exp(-1.0), 1e-7);
  EXPECT_NEAR(table[10], std::exp(-10.0), 1e-10);
}

}  // namespace
}  // namespace nnhal::kernels
