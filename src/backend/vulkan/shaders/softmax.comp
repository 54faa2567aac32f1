#version 450
// SOFTMAX along the innermost dimension, float32: one invocation per row of `axisSize`
// elements. exp((x - max) * beta), normalized by its sum.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint rows;
  uint axisSize;
  uint outOffset;
  uint inOffset;
  float beta;
} p;

void main() {
  const uint row = invocationIndex();
  if (row >= p.rows) return;
  const uint in0 = p.inOffset + row * p.axisSize;
  const uint out0 = p.outOffset + row * p.axisSize;
  float largest = data[in0];
  for (uint k = 1; k < p.axisSize; ++k) largest = max(largest, data[in0 + k]);
  float sum = 0.0;
  for (uint k = 0; k < p.axisSize; ++k) {
    const float e = exp((data[in0 + k] - largest) * p.beta);
    data[out0 + k] = e;
    sum += e;
  }
  for (uint k = 0; k < p.axisSize; ++k) data[out0 + k] /= sum;
}
