#version 450
// MEAN (op 0) and REDUCE_SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD (ops 1-4): output element i
// folds the input elements that share its coordinates along the kept dimensions (rank 4,
// leading 1s; reduced[d] = 1 for a reduced dimension), in storage order. Op 5: MEAN of 8-bit
// values (floats of their integers): the sum in int32 (exact), then as the CPU device
// (kernels/reduce.h), round((sum / count - inZero) * ratio) + outZero, ties away from zero,
// saturated; in float32 where the CPU device uses double, so within one step of it.
#include "common.glsl"
#include "quant.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  uint reducedCount;
  uint dims[4];
  uint reduced[4];
  uint op;
  float ratio;   // op 5: input scale / output scale
  int inZero;    // op 5
  int outZero;   // op 5
  uint isSigned; // op 5: int8 (1) or uint8 (0)
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
  int sum = 0;
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
    sum += int(x);
  }
  if (p.op == 5) {
    const float mean = float(sum) / float(p.reducedCount);
    precise const float level = (mean - float(p.inZero)) * p.ratio;
    const int q = int(roundHalfAway(level)) + p.outZero;
    data[p.outOffset + i] = float(p.isSigned != 0 ? clamp(q, -128, 127) : clamp(q, 0, 255));
    return;
  }
  data[p.outOffset + i] = p.op == 0 ? acc / float(p.reducedCount) : acc;
}
