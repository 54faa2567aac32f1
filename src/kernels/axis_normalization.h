// kernels/axis_normalization.h — operations that normalize the vectors along one axis:
// L2_NORMALIZATION (float32 and 8-bit asymmetric quantized), LOCAL_RESPONSE_NORMALIZATION
// and LOG_SOFTMAX (float32).
//
// The tensor is viewed as an AxisShape (kernels/axis_shape.h); kernels process work items
// [begin, end) and may run concurrently on disjoint ranges. Sums are accumulated in double.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/axis_shape.h"

namespace nnhal::kernels {

/// out = x / max(sqrt(sum(x^2)), 1e-6) along the axis (an all-zero vector gives zeros).
void l2NormalizeFloat32(const float* in, float* out, const AxisShape& shape, size_t begin,
                        size_t end) noexcept;

/// Quantized L2 normalization: the output has scale 1/128 and zero point `outputZeroPoint`
/// (128 for uint8_t, 0 for int8_t). With d = q - inputZeroPoint, out = outputZeroPoint +
/// round(128 * d / sqrt(sum(d^2))), saturated to T; an all-zero vector gives the zero point.
template <typename T>
void l2NormalizeQuant8(const T* in, T* out, const AxisShape& shape, int32_t inputZeroPoint,
                       int32_t outputZeroPoint, size_t begin, size_t end) noexcept;

struct LocalResponseParams {
  int32_t radius = 0;  ///< >= 0; the window is [i - radius, i + radius] clipped to the axis
  float bias = 1.0f;
  float alpha = 1.0f;
  float beta = 0.5f;
};

/// out[i] = x[i] / pow(bias + alpha * sum(x[j]^2 for j in window(i)), beta).
void localResponseNormFloat32(const float* in, float* out, const AxisShape& shape,
                              const LocalResponseParams& params, size_t begin, size_t end) noexcept;

/// out = (x - max) * beta - log(sum(exp((x - max) * beta))) along the axis.
void logSoftmaxFloat32(const float* in, float* out, const AxisShape& shape, float beta,
                       size_t begin, size_t end) noexcept;

}  // namespace nnhal::kernels
