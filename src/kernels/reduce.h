// kernels/reduce.h — MEAN over a set of axes of a dense row-major tensor, for float32 and
// 8-bit asymmetric quantized tensors.
//
// A ReduceLayout splits the input dimensions into kept and reduced ones. Output element o
// (flat row-major over the kept dimensions, in order) is the mean of the input elements
// whose kept coordinates are o's. Kernels process output elements [begin, end) and may run
// concurrently on disjoint ranges.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace nnhal::kernels {

/// Highest input rank a reduction supports.
inline constexpr int kMaxReduceRank = 6;

/// Kept and reduced dimensions with their input element strides (adjacent dimensions of
/// the same kind are merged). `reducedCount` is the number of elements averaged per output.
struct ReduceLayout {
  int keptRank = 0;
  std::array<size_t, kMaxReduceRank> keptDims{};
  std::array<size_t, kMaxReduceRank> keptStrides{};
  int reducedRank = 0;
  std::array<size_t, kMaxReduceRank> reducedDims{};
  std::array<size_t, kMaxReduceRank> reducedStrides{};
  size_t outputCount = 1;
  size_t reducedCount = 1;
};

/// Builds the layout of an input with `dims`, reducing dimension d when `reduced[d]`.
/// Returns nullopt if the sizes differ or the rank exceeds kMaxReduceRank.
std::optional<ReduceLayout> makeReduceLayout(std::span<const uint32_t> dims,
                                             std::span<const bool> reduced) noexcept;

/// Float mean (accumulated in double). An empty reduction (reducedCount 0) gives 0.
void meanFloat32(const float* in, float* out, const ReduceLayout& layout, size_t begin,
                 size_t end) noexcept;

/// Requantization of a quantized mean: out = round((mean(q) - inputZeroPoint) * scaleRatio)
/// + outputZeroPoint, saturated, with scaleRatio = inputScale / outputScale: the exact mean
/// rounded once (half away from zero), as XNNPACK (what LiteRT runs) computes it. TFLite's
/// reference kernels and the NNAPI CPU reference (which truncate, or round twice) are within
/// one step of it (docs/TESTING.md).
struct MeanQuantParams {
  double scaleRatio = 1.0;
  int32_t inputZeroPoint = 0;
  int32_t outputZeroPoint = 0;
};

/// Quantized mean; T is uint8_t or int8_t. An empty reduction gives outputZeroPoint.
template <typename T>
void meanQuant8(const T* in, T* out, const ReduceLayout& layout, const MeanQuantParams& params,
                size_t begin, size_t end) noexcept;

}  // namespace nnhal::kernels
