#version 450
// The elementwise activations and math functions over float32 tensors, the plain copy
// RESHAPE is, and (op 16) the 8-bit activations as the CPU device computes them: a lookup in
// its 256-entry table (RELU family, LOGISTIC, TANH, HARD_SWISH), indexed by the stored byte.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  // 0 RELU, 1 RELU1, 2 RELU6, 3 LOGISTIC, 4 TANH, 5 HARD_SWISH, 6 copy, 7 ABS, 8 EXP, 9 LOG,
  // 10 NEG, 11 RSQRT, 12 SQRT, 13 SIN, 14 FLOOR, 15 ELU (alpha), 16 table lookup, 17 CAST to
  // uint8
  uint op;
  uint outOffset;
  uint inOffset;
  float alpha;
  uint tableOffset;  // op 16: 256 floats, the outputs of the bytes 0..255
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
    case 7: r = abs(x); break;
    case 8: r = exp(x); break;
    case 9: r = log(x); break;
    case 10: r = -x; break;
    case 11: r = inversesqrt(x); break;
    case 12: r = sqrt(x); break;
    case 13: r = sin(x); break;
    case 14: r = floor(x); break;
    case 15: r = x < 0.0 ? p.alpha * (exp(x) - 1.0) : x; break;
    case 16: r = data[p.tableOffset + (uint(int(x)) & 255u)]; break;
    // CAST to TENSOR_QUANT8_ASYMM's raw values, as the CPU device (kernels/cast.h): NaN 0,
    // below 0 0, above 255 255, the rest truncated toward zero.
    case 17: r = isnan(x) ? 0.0 : trunc(clamp(x, 0.0, 255.0)); break;
    default: r = x; break;
  }
  data[p.outOffset + i] = r;
}
