// kernels/internal/reduce_walk.h — the walk over a ReduceLayout that MEAN and the REDUCE_*
// operations share: where output element o's first input element lies, and a fold over the
// elements reduced into it (innermost reduced dimension fastest, as the input is stored).
#pragma once

#include <array>
#include <cstddef>

#include "kernels/reduce.h"

namespace nnhal::kernels::internal {

/// Input element offset of the first element folded into output element o.
inline size_t keptOffset(const ReduceLayout& l, size_t o) noexcept {
  size_t offset = 0;
  for (int d = l.keptRank - 1; d >= 0; --d) {
    offset += (o % l.keptDims[d]) * l.keptStrides[d];
    o /= l.keptDims[d];
  }
  return offset;
}

/// acc = step(acc, value) over the reduced elements starting at `base`, in storage order. An
/// empty reduction (reducedCount 0) returns `acc` unchanged.
template <typename Acc, typename T, typename Step>
Acc foldReduced(const T* base, const ReduceLayout& l, Acc acc, Step step) noexcept {
  if (l.reducedCount == 0) return acc;
  const int last = l.reducedRank - 1;
  if (last < 0) return step(acc, *base);
  const size_t innerSize = l.reducedDims[last];
  const size_t innerStride = l.reducedStrides[last];
  std::array<size_t, kMaxReduceRank> index{};
  size_t offset = 0;
  while (true) {
    const T* p = base + offset;
    if (innerStride == 1) {
      for (size_t k = 0; k < innerSize; ++k) acc = step(acc, p[k]);
    } else {
      for (size_t k = 0; k < innerSize; ++k) acc = step(acc, p[k * innerStride]);
    }
    int d = last - 1;
    for (; d >= 0; --d) {
      ++index[d];
      offset += l.reducedStrides[d];
      if (index[d] < l.reducedDims[d]) break;
      offset -= index[d] * l.reducedStrides[d];
      index[d] = 0;
    }
    if (d < 0) return acc;
  }
}

}  // namespace nnhal::kernels::internal
