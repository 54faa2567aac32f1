#include "kernels/binary_math.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/internal/broadcast_loop.h"
#include "kernels/internal/wrapping_int.h"

namespace nnhal::kernels {
namespace {

using internal::broadcastBinary;

bool validScale(float scale) { return scale > 0.0f && std::isfinite(scale); }

}  // namespace

void subFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                float outMin, float outMax, size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end,
                  [=](float x, float y) { return std::min(std::max(x - y, outMin), outMax); });
}

void divFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                float outMin, float outMax, size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end,
                  [=](float x, float y) { return std::min(std::max(x / y, outMin), outMax); });
}

void powFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end, [](float x, float y) { return std::pow(x, y); });
}

void minMaxFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                   bool minimum, size_t begin, size_t end) noexcept {
  if (minimum) {
    broadcastBinary(a, b, out, layout, begin, end, [](float x, float y) { return std::min(x, y); });
  } else {
    broadcastBinary(a, b, out, layout, begin, end, [](float x, float y) { return std::max(x, y); });
  }
}

void preluFloat32(const float* a, const float* alpha, float* out, const BroadcastLayout& layout,
                  size_t begin, size_t end) noexcept {
  broadcastBinary(a, alpha, out, layout, begin, end,
                  [](float x, float s) { return x >= 0.0f ? x : x * s; });
}

void subInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
              size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end, [](int32_t x, int32_t y) {
    return static_cast<int32_t>(static_cast<uint32_t>(x) - static_cast<uint32_t>(y));
  });
}

void divInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
              size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end, [](int32_t x, int32_t y) -> int32_t {
    if (y == 0) return 0;
    if (y == -1) return static_cast<int32_t>(0u - static_cast<uint32_t>(x));
    int32_t q = x / y;  // truncates toward zero
    if (x % y != 0 && ((x < 0) != (y < 0))) --q;
    return q;
  });
}

void minMaxInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
                 bool minimum, size_t begin, size_t end) noexcept {
  if (minimum) {
    broadcastBinary(a, b, out, layout, begin, end,
                    [](int32_t x, int32_t y) { return std::min(x, y); });
  } else {
    broadcastBinary(a, b, out, layout, begin, end,
                    [](int32_t x, int32_t y) { return std::max(x, y); });
  }
}

std::optional<QuantAddParams> makeQuantSubParams(float scale1, int32_t zeroPoint1, float scale2,
                                                 int32_t zeroPoint2, float outputScale,
                                                 int32_t outputZeroPoint, int32_t outputMin,
                                                 int32_t outputMax) noexcept {
  auto params = makeQuantAddParams(scale1, zeroPoint1, scale2, zeroPoint2, outputScale,
                                   outputZeroPoint, outputMin, outputMax);
  if (params) params->inputMultiplier2.multiplier = -params->inputMultiplier2.multiplier;
  return params;
}

template <typename T>
Quant8Table<T> makeRequantizeTable(float inputScale, int32_t inputZeroPoint, float outputScale,
                                   int32_t outputZeroPoint) noexcept {
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  Quant8Table<T> table{};
  for (int32_t q = kMin; q <= kMax; ++q) {
    const double real = static_cast<double>(static_cast<float>(q - inputZeroPoint) * inputScale);
    const double level = real / static_cast<double>(outputScale) + outputZeroPoint;
    const double clamped = std::clamp<double>(level, kMin, kMax);
    table[static_cast<uint8_t>(static_cast<T>(q))] =
        static_cast<T>(static_cast<int32_t>(std::round(clamped)));
  }
  return table;
}

template <typename T>
void minMaxQuant8(const T* a, const T* b, T* out, const BroadcastLayout& layout,
                  const Quant8Table<T>& requantA, const Quant8Table<T>& requantB, bool minimum,
                  size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end, [&](T x, T y) {
    const T ra = requantA[static_cast<uint8_t>(x)];
    const T rb = requantB[static_cast<uint8_t>(y)];
    return minimum ? std::min(ra, rb) : std::max(ra, rb);
  });
}

std::optional<QuantPreluParams> makeQuantPreluParams(float inputScale, int32_t inputZeroPoint,
                                                     float alphaScale, int32_t alphaZeroPoint,
                                                     float outputScale,
                                                     int32_t outputZeroPoint) noexcept {
  if (!validScale(inputScale) || !validScale(alphaScale) || !validScale(outputScale)) {
    return std::nullopt;
  }
  QuantPreluParams p;
  p.inputOffset = -inputZeroPoint;
  p.alphaOffset = -alphaZeroPoint;
  p.outputZeroPoint = outputZeroPoint;
  // As the reference: the positive ratio and the product of the scales are formed in float
  // and widened; the negative ratio divides in double.
  const auto positiveScale = static_cast<double>(inputScale / outputScale);
  const auto productScale = static_cast<double>(inputScale * alphaScale);
  if (!quantizeMultiplier(positiveScale, &p.positive) ||
      !quantizeMultiplier(productScale / outputScale, &p.negative)) {
    return std::nullopt;
  }
  return p;
}

template <typename T>
void preluQuant8(const T* a, const T* alpha, T* out, const BroadcastLayout& layout,
                 const QuantPreluParams& p, size_t begin, size_t end) noexcept {
  static constexpr int32_t kMin = std::numeric_limits<T>::min();
  static constexpr int32_t kMax = std::numeric_limits<T>::max();
  broadcastBinary(a, alpha, out, layout, begin, end, [&p](T x, T s) {
    const int32_t input = static_cast<int32_t>(x) + p.inputOffset;
    int32_t result = 0;
    if (input >= 0) {
      result = multiplyByQuantizedMultiplier(input, p.positive);
    } else {
      const int32_t slope = static_cast<int32_t>(s) + p.alphaOffset;
      result = multiplyByQuantizedMultiplier(input * slope, p.negative);
    }
    return static_cast<T>(std::clamp(internal::wrapAdd(result, p.outputZeroPoint), kMin, kMax));
  });
}

void logicalAnd(const uint8_t* a, const uint8_t* b, uint8_t* out, const BroadcastLayout& layout,
                size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end,
                  [](uint8_t x, uint8_t y) -> uint8_t { return (x != 0 && y != 0) ? 1 : 0; });
}

void logicalOr(const uint8_t* a, const uint8_t* b, uint8_t* out, const BroadcastLayout& layout,
               size_t begin, size_t end) noexcept {
  broadcastBinary(a, b, out, layout, begin, end,
                  [](uint8_t x, uint8_t y) -> uint8_t { return (x != 0 || y != 0) ? 1 : 0; });
}

template Quant8Table<uint8_t> makeRequantizeTable<uint8_t>(float, int32_t, float, int32_t) noexcept;
template Quant8Table<int8_t> makeRequantizeTable<int8_t>(float, int32_t, float, int32_t) noexcept;
template void minMaxQuant8<uint8_t>(const uint8_t*, const uint8_t*, uint8_t*,
                                    const BroadcastLayout&, const Quant8Table<uint8_t>&,
                                    const Quant8Table<uint8_t>&, bool, size_t, size_t) noexcept;
template void minMaxQuant8<int8_t>(const int8_t*, const int8_t*, int8_t*, const BroadcastLayout&,
                                   const Quant8Table<int8_t>&, const Quant8Table<int8_t>&, bool,
                                   size_t, size_t) noexcept;
template void preluQuant8<uint8_t>(const uint8_t*, const uint8_t*, uint8_t*, const BroadcastLayout&,
                                   const QuantPreluParams&, size_t, size_t) noexcept;
template void preluQuant8<int8_t>(const int8_t*, const int8_t*, int8_t*, const BroadcastLayout&,
                                  const QuantPreluParams&, size_t, size_t) noexcept;

}  // namespace nnhal::kernels
