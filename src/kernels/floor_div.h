// kernels/floor_div.h — FLOOR_DIV of the org.nnhal.tflite_compat extension: element-wise
// floor(a / b) over a broadcast layout (kernels/elementwise.h), with TFLite's semantics.
//
// Each kernel computes the output elements [begin, end) (flat row-major indexes) and may run
// concurrently on disjoint ranges.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "kernels/elementwise.h"

namespace nnhal::kernels {

/// out = floor(a / b) in float32, IEEE 754 throughout: b == 0 gives +-inf (or NaN for 0 / 0),
/// as TFLite's std::floor(a / b).
void floorDivFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                     size_t begin, size_t end) noexcept;

/// out = floor(a / b) in int32 (rounded toward negative infinity: -7 / 2 = -4); INT32_MIN / -1
/// wraps to INT32_MIN. Every divisor must be non-zero: check with findZeroDivisor first (a
/// zero divisor gives 0 here, never a trap).
void floorDivInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
                   size_t begin, size_t end) noexcept;

/// The position of the first zero among `b[0, count)`, or nullopt when there is none.
std::optional<size_t> findZeroDivisor(const int32_t* b, size_t count) noexcept;

}  // namespace nnhal::kernels
