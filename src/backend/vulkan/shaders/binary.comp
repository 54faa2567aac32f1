#version 450
// ADD, MUL, SUB, DIV, MAXIMUM, MINIMUM and PRELU over float32 tensors with NumPy broadcasting: output
// element i (rank 4, leading 1s) reads a and b through their strides, 0 along broadcast
// dimensions; then the fused activation's clamp.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint op;  // 0 add, 1 mul, 2 sub, 3 div, 4 maximum, 5 minimum, 6 prelu
  uint outOffset;
  uint aOffset;
  uint bOffset;
  uint clamped;  // 1: clamp to [lo, hi]
  float lo;
  float hi;
  uint dims[4];
  uint aStrides[4];
  uint bStrides[4];
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  uint rest = i;
  uint ai = 0;
  uint bi = 0;
  for (int d = 3; d >= 0; --d) {
    const uint c = rest % p.dims[d];
    rest /= p.dims[d];
    ai += c * p.aStrides[d];
    bi += c * p.bStrides[d];
  }
  const float a = data[p.aOffset + ai];
  const float b = data[p.bOffset + bi];
  float r;
  switch (p.op) {
    case 0: r = a + b; break;
    case 1: r = a * b; break;
    case 2: r = a - b; break;
    case 3: r = a / b; break;
    case 4: r = max(a, b); break;
    case 5: r = min(a, b); break;
    default: r = a < 0.0 ? a * b : a; break;  // PRELU: b is alpha
  }
  if (p.clamped != 0) r = min(max(r, p.lo), p.hi);
  data[p.outOffset + i] = r;
}
