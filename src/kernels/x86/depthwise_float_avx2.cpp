// The float depthwise convolution on AVX2 + FMA (depth multiplier 1): one FMA per tap of 8
// channels. 3x3 filters (MobileNet's) keep a block's nine taps in registers and compute four
// interior pixels at once (four independent FMA chains); other filters and border pixels take
// the generic block. Called through kernels/depthwise_conv.h only.
#include "kernels/internal/depthwise_lines.h"
#include "kernels/x86/simd_avx2.h"
#include "kernels/x86/x86_kernels.h"

namespace nnhal::kernels::x86 {
namespace {

using namespace internal;  // the depthwise line geometry (internal/depthwise_lines.h)

constexpr size_t kBlock = 32;  // channels per generic block: 4 vectors of 8

/// Lanes [0, count) of an 8-lane mask (count may exceed 8).
inline __m256i firstLanes8(size_t count) {
  const int n = count >= 8 ? 8 : static_cast<int>(count);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/// Eight floats at p, or the first lanes of `mask` (the others 0): chosen at compile time so
/// that the hot loops below have no branch per load.
template <bool Full>
inline __m256 load8(const float* p, __m256i mask) {
  if constexpr (Full) {
    return _mm256_loadu_ps(p);
  } else {
    return _mm256_maskload_ps(p, mask);
  }
}

template <bool Full>
inline void store8(float* p, __m256i mask, __m256 v) {
  if constexpr (Full) {
    _mm256_storeu_ps(p, v);
  } else {
    _mm256_maskstore_ps(p, mask, v);
  }
}

/// The same with `full` known only at run time (the generic block).
inline __m256 load8(const float* p, bool full, __m256i mask) {
  return full ? load8<true>(p, mask) : load8<false>(p, mask);
}

inline void store8(float* p, bool full, __m256i mask, __m256 v) {
  if (full) {
    store8<true>(p, mask, v);
  } else {
    store8<false>(p, mask, v);
  }
}

/// Output pixel x0 (its first input column) for channels [c0, c0 + valid), valid <= 8 * NV.
template <int NV>
void floatBlock(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* image,
                const LineInfo& line, int64_t x0, TapRange cols, size_t c0, size_t valid,
                float* out) {
  const size_t depth = g.outDepth;
  __m256i masks[NV];
  bool full[NV];
  __m256 acc[NV];
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const size_t lanes = valid > size_t{8} * v ? valid - size_t{8} * v : 0;
    masks[v] = firstLanes8(lanes);
    full[v] = lanes >= 8;
    acc[v] = _mm256_setzero_ps();
  }
  for (uint32_t i = line.rows.first; i < line.rows.last; ++i) {
    const size_t iy = static_cast<size_t>(line.y0 + int64_t{i} * g.dilationHeight);
    const float* row = image + iy * g.inWidth * depth;
    const float* filterRow = p.filter + size_t{i} * g.filterWidth * depth;
    for (uint32_t j = cols.first; j < cols.last; ++j) {
      const size_t ix = static_cast<size_t>(x0 + int64_t{j} * g.dilationWidth);
      const float* px = row + ix * depth + c0;
      const float* f = filterRow + size_t{j} * depth + c0;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        acc[v] = _mm256_fmadd_ps(load8(px + 8 * v, full[v], masks[v]),
                                 load8(f + 8 * v, full[v], masks[v]), acc[v]);
      }
    }
  }
  const __m256 lo = _mm256_set1_ps(p.outputMin);
  const __m256 hi = _mm256_set1_ps(p.outputMax);
#pragma GCC unroll 4
  for (int v = 0; v < NV; ++v) {
    const size_t c = c0 + 8 * v;
    __m256 y = acc[v];
    if (p.bias != nullptr) y = _mm256_add_ps(y, load8(p.bias + c, full[v], masks[v]));
    store8(out + c, full[v], masks[v], _mm256_min_ps(_mm256_max_ps(y, lo), hi));
  }
}

/// Channels [c0, c0 + valid) of output pixel x (valid <= kBlock).
void floatPixel(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* image,
                const LineInfo& line, size_t x, size_t c0, size_t valid, float* outLine) {
  const int64_t x0 = static_cast<int64_t>(x) * g.strideWidth - g.padLeft;
  const TapRange cols = validTaps(x0, g.dilationWidth, g.filterWidth, g.inWidth);
  float* out = outLine + x * g.outDepth;
  switch ((valid + 7) / 8) {
    case 1:
      floatBlock<1>(g, p, image, line, x0, cols, c0, valid, out);
      break;
    case 2:
      floatBlock<2>(g, p, image, line, x0, cols, c0, valid, out);
      break;
    case 3:
      floatBlock<3>(g, p, image, line, x0, cols, c0, valid, out);
      break;
    default:
      floatBlock<4>(g, p, image, line, x0, cols, c0, valid, out);
      break;
  }
}

void floatLines(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* input,
                size_t lineBegin, size_t lineEnd, float* output) {
  const size_t depth = g.outDepth;
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const LineInfo line = lineInfo(g, l);
    const float* image = input + line.batch * g.inHeight * g.inWidth * depth;
    float* outLine = output + l * g.outWidth * depth;
    for (size_t x = 0; x < g.outWidth; ++x) {
      for (size_t c0 = 0; c0 < depth; c0 += kBlock) {
        floatPixel(g, p, image, line, x, c0, depth - c0 < kBlock ? depth - c0 : kBlock, outLine);
      }
    }
  }
}

// 3x3 filters, one vector of 8 channels (c0, `valid` of them) of one line: the nine taps'
// weights stay in registers while the line's interior pixels stream past four at a time.
template <bool Full>
void vector3x3(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* image,
               const LineInfo& line, const InteriorColumns& interior, const size_t* tapOffset,
               size_t c0, size_t valid, float* outLine) {
  constexpr int kTaps = 9;
  constexpr size_t kPixels = 4;
  const size_t depth = g.outDepth;
  const size_t pixelStep = size_t{g.strideWidth} * depth;
  const __m256 lo = _mm256_set1_ps(p.outputMin);
  const __m256 hi = _mm256_set1_ps(p.outputMax);
  const __m256i mask = firstLanes8(valid);
  __m256 w[kTaps];
#pragma GCC unroll 9
  for (int t = 0; t < kTaps; ++t) w[t] = load8<Full>(p.filter + t * depth + c0, mask);
  const __m256 bias = p.bias != nullptr ? load8<Full>(p.bias + c0, mask) : _mm256_setzero_ps();
  // Border pixels (taps outside the input add nothing) read the weights from here.
  alignas(32) float weights[kTaps][8];
#pragma GCC unroll 9
  for (int t = 0; t < kTaps; ++t) _mm256_store_ps(weights[t], w[t]);
  const auto edge = [&](size_t px) {
    const int64_t x0 = static_cast<int64_t>(px) * g.strideWidth - g.padLeft;
    const TapRange cols = validTaps(x0, g.dilationWidth, 3, g.inWidth);
    __m256 acc = bias;
    for (uint32_t i = line.rows.first; i < line.rows.last; ++i) {
      const float* row =
          image + static_cast<size_t>(line.y0 + int64_t{i} * g.dilationHeight) * g.inWidth * depth +
          c0;
      for (uint32_t j = cols.first; j < cols.last; ++j) {
        const size_t ix = static_cast<size_t>(x0 + int64_t{j} * g.dilationWidth);
        acc = _mm256_fmadd_ps(load8<Full>(row + ix * depth, mask),
                              _mm256_load_ps(weights[i * 3 + j]), acc);
      }
    }
    store8<Full>(outLine + px * depth + c0, mask, _mm256_min_ps(_mm256_max_ps(acc, lo), hi));
  };
  const bool lineInside = line.rows.first == 0 && line.rows.last == 3;
  size_t x = 0;
  if (lineInside) {
    for (; x < interior.begin; ++x) edge(x);
    const float* corner = image + static_cast<size_t>(line.y0) * g.inWidth * depth + c0;
    for (; x + kPixels <= interior.end; x += kPixels) {
      const float* base = corner + (x * g.strideWidth - g.padLeft) * depth;
      __m256 acc[kPixels];
#pragma GCC unroll 4
      for (size_t k = 0; k < kPixels; ++k) acc[k] = bias;
#pragma GCC unroll 9
      for (int t = 0; t < kTaps; ++t) {
#pragma GCC unroll 4
        for (size_t k = 0; k < kPixels; ++k) {
          acc[k] =
              _mm256_fmadd_ps(load8<Full>(base + k * pixelStep + tapOffset[t], mask), w[t], acc[k]);
        }
      }
      float* out = outLine + x * depth + c0;
#pragma GCC unroll 4
      for (size_t k = 0; k < kPixels; ++k) {
        store8<Full>(out + k * depth, mask, _mm256_min_ps(_mm256_max_ps(acc[k], lo), hi));
      }
    }
    for (; x < interior.end; ++x) {
      const float* base = corner + (x * g.strideWidth - g.padLeft) * depth;
      __m256 acc = bias;
#pragma GCC unroll 9
      for (int t = 0; t < kTaps; ++t) {
        acc = _mm256_fmadd_ps(load8<Full>(base + tapOffset[t], mask), w[t], acc);
      }
      store8<Full>(outLine + x * depth + c0, mask, _mm256_min_ps(_mm256_max_ps(acc, lo), hi));
    }
  }
  for (; x < g.outWidth; ++x) edge(x);
}

void floatLines3x3(const DepthwiseGeometry& g, const DepthwiseFloatParams& p, const float* input,
                   size_t lineBegin, size_t lineEnd, float* output) {
  const size_t depth = g.outDepth;
  const InteriorColumns interior = interiorColumns(g);
  size_t tapOffset[9];
  tapOffsets(g, depth, tapOffset);
  for (size_t l = lineBegin; l < lineEnd; ++l) {
    const LineInfo line = lineInfo(g, l);
    const float* image = input + line.batch * g.inHeight * g.inWidth * depth;
    float* outLine = output + l * g.outWidth * depth;
    for (size_t c0 = 0; c0 < depth; c0 += 8) {
      if (depth - c0 >= 8) {
        vector3x3<true>(g, p, image, line, interior, tapOffset, c0, 8, outLine);
      } else {
        vector3x3<false>(g, p, image, line, interior, tapOffset, c0, depth - c0, outLine);
      }
    }
  }
}

}  // namespace

void depthwiseFloatAvx2(const DepthwiseGeometry& g, const DepthwiseFloatParams& p,
                        const float* input, size_t lineBegin, size_t lineEnd,
                        float* output) noexcept {
  if (g.filterHeight == 3 && g.filterWidth == 3) {
    floatLines3x3(g, p, input, lineBegin, lineEnd, output);
    return;
  }
  floatLines(g, p, input, lineBegin, lineEnd, output);
}

}  // namespace nnhal::kernels::x86
