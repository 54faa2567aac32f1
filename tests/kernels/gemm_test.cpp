#include "kernels/gemm.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/isa.h"
#include "kernels/kernel_test_util.h"
#include "kernels/quantization.h"
#if defined(NNHAL_X86_KERNELS)
#include "kernels/x86/x86_kernels.h"
#endif

namespace nnhal::kernels {
namespace {

using testing::randomBytes;
using testing::randomFloats;
using testing::randomInt;
using testing::randomInts;

// Multipliers spread over several orders of magnitude, some above 1 (left shifts).
std::vector<QuantizedMultiplier> randomMultipliers(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<double> logDist(std::log(1e-6), std::log(4.0));
  std::vector<QuantizedMultiplier> m(n);
  for (auto& q : m) EXPECT_TRUE(quantizeMultiplier(std::exp(logDist(rng)), &q));
  return m;
}

struct QuantCase {
  size_t rows, n, k, lda;
  bool inputSigned, weightsSigned;
};

// Every test of the GEMM family runs at each instruction-set level this CPU supports.
class QuantGemmTest : public ::testing::TestWithParam<IsaLevel> {};
class FloatGemmTest : public ::testing::TestWithParam<IsaLevel> {};

std::string levelName(const ::testing::TestParamInfo<IsaLevel>& info) {
  return std::string(toString(info.param));
}

// Runs quantGemm at `level` and quantGemmPortable on random data; both must equal the
// direct formula.
void checkQuantGemm(std::mt19937& rng, const QuantCase& c, IsaLevel level) {
  const int32_t za = c.inputSigned ? randomInt(rng, -128, 127) : randomInt(rng, 0, 255);
  const int32_t zw = c.weightsSigned ? randomInt(rng, -128, 127) : randomInt(rng, 0, 255);
  const QuantGemmOffsets o = quantGemmOffsets(c.inputSigned, za, c.weightsSigned, zw);
  // Raw operands (bytes as stored in the model).
  const std::vector<uint8_t> input = randomBytes<uint8_t>(rng, c.rows * c.lda + 4);
  const std::vector<uint8_t> weights = randomBytes<uint8_t>(rng, c.n * c.k);
  const std::vector<int32_t> bias = randomInts<int32_t>(rng, c.n, -100000, 100000);
  const auto multipliers = randomMultipliers(rng, c.n);
  const int32_t zo = randomInt(rng, 0, 255);

  // Transformed A rows and their sums.
  const size_t kPadded = quantPaddedK(c.k);
  std::vector<uint8_t> a(c.rows * c.lda + kPadded, 0);
  for (size_t m = 0; m < c.rows; ++m) copyXor(&input[m * c.lda], c.k, o.aMask, &a[m * c.lda]);
  std::vector<int32_t> rowSums(c.rows);
  quantRowSums(a.data(), c.lda, c.rows, c.k, rowSums.data(), level);

  const size_t columns = gemmGroups(c.n) * kGemmGroup;
  std::vector<int8_t> packed(quantPackedWeightsBytes(c.n, c.k));
  std::vector<int32_t> columnSums(columns), columnOffset(columns), mult(columns), shift(columns);
  packQuantWeights(weights.data(), c.n, c.k, o.wMask, packed.data(), columnSums.data());
  quantColumnOffsets(bias.data(), columnSums.data(), c.n, c.k, o.zaPrime, o.zwPrime,
                     columnOffset.data());
  bool anyLeft = false;
  for (size_t j = 0; j < c.n; ++j) {
    mult[j] = multipliers[j].multiplier;
    shift[j] = multipliers[j].shift;
    anyLeft |= shift[j] > 0;
  }
  QuantGemmParams p;
  p.packedWeights = packed.data();
  p.k = c.k;
  p.n = c.n;
  p.columnOffset = columnOffset.data();
  p.multiplier = mult.data();
  p.shift = shift.data();
  p.anyLeftShift = anyLeft;
  p.rowSumFactor = -o.zwPrime;
  p.outputZeroPoint = zo;
  // Half the cases clamp at or above the zero point, as a fused RELU does (the AVX-512
  // requantizer then leaves out the rounding of negatives).
  const int32_t lo = randomInt(rng, 0, 1) == 1 ? std::min(zo + randomInt(rng, 0, 3), 250) : 3;
  p.outputMin = lo;
  p.outputMax = 250;

  std::vector<uint8_t> expected(c.rows * c.n);
  for (size_t m = 0; m < c.rows; ++m) {
    for (size_t j = 0; j < c.n; ++j) {
      int32_t acc = bias[j];
      for (size_t i = 0; i < c.k; ++i) {
        const int32_t x =
            c.inputSigned ? static_cast<int8_t>(input[m * c.lda + i]) : input[m * c.lda + i];
        const int32_t w =
            c.weightsSigned ? static_cast<int8_t>(weights[j * c.k + i]) : weights[j * c.k + i];
        acc += (x - za) * (w - zw);
      }
      const int32_t v = multiplyByQuantizedMultiplier(acc, multipliers[j]) + zo;
      expected[m * c.n + j] = static_cast<uint8_t>(std::clamp(v, lo, 250));
    }
  }
  std::vector<uint8_t> fast(c.rows * c.n, 0xEE), portable(c.rows * c.n, 0xEE);
  quantGemm(a.data(), c.lda, rowSums.data(), c.rows, p, 0, gemmGroups(c.n), fast.data(), c.n,
            level);
  quantGemmPortable(a.data(), c.lda, rowSums.data(), c.rows, p, 0, gemmGroups(c.n), portable.data(),
                    c.n);
  ASSERT_EQ(fast, expected) << "rows " << c.rows << " n " << c.n << " k " << c.k;
  ASSERT_EQ(portable, expected) << "rows " << c.rows << " n " << c.n << " k " << c.k;
}

TEST_P(QuantGemmTest, MatchesFormulaOnRandomShapes) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 200; ++iter) {
    QuantCase c;
    c.rows = randomInt(rng, 1, 37);
    c.n = randomInt(rng, 1, 110);
    c.k = randomInt(rng, 1, 90);
    c.lda = quantPaddedK(c.k) + 4 * randomInt(rng, 0, 3) + randomInt(rng, 0, 1) * 3;
    c.inputSigned = iter % 2 == 1;
    c.weightsSigned = (iter / 2) % 2 == 1;
    SCOPED_TRACE(iter);
    checkQuantGemm(rng, c, GetParam());
  }
}

TEST_P(QuantGemmTest, LargeReduction) {
  std::mt19937 rng(99);
  checkQuantGemm(rng, {17, 50, 2000, 2000, false, false}, GetParam());
  checkQuantGemm(rng, {9, 33, 1500, 1500, true, true}, GetParam());
}

// More rows than one block of rows a level widens at once (AVX2: 16 KiB of int16, 408 rows
// of k = 20, the last block odd), and reductions too long for two widened rows (k > 4096),
// which a level multiplies without widening first.
TEST_P(QuantGemmTest, ManyRowsAndReductionsPastTheWidenedBlock) {
  std::mt19937 rng(5);
  checkQuantGemm(rng, {1101, 40, 20, 23, false, false}, GetParam());
  checkQuantGemm(rng, {1101, 17, 20, 20, true, true}, GetParam());
  checkQuantGemm(rng, {5, 20, 4100, 4100, false, true}, GetParam());
  checkQuantGemm(rng, {4, 18, 4096, 4099, true, false}, GetParam());
}

TEST_P(QuantGemmTest, ColumnGroupSubrangeWritesOnlyThoseColumns) {
  std::mt19937 rng(5);
  const size_t rows = 11, n = 70, k = 20;
  const QuantGemmOffsets o = quantGemmOffsets(false, 7, false, 9);
  std::vector<uint8_t> a = randomBytes<uint8_t>(rng, rows * k);
  std::vector<uint8_t> w = randomBytes<uint8_t>(rng, n * k);
  std::vector<int8_t> packed(quantPackedWeightsBytes(n, k));
  const size_t columns = gemmGroups(n) * kGemmGroup;
  std::vector<int32_t> sums(columns), offsets(columns), mult(columns, 1 << 30), shift(columns, -8);
  packQuantWeights(w.data(), n, k, o.wMask, packed.data(), sums.data());
  quantColumnOffsets(nullptr, sums.data(), n, k, o.zaPrime, o.zwPrime, offsets.data());
  std::vector<int32_t> rowSums(rows);
  quantRowSums(a.data(), k, rows, k, rowSums.data(), GetParam());
  QuantGemmParams p{
      packed.data(), k, n, offsets.data(), mult.data(), shift.data(), false, -o.zwPrime, 0, 0, 255};
  std::vector<uint8_t> whole(rows * n), parts(rows * n, 0xEE);
  quantGemm(a.data(), k, rowSums.data(), rows, p, 0, gemmGroups(n), whole.data(), n, GetParam());
  quantGemm(a.data(), k, rowSums.data(), rows, p, 1, 3, parts.data(), n, GetParam());
  for (size_t m = 0; m < rows; ++m) {
    for (size_t j = 0; j < n; ++j) {
      if (j >= 16 && j < 48) {
        EXPECT_EQ(parts[m * n + j], whole[m * n + j]);
      } else {
        EXPECT_EQ(parts[m * n + j], 0xEE) << "column " << j << " outside groups [1, 3)";
      }
    }
  }
}

TEST_P(QuantGemmTest, RowSumsMatchPlainSums) {
  std::mt19937 rng(8);
  for (size_t k : {1u, 3u, 8u, 15u, 16u, 24u, 27u, 31u, 56u, 63u, 64u, 65u, 130u, 1000u}) {
    const std::vector<uint8_t> a = randomBytes<uint8_t>(rng, 3 * (k + 5));
    std::vector<int32_t> sums(3);
    quantRowSums(a.data(), k + 5, 3, k, sums.data(), GetParam());
    for (size_t m = 0; m < 3; ++m) {
      int32_t expected = 0;
      for (size_t i = 0; i < k; ++i) expected += a[m * (k + 5) + i];
      EXPECT_EQ(sums[m], expected) << "k " << k;
    }
  }
}

#if defined(NNHAL_X86_KERNELS)
// The vector requantizers (AVX-512: 16 lanes, AVX2: 8 lanes) against the scalar formula,
// on edge values, exact halves and every shift, at each level this CPU supports.
TEST(QuantGemmVectorTest, VectorRequantizationIsBitExact) {
  const bool avx512 = detectSupportedIsa() >= IsaLevel::kAvx512;
  if (detectSupportedIsa() < IsaLevel::kAvx2) GTEST_SKIP() << "no AVX2 on this CPU";
  std::mt19937 rng(77);
  std::uniform_int_distribution<int32_t> anyInt(std::numeric_limits<int32_t>::min(),
                                                std::numeric_limits<int32_t>::max());
  for (int iter = 0; iter < 20000; ++iter) {
    alignas(64) int32_t x[16], m[16], s[16], out[16];
    constexpr int32_t kEdges[] = {std::numeric_limits<int32_t>::min(),
                                  std::numeric_limits<int32_t>::min() + 1,
                                  -65536,
                                  -3,
                                  -2,
                                  -1,
                                  0,
                                  1,
                                  2,
                                  3,
                                  65536,
                                  std::numeric_limits<int32_t>::max()};
    for (int i = 0; i < 16; ++i) {
      // Mix small accumulators (rounding ties matter there), edge values and arbitrary ones.
      x[i] = iter % 3 == 0 ? anyInt(rng) : randomInt(rng, -70000, 70000);
      if (iter % 5 == 0) x[i] = kEdges[randomInt(rng, 0, 11)];
      m[i] = randomInt(rng, 1 << 30, std::numeric_limits<int32_t>::max());
      if (iter % 7 == 0) m[i] = 1 << 30;  // exact halves
      if (iter % 11 == 0) m[i] = 0;
      s[i] = randomInt(rng, -31, 30);
      if (iter % 13 == 0) s[i] = i % 2 == 0 ? -31 : 30;
    }
    if (avx512) {
      x86::multiplyByQuantizedMultiplier16Avx512(x, m, s, out);
      for (int i = 0; i < 16; ++i) {
        ASSERT_EQ(out[i], multiplyByQuantizedMultiplier(x[i], QuantizedMultiplier{m[i], s[i]}))
            << "x " << x[i] << " m " << m[i] << " shift " << s[i];
      }
    }
    x86::multiplyByQuantizedMultiplier8Avx2(x, m, s, out);
    x86::multiplyByQuantizedMultiplier8Avx2(x + 8, m + 8, s + 8, out + 8);
    for (int i = 0; i < 16; ++i) {
      ASSERT_EQ(out[i], multiplyByQuantizedMultiplier(x[i], QuantizedMultiplier{m[i], s[i]}))
          << "AVX2: x " << x[i] << " m " << m[i] << " shift " << s[i];
    }
  }
}
#endif

TEST_P(FloatGemmTest, FastAndPortableMatchFormula) {
  std::mt19937 rng(4321);
  for (int iter = 0; iter < 100; ++iter) {
    const size_t rows = randomInt(rng, 1, 30), n = randomInt(rng, 1, 100),
                 k = randomInt(rng, 1, 80), lda = k + randomInt(rng, 0, 3);
    const std::vector<float> a = randomFloats(rng, rows * lda);
    const std::vector<float> w = randomFloats(rng, n * k);
    std::vector<float> bias = randomFloats(rng, gemmGroups(n) * kGemmGroup);
    std::vector<float> packed(floatPackedWeightsCount(n, k));
    packFloatWeights(w.data(), n, k, packed.data());
    const FloatGemmParams p{packed.data(), k, n, bias.data(), -2.0f, 2.5f};
    std::vector<float> fast(rows * n), portable(rows * n);
    floatGemm(a.data(), lda, rows, p, 0, gemmGroups(n), fast.data(), n, GetParam());
    floatGemmPortable(a.data(), lda, rows, p, 0, gemmGroups(n), portable.data(), n);
    for (size_t m = 0; m < rows; ++m) {
      for (size_t j = 0; j < n; ++j) {
        double acc = 0;
        for (size_t i = 0; i < k; ++i) acc += double{a[m * lda + i]} * w[j * k + i];
        const double expected = std::clamp(acc + bias[j], -2.0, 2.5);
        ASSERT_NEAR(fast[m * n + j], expected, 1e-4) << iter;
        ASSERT_NEAR(portable[m * n + j], expected, 1e-4) << iter;
      }
    }
  }
}

// The packed layout, element by element from its definition ([group][k/4][16][4], padding
// zero), and packing in steps of column groups gives the same bytes as packing at once.
TEST(Gemm, PackQuantWeightsInStepsMatchesTheLayout) {
  std::mt19937 rng(11);
  for (const auto& [n, k] : std::vector<std::pair<size_t, size_t>>{
           {1, 1}, {16, 4}, {17, 5}, {40, 27}, {100, 64}, {33, 130}}) {
    for (const uint8_t mask : {uint8_t{0}, uint8_t{0x80}}) {
      const std::vector<uint8_t> w = randomBytes<uint8_t>(rng, n * k);
      const size_t kPadded = quantPaddedK(k);
      const size_t columns = gemmGroups(n) * kGemmGroup;
      std::vector<int8_t> expected(quantPackedWeightsBytes(n, k), 0);
      std::vector<int32_t> expectedSums(columns, 0);
      for (size_t c = 0; c < n; ++c) {
        for (size_t i = 0; i < k; ++i) {
          const auto v = static_cast<int8_t>(w[c * k + i] ^ mask);
          expected[(c / kGemmGroup) * kGemmGroup * kPadded + (i / 4) * kGemmGroup * 4 +
                   (c % kGemmGroup) * 4 + i % 4] = v;
          expectedSums[c] += v;
        }
      }
      std::vector<int8_t> whole(expected.size(), 99), steps(expected.size(), 99);
      std::vector<int32_t> wholeSums(columns, 99), stepSums(columns, 99);
      packQuantWeights(w.data(), n, k, mask, whole.data(), wholeSums.data());
      for (size_t g = gemmGroups(n); g-- > 0;) {  // any order
        packQuantWeightGroups(w.data(), n, k, mask, steps.data(), stepSums.data(), g, g + 1);
      }
      EXPECT_EQ(whole, expected) << n << "x" << k;
      EXPECT_EQ(wholeSums, expectedSums) << n << "x" << k;
      EXPECT_EQ(steps, expected) << n << "x" << k;
      EXPECT_EQ(stepSums, expectedSums) << n << "x" << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryLevel, QuantGemmTest, ::testing::ValuesIn(supportedIsaLevels()),
                         levelName);
INSTANTIATE_TEST_SUITE_P(EveryLevel, FloatGemmTest, ::testing::ValuesIn(supportedIsaLevels()),
                         levelName);

}  // namespace
}  // namespace nnhal::kernels
