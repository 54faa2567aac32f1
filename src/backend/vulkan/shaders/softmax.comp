#version 450
// The operations along one axis, float32: one invocation per row of `axisSize` elements,
// `inner` apart (the product of the dimensions after the axis). op 0 SOFTMAX: exp((x - max) *
// beta) over its sum; 1 L2_NORMALIZATION: x / max(sqrt(sum x^2), 1e-6); 2
// LOCAL_RESPONSE_NORMALIZATION: x * (bias + alpha * sum of x^2 within radius)^-lrnBeta; 3
// LOG_SOFTMAX: (x - max) * beta - log(sum exp((x - max) * beta)).
#include "common.glsl"

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
} p;

void main() {
  const uint row = invocationIndex();
  if (row >= p.rows) return;
  const uint base = (row / p.inner) * p.axisSize * p.inner + row % p.inner;
  const uint in0 = p.inOffset + base;
  const uint out0 = p.outOffset + base;
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
