#version 450
// MEAN (op 0) and REDUCE_SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD (ops 1-4): output element i
// folds the input elements that share its coordinates along the kept dimensions (rank 4,
// leading 1s; reduced[d] = 1 for a reduced dimension), in storage order.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  uint reducedCount;
  uint dims[4];
  uint reduced[4];
  uint op;
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
  float acc = p.op == 2 ? -3.402823466e38 : p.op == 3 ? 3.402823466e38 : p.op == 4 ? 1.0 : 0.0;
  for (uint r = 0; r < p.reducedCount; ++r) {
    uint left = r;
    for (int d = 3; d >= 0; --d) {
      if (p.reduced[d] != 0) {
        c[d] = left % p.dims[d];
        left /= p.dims[d];
      }
    }
    const float x =
        data[p.inOffset + ((c[0] * p.dims[1] + c[1]) * p.dims[2] + c[2]) * p.dims[3] + c[3]];
    acc = p.op == 2 ? max(acc, x) : p.op == 3 ? min(acc, x) : p.op == 4 ? acc * x : acc + x;
  }
  data[p.outOffset + i] = p.op == 0 ? acc / float(p.reducedCount) : acc;
}
