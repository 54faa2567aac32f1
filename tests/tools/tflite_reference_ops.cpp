// TFLite's reference integer arithmetic, written for the operation-level check
// (tflite_reference_ops.h). Loops are plain and unoptimized on purpose: this is the
// yardstick, not an engine.
#include "tools/tflite_reference_ops.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <utility>

namespace nnhal::tflite_reference {
namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

int32_t saturate(int64_t v) { return static_cast<int32_t>(std::clamp(v, kInt32Min, kInt32Max)); }

/// gemmlowp's SaturatingRoundingDoublingHighMul: (a * b * 2 + 2^31 rounding) >> 32.
int32_t doublingHighMul(int32_t a, int32_t b) {
  if (a == b && a == kInt32Min) return static_cast<int32_t>(kInt32Max);
  const int64_t product = static_cast<int64_t>(a) * b;
  const int64_t nudge = product >= 0 ? (int64_t{1} << 30) : (1 - (int64_t{1} << 30));
  return static_cast<int32_t>((product + nudge) / (int64_t{1} << 31));
}

int32_t clampTo(int32_t v, Range r) { return std::clamp(v, r.min, r.max); }

size_t product(const std::vector<uint32_t>& dims, size_t from = 0, size_t to = SIZE_MAX) {
  size_t n = 1;
  for (size_t i = from; i < std::min(to, dims.size()); ++i) n *= dims[i];
  return n;
}

/// The filter scale of output channel `c`.
float filterScale(const QuantTensor& filter, size_t c) {
  return filter.channelScales.empty() ? filter.scale : filter.channelScales[c];
}

/// Index into `in` (of rank <= out's) for the output position `coords`, numpy broadcasting.
size_t broadcastIndex(const std::vector<uint32_t>& inDims, const std::vector<size_t>& coords) {
  const size_t offset = coords.size() - inDims.size();
  size_t index = 0;
  for (size_t d = 0; d < inDims.size(); ++d) {
    const size_t c = inDims[d] == 1 ? 0 : coords[offset + d];
    index = index * inDims[d] + c;
  }
  return index;
}

/// Calls f(aIndex, bIndex) for every output element, in row-major order.
template <typename F>
void forEachBroadcast(const std::vector<uint32_t>& aDims, const std::vector<uint32_t>& bDims,
                      const std::vector<uint32_t>& outDims, F&& f) {
  std::vector<size_t> coords(outDims.size(), 0);
  const size_t total = product(outDims);
  for (size_t i = 0; i < total; ++i) {
    size_t rest = i;
    for (size_t d = outDims.size(); d-- > 0;) {
      coords[d] = rest % outDims[d];
      rest /= outDims[d];
    }
    f(broadcastIndex(aDims, coords), broadcastIndex(bDims, coords));
  }
}

}  // namespace

Multiplier quantizeMultiplier(double real) {
  if (real == 0.0) return {};
  int exponent = 0;
  const double fraction = std::frexp(real, &exponent);
  auto q = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++exponent;
  }
  if (exponent < -31) return {};
  if (exponent > 30) return {static_cast<int32_t>(kInt32Max), 30};
  return {static_cast<int32_t>(q), exponent};
}

int32_t roundingDivideByPowerOfTwo(int32_t x, int exponent) {
  if (exponent == 0) return x;
  const int64_t mask = (int64_t{1} << exponent) - 1;
  const int64_t remainder = static_cast<int64_t>(x) & mask;
  const int64_t threshold = (mask >> 1) + (x < 0 ? 1 : 0);
  return static_cast<int32_t>((static_cast<int64_t>(x) >> exponent) +
                              (remainder > threshold ? 1 : 0));
}

int32_t multiplyByQuantizedMultiplier(int32_t x, Multiplier m) {
  const int left = m.shift > 0 ? m.shift : 0;
  const int right = m.shift > 0 ? 0 : -m.shift;
  return roundingDivideByPowerOfTwo(
      doublingHighMul(saturate(static_cast<int64_t>(x) << left), m.multiplier), right);
}

Range activationRange(int32_t activation, float scale, int32_t zeroPoint, int32_t qmin,
                      int32_t qmax) {
  const auto quantizeBound = [&](float real) {
    const double q = std::round(real / scale);
    return saturate(static_cast<int64_t>(std::clamp<double>(q, -1e12, 1e12)) + zeroPoint);
  };
  switch (activation) {
    case 1:
      return {std::max(qmin, quantizeBound(0.0f)), qmax};
    case 2:
      return {std::max(qmin, quantizeBound(-1.0f)), std::min(qmax, quantizeBound(1.0f))};
    case 3:
      return {std::max(qmin, quantizeBound(0.0f)), std::min(qmax, quantizeBound(6.0f))};
    default:
      return {qmin, qmax};
  }
}

Multiplier convolutionMultiplier(float inputScale, float filterScale, float outputScale,
                                 Formula formula) {
  const double productOfScales = formula == Formula::kTflite
                                     ? static_cast<double>(inputScale) * filterScale
                                     : static_cast<double>(inputScale * filterScale);
  return quantizeMultiplier(productOfScales / static_cast<double>(outputScale));
}

namespace {

/// The requantization multiplier of each of `channels` output channels.
std::vector<Multiplier> channelMultipliers(const QuantTensor& input, const QuantTensor& filter,
                                           uint32_t channels, float outScale, Formula formula) {
  std::vector<Multiplier> multipliers(channels);
  for (uint32_t c = 0; c < channels; ++c) {
    multipliers[c] = convolutionMultiplier(input.scale, filterScale(filter, c), outScale, formula);
  }
  return multipliers;
}

}  // namespace

std::vector<int32_t> conv2d(const QuantTensor& input, const QuantTensor& filter,
                            const std::vector<int32_t>& bias, const Window& w, uint32_t outHeight,
                            uint32_t outWidth, const OutputQuant& out, Formula formula) {
  const uint32_t batches = input.dims[0], inHeight = input.dims[1], inWidth = input.dims[2],
                 inDepth = input.dims[3];
  const uint32_t outDepth = filter.dims[0], filterHeight = filter.dims[1],
                 filterWidth = filter.dims[2];
  const std::vector<Multiplier> multipliers =
      channelMultipliers(input, filter, outDepth, out.scale, formula);
  std::vector<int32_t> result(size_t{batches} * outHeight * outWidth * outDepth);
  size_t o = 0;
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t oy = 0; oy < outHeight; ++oy) {
      for (uint32_t ox = 0; ox < outWidth; ++ox) {
        for (uint32_t oc = 0; oc < outDepth; ++oc) {
          int64_t acc = 0;
          for (uint32_t fy = 0; fy < filterHeight; ++fy) {
            const int64_t iy =
                int64_t{oy} * w.strideHeight - w.padTop + int64_t{fy} * w.dilationHeight;
            if (iy < 0 || iy >= inHeight) continue;
            for (uint32_t fx = 0; fx < filterWidth; ++fx) {
              const int64_t ix =
                  int64_t{ox} * w.strideWidth - w.padLeft + int64_t{fx} * w.dilationWidth;
              if (ix < 0 || ix >= inWidth) continue;
              const size_t inBase = ((size_t{b} * inHeight + iy) * inWidth + ix) * inDepth;
              const size_t fBase = ((size_t{oc} * filterHeight + fy) * filterWidth + fx) * inDepth;
              for (uint32_t ic = 0; ic < inDepth; ++ic) {
                acc += int64_t{input.values[inBase + ic] - input.zeroPoint} *
                       (filter.values[fBase + ic] - filter.zeroPoint);
              }
            }
          }
          if (!bias.empty()) acc += bias[oc];
          const int32_t scaled = multiplyByQuantizedMultiplier(saturate(acc), multipliers[oc]);
          result[o++] = clampTo(saturate(int64_t{scaled} + out.zeroPoint), out.range);
        }
      }
    }
  }
  return result;
}

std::vector<int32_t> depthwiseConv2d(const QuantTensor& input, const QuantTensor& filter,
                                     const std::vector<int32_t>& bias, const Window& w,
                                     uint32_t depthMultiplier, uint32_t outHeight,
                                     uint32_t outWidth, const OutputQuant& out, Formula formula) {
  const uint32_t batches = input.dims[0], inHeight = input.dims[1], inWidth = input.dims[2],
                 inDepth = input.dims[3];
  const uint32_t filterHeight = filter.dims[1], filterWidth = filter.dims[2],
                 outDepth = filter.dims[3];
  const std::vector<Multiplier> multipliers =
      channelMultipliers(input, filter, outDepth, out.scale, formula);
  std::vector<int32_t> result(size_t{batches} * outHeight * outWidth * outDepth);
  size_t o = 0;
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t oy = 0; oy < outHeight; ++oy) {
      for (uint32_t ox = 0; ox < outWidth; ++ox) {
        for (uint32_t oc = 0; oc < outDepth; ++oc) {
          const uint32_t ic = oc / depthMultiplier;
          int64_t acc = 0;
          for (uint32_t fy = 0; fy < filterHeight; ++fy) {
            const int64_t iy =
                int64_t{oy} * w.strideHeight - w.padTop + int64_t{fy} * w.dilationHeight;
            if (iy < 0 || iy >= inHeight) continue;
            for (uint32_t fx = 0; fx < filterWidth; ++fx) {
              const int64_t ix =
                  int64_t{ox} * w.strideWidth - w.padLeft + int64_t{fx} * w.dilationWidth;
              if (ix < 0 || ix >= inWidth) continue;
              const int32_t x =
                  input.values[((size_t{b} * inHeight + iy) * inWidth + ix) * inDepth + ic];
              const int32_t f = filter.values[(size_t{fy} * filterWidth + fx) * outDepth + oc];
              acc += int64_t{x - input.zeroPoint} * (f - filter.zeroPoint);
            }
          }
          if (!bias.empty()) acc += bias[oc];
          const int32_t scaled = multiplyByQuantizedMultiplier(saturate(acc), multipliers[oc]);
          result[o++] = clampTo(saturate(int64_t{scaled} + out.zeroPoint), out.range);
        }
      }
    }
  }
  return result;
}

std::vector<int32_t> fullyConnected(const QuantTensor& input, const QuantTensor& weights,
                                    const std::vector<int32_t>& bias, const OutputQuant& out,
                                    Formula formula) {
  const uint32_t units = weights.dims[0], inputSize = weights.dims[1];
  const size_t batches = input.values.size() / inputSize;
  const std::vector<Multiplier> multipliers =
      channelMultipliers(input, weights, units, out.scale, formula);
  std::vector<int32_t> result(batches * units);
  for (size_t b = 0; b < batches; ++b) {
    for (uint32_t u = 0; u < units; ++u) {
      int64_t acc = 0;
      for (uint32_t i = 0; i < inputSize; ++i) {
        acc += int64_t{input.values[b * inputSize + i] - input.zeroPoint} *
               (weights.values[size_t{u} * inputSize + i] - weights.zeroPoint);
      }
      if (!bias.empty()) acc += bias[u];
      const int32_t scaled = multiplyByQuantizedMultiplier(saturate(acc), multipliers[u]);
      result[b * units + u] = clampTo(saturate(int64_t{scaled} + out.zeroPoint), out.range);
    }
  }
  return result;
}

std::vector<int32_t> addOrSub(const QuantTensor& a, const QuantTensor& b,
                              const std::vector<uint32_t>& outDims, const OutputQuant& out,
                              bool subtract) {
  constexpr int kLeftShift = 20;
  const double twiceMaxScale = 2.0 * static_cast<double>(std::max(a.scale, b.scale));
  const Multiplier ma = quantizeMultiplier(static_cast<double>(a.scale) / twiceMaxScale);
  const Multiplier mb = quantizeMultiplier(static_cast<double>(b.scale) / twiceMaxScale);
  const Multiplier mo = quantizeMultiplier(
      twiceMaxScale / (static_cast<double>(1 << kLeftShift) * static_cast<double>(out.scale)));
  std::vector<int32_t> result;
  result.reserve(product(outDims));
  forEachBroadcast(a.dims, b.dims, outDims, [&](size_t ia, size_t ib) {
    const int32_t sa = multiplyByQuantizedMultiplier(
        saturate(int64_t{a.values[ia] - a.zeroPoint} << kLeftShift), ma);
    const int32_t sb = multiplyByQuantizedMultiplier(
        saturate(int64_t{b.values[ib] - b.zeroPoint} << kLeftShift), mb);
    const int32_t raw = saturate(subtract ? int64_t{sa} - sb : int64_t{sa} + sb);
    const int32_t scaled = multiplyByQuantizedMultiplier(raw, mo);
    result.push_back(clampTo(saturate(int64_t{scaled} + out.zeroPoint), out.range));
  });
  return result;
}

std::vector<int32_t> mul(const QuantTensor& a, const QuantTensor& b,
                         const std::vector<uint32_t>& outDims, const OutputQuant& out) {
  const Multiplier m = quantizeMultiplier(
      static_cast<double>(a.scale) * static_cast<double>(b.scale) / static_cast<double>(out.scale));
  std::vector<int32_t> result;
  result.reserve(product(outDims));
  forEachBroadcast(a.dims, b.dims, outDims, [&](size_t ia, size_t ib) {
    const int64_t p = int64_t{a.values[ia] - a.zeroPoint} * (b.values[ib] - b.zeroPoint);
    const int32_t scaled = multiplyByQuantizedMultiplier(saturate(p), m);
    result.push_back(clampTo(saturate(int64_t{scaled} + out.zeroPoint), out.range));
  });
  return result;
}

std::vector<int32_t> pool2d(const QuantTensor& input, const Window& w, uint32_t filterHeight,
                            uint32_t filterWidth, uint32_t outHeight, uint32_t outWidth,
                            Range range, bool average) {
  const uint32_t batches = input.dims[0], inHeight = input.dims[1], inWidth = input.dims[2],
                 depth = input.dims[3];
  std::vector<int32_t> result(size_t{batches} * outHeight * outWidth * depth);
  size_t o = 0;
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t oy = 0; oy < outHeight; ++oy) {
      for (uint32_t ox = 0; ox < outWidth; ++ox) {
        const int64_t y0 = int64_t{oy} * w.strideHeight - w.padTop;
        const int64_t x0 = int64_t{ox} * w.strideWidth - w.padLeft;
        const int64_t fyBegin = std::max<int64_t>(0, -y0);
        const int64_t fyEnd = std::min<int64_t>(filterHeight, int64_t{inHeight} - y0);
        const int64_t fxBegin = std::max<int64_t>(0, -x0);
        const int64_t fxEnd = std::min<int64_t>(filterWidth, int64_t{inWidth} - x0);
        for (uint32_t c = 0; c < depth; ++c) {
          int64_t acc = average ? 0 : kInt32Min;
          int64_t count = 0;
          for (int64_t fy = fyBegin; fy < fyEnd; ++fy) {
            for (int64_t fx = fxBegin; fx < fxEnd; ++fx) {
              const int32_t v =
                  input.values[((size_t{b} * inHeight + (y0 + fy)) * inWidth + (x0 + fx)) * depth +
                               c];
              acc = average ? acc + v : std::max<int64_t>(acc, v);
              ++count;
            }
          }
          if (average && count > 0) {
            acc = acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
          }
          result[o++] = clampTo(saturate(acc), range);
        }
      }
    }
  }
  return result;
}

std::vector<int32_t> quantize(const std::vector<float>& input, float scale, int32_t zeroPoint,
                              int32_t qmin, int32_t qmax, Formula formula) {
  std::vector<int32_t> result(input.size());
  for (size_t i = 0; i < input.size(); ++i) {
    const double q = formula == Formula::kTflite
                         ? std::round(static_cast<double>(input[i]) / static_cast<double>(scale))
                         : static_cast<double>(std::round(input[i] / scale));
    const double clampedQ = std::clamp<double>(std::isnan(q) ? 0.0 : q, -1e12, 1e12);
    result[i] =
        std::clamp<int32_t>(saturate(static_cast<int64_t>(clampedQ) + zeroPoint), qmin, qmax);
  }
  return result;
}

std::vector<float> dequantize(const QuantTensor& input) {
  std::vector<float> result(input.values.size());
  for (size_t i = 0; i < result.size(); ++i) {
    result[i] =
        static_cast<float>(static_cast<double>(input.scale) * (input.values[i] - input.zeroPoint));
  }
  return result;
}

std::vector<int32_t> concatenation(const std::vector<QuantTensor>& inputs, uint32_t axis,
                                   const std::vector<uint32_t>& outDims, const OutputQuant& out,
                                   int32_t qmin, int32_t qmax) {
  const size_t outer = product(outDims, 0, axis);
  const size_t inner = product(outDims, axis + 1);
  std::vector<int32_t> result;
  result.reserve(product(outDims));
  const float inverseOutputScale = 1.0f / out.scale;
  for (size_t o = 0; o < outer; ++o) {
    for (const QuantTensor& in : inputs) {
      const size_t chunk = size_t{in.dims[axis]} * inner;
      const bool same = in.scale == out.scale && in.zeroPoint == out.zeroPoint;
      const float scale = in.scale * inverseOutputScale;
      const float shift = static_cast<float>(-in.zeroPoint) * scale;
      for (size_t j = 0; j < chunk; ++j) {
        const int32_t v = in.values[o * chunk + j];
        if (same) {
          result.push_back(v);
          continue;
        }
        const auto r = static_cast<int64_t>(std::round(static_cast<float>(v) * scale + shift));
        result.push_back(std::clamp<int32_t>(saturate(r + out.zeroPoint), qmin, qmax));
      }
    }
  }
  return result;
}

std::vector<int32_t> logistic(const QuantTensor& input, float outScale, int32_t outZeroPoint,
                              int32_t qmin, int32_t qmax) {
  const float inverseScale = 1.0f / outScale;
  std::vector<int32_t> result(input.values.size());
  for (size_t i = 0; i < result.size(); ++i) {
    const float x = input.scale * static_cast<float>(input.values[i] - input.zeroPoint);
    const float y = 1.0f / (1.0f + std::exp(-x));
    const auto q =
        static_cast<int32_t>(std::round(y * inverseScale) + static_cast<float>(outZeroPoint));
    result[i] = std::clamp(q, qmin, qmax);
  }
  return result;
}

std::vector<int32_t> softmax(const QuantTensor& input, float beta, uint32_t axis, bool isUnsigned) {
  // table[255 - d] = expf(-scale * beta * d), indexed from the vector's maximum as TFLite does.
  std::vector<float> table(256);
  const float scale = -input.scale * beta;
  for (int32_t d = 0; d <= 255; ++d) table[static_cast<size_t>(255 - d)] = std::exp(scale * d);
  const size_t outer = product(input.dims, 0, axis);
  const size_t length = input.dims[axis];
  const size_t inner = product(input.dims, axis + 1);
  const int32_t zeroPoint = isUnsigned ? 0 : -128;
  const int32_t qmin = isUnsigned ? 0 : -128;
  const int32_t qmax = isUnsigned ? 255 : 127;
  std::vector<int32_t> result(input.values.size());
  for (size_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < inner; ++i) {
      const auto at = [&](size_t k) { return (o * length + k) * inner + i; };
      int32_t largest = qmin;
      for (size_t k = 0; k < length; ++k) largest = std::max(largest, input.values[at(k)]);
      const auto weight = [&](size_t k) {
        return table[static_cast<size_t>(255 - largest + input.values[at(k)])];
      };
      float sum = 0.0f;
      for (size_t k = 0; k < length; ++k) sum += weight(k);
      const float inverse = 1.0f / (sum * (1.0f / 256.0f));
      for (size_t k = 0; k < length; ++k) {
        const float p = weight(k) * inverse;
        const int32_t q = isUnsigned ? static_cast<int32_t>(p + 0.5f)
                                     : static_cast<int32_t>(std::round(p)) + zeroPoint;
        result[at(k)] = std::clamp(q, qmin, qmax);
      }
    }
  }
  return result;
}

namespace {

/// The reduced dimensions of `axes` (negative from the end, repeats merged).
std::vector<bool> reducedDimensions(size_t rank, const std::vector<int32_t>& axes) {
  std::vector<bool> reduced(rank, false);
  for (int32_t a : axes) {
    reduced[static_cast<size_t>(a < 0 ? a + static_cast<int32_t>(rank) : a)] = true;
  }
  return reduced;
}

/// The sums of the values (minus `offset`) of each output element (row-major over the kept
/// dimensions), and the count of values averaged into each.
std::pair<std::vector<int64_t>, int64_t> reducedSums(const QuantTensor& input,
                                                     const std::vector<bool>& reduced,
                                                     int32_t offset) {
  const size_t rank = input.dims.size();
  size_t outputs = 1;
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      count *= input.dims[d];
    } else {
      outputs *= input.dims[d];
    }
  }
  std::vector<int64_t> sums(outputs, 0);
  std::vector<size_t> coords(rank, 0);
  for (size_t flat = 0; flat < input.values.size(); ++flat) {
    size_t rest = flat;
    for (size_t d = rank; d-- > 0;) {
      coords[d] = rest % input.dims[d];
      rest /= input.dims[d];
    }
    size_t out = 0;
    for (size_t d = 0; d < rank; ++d) {
      if (!reduced[d]) out = out * input.dims[d] + coords[d];
    }
    sums[out] += input.values[flat] - offset;
  }
  return {sums, count};
}

}  // namespace

std::vector<int32_t> mean(const QuantTensor& input, const std::vector<int32_t>& axes, bool keepDims,
                          float outScale, int32_t outZeroPoint, int32_t qmin, int32_t qmax) {
  const bool isUnsigned = qmin == 0;
  const bool heightAndWidth = input.dims.size() == 4 && keepDims && axes.size() == 2 &&
                              ((axes[0] == 1 && axes[1] == 2) || (axes[0] == 2 && axes[1] == 1));
  const auto reduced = reducedDimensions(input.dims.size(), axes);
  std::vector<int32_t> result;
  if (heightAndWidth && isUnsigned) {
    const auto [sums, count] = reducedSums(input, reduced, 0);
    const float countAsFloat = static_cast<float>(count);
    const int32_t bias = outZeroPoint - static_cast<int32_t>(static_cast<float>(input.zeroPoint) *
                                                             input.scale / outScale);
    const Multiplier m =
        quantizeMultiplier(static_cast<double>(input.scale / (countAsFloat * outScale)));
    for (const int64_t sum : sums) {
      const int32_t v = multiplyByQuantizedMultiplier(static_cast<int32_t>(sum), m) + bias;
      result.push_back(std::clamp(v, qmin, qmax));
    }
  } else if (heightAndWidth) {
    const auto [sums, count] = reducedSums(input, reduced, input.zeroPoint);
    const Multiplier m =
        quantizeMultiplier(static_cast<double>(input.scale) / static_cast<double>(outScale));
    const auto n = static_cast<int32_t>(count);
    for (const int64_t sum : sums) {
      int32_t v = multiplyByQuantizedMultiplier(static_cast<int32_t>(sum), m);
      v = v > 0 ? (v + n / 2) / n : (v - n / 2) / n;
      result.push_back(std::clamp(v + outZeroPoint, qmin, qmax));
    }
  } else if (input.scale == outScale && input.zeroPoint == outZeroPoint) {
    const auto [sums, count] = reducedSums(input, reduced, 0);
    for (const int64_t sum : sums) {
      result.push_back(
          static_cast<int32_t>(static_cast<int32_t>(sum) / static_cast<int32_t>(count)));
    }
  } else {
    const auto [sums, count] = reducedSums(input, reduced, 0);
    const float ratio = input.scale / outScale;
    const float bias = static_cast<float>(-input.zeroPoint) * ratio + 0.5f;
    for (const int64_t sum : sums) {
      const float average = static_cast<float>(sum) / static_cast<float>(count);
      float v = std::round(average * ratio + bias) + static_cast<float>(outZeroPoint);
      v = std::max(std::min(v, static_cast<float>(qmax)), static_cast<float>(qmin));
      result.push_back(static_cast<int32_t>(v));
    }
  }
  return result;
}

std::vector<int32_t> meanRoundedOnce(const QuantTensor& input, const std::vector<int32_t>& axes,
                                     float outScale, int32_t outZeroPoint, int32_t qmin,
                                     int32_t qmax) {
  const auto [sums, count] = reducedSums(input, reducedDimensions(input.dims.size(), axes), 0);
  const double ratio = static_cast<double>(input.scale) / static_cast<double>(outScale);
  std::vector<int32_t> result;
  for (const int64_t sum : sums) {
    const double average = static_cast<double>(sum) / static_cast<double>(count);
    const double level = std::round((average - input.zeroPoint) * ratio);
    result.push_back(static_cast<int32_t>(
        std::clamp(level + outZeroPoint, static_cast<double>(qmin), static_cast<double>(qmax))));
  }
  return result;
}

namespace {

std::vector<int32_t> resizeBilinearFloat(const QuantTensor& input, uint32_t outHeight,
                                         uint32_t outWidth, bool alignCorners,
                                         bool halfPixelCenters) {
  const uint32_t batches = input.dims[0], inHeight = input.dims[1], inWidth = input.dims[2],
                 depth = input.dims[3];
  const auto scaleOf = [&](uint32_t in, uint32_t out) {
    return alignCorners && out > 1 ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                   : static_cast<float>(in) / static_cast<float>(out);
  };
  struct Source {
    float position;
    int32_t lower, upper;
  };
  const auto source = [&](uint32_t dst, float scale, uint32_t in) {
    Source s;
    s.position = halfPixelCenters ? (static_cast<float>(dst) + 0.5f) * scale - 0.5f
                                  : static_cast<float>(dst) * scale;
    s.lower = std::max(static_cast<int32_t>(std::floor(s.position)), 0);
    s.upper = std::min(static_cast<int32_t>(std::ceil(s.position)), static_cast<int32_t>(in) - 1);
    return s;
  };
  const float heightScale = scaleOf(inHeight, outHeight);
  const float widthScale = scaleOf(inWidth, outWidth);
  std::vector<int32_t> result;
  result.reserve(size_t{batches} * outHeight * outWidth * depth);
  const auto at = [&](uint32_t b, int32_t y, int32_t x, uint32_t c) {
    return static_cast<float>(input.values[((size_t{b} * inHeight + y) * inWidth + x) * depth + c]);
  };
  for (uint32_t b = 0; b < batches; ++b) {
    for (uint32_t y = 0; y < outHeight; ++y) {
      const Source sy = source(y, heightScale, inHeight);
      const float dy = sy.position - static_cast<float>(sy.lower);
      for (uint32_t x = 0; x < outWidth; ++x) {
        const Source sx = source(x, widthScale, inWidth);
        const float dx = sx.position - static_cast<float>(sx.lower);
        for (uint32_t c = 0; c < depth; ++c) {
          const float v = at(b, sy.lower, sx.lower, c) * (1 - dy) * (1 - dx) +
                          at(b, sy.upper, sx.lower, c) * dy * (1 - dx) +
                          at(b, sy.lower, sx.upper, c) * (1 - dy) * dx +
                          at(b, sy.upper, sx.upper, c) * dy * dx + 0.5f;
          result.push_back(static_cast<int32_t>(std::clamp(v, 0.0f, 255.0f)));
        }
      }
    }
  }
  return result;
}

std::vector<int32_t> resizeBilinearInteger(const QuantTensor& input, uint32_t outHeight,
                                           uint32_t outWidth, bool alignCorners,
                                           bool halfPixelCenters) {
  const int64_t batches = input.dims[0], inHeight = input.dims[1], inWidth = input.dims[2],
                depth = input.dims[3];
  constexpr int64_t kOne = 1 << 10;
  const auto scaleOf = [&](int64_t in, int64_t out) {
    return alignCorners && out > 1 ? (kOne * (in - 1) + (out - 1) / 2) / (out - 1)
                                   : (kOne * in + out / 2) / out;
  };
  struct Source {
    int64_t position, lower, upper;
  };
  const auto source = [&](int64_t dst, int64_t scale, int64_t in) {
    Source s;
    s.position = halfPixelCenters ? dst * scale + scale / 2 - kOne / 2 : dst * scale;
    // C++ division truncates toward zero, as TFLite's does.
    s.lower = std::max<int64_t>(s.position / kOne, 0);
    s.upper = std::min<int64_t>((s.position + kOne - 1) / kOne, in - 1);
    return s;
  };
  const int64_t heightScale = scaleOf(inHeight, outHeight);
  const int64_t widthScale = scaleOf(inWidth, outWidth);
  std::vector<int32_t> result;
  result.reserve(static_cast<size_t>(batches * outHeight * outWidth * depth));
  const auto at = [&](int64_t b, int64_t y, int64_t x, int64_t c) {
    return int64_t{
        input.values[static_cast<size_t>(((b * inHeight + y) * inWidth + x) * depth + c)]};
  };
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t y = 0; y < outHeight; ++y) {
      const Source sy = source(y, heightScale, inHeight);
      const int64_t fy = sy.position - kOne * sy.lower;
      for (int64_t x = 0; x < outWidth; ++x) {
        const Source sx = source(x, widthScale, inWidth);
        const int64_t fx = sx.position - kOne * sx.lower;
        for (int64_t c = 0; c < depth; ++c) {
          const int64_t sum = at(b, sy.lower, sx.lower, c) * (kOne - fy) * (kOne - fx) +
                              at(b, sy.upper, sx.lower, c) * fy * (kOne - fx) +
                              at(b, sy.lower, sx.upper, c) * (kOne - fy) * fx +
                              at(b, sy.upper, sx.upper, c) * fy * fx;
          const int64_t round = sum > 0 ? (1 << 19) : -(1 << 19);
          result.push_back(static_cast<int32_t>((sum + round) / (1 << 20)));
        }
      }
    }
  }
  return result;
}

}  // namespace

std::vector<int32_t> resizeBilinear(const QuantTensor& input, uint32_t outHeight, uint32_t outWidth,
                                    bool alignCorners, bool halfPixelCenters, bool isUnsigned) {
  return isUnsigned
             ? resizeBilinearFloat(input, outHeight, outWidth, alignCorners, halfPixelCenters)
             : resizeBilinearInteger(input, outHeight, outWidth, alignCorners, halfPixelCenters);
}

}  // namespace nnhal::tflite_reference
