#include "kernels/axis_normalization.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace nnhal::kernels {
namespace {

template <typename T>
T clampTo(double value) {
  const double lo = std::numeric_limits<T>::min();
  const double hi = std::numeric_limits<T>::max();
  return static_cast<T>(std::clamp(value, lo, hi));
}

}  // namespace

void l2NormalizeFloat32(const float* in, float* out, const AxisShape& shape, size_t begin,
                        size_t end) noexcept {
  constexpr double kEpsilon = 1e-6;
  for (size_t w = begin; w < end; ++w) {
    const size_t first = shape.first(w), stride = shape.inner;
    double sum = 0.0;
    for (size_t i = 0; i < shape.axisSize; ++i) {
      const double x = in[first + i * stride];
      sum += x * x;
    }
    const double norm = std::max(std::sqrt(sum), kEpsilon);
    for (size_t i = 0; i < shape.axisSize; ++i) {
      const size_t at = first + i * stride;
      out[at] = static_cast<float>(in[at] / norm);
    }
  }
}

template <typename T>
void l2NormalizeQuant8(const T* in, T* out, const AxisShape& shape, int32_t inputZeroPoint,
                       int32_t outputZeroPoint, size_t begin, size_t end) noexcept {
  for (size_t w = begin; w < end; ++w) {
    const size_t first = shape.first(w), stride = shape.inner;
    int64_t sum = 0;
    for (size_t i = 0; i < shape.axisSize; ++i) {
      const int64_t d = int64_t{in[first + i * stride]} - inputZeroPoint;
      sum += d * d;
    }
    const double factor = sum > 0 ? 128.0 / std::sqrt(static_cast<double>(sum)) : 0.0;
    for (size_t i = 0; i < shape.axisSize; ++i) {
      const size_t at = first + i * stride;
      const double d = static_cast<double>(int32_t{in[at]} - inputZeroPoint);
      out[at] = clampTo<T>(std::round(d * factor) + outputZeroPoint);
    }
  }
}

template void l2NormalizeQuant8<uint8_t>(const uint8_t*, uint8_t*, const AxisShape&, int32_t,
                                         int32_t, size_t, size_t) noexcept;
template void l2NormalizeQuant8<int8_t>(const int8_t*, int8_t*, const AxisShape&, int32_t, int32_t,
                                        size_t, size_t) noexcept;

void localResponseNormFloat32(const float* in, float* out, const AxisShape& shape,
                              const LocalResponseParams& params, size_t begin,
                              size_t end) noexcept {
  const auto size = static_cast<int64_t>(shape.axisSize);
  for (size_t w = begin; w < end; ++w) {
    const size_t first = shape.first(w), stride = shape.inner;
    for (int64_t i = 0; i < size; ++i) {
      const int64_t lo = std::max<int64_t>(0, i - params.radius);
      const int64_t hi = std::min<int64_t>(size, i + params.radius + 1);
      double sum = 0.0;
      for (int64_t j = lo; j < hi; ++j) {
        const double x = in[first + static_cast<size_t>(j) * stride];
        sum += x * x;
      }
      const double multiplier =
          std::pow(static_cast<double>(params.bias) + params.alpha * sum, -double{params.beta});
      const size_t at = first + static_cast<size_t>(i) * stride;
      out[at] = static_cast<float>(in[at] * multiplier);
    }
  }
}

void logSoftmaxFloat32(const float* in, float* out, const AxisShape& shape, float beta,
                       size_t begin, size_t end) noexcept {
  for (size_t w = begin; w < end; ++w) {
    const size_t first = shape.first(w), stride = shape.inner;
    float maxValue = -std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < shape.axisSize; ++i)
      maxValue = std::max(maxValue, in[first + i * stride]);
    double sum = 0.0;
    for (size_t i = 0; i < shape.axisSize; ++i) {
      sum += std::exp((double{in[first + i * stride]} - maxValue) * beta);
    }
    const double logSum = std::log(sum);
    for (size_t i = 0; i < shape.axisSize; ++i) {
      const size_t at = first + i * stride;
      out[at] = static_cast<float>((double{in[at]} - maxValue) * beta - logSum);
    }
  }
}

}  // namespace nnhal::kernels
