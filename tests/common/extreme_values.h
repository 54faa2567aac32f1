// tests/common/extreme_values.h — input bytes at the limits of their operand type, for the
// sweeps that look for undefined behaviour (tests/cts/extremes_test.cpp, the GPU's).
#pragma once

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <vector>

#include "nnhal/types.h"

namespace nnhal::testing {

/// Fills `bytes` (an input of `type`) with the extremes of the type, cycling per element:
/// floats +-3.4e38, +-inf, NaN, -0, the smallest denormal; integers their minimum and
/// maximum, 0 and -1; booleans 0 and 1.
inline void fillWithExtremes(OperandType type, std::vector<uint8_t>& bytes) {
  auto cycle = [&bytes]<typename T>(std::initializer_list<T> values) {
    const std::vector<T> list(values);
    for (size_t e = 0; (e + 1) * sizeof(T) <= bytes.size(); ++e) {
      std::memcpy(bytes.data() + e * sizeof(T), &list[e % list.size()], sizeof(T));
    }
  };
  using F = std::numeric_limits<float>;
  using H = std::numeric_limits<_Float16>;
  switch (type) {
    case OperandType::FLOAT32:
    case OperandType::TENSOR_FLOAT32:
      cycle({F::max(), -F::max(), F::infinity(), -F::infinity(), F::quiet_NaN(), -0.0f,
             F::denorm_min(), 1.0f});
      break;
    case OperandType::FLOAT16:
    case OperandType::TENSOR_FLOAT16:
      cycle({H::max(), -H::max(), H::infinity(), -H::infinity(), H::quiet_NaN(),
             static_cast<_Float16>(-0.0f), H::denorm_min(), static_cast<_Float16>(1.0f)});
      break;
    case OperandType::INT32:
    case OperandType::TENSOR_INT32:
    case OperandType::UINT32:
      cycle({std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(), 0, -1});
      break;
    case OperandType::TENSOR_QUANT16_SYMM:
    case OperandType::TENSOR_QUANT16_ASYMM:
      cycle({std::numeric_limits<int16_t>::min(), std::numeric_limits<int16_t>::max(), int16_t{0},
             int16_t{-1}});
      break;
    case OperandType::BOOL:
    case OperandType::TENSOR_BOOL8:
      cycle({uint8_t{0}, uint8_t{1}});
      break;
    default:  // the 8-bit quantized types
      cycle({uint8_t{0}, uint8_t{255}, uint8_t{128}, uint8_t{127}});
      break;
  }
}

}  // namespace nnhal::testing
