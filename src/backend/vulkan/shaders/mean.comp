#version 450
// MEAN: output element i is the average of the input elements that share its coordinates
// along the kept dimensions (rank 4, leading 1s; reduced[d] = 1 for a reduced dimension),
// summed in storage order.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  uint reducedCount;
  uint dims[4];
  uint reduced[4];
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  uint c[4];
  uint rest = i;
  for (int d = 3; d >= 0; --d) {
    c[d] = 0;
    if (p.reduced[d] == 0) {
      c[d] = rest % p.dims[d];
      rest /= p.dims[d];
    }
  }
  float sum = 0.0;
  for (uint r = 0; r < p.reducedCount; ++r) {
    uint left = r;
    for (int d = 3; d >= 0; --d) {
      if (p.reduced[d] != 0) {
        c[d] = left % p.dims[d];
        left /= p.dims[d];
      }
    }
    sum += data[p.inOffset + ((c[0] * p.dims[1] + c[1]) * p.dims[2] + c[2]) * p.dims[3] + c[3]];
  }
  data[p.outOffset + i] = sum / float(p.reducedCount);
}
