#version 450
// FULLY_CONNECTED, float32: output [batches, units] = input [batches, inSize] x weights
// [units, inSize] transposed + bias [units], one invocation per output element; then the
// fused activation's clamp.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  uint weightOffset;
  uint biasOffset;
  uint inSize;
  uint units;
  float lo;
  float hi;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  const uint u = i % p.units;
  const uint b = i / p.units;
  float sum = data[p.biasOffset + u];
  const uint x = p.inOffset + b * p.inSize;
  const uint w = p.weightOffset + u * p.inSize;
  for (uint k = 0; k < p.inSize; ++k) sum += data[x + k] * data[w + k];
  data[p.outOffset + i] = min(max(sum, p.lo), p.hi);
}
