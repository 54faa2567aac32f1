// kernels/value_range.h — the smallest and largest of a run of integers, fast.
//
// Used where restored (untrusted) precomputed state is checked before a kernel relies on it:
// such checks run over megabytes on every load from a compilation cache, so the loop is
// written in fixed-size blocks that the compiler vectorizes even at -O2.
//
// Thread safety: pure functions.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

namespace nnhal::kernels {

/// {min, max} of `values[0, count)` and of 0 (so an empty run gives {0, 0}).
template <typename T>
requires std::is_integral_v<T> std::pair<T, T> minMaxWithZero(const T* values, size_t count) {
  constexpr size_t kBlock = 64;
  T lo = 0, hi = 0;
  size_t i = 0;
  for (; i + kBlock <= count; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) {
      lo = values[i + j] < lo ? values[i + j] : lo;
      hi = values[i + j] > hi ? values[i + j] : hi;
    }
  }
  for (; i < count; ++i) {
    lo = std::min(lo, values[i]);
    hi = std::max(hi, values[i]);
  }
  return {lo, hi};
}

}  // namespace nnhal::kernels
