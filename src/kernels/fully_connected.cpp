#include "kernels/fully_connected.h"

#include <algorithm>

#include "kernels/internal/wrapping_int.h"

namespace nnhal::kernels {

ConvGeometry fullyConnectedGeometry(uint32_t batches, uint32_t inputSize, uint32_t numUnits) {
  ConvGeometry g;
  g.batches = 1;
  g.inHeight = 1;
  g.inWidth = batches;
  g.inDepth = inputSize;
  g.outHeight = 1;
  g.outWidth = batches;
  g.outDepth = numUnits;
  return g;
}

template <typename T>
void fullyConnectedQuantReference(const T* input, size_t batches, size_t inputSize,
                                  const T* weights, size_t numUnits, int32_t inputZeroPoint,
                                  int32_t weightsZeroPoint, const int32_t* bias,
                                  QuantizedMultiplier multiplier, int32_t outputZeroPoint,
                                  int32_t outputMin, int32_t outputMax, T* output) noexcept {
  for (size_t b = 0; b < batches; ++b) {
    for (size_t u = 0; u < numUnits; ++u) {
      int32_t sum = bias != nullptr ? bias[u] : 0;
      for (size_t i = 0; i < inputSize; ++i) {
        sum = internal::wrapAdd(
            sum, (static_cast<int32_t>(input[b * inputSize + i]) - inputZeroPoint) *
                     (static_cast<int32_t>(weights[u * inputSize + i]) - weightsZeroPoint));
      }
      const int32_t v =
          internal::wrapAdd(multiplyByQuantizedMultiplier(sum, multiplier), outputZeroPoint);
      output[b * numUnits + u] = static_cast<T>(std::clamp(v, outputMin, outputMax));
    }
  }
}

template void fullyConnectedQuantReference<uint8_t>(const uint8_t*, size_t, size_t, const uint8_t*,
                                                    size_t, int32_t, int32_t, const int32_t*,
                                                    QuantizedMultiplier, int32_t, int32_t, int32_t,
                                                    uint8_t*) noexcept;
template void fullyConnectedQuantReference<int8_t>(const int8_t*, size_t, size_t, const int8_t*,
                                                   size_t, int32_t, int32_t, const int32_t*,
                                                   QuantizedMultiplier, int32_t, int32_t, int32_t,
                                                   int8_t*) noexcept;

void fullyConnectedFloatReference(const float* input, size_t batches, size_t inputSize,
                                  const float* weights, size_t numUnits, const float* bias,
                                  float outputMin, float outputMax, float* output) noexcept {
  for (size_t b = 0; b < batches; ++b) {
    for (size_t u = 0; u < numUnits; ++u) {
      float sum = 0.0f;
      for (size_t i = 0; i < inputSize; ++i) {
        sum += input[b * inputSize + i] * weights[u * inputSize + i];
      }
      if (bias != nullptr) sum += bias[u];
      output[b * numUnits + u] = std::min(std::max(sum, outputMin), outputMax);
    }
  }
}

}  // namespace nnhal::kernels
