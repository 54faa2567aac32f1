#version 450
// The operations along one axis, float32: one invocation per row of `axisSize` elements,
// `inner` apart (the product of the dimensions after the axis). op 0 SOFTMAX: exp((x - max) *
// beta) over its sum; 1 L2_NORMALIZATION: x / max(sqrt(sum x^2), 1e-6); 2
// LOCAL_RESPONSE_NORMALIZATION: x * (bias + alpha * sum of x^2 within radius)^-lrnBeta; 3
// LOG_SOFTMAX: (x - max) * beta - log(sum exp((x - max) * beta)); 4 SOFTMAX on 8-bit values
// (held as floats of their integer values) as the CPU device computes it (kernels/
// softmax.h): the table's weights exp(-beta * scale * (max - x)) summed in float in element
// order, each weight times 1 / (sum / 256), rounded (uint8: + 0.5 and truncation; int8: half
// away from zero, - 128) and saturated. Bit-exact where the device divides correctly
// rounded (lavapipe does), else within one step. 5 ARGMAX and 6 ARGMIN: the index of the
// first largest (smallest) value along the axis, written at the row's place in the output.
// 7 INSTANCE_NORMALIZATION over a row (the spatial positions of one image and channel).
// 8 TOPK_V2 (below). 9 L2_NORMALIZATION on 8-bit values (quantizedL2Normalization).
#include "common.glsl"
#include "quant.glsl"

layout(push_constant) uniform Params {
  uint rows;
  uint axisSize;
  uint outOffset;
  uint inOffset;
  float beta;
  uint inner;
  uint op;
  int radius;
  float bias;
  float alpha;
  float lrnBeta;
  uint tableOffset;  // op 4: 256 floats
  uint isSigned;     // op 4: int8 (1) or uint8 (0)
} p;

void quantizedSoftmax(uint in0, uint out0) {
  float largest = data[in0];
  for (uint k = 1; k < p.axisSize; ++k) largest = max(largest, data[in0 + k * p.inner]);
  float sum = 0.0;
  for (uint k = 0; k < p.axisSize; ++k) {
    sum += data[p.tableOffset + uint(largest - data[in0 + k * p.inner])];
  }
  const float inverse = 1.0 / (sum * 0.00390625);
  for (uint k = 0; k < p.axisSize; ++k) {
    precise const float level = data[p.tableOffset + uint(largest - data[in0 + k * p.inner])] * inverse;
    int q;
    if (p.isSigned != 0) {
      q = int(roundHalfAway(level)) - 128;
    } else {
      precise const float nudged = level + 0.5;
      q = int(nudged);
    }
    data[out0 + k * p.inner] = float(p.isSigned != 0 ? clamp(q, -128, 127) : clamp(q, 0, 255));
  }
}

// (2r + 1)^2 * sum > a, in 64 bits: whether |d| * 128 / sqrt(sum) < r + 0.5 (a = 65536 d^2).
bool belowHalfAbove(uint r, uint sum, uint a) {
  uint high;
  uint low;
  umulExtended((2u * r + 1u) * (2u * r + 1u), sum, high, low);
  return high != 0u || low > a;
}

// L2_NORMALIZATION of 8-bit values as the CPU device computes it (kernels/
// axis_normalization.h): d = q - input zero point (in radius), sum = the sum of d^2 along the
// axis (exact in 32 bits: the planner bounds the axis), out = round(d * 128 / sqrt(sum)),
// ties away from zero, plus the output zero point (128 for uint8, 0 for int8), saturated.
// The float estimate of |d| * 128 / sqrt(sum) is corrected with exact integer comparisons
// of (2r +- 1)^2 * sum against 65536 d^2, so the result is the exactly rounded value, which
// is what the CPU device's double arithmetic gives at these sizes.
void quantizedL2Normalization(uint in0, uint out0) {
  uint sum = 0u;
  for (uint k = 0; k < p.axisSize; ++k) {
    const int d = int(data[in0 + k * p.inner]) - p.radius;
    sum += uint(d * d);
  }
  const int zeroPoint = p.isSigned != 0 ? 0 : 128;
  for (uint k = 0; k < p.axisSize; ++k) {
    const int d = int(data[in0 + k * p.inner]) - p.radius;
    const uint magnitude = uint(abs(d));
    uint r = 0u;
    if (sum != 0u && magnitude != 0u) {
      const uint a = 65536u * magnitude * magnitude;
      r = min(uint(float(128u * magnitude) / sqrt(float(sum)) + 0.5), 128u);
      while (r > 0u && belowHalfAbove(r - 1u, sum, a)) --r;  // below r - 0.5
      while (!belowHalfAbove(r, sum, a)) ++r;                // at or above r + 0.5
    }
    const int q = (d < 0 ? -int(r) : int(r)) + zeroPoint;
    data[out0 + k * p.inner] = float(p.isSigned != 0 ? clamp(q, -128, 127) : clamp(q, 0, 255));
  }
}

void main() {
  const uint row = invocationIndex();
  if (row >= p.rows) return;
  const uint base = (row / p.inner) * p.axisSize * p.inner + row % p.inner;
  const uint in0 = p.inOffset + base;
  const uint out0 = p.outOffset + base;
  if (p.op == 4) {
    quantizedSoftmax(in0, out0);
    return;
  }
  if (p.op == 9) {
    quantizedL2Normalization(in0, out0);
    return;
  }
  if (p.op == 5 || p.op == 6) {
    uint best = 0;
    float bestValue = data[in0];
    for (uint k = 1; k < p.axisSize; ++k) {
      const float v = data[in0 + k * p.inner];
      if (p.op == 5 ? v > bestValue : v < bestValue) {
        best = k;
        bestValue = v;
      }
    }
    data[p.outOffset + row] = float(best);
    return;
  }
  if (p.op == 8) {
    // TOPK_V2 along the last axis (inner 1), k in radius: the k largest values in the CPU
    // device's order (larger values first, of equal values the later one first), to
    // outOffset, and their indices to tableOffset, k per row. Each pass takes the largest
    // element that comes after the one taken before in that order.
    const uint k = uint(p.radius);
    float previous = 0.0;
    int previousIndex = -1;
    for (uint j = 0; j < k; ++j) {
      int best = -1;
      float bestValue = 0.0;
      for (uint t = 0; t < p.axisSize; ++t) {
        const float v = data[in0 + t];
        const int ti = int(t);
        if (j != 0u && !(v < previous || (v == previous && ti < previousIndex))) continue;
        if (best < 0 || v > bestValue || (v == bestValue && ti > best)) {
          best = ti;
          bestValue = v;
        }
      }
      data[p.outOffset + row * k + j] = bestValue;
      data[p.tableOffset + row * k + j] = float(best);
      previous = bestValue;
      previousIndex = best;
    }
    return;
  }
  if (p.op == 7) {
    // INSTANCE_NORMALIZATION: (x - mean) * gamma / sqrt(variance + epsilon) + beta, with
    // gamma in alpha, beta in bias and epsilon in lrnBeta.
    float sum = 0.0;
    for (uint k = 0; k < p.axisSize; ++k) sum += data[in0 + k * p.inner];
    const float mean = sum / float(p.axisSize);
    float squares = 0.0;
    for (uint k = 0; k < p.axisSize; ++k) {
      const float d = data[in0 + k * p.inner] - mean;
      squares += d * d;
    }
    const float scale = p.alpha / sqrt(squares / float(p.axisSize) + p.lrnBeta);
    for (uint k = 0; k < p.axisSize; ++k) {
      data[out0 + k * p.inner] = (data[in0 + k * p.inner] - mean) * scale + p.bias;
    }
    return;
  }
  if (p.op == 1) {
    float sum = 0.0;
    for (uint k = 0; k < p.axisSize; ++k) sum += data[in0 + k * p.inner] * data[in0 + k * p.inner];
    const float norm = max(sqrt(sum), 1e-6);
    for (uint k = 0; k < p.axisSize; ++k) data[out0 + k * p.inner] = data[in0 + k * p.inner] / norm;
    return;
  }
  if (p.op == 2) {
    // Written after reading: out and in are different tensors.
    for (int k = 0; k < int(p.axisSize); ++k) {
      const int lo = max(0, k - p.radius);
      const int hi = min(int(p.axisSize), k + p.radius + 1);
      float sum = 0.0;
      for (int j = lo; j < hi; ++j) sum += data[in0 + uint(j) * p.inner] * data[in0 + uint(j) * p.inner];
      const uint at = uint(k) * p.inner;
      data[out0 + at] = data[in0 + at] * pow(p.bias + p.alpha * sum, -p.lrnBeta);
    }
    return;
  }
  float largest = data[in0];
  for (uint k = 1; k < p.axisSize; ++k) largest = max(largest, data[in0 + k * p.inner]);
  float sum = 0.0;
  for (uint k = 0; k < p.axisSize; ++k) sum += exp((data[in0 + k * p.inner] - largest) * p.beta);
  if (p.op == 3) {
    const float logSum = log(sum);
    for (uint k = 0; k < p.axisSize; ++k) {
      data[out0 + k * p.inner] = (data[in0 + k * p.inner] - largest) * p.beta - logSum;
    }
    return;
  }
  for (uint k = 0; k < p.axisSize; ++k) {
    data[out0 + k * p.inner] = exp((data[in0 + k * p.inner] - largest) * p.beta) / sum;
  }
}
