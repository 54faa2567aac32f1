// The yardstick's own check: the 16-bit fixed-point logistic and tanh of
// tools/tflite_reference_lstm.h against the real functions, over every input value.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "tools/tflite_reference_lstm.h"

namespace nnhal::tflite_reference {
namespace {

TEST(TfliteReferenceLstm, FixedPointLogisticAndTanhAreWithin16StepsOfTheRealFunctions) {
  // gemmlowp's 16-bit functions round at every step of their polynomial and Newton-Raphson
  // iterations: measured 2.0e-4 (logistic) and 3.7e-4 (tanh) at worst. A wrong constant or
  // shift is off by far more.
  constexpr double kStep = 1.0 / 32768;  // Q0.15
  constexpr double kTolerance = 16 * kStep;
  double worstLogistic = 0.0;
  for (int32_t raw = -32768; raw <= 32767; ++raw) {
    const double x = raw / 4096.0;  // Q3.12, as the gates
    const double got = fixedPointLogistic(static_cast<int16_t>(raw), 3) * kStep;
    worstLogistic = std::max(worstLogistic, std::fabs(got - 1.0 / (1.0 + std::exp(-x))));
  }
  EXPECT_LE(worstLogistic, kTolerance);
  for (int bits = 0; bits <= 6; ++bits) {  // the cell state's tanh reads 15 + log2(scale) bits
    double worstTanh = 0.0;
    for (int32_t raw = -32768; raw <= 32767; ++raw) {
      const double x = std::ldexp(raw, bits - 15);
      const double got = fixedPointTanh(static_cast<int16_t>(raw), bits) * kStep;
      worstTanh = std::max(worstTanh, std::fabs(got - std::tanh(x)));
    }
    EXPECT_LE(worstTanh, kTolerance) << bits << " integer bits";
  }
  EXPECT_EQ(fixedPointLogistic(0, 3), 16384);
  EXPECT_EQ(fixedPointTanh(0, 3), 0);
}

}  // namespace
}  // namespace nnhal::tflite_reference
