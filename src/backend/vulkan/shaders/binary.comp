#version 450
// ADD, MUL, SUB, DIV, MAXIMUM, MINIMUM and PRELU over float32 tensors, and ADD and MUL over
// 8-bit quantized ones (ops 7 and 8: the CPU device's requantization, kernels/elementwise.h,
// on the integer values held as floats), and MAXIMUM and MINIMUM over 8-bit ones (ops 9 and
// 10: both inputs through the CPU device's requantization tables), the six comparisons (ops
// 11-22, BOOL8 outputs of 0 and 1), PRELU over 8-bit ones (op 23), POW (op 24), with NumPy broadcasting: output element i (rank 4,
// leading 1s) reads a and b through their strides, 0 along broadcast dimensions; then the
// fused activation's clamp (for 8-bit outputs, its range in output steps).
#include "common.glsl"
#include "quant.glsl"

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
  // Quantized ops: zero points of a, b and the output, then the (multiplier, shift) pairs
  // of a, b and the output (ADD), or of the output alone (MUL).
  int zeroA;
  int zeroB;
  int zeroOut;
  int requant[6];
  uint tableOffset;  // ops 9, 10, 17-22: 512 floats, a's values then b's, by stored byte
} p;

// TFLite's quantized ADD: both inputs moved to a common scale with 20 bits of headroom,
// added, and the sum rescaled to the output's.
float quantizedAdd(int a, int b) {
  const int shiftedA = (a - p.zeroA) * (1 << 20);
  const int shiftedB = (b - p.zeroB) * (1 << 20);
  const int sum = requantize(shiftedA, p.requant[0], p.requant[1]) +
                  requantize(shiftedB, p.requant[2], p.requant[3]);
  return float(requantize(sum, p.requant[4], p.requant[5]) + p.zeroOut);
}

// The CPU device's quantized PRELU (kernels/binary_math.h): b is alpha.
float quantizedPrelu(int a, int b) {
  const int x = a - p.zeroA;
  const int r = x >= 0 ? requantize(x, p.requant[0], p.requant[1])
                       : requantize(x * (b - p.zeroB), p.requant[2], p.requant[3]);
  return float(r + p.zeroOut);
}

// std::pow's results where GLSL's pow leaves them undefined: a negative base with a whole
// exponent, and a zero base.
float powLikeC(float x, float y) {
  if (y == 0.0) return 1.0;
  if (x == 0.0) return y > 0.0 ? 0.0 : uintBitsToFloat(0x7f800000u);
  if (x < 0.0) {
    if (y != floor(y)) return uintBitsToFloat(0x7fc00000u);
    const float m = pow(-x, y);
    return mod(y, 2.0) != 0.0 ? -m : m;
  }
  return pow(x, y);
}

float quantizedMul(int a, int b) {
  const int product = (a - p.zeroA) * (b - p.zeroB);
  return float(requantize(product, p.requant[0], p.requant[1]) + p.zeroOut);
}

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
    case 7: r = quantizedAdd(int(a), int(b)); break;
    case 8: r = quantizedMul(int(a), int(b)); break;
    case 9:
    case 10: {
      const float ra = data[p.tableOffset + (uint(int(a)) & 255u)];
      const float rb = data[p.tableOffset + 256u + (uint(int(b)) & 255u)];
      r = p.op == 9 ? max(ra, rb) : min(ra, rb);
      break;
    }
    case 6: r = a < 0.0 ? a * b : a; break;  // PRELU: b is alpha
    case 23: r = quantizedPrelu(int(a), int(b)); break;
    case 24: r = powLikeC(a, b); break;
    default: {
      // 11-16: EQUAL, NOT_EQUAL, GREATER, GREATER_EQUAL, LESS, LESS_EQUAL on the values;
      // 17-22: the same on the tables' values of the stored bytes (8-bit and BOOL8 inputs).
      float x = a;
      float y = b;
      if (p.op >= 17u) {
        x = data[p.tableOffset + (uint(int(a)) & 255u)];
        y = data[p.tableOffset + 256u + (uint(int(b)) & 255u)];
      }
      const uint k = (p.op - 11u) % 6u;
      const bool t = k == 0u ? x == y
                   : k == 1u ? !(x == y)
                   : k == 2u ? x > y
                   : k == 3u ? x >= y
                   : k == 4u ? x < y
                             : x <= y;
      r = t ? 1.0 : 0.0;
      break;
    }
  }
  if (p.clamped != 0) r = min(max(r, p.lo), p.hi);
  data[p.outOffset + i] = r;
}
