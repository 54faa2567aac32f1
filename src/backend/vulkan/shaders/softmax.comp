#version 450
// SOFTMAX along one axis, float32: one invocation per row of `axisSize` elements, `inner`
// apart (the product of the dimensions after the axis). exp((x - max) * beta), normalized by
// its sum.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint rows;
  uint axisSize;
  uint outOffset;
  uint inOffset;
  float beta;
  uint inner;
} p;

void main() {
  const uint row = invocationIndex();
  if (row >= p.rows) return;
  const uint base = (row / p.inner) * p.axisSize * p.inner + row % p.inner;
  const uint in0 = p.inOffset + base;
  const uint out0 = p.outOffset + base;
  float largest = data[in0];
  for (uint k = 1; k < p.axisSize; ++k) largest = max(largest, data[in0 + k * p.inner]);
  float sum = 0.0;
  for (uint k = 0; k < p.axisSize; ++k) {
    const float e = exp((data[in0 + k * p.inner] - largest) * p.beta);
    data[out0 + k * p.inner] = e;
    sum += e;
  }
  for (uint k = 0; k < p.axisSize; ++k) data[out0 + k * p.inner] /= sum;
}
