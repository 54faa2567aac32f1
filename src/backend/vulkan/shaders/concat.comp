#version 450
// One input of CONCATENATION: input element i of blocks of `inner` elements goes to block
// i / inner of the output (blocks of `outerStride` elements), at `innerOffset` in it. An
// 8-bit input of another scale or zero point than the output's is requantized as the CPU
// device does (kernels/concatenation.h): round(q * scale + bias) + outZero, saturated.
#include "common.glsl"
#include "quant.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint inner;
  uint outerStride;
  uint innerOffset;
  uint outOffset;
  uint inOffset;
  uint requantized;
  float scale;
  float bias;
  float outZero;
  float lo;
  float hi;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  float v = data[p.inOffset + i];
  if (p.requantized != 0) {
    precise const float moved = v * p.scale + p.bias;
    v = clamp(roundHalfAway(moved) + p.outZero, p.lo, p.hi);
  }
  data[p.outOffset + (i / p.inner) * p.outerStride + p.innerOffset + i % p.inner] = v;
}
