#version 450
// PAD, PAD_V2 and TRANSPOSE: output element i (rank 4, leading 1s) reads the input at its
// coordinates minus `before`, through the input's strides (permuted for TRANSPOSE); a
// coordinate outside [0, inDims) reads padValue instead.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  float padValue;
  uint outDims[4];
  int before[4];
  uint inDims[4];
  uint inStrides[4];
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  uint rest = i;
  uint from = 0;
  bool inside = true;
  for (int d = 3; d >= 0; --d) {
    const int c = int(rest % p.outDims[d]) - p.before[d];
    rest /= p.outDims[d];
    if (c < 0 || c >= int(p.inDims[d])) inside = false;
    from += uint(max(c, 0)) * p.inStrides[d];
  }
  data[p.outOffset + i] = inside ? data[p.inOffset + from] : p.padValue;
}
