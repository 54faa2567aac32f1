#include "kernels/conv.h"

#include <algorithm>
#include <cstring>

#include "kernels/internal/wrapping_int.h"

namespace nnhal::kernels {
namespace {

constexpr size_t kChunkBytes = 48 * 1024;  // im2col chunk target (fits L2 with the weights)
constexpr size_t kMaxChunkRows = 512;

inline size_t roundUp64(size_t bytes) { return (bytes + 63) / 64 * 64; }

size_t chunkRows(size_t rowBytes) {
  size_t rows = kChunkBytes / std::max<size_t>(rowBytes, 1);
  rows = std::clamp<size_t>(rows, kGemmRows, kMaxChunkRows);
  return rows / kGemmRows * kGemmRows;
}

bool quantDirect(const ConvGeometry& g, uint8_t inputXor) {
  return g.isPointwise() && inputXor == 0 && g.inDepth % 4 == 0;
}

// An output row's pixel (batch, y, x), stepped row by row: no divisions per row.
struct OutputPixel {
  OutputPixel(const ConvGeometry& g, size_t m)
      : x(m % g.outWidth), y(m / g.outWidth % g.outHeight), b(m / g.outWidth / g.outHeight) {}
  void next(const ConvGeometry& g) {
    if (++x < g.outWidth) return;
    x = 0;
    if (++y < g.outHeight) return;
    y = 0;
    ++b;
  }
  size_t x, y, b;
};

// Gathers the receptive field of output pixel `at` (im2col) into dst: reduction() values in
// (i, j, channel) order, `pad` where the filter hangs over the input edge.
template <typename T, typename CopyFn>
void gatherRow(const ConvGeometry& g, const T* input, const OutputPixel& at, T pad, T* dst,
               CopyFn copy) {
  const size_t x = at.x;
  const size_t y = at.y;
  const size_t b = at.b;
  const size_t depth = g.inDepth;
  const T* image = input + b * g.inHeight * g.inWidth * depth;
  const int64_t y0 = static_cast<int64_t>(y) * g.strideHeight - g.padTop;
  const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
  const size_t rowValues = size_t{g.filterWidth} * depth;
  const bool rowInside = x0 >= 0 && x0 + static_cast<int64_t>(g.filterWidth - 1) * g.dilationWidth <
                                        static_cast<int64_t>(g.inWidth);
  for (uint32_t i = 0; i < g.filterHeight; ++i) {
    const int64_t iy = y0 + static_cast<int64_t>(i) * g.dilationHeight;
    if (iy < 0 || iy >= static_cast<int64_t>(g.inHeight)) {
      std::fill(dst, dst + rowValues, pad);
      dst += rowValues;
      continue;
    }
    const T* line = image + static_cast<size_t>(iy) * g.inWidth * depth;
    if (rowInside && g.dilationWidth == 1) {
      copy(line + static_cast<size_t>(x0) * depth, rowValues, dst);
      dst += rowValues;
      continue;
    }
    for (uint32_t j = 0; j < g.filterWidth; ++j) {
      const int64_t ix = x0 + static_cast<int64_t>(j) * g.dilationWidth;
      if (ix < 0 || ix >= static_cast<int64_t>(g.inWidth)) {
        std::fill(dst, dst + depth, pad);
      } else {
        copy(line + static_cast<size_t>(ix) * depth, depth, dst);
      }
      dst += depth;
    }
  }
}

inline int32_t readQuant(uint8_t v) { return v; }
inline int32_t readQuant(int8_t v) { return v; }

}  // namespace

size_t convQuantChunkRows(const ConvGeometry& g) { return chunkRows(quantPaddedK(g.reduction())); }

size_t convQuantScratchBytes(const ConvGeometry& g, int32_t rowSumFactor, uint8_t inputXor) {
  const size_t rows = convQuantChunkRows(g);
  const size_t sums = rowSumFactor != 0 ? roundUp64(rows * sizeof(int32_t)) : 0;
  if (quantDirect(g, inputXor)) return sums;
  return roundUp64(rows * quantPaddedK(g.reduction())) + sums;
}

void convQuant(const ConvGeometry& g, const uint8_t* input, uint8_t inputXor, uint8_t padValue,
               const QuantGemmParams& gemm, size_t rowBegin, size_t rowEnd, size_t groupBegin,
               size_t groupEnd, void* scratch, uint8_t* output) noexcept {
  const size_t k = g.reduction();
  const size_t kPadded = quantPaddedK(k);
  const size_t chunk = convQuantChunkRows(g);
  const bool direct = quantDirect(g, inputXor);
  auto* bytes = static_cast<uint8_t*>(scratch);
  uint8_t* gathered = direct ? nullptr : bytes;
  auto* sums = gemm.rowSumFactor != 0
                   ? reinterpret_cast<int32_t*>(bytes + (direct ? 0 : roundUp64(chunk * kPadded)))
                   : nullptr;
  const auto copy = [inputXor](const uint8_t* src, size_t count, uint8_t* dst) {
    if (count <= 16 && inputXor == 0) {  // a few channels (first layers): no call per copy
      for (size_t i = 0; i < count; ++i) dst[i] = src[i];
      return;
    }
    copyXor(src, count, inputXor, dst);
  };
  for (size_t r0 = rowBegin; r0 < rowEnd; r0 += chunk) {
    const size_t rows = std::min(chunk, rowEnd - r0);
    const uint8_t* a;
    size_t lda;
    if (direct) {
      a = input + r0 * g.inDepth;
      lda = g.inDepth;
    } else {
      OutputPixel at(g, r0);
      for (size_t r = 0; r < rows; ++r, at.next(g)) {
        uint8_t* dst = gathered + r * kPadded;
        gatherRow<uint8_t>(g, input, at, padValue, dst, copy);
        for (size_t i = k; i < kPadded; ++i) dst[i] = 0;
      }
      a = gathered;
      lda = kPadded;
    }
    if (sums != nullptr) quantRowSums(a, lda, rows, k, sums);
    quantGemm(a, lda, sums, rows, gemm, groupBegin, groupEnd, output + r0 * g.outDepth, g.outDepth);
  }
}

size_t convFloatChunkRows(const ConvGeometry& g) {
  return chunkRows(g.reduction() * sizeof(float));
}

size_t convFloatScratchBytes(const ConvGeometry& g) {
  if (g.isPointwise()) return 0;
  return roundUp64(convFloatChunkRows(g) * g.reduction() * sizeof(float));
}

void convFloat(const ConvGeometry& g, const float* input, const FloatGemmParams& gemm,
               size_t rowBegin, size_t rowEnd, size_t groupBegin, size_t groupEnd, void* scratch,
               float* output) noexcept {
  const size_t k = g.reduction();
  if (g.isPointwise()) {
    floatGemm(input + rowBegin * k, k, rowEnd - rowBegin, gemm, groupBegin, groupEnd,
              output + rowBegin * g.outDepth, g.outDepth);
    return;
  }
  const size_t chunk = convFloatChunkRows(g);
  auto* gathered = static_cast<float*>(scratch);
  const auto copy = [](const float* src, size_t count, float* dst) {
    std::memcpy(dst, src, count * sizeof(float));
  };
  for (size_t r0 = rowBegin; r0 < rowEnd; r0 += chunk) {
    const size_t rows = std::min(chunk, rowEnd - r0);
    OutputPixel at(g, r0);
    for (size_t r = 0; r < rows; ++r, at.next(g)) {
      gatherRow<float>(g, input, at, 0.0f, gathered + r * k, copy);
    }
    floatGemm(gathered, k, rows, gemm, groupBegin, groupEnd, output + r0 * g.outDepth, g.outDepth);
  }
}

template <typename In, typename Filter>
void convQuantReference(const ConvGeometry& g, const In* input, int32_t inputZeroPoint,
                        const Filter* filter, int32_t filterZeroPoint, const int32_t* bias,
                        const QuantizedMultiplier* multipliers, int32_t outputZeroPoint,
                        int32_t outputMin, int32_t outputMax, In* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    int32_t sum = 0;
    forEachInputTap(g, b, y, x, [&](uint32_t i, uint32_t j, size_t pixel) {
      const In* v = input + pixel * g.inDepth;
      const Filter* w = filter + ((size_t{c} * g.filterHeight + i) * g.filterWidth + j) * g.inDepth;
      for (uint32_t d = 0; d < g.inDepth; ++d) {
        sum = internal::wrapAdd(
            sum, (readQuant(v[d]) - inputZeroPoint) * (readQuant(w[d]) - filterZeroPoint));
      }
    });
    if (bias != nullptr) sum = internal::wrapAdd(sum, bias[c]);
    int32_t v =
        internal::wrapAdd(multiplyByQuantizedMultiplier(sum, multipliers[c]), outputZeroPoint);
    v = std::clamp(v, outputMin, outputMax);
    return static_cast<In>(v);
  });
}

template void convQuantReference<uint8_t, uint8_t>(const ConvGeometry&, const uint8_t*, int32_t,
                                                   const uint8_t*, int32_t, const int32_t*,
                                                   const QuantizedMultiplier*, int32_t, int32_t,
                                                   int32_t, uint8_t*) noexcept;
template void convQuantReference<int8_t, int8_t>(const ConvGeometry&, const int8_t*, int32_t,
                                                 const int8_t*, int32_t, const int32_t*,
                                                 const QuantizedMultiplier*, int32_t, int32_t,
                                                 int32_t, int8_t*) noexcept;
template void convQuantReference<uint8_t, int8_t>(const ConvGeometry&, const uint8_t*, int32_t,
                                                  const int8_t*, int32_t, const int32_t*,
                                                  const QuantizedMultiplier*, int32_t, int32_t,
                                                  int32_t, uint8_t*) noexcept;

void convFloatReference(const ConvGeometry& g, const float* input, const float* filter,
                        const float* bias, float outputMin, float outputMax,
                        float* output) noexcept {
  fillOutput(g, output, [&](uint32_t b, uint32_t y, uint32_t x, uint32_t c) {
    float sum = 0.0f;
    forEachInputTap(g, b, y, x, [&](uint32_t i, uint32_t j, size_t pixel) {
      const float* v = input + pixel * g.inDepth;
      const float* w = filter + ((size_t{c} * g.filterHeight + i) * g.filterWidth + j) * g.inDepth;
      for (uint32_t d = 0; d < g.inDepth; ++d) sum += v[d] * w[d];
    });
    if (bias != nullptr) sum += bias[c];
    return std::min(std::max(sum, outputMin), outputMax);
  });
}

}  // namespace nnhal::kernels
