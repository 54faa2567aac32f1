#version 450
// The elementwise activations over float32 tensors, and the plain copy RESHAPE is.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint op;  // 0 RELU, 1 RELU1, 2 RELU6, 3 LOGISTIC, 4 TANH, 5 HARD_SWISH, 6 copy
  uint outOffset;
  uint inOffset;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  const float x = data[p.inOffset + i];
  float r;
  switch (p.op) {
    case 0: r = max(x, 0.0); break;
    case 1: r = min(max(x, -1.0), 1.0); break;
    case 2: r = min(max(x, 0.0), 6.0); break;
    case 3: r = 1.0 / (1.0 + exp(-x)); break;
    case 4: r = tanh(x); break;
    case 5: r = x * min(max(x + 3.0, 0.0), 6.0) / 6.0; break;
    default: r = x; break;
  }
  data[p.outOffset + i] = r;
}
