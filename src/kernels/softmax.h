// kernels/softmax.h — SOFTMAX along one axis, for float32 and 8-bit asymmetric quantized
// tensors.
//
// The tensor is viewed as an AxisShape (kernels/axis_shape.h); kernels process work items
// [begin, end) and may run concurrently on disjoint ranges.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "kernels/axis_shape.h"

namespace nnhal::kernels {

/// out = exp(beta * (x - max)) / sum(exp(beta * (x - max))) along the axis.
void softmaxFloat32(const float* in, float* out, const AxisShape& shape, float beta, size_t begin,
                    size_t end) noexcept;

/// exp(-beta * inputScale * d) for d = 0..255, in float as TFLite's
/// PopulateSoftmaxLookupTable computes it: the unnormalised weight of a stored value d steps
/// below the vector's maximum.
using SoftmaxExpTable = std::array<float, 256>;
SoftmaxExpTable makeSoftmaxExpTable(float beta, float inputScale) noexcept;

/// Quantized softmax; the output has scale 1/256 and zero point 0 (uint8_t) or -128
/// (int8_t). Bit-exact with TFLite's quantized softmax on x86 (optimized_ops::Softmax, which
/// LiteRT runs): the table's weights summed in float in element order, each weight times
/// 1 / (sum / 256) in float, rounded (uint8: +0.5 and truncation; int8: half away from
/// zero) and saturated. The NNAPI CPU reference's fixed-point softmax is within one step.
template <typename T>
void softmaxQuant8(const T* in, T* out, const AxisShape& shape, const SoftmaxExpTable& table,
                   size_t begin, size_t end) noexcept;

}  // namespace nnhal::kernels
