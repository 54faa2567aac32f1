#version 450
// One input of CONCATENATION: input element i of blocks of `inner` elements goes to block
// i / inner of the output (blocks of `outerStride` elements), at `innerOffset` in it.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint inner;
  uint outerStride;
  uint innerOffset;
  uint outOffset;
  uint inOffset;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  data[p.outOffset + (i / p.inner) * p.outerStride + p.innerOffset + i % p.inner] =
      data[p.inOffset + i];
}
