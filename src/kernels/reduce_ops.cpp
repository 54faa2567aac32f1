#include "kernels/reduce_ops.h"

#include <algorithm>
#include <array>
#include <limits>

#include "kernels/internal/reduce_walk.h"

namespace nnhal::kernels {
namespace {

template <typename Acc, typename T, typename Out, typename Step>
void foldAll(const T* in, Out* out, const ReduceLayout& l, Acc init, Step step, size_t begin,
             size_t end) {
  for (size_t o = begin; o < end; ++o) {
    out[o] =
        static_cast<Out>(internal::foldReduced(in + internal::keptOffset(l, o), l, init, step));
  }
}

}  // namespace

void reduceFloat32(ReduceKind kind, const float* in, float* out, const ReduceLayout& layout,
                   size_t begin, size_t end) noexcept {
  switch (kind) {
    case ReduceKind::kSum:
      foldAll(
          in, out, layout, 0.0, [](double a, float x) { return a + x; }, begin, end);
      break;
    case ReduceKind::kProd:
      foldAll(
          in, out, layout, 1.0,
          [](double a, float x) { return (a == 0.0 || x == 0.0f) ? 0.0 : a * x; }, begin, end);
      break;
    case ReduceKind::kMax:
      foldAll(
          in, out, layout, std::numeric_limits<float>::lowest(),
          [](float a, float x) { return std::max(a, x); }, begin, end);
      break;
    case ReduceKind::kMin:
      foldAll(
          in, out, layout, std::numeric_limits<float>::max(),
          [](float a, float x) { return std::min(a, x); }, begin, end);
      break;
    default:
      break;
  }
}

template <typename T>
void reduceQuant8(ReduceKind kind, const T* in, T* out, const ReduceLayout& layout, size_t begin,
                  size_t end) noexcept {
  if (kind == ReduceKind::kMax) {
    foldAll(
        in, out, layout, std::numeric_limits<T>::lowest(), [](T a, T x) { return std::max(a, x); },
        begin, end);
  } else if (kind == ReduceKind::kMin) {
    foldAll(
        in, out, layout, std::numeric_limits<T>::max(), [](T a, T x) { return std::min(a, x); },
        begin, end);
  }
}

template void reduceQuant8<uint8_t>(ReduceKind, const uint8_t*, uint8_t*, const ReduceLayout&,
                                    size_t, size_t) noexcept;
template void reduceQuant8<int8_t>(ReduceKind, const int8_t*, int8_t*, const ReduceLayout&, size_t,
                                   size_t) noexcept;

void reduceBool8(ReduceKind kind, const uint8_t* in, uint8_t* out, const ReduceLayout& layout,
                 size_t begin, size_t end) noexcept {
  if (kind == ReduceKind::kAny) {
    foldAll(
        in, out, layout, false, [](bool a, uint8_t x) { return a || x != 0; }, begin, end);
  } else if (kind == ReduceKind::kAll) {
    foldAll(
        in, out, layout, true, [](bool a, uint8_t x) { return a && x != 0; }, begin, end);
  }
}

}  // namespace nnhal::kernels
