#include "kernels/elementwise.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "kernels/internal/wrapping_int.h"

#if defined(NNHAL_X86_KERNELS)
#include "kernels/x86/x86_kernels.h"
#endif

namespace nnhal::kernels {
namespace {

bool validScale(float scale) { return scale > 0.0f && std::isfinite(scale); }

/// Calls run(outOffset, offset1, step1, offset2, step2, n) for maximal runs of output
/// elements in [begin, end) along the innermost layout dimension.
template <typename Run>
void forEachRun(const BroadcastLayout& l, size_t begin, size_t end, Run&& run) {
  if (begin >= end) return;
  const int last = l.rank - 1;
  std::array<size_t, kMaxBroadcastRank> index{};
  size_t offset1 = 0;
  size_t offset2 = 0;
  size_t rest = begin;
  for (int d = last; d >= 0; --d) {
    index[d] = rest % l.dims[d];
    rest /= l.dims[d];
    offset1 += index[d] * l.strides1[d];
    offset2 += index[d] * l.strides2[d];
  }
  const size_t step1 = l.strides1[last];
  const size_t step2 = l.strides2[last];
  size_t i = begin;
  while (i < end) {
    const size_t n = std::min(l.dims[last] - index[last], end - i);
    run(i, offset1, step1, offset2, step2, n);
    i += n;
    index[last] += n;
    offset1 += n * step1;
    offset2 += n * step2;
    for (int d = last; d > 0 && index[d] == l.dims[d]; --d) {
      offset1 -= index[d] * l.strides1[d];
      offset2 -= index[d] * l.strides2[d];
      index[d] = 0;
      ++index[d - 1];
      offset1 += l.strides1[d - 1];
      offset2 += l.strides2[d - 1];
    }
  }
}

/// out[o] = op(a[..], b[..]) over [begin, end), with contiguous / broadcast fast paths;
/// `contiguous(pa, pb, po, n)` may take a run where both inputs are contiguous (it returns
/// false to leave it to `op`).
template <typename T, typename U, typename Op, typename Contiguous>
void applyBroadcast(const T* a, const T* b, U* out, const BroadcastLayout& layout, size_t begin,
                    size_t end, Op op, Contiguous contiguous) {
  forEachRun(layout, begin, end,
             [&](size_t o, size_t i1, size_t s1, size_t i2, size_t s2, size_t n) {
               const T* pa = a + i1;
               const T* pb = b + i2;
               U* po = out + o;
               if (s1 == 1 && s2 == 1) {
                 if (contiguous(pa, pb, po, n)) return;
                 for (size_t k = 0; k < n; ++k) po[k] = op(pa[k], pb[k]);
               } else if (s1 == 0 && s2 == 1) {
                 const T va = *pa;
                 for (size_t k = 0; k < n; ++k) po[k] = op(va, pb[k]);
               } else if (s1 == 1 && s2 == 0) {
                 const T vb = *pb;
                 for (size_t k = 0; k < n; ++k) po[k] = op(pa[k], vb);
               } else {
                 for (size_t k = 0; k < n; ++k) po[k] = op(pa[k * s1], pb[k * s2]);
               }
             });
}

template <typename T, typename U, typename Op>
void applyBroadcast(const T* a, const T* b, U* out, const BroadcastLayout& layout, size_t begin,
                    size_t end, Op op) {
  applyBroadcast(a, b, out, layout, begin, end, op,
                 [](const T*, const T*, U*, size_t) { return false; });
}

}  // namespace

std::optional<BroadcastLayout> makeBroadcastLayout(std::span<const uint32_t> a,
                                                   std::span<const uint32_t> b) noexcept {
  const size_t rank = std::max(a.size(), b.size());
  if (rank > static_cast<size_t>(kMaxBroadcastRank)) return std::nullopt;

  // Full-rank view: aligned dimension sizes and the element strides of each input.
  std::array<size_t, kMaxBroadcastRank> dims{};
  std::array<size_t, kMaxBroadcastRank> s1{};
  std::array<size_t, kMaxBroadcastRank> s2{};
  size_t stride1 = 1;
  size_t stride2 = 1;
  for (size_t k = 0; k < rank; ++k) {  // k counts from the innermost dimension
    const size_t d = rank - 1 - k;
    const size_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    const size_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    dims[d] = da == 1 ? db : da;
    s1[d] = da == 1 ? 0 : stride1;
    s2[d] = db == 1 ? 0 : stride2;
    stride1 *= da;
    stride2 *= db;
  }

  // Drop size-1 dimensions, then merge neighbours that are contiguous for both inputs.
  BroadcastLayout layout;
  int r = 0;
  for (size_t d = 0; d < rank; ++d) {
    if (dims[d] == 1) continue;
    if (r > 0 && s1[d] * dims[d] == layout.strides1[r - 1] &&
        s2[d] * dims[d] == layout.strides2[r - 1]) {
      layout.dims[r - 1] *= dims[d];
      layout.strides1[r - 1] = s1[d];
      layout.strides2[r - 1] = s2[d];
      continue;
    }
    layout.dims[r] = dims[d];
    layout.strides1[r] = s1[d];
    layout.strides2[r] = s2[d];
    ++r;
  }
  if (r == 0) {
    layout.dims[0] = 1;
    layout.strides1[0] = 0;
    layout.strides2[0] = 0;
    r = 1;
  }
  layout.rank = r;
  layout.outputCount = 1;
  for (int d = 0; d < r; ++d) layout.outputCount *= layout.dims[d];
  return layout;
}

void addFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                float outMin, float outMax, size_t begin, size_t end) noexcept {
  applyBroadcast(a, b, out, layout, begin, end,
                 [=](float x, float y) { return std::min(std::max(x + y, outMin), outMax); });
}

void mulFloat32(const float* a, const float* b, float* out, const BroadcastLayout& layout,
                float outMin, float outMax, size_t begin, size_t end) noexcept {
  applyBroadcast(a, b, out, layout, begin, end,
                 [=](float x, float y) { return std::min(std::max(x * y, outMin), outMax); });
}

void addInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
              size_t begin, size_t end) noexcept {
  applyBroadcast(a, b, out, layout, begin, end, [](int32_t x, int32_t y) {
    return static_cast<int32_t>(static_cast<uint32_t>(x) + static_cast<uint32_t>(y));
  });
}

void mulInt32(const int32_t* a, const int32_t* b, int32_t* out, const BroadcastLayout& layout,
              size_t begin, size_t end) noexcept {
  applyBroadcast(a, b, out, layout, begin, end, [](int32_t x, int32_t y) {
    return static_cast<int32_t>(static_cast<uint32_t>(x) * static_cast<uint32_t>(y));
  });
}

namespace {

// The fields QuantAddParams and QuantMulParams share (input offsets, output zero point and
// clamp), or nullopt when a scale is not positive and finite.
template <typename Params>
std::optional<Params> binaryParams(float scale1, int32_t zeroPoint1, float scale2,
                                   int32_t zeroPoint2, float outputScale, int32_t outputZeroPoint,
                                   int32_t outputMin, int32_t outputMax) {
  if (!validScale(scale1) || !validScale(scale2) || !validScale(outputScale)) return std::nullopt;
  Params p;
  p.inputOffset1 = -zeroPoint1;
  p.inputOffset2 = -zeroPoint2;
  p.outputZeroPoint = outputZeroPoint;
  p.outputMin = outputMin;
  p.outputMax = outputMax;
  return p;
}

}  // namespace

std::optional<QuantAddParams> makeQuantAddParams(float scale1, int32_t zeroPoint1, float scale2,
                                                 int32_t zeroPoint2, float outputScale,
                                                 int32_t outputZeroPoint, int32_t outputMin,
                                                 int32_t outputMax) noexcept {
  std::optional<QuantAddParams> p = binaryParams<QuantAddParams>(
      scale1, zeroPoint1, scale2, zeroPoint2, outputScale, outputZeroPoint, outputMin, outputMax);
  if (!p) return p;
  p->leftShift = 20;
  const double twiceMaxScale = 2.0 * static_cast<double>(std::max(scale1, scale2));
  const double outputReal =
      twiceMaxScale / (static_cast<double>(1 << p->leftShift) * static_cast<double>(outputScale));
  if (!quantizeMultiplier(static_cast<double>(scale1) / twiceMaxScale, &p->inputMultiplier1) ||
      !quantizeMultiplier(static_cast<double>(scale2) / twiceMaxScale, &p->inputMultiplier2) ||
      !quantizeMultiplier(outputReal, &p->outputMultiplier)) {
    return std::nullopt;
  }
  return p;
}

std::optional<QuantMulParams> makeQuantMulParams(float scale1, int32_t zeroPoint1, float scale2,
                                                 int32_t zeroPoint2, float outputScale,
                                                 int32_t outputZeroPoint, int32_t outputMin,
                                                 int32_t outputMax) noexcept {
  std::optional<QuantMulParams> p = binaryParams<QuantMulParams>(
      scale1, zeroPoint1, scale2, zeroPoint2, outputScale, outputZeroPoint, outputMin, outputMax);
  if (!p) return p;
  const double real =
      static_cast<double>(scale1) * static_cast<double>(scale2) / static_cast<double>(outputScale);
  if (!quantizeMultiplier(real, &p->outputMultiplier)) return std::nullopt;
  return p;
}

template <typename T>
void addQuant8(const T* a, const T* b, T* out, const BroadcastLayout& layout,
               const QuantAddParams& p, size_t begin, size_t end, IsaLevel level) noexcept {
  // Contiguous runs on AVX-512 and AVX2: the same three requantizations, 16 or 8 lanes at a
  // time.
  const auto contiguous = [&p, level](const T* x, const T* y, T* o, size_t n) {
#if defined(NNHAL_X86_KERNELS)
    const auto* x8 = reinterpret_cast<const uint8_t*>(x);
    const auto* y8 = reinterpret_cast<const uint8_t*>(y);
    auto* o8 = reinterpret_cast<uint8_t*>(o);
    if (level >= IsaLevel::kAvx512 && n >= 16) {
      x86::addQuant8Avx512(x8, y8, o8, n, p, std::is_signed_v<T>);
      return true;
    }
    if (level >= IsaLevel::kAvx2 && n >= 8) {
      x86::addQuant8Avx2(x8, y8, o8, n, p, std::is_signed_v<T>);
      return true;
    }
#else
    (void)x, (void)y, (void)o, (void)n, (void)level;
#endif
    return false;
  };
  applyBroadcast(
      a, b, out, layout, begin, end,
      [&p](T x, T y) {
        const int32_t shifted1 = (static_cast<int32_t>(x) + p.inputOffset1) * (1 << p.leftShift);
        const int32_t shifted2 = (static_cast<int32_t>(y) + p.inputOffset2) * (1 << p.leftShift);
        const int32_t sum =
            internal::wrapAdd(multiplyByQuantizedMultiplier(shifted1, p.inputMultiplier1),
                              multiplyByQuantizedMultiplier(shifted2, p.inputMultiplier2));
        const int32_t result = internal::wrapAdd(
            multiplyByQuantizedMultiplier(sum, p.outputMultiplier), p.outputZeroPoint);
        return static_cast<T>(std::clamp(result, p.outputMin, p.outputMax));
      },
      contiguous);
}

template <typename T>
void mulQuant8(const T* a, const T* b, T* out, const BroadcastLayout& layout,
               const QuantMulParams& p, size_t begin, size_t end) noexcept {
  applyBroadcast(a, b, out, layout, begin, end, [&p](T x, T y) {
    const int32_t product =
        (static_cast<int32_t>(x) + p.inputOffset1) * (static_cast<int32_t>(y) + p.inputOffset2);
    const int32_t result = internal::wrapAdd(
        multiplyByQuantizedMultiplier(product, p.outputMultiplier), p.outputZeroPoint);
    return static_cast<T>(std::clamp(result, p.outputMin, p.outputMax));
  });
}

template void addQuant8<uint8_t>(const uint8_t*, const uint8_t*, uint8_t*, const BroadcastLayout&,
                                 const QuantAddParams&, size_t, size_t, IsaLevel) noexcept;
template void addQuant8<int8_t>(const int8_t*, const int8_t*, int8_t*, const BroadcastLayout&,
                                const QuantAddParams&, size_t, size_t, IsaLevel) noexcept;
template void mulQuant8<uint8_t>(const uint8_t*, const uint8_t*, uint8_t*, const BroadcastLayout&,
                                 const QuantMulParams&, size_t, size_t) noexcept;
template void mulQuant8<int8_t>(const int8_t*, const int8_t*, int8_t*, const BroadcastLayout&,
                                const QuantMulParams&, size_t, size_t) noexcept;

}  // namespace nnhal::kernels
