#include "kernels/reduce.h"

#include <cmath>
#include <limits>

#include "kernels/internal/reduce_walk.h"
#include "kernels/quantize.h"

namespace nnhal::kernels {
namespace {

/// Sum (as Acc) of the reduced elements starting at `base`.
template <typename Acc, typename T>
Acc reducedSum(const T* base, const ReduceLayout& l) {
  return internal::foldReduced(base, l, Acc{0},
                               [](Acc sum, T v) { return sum + static_cast<Acc>(v); });
}

}  // namespace

std::optional<ReduceLayout> makeReduceLayout(std::span<const uint32_t> dims,
                                             std::span<const bool> reduced) noexcept {
  if (dims.size() != reduced.size() || dims.size() > static_cast<size_t>(kMaxReduceRank)) {
    return std::nullopt;
  }
  ReduceLayout l;
  size_t stride = 1;
  // Walk from the innermost dimension; collect reversed, then flip.
  std::array<size_t, kMaxReduceRank> kd{}, ks{}, rd{}, rs{};
  int nk = 0;
  int nr = 0;
  bool lastWasReduced = false;
  bool any = false;
  for (size_t k = 0; k < dims.size(); ++k) {
    const size_t d = dims.size() - 1 - k;
    const size_t size = dims[d];
    l.reducedCount *= reduced[d] ? size : 1;
    l.outputCount *= reduced[d] ? 1 : size;
    if (size != 1) {
      if (reduced[d]) {
        if (any && lastWasReduced) {
          rd[nr - 1] *= size;  // contiguous with the previous (inner) reduced dimension
        } else {
          rd[nr] = size;
          rs[nr] = stride;
          ++nr;
        }
      } else {
        if (any && !lastWasReduced) {
          kd[nk - 1] *= size;
        } else {
          kd[nk] = size;
          ks[nk] = stride;
          ++nk;
        }
      }
      lastWasReduced = reduced[d];
      any = true;
    }
    stride *= size;
  }
  l.keptRank = nk;
  l.reducedRank = nr;
  for (int i = 0; i < nk; ++i) {
    l.keptDims[i] = kd[nk - 1 - i];
    l.keptStrides[i] = ks[nk - 1 - i];
  }
  for (int i = 0; i < nr; ++i) {
    l.reducedDims[i] = rd[nr - 1 - i];
    l.reducedStrides[i] = rs[nr - 1 - i];
  }
  return l;
}

void meanFloat32(const float* in, float* out, const ReduceLayout& layout, size_t begin,
                 size_t end) noexcept {
  const double count = static_cast<double>(layout.reducedCount);
  for (size_t o = begin; o < end; ++o) {
    if (layout.reducedCount == 0) {
      out[o] = 0.0f;
      continue;
    }
    const double sum = reducedSum<double>(in + internal::keptOffset(layout, o), layout);
    out[o] = static_cast<float>(sum / count);
  }
}

template <typename T>
void meanQuant8(const T* in, T* out, const ReduceLayout& layout, const MeanQuantParams& params,
                size_t begin, size_t end) noexcept {
  const T zero = saturateToQuant8<T>(static_cast<float>(params.outputZeroPoint), T{0});
  const double count = static_cast<double>(layout.reducedCount);
  for (size_t o = begin; o < end; ++o) {
    if (layout.reducedCount == 0) {
      out[o] = zero;
      continue;
    }
    const auto sum = reducedSum<int64_t>(in + internal::keptOffset(layout, o), layout);
    const double mean = static_cast<double>(sum) / count;
    const double level =
        std::round((mean - params.inputZeroPoint) * params.scaleRatio) + params.outputZeroPoint;
    out[o] = saturateToQuant8<T>(static_cast<float>(level), zero);
  }
}

template void meanQuant8<uint8_t>(const uint8_t*, uint8_t*, const ReduceLayout&,
                                  const MeanQuantParams&, size_t, size_t) noexcept;
template void meanQuant8<int8_t>(const int8_t*, int8_t*, const ReduceLayout&,
                                 const MeanQuantParams&, size_t, size_t) noexcept;

}  // namespace nnhal::kernels
