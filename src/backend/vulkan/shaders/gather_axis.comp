#version 450
// GATHER: the input viewed as [outer, axisSize, inner]; output element i, at (o, j, k) of
// [outer, indexCount, inner], is input (o, indices[j], k). The indices (whole numbers held as
// floats) were checked against [0, axisSize) before the run (at preparation when constant,
// by the host before the submission when a model input); the clamp only keeps a read inside
// the input whatever the buffer holds.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  uint indicesOffset;
  uint axisSize;
  uint indexCount;
  uint inner;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  const uint k = i % p.inner;
  const uint t = i / p.inner;
  const uint j = t % p.indexCount;
  const uint o = t / p.indexCount;
  const uint index = uint(clamp(int(data[p.indicesOffset + j]), 0, int(p.axisSize) - 1));
  data[p.outOffset + i] = data[p.inOffset + (o * p.axisSize + index) * p.inner + k];
}
