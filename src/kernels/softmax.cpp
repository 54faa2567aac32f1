#include "kernels/softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace nnhal::kernels {

void softmaxFloat32(const float* in, float* out, const AxisShape& shape, float beta, size_t begin,
                    size_t end) noexcept {
  const size_t n = shape.axisSize, step = shape.inner;
  for (size_t w = begin; w < end; ++w) {
    const size_t base = shape.first(w);
    const float* x = in + base;
    float* y = out + base;
    float maxValue = -std::numeric_limits<float>::infinity();
    for (size_t k = 0; k < n; ++k) maxValue = std::max(maxValue, x[k * step]);
    double sum = 0.0;
    for (size_t k = 0; k < n; ++k) {
      const float e = std::exp((x[k * step] - maxValue) * beta);
      y[k * step] = e;
      sum += e;
    }
    const auto total = static_cast<float>(sum);
    for (size_t k = 0; k < n; ++k) y[k * step] /= total;
  }
}

SoftmaxExpTable makeSoftmaxExpTable(float beta, float inputScale) noexcept {
  // In float, as TFLite's PopulateSoftmaxLookupTable: the product of the scales first.
  const float factor = -inputScale * beta;
  SoftmaxExpTable table{};
  for (size_t d = 0; d < table.size(); ++d) {
    table[d] = std::exp(factor * static_cast<float>(d));
  }
  return table;
}

template <typename T>
void softmaxQuant8(const T* in, T* out, const AxisShape& shape, const SoftmaxExpTable& table,
                   size_t begin, size_t end) noexcept {
  constexpr int32_t kMin = std::numeric_limits<T>::min();
  constexpr int32_t kMax = std::numeric_limits<T>::max();
  constexpr int32_t kOutputZeroPoint = kMin;  // 0 for uint8_t, -128 for int8_t
  constexpr float kOutputScale = 1.0f / 256.0f;
  const size_t n = shape.axisSize, step = shape.inner;
  for (size_t w = begin; w < end; ++w) {
    const size_t base = shape.first(w);
    const T* x = in + base;
    T* y = out + base;
    int32_t maxValue = kMin;
    for (size_t k = 0; k < n; ++k) maxValue = std::max<int32_t>(maxValue, x[k * step]);
    // TFLite's quantized softmax step for step: a float sum in element order, the inverse of
    // sum * (1/256), and each probability in output steps rounded as QuantizeSoftmaxOutput
    // does on x86 (uint8: add 0.5 and truncate; int8: round half away from zero).
    float sum = 0.0f;
    for (size_t k = 0; k < n; ++k) sum += table[static_cast<size_t>(maxValue - x[k * step])];
    const float inverse = 1.0f / (sum * kOutputScale);  // sum >= 1: the maximum gives exp(0)
    for (size_t k = 0; k < n; ++k) {
      const float level = table[static_cast<size_t>(maxValue - x[k * step])] * inverse;
      const int32_t q = std::is_same_v<T, uint8_t>
                            ? static_cast<int32_t>(level + 0.5f)
                            : static_cast<int32_t>(std::round(level)) + kOutputZeroPoint;
      y[k * step] = static_cast<T>(std::clamp(q, kMin, kMax));
    }
  }
}

template void softmaxQuant8<uint8_t>(const uint8_t*, uint8_t*, const AxisShape&,
                                     const SoftmaxExpTable&, size_t, size_t) noexcept;
template void softmaxQuant8<int8_t>(const int8_t*, int8_t*, const AxisShape&,
                                    const SoftmaxExpTable&, size_t, size_t) noexcept;

}  // namespace nnhal::kernels
