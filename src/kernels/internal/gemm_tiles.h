// kernels/internal/gemm_tiles.h — small helpers of the GEMM variants (portable and x86).
//
// In an unnamed namespace on purpose: the files of src/kernels/x86/ are compiled for other
// instruction sets, and each must get its own copy (kernels/x86/simd_avx512.h says why).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/gemm.h"
#include "kernels/internal/wrapping_int.h"

namespace nnhal::kernels::internal {
namespace {

/// How many column groups the next panel takes (the micro-kernels handle 1..3).
inline size_t panelGroups(size_t remaining) {
  if (remaining == 4) return 2;
  return remaining < 3 ? remaining : 3;
}

/// The tile instantiation for `rows` rows (1..MaxRows; more takes MaxRows), one column
/// group per NV: make.template operator()<MR, NV>() returns it (a function pointer).
template <int MaxRows, int NV, int MR = 1, typename Make>
auto tileForRows(size_t rows, Make make) {
  if constexpr (MR < MaxRows) {
    if (rows > MR) return tileForRows<MaxRows, NV, MR + 1>(rows, make);
  }
  return make.template operator()<MR, NV>();
}

/// The same for `groups` column groups as well (1..MaxGroups; more takes MaxGroups): one
/// place that turns run-time sizes into a micro-kernel instantiation.
template <int MaxRows, int MaxGroups, int NV = 1, typename Make>
auto tileFor(size_t rows, size_t groups, Make make) {
  if constexpr (NV < MaxGroups) {
    if (groups > NV) return tileFor<MaxRows, MaxGroups, NV + 1>(rows, groups, make);
  }
  return tileForRows<MaxRows, NV>(rows, make);
}

/// The row term rowSumFactor * rowSums[m] (0 when the factor is 0: rowSums is not read).
inline int32_t rowTerm(const QuantGemmParams& p, const int32_t* rowSums, size_t m) {
  return p.rowSumFactor != 0 ? wrapMul(p.rowSumFactor, rowSums[m]) : 0;
}

}  // namespace
}  // namespace nnhal::kernels::internal
