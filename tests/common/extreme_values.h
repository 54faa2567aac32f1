// tests/common/extreme_values.h — input bytes at the limits of their operand type, and
// models rescaled to extreme quantization parameters, for the sweeps that look for undefined
// behaviour (tests/cts/extremes_test.cpp, tests/gpu/gpu_extremes_test.cpp).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "hal/operand_utils.h"
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

/// fillWithExtremes for each main input's bytes of `model` (`inputs` in main.inputIndexes
/// order, as a CTS model keeps them; an input without bytes stays empty).
inline void fillInputsWithExtremes(const Model& model, std::vector<std::vector<uint8_t>>& inputs) {
  const std::vector<uint32_t>& indexes = model.main.inputIndexes;
  for (size_t k = 0; k < indexes.size() && k < inputs.size(); ++k) {
    fillWithExtremes(model.main.operands[indexes[k]].type, inputs[k]);
  }
}

inline bool isAsymmetric(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
         type == OperandType::TENSOR_QUANT16_ASYMM;
}

/// [min, max] of an asymmetric type's zero point.
inline std::pair<int32_t, int32_t> zeroPointRange(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return {-128, 127};
    case OperandType::TENSOR_QUANT16_ASYMM:
      return {0, 65535};
    default:
      return {0, 255};
  }
}

inline bool isComputed(const Operand& o) {
  return o.lifetime == OperandLifeTime::TEMPORARY_VARIABLE ||
         o.lifetime == OperandLifeTime::SUBGRAPH_OUTPUT;
}

/// The quantization extremes applyExtreme gives a model: the scales of the operands its
/// operations compute times 2^-30 or 2^30, or every asymmetric zero point at its type's
/// lowest or highest value.
enum class Extreme { kTinyOutputScales, kHugeOutputScales, kLowZeroPoints, kHighZeroPoints };
inline constexpr Extreme kEveryExtreme[] = {Extreme::kTinyOutputScales, Extreme::kHugeOutputScales,
                                            Extreme::kLowZeroPoints, Extreme::kHighZeroPoints};

inline const char* toString(Extreme e) {
  switch (e) {
    case Extreme::kTinyOutputScales:
      return "output scales x 2^-30";
    case Extreme::kHugeOutputScales:
      return "output scales x 2^30";
    case Extreme::kLowZeroPoints:
      return "lowest zero points";
    case Extreme::kHighZeroPoints:
      return "highest zero points";
  }
  return "?";
}

/// Applies `extreme` to every subgraph of `model`; returns how many operands it changed.
inline size_t applyExtreme(Extreme extreme, Model& model) {
  size_t changed = 0;
  auto change = [&](Subgraph& graph) {
    for (Operand& o : graph.operands) {
      if (!hal::isQuantizedType(o.type) || o.scale <= 0.0f) continue;
      switch (extreme) {
        case Extreme::kTinyOutputScales:
        case Extreme::kHugeOutputScales:
          if (!isComputed(o)) continue;
          o.scale = std::ldexp(o.scale, extreme == Extreme::kTinyOutputScales ? -30 : 30);
          break;
        case Extreme::kLowZeroPoints:
        case Extreme::kHighZeroPoints:
          if (!isAsymmetric(o.type)) continue;
          const auto [low, high] = zeroPointRange(o.type);
          o.zeroPoint = extreme == Extreme::kLowZeroPoints ? low : high;
          break;
      }
      ++changed;
    }
  };
  change(model.main);
  for (Subgraph& graph : model.referenced) change(graph);
  return changed;
}

}  // namespace nnhal::testing
