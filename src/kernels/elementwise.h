// kernels/elementwise.h — element-wise binary arithmetic (ADD, MUL) with NumPy-style
// broadcasting, for float32, int32 and 8-bit asymmetric quantized tensors.
//
// All tensors are dense row-major. The output has the broadcast shape of the two inputs;
// a BroadcastLayout maps each output element to the element of each input it reads.
// Every kernel computes the output elements [begin, end) (flat row-major indexes) and
// may be called concurrently on disjoint ranges.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "kernels/isa.h"
#include "kernels/quantization.h"

namespace nnhal::kernels {

/// Highest rank a broadcast operand may have.
inline constexpr int kMaxBroadcastRank = 6;

/// Maps flat output indexes to input element offsets. The output is viewed as a row-major
/// tensor of `dims[0..rank)` (adjacent dimensions are merged where possible, so `rank` is
/// often smaller than the operands' rank); `strides1`/`strides2` give, per dimension, the
/// element step of input 1 / input 2 (0 where that input is broadcast along it).
struct BroadcastLayout {
  int rank = 1;
  std::array<size_t, kMaxBroadcastRank> dims{};
  std::array<size_t, kMaxBroadcastRank> strides1{};
  std::array<size_t, kMaxBroadcastRank> strides2{};
  size_t outputCount = 0;  ///< product of dims: number of output elements
};

/// Builds the layout for inputs of dimensions `a` and `b` (NumPy broadcasting: trailing
/// dimensions are aligned; sizes must be equal or one of them 1; a 0 size pairs only with
/// 0 or 1 and gives 0). An empty dimension list is a scalar-shaped tensor of one element.
/// Returns nullopt when the shapes are incompatible or a rank exceeds kMaxBroadcastRank.
std::optional<BroadcastLayout> makeBroadcastLayout(std::span<const uint32_t> a,
                                                   std::span<const uint32_t> b) noexcept;

/// out = clamp(a + b, outMin, outMax) over output elements [begin, end).
void addFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                float outMin, float outMax, size_t begin, size_t end) noexcept;
/// out = clamp(a * b, outMin, outMax) over output elements [begin, end).
void mulFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                float outMin, float outMax, size_t begin, size_t end) noexcept;
/// out = a + b with two's-complement wrap-around, over output elements [begin, end).
void addInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
              size_t begin, size_t end) noexcept;
/// out = a * b with two's-complement wrap-around, over output elements [begin, end).
void mulInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
              size_t begin, size_t end) noexcept;

/// Precomputed requantization of a quantized ADD (TFLite's scheme): both inputs are moved
/// to a common scale 2*max(scale1, scale2) / 2^leftShift, added in int32, and the sum is
/// rescaled to the output scale.
struct QuantAddParams {
  int32_t inputOffset1 = 0;  ///< -zeroPoint of input 1
  int32_t inputOffset2 = 0;  ///< -zeroPoint of input 2
  int leftShift = 20;
  QuantizedMultiplier inputMultiplier1;
  QuantizedMultiplier inputMultiplier2;
  QuantizedMultiplier outputMultiplier;
  int32_t outputZeroPoint = 0;
  int32_t outputMin = 0;  ///< clamp bounds (fused activation and type range), stored units
  int32_t outputMax = 255;
};

/// Computes QuantAddParams for the given scales and zero points and output clamp bounds.
/// Returns nullopt when a scale is not positive and finite or a multiplier is unrepresentable.
std::optional<QuantAddParams> makeQuantAddParams(float scale1, int32_t zeroPoint1, float scale2,
                                                 int32_t zeroPoint2, float outputScale,
                                                 int32_t outputZeroPoint, int32_t outputMin,
                                                 int32_t outputMax) noexcept;

/// Precomputed requantization of a quantized MUL: the int32 product of the zero-point
/// corrected inputs is scaled by scale1 * scale2 / outputScale.
struct QuantMulParams {
  int32_t inputOffset1 = 0;  ///< -zeroPoint of input 1
  int32_t inputOffset2 = 0;  ///< -zeroPoint of input 2
  QuantizedMultiplier outputMultiplier;
  int32_t outputZeroPoint = 0;
  int32_t outputMin = 0;
  int32_t outputMax = 255;
};

/// Computes QuantMulParams. Returns nullopt for non-positive / non-finite scales or an
/// unrepresentable multiplier.
std::optional<QuantMulParams> makeQuantMulParams(float scale1, int32_t zeroPoint1, float scale2,
                                                 int32_t zeroPoint2, float outputScale,
                                                 int32_t outputZeroPoint, int32_t outputMin,
                                                 int32_t outputMax) noexcept;

/// Quantized ADD over output elements [begin, end); T is uint8_t or int8_t. Contiguous runs
/// use the AVX2 variant from `level` kAvx2 up and the AVX-512 one from kAvx512 up
/// (kernels/isa.h); same result at every level.
template <typename T>
void addQuant8(const T* a, const T* b, T* out, const BroadcastLayout& layout,
               const QuantAddParams& params, size_t begin, size_t end,
               IsaLevel level = activeIsa()) noexcept;
/// Quantized MUL over output elements [begin, end); T is uint8_t or int8_t.
template <typename T>
void mulQuant8(const T* a, const T* b, T* out, const BroadcastLayout& layout,
               const QuantMulParams& params, size_t begin, size_t end) noexcept;

}  // namespace nnhal::kernels
