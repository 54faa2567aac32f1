#version 450
// CONV_2D and GROUPED_CONV_2D (multiplier 0) and DEPTHWISE_CONV_2D (multiplier >= 1), NHWC
// float32: one invocation per output element (b, y, x, c). CONV_2D's filter is
// [outC, fH, fW, inC / groups], output channel c reading the input channels of its group;
// DEPTHWISE_CONV_2D's is [1, fH, fW, outC] and output channel c reads input channel
// c / multiplier. Taps on the padding are skipped; the bias starts the sum.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  uint filterOffset;
  uint biasOffset;
  uint inH;
  uint inW;
  uint inC;
  uint outH;
  uint outW;
  uint outC;
  uint fH;
  uint fW;
  uint strideH;
  uint strideW;
  int padTop;
  int padLeft;
  uint dilH;
  uint dilW;
  uint multiplier;
  float lo;
  float hi;
  uint groups;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  const uint c = i % p.outC;
  uint t = i / p.outC;
  const uint x = t % p.outW;
  t /= p.outW;
  const uint y = t % p.outH;
  const uint b = t / p.outH;
  float sum = data[p.biasOffset + c];
  for (uint fy = 0; fy < p.fH; ++fy) {
    const int iy = int(y * p.strideH) - p.padTop + int(fy * p.dilH);
    if (iy < 0 || iy >= int(p.inH)) continue;
    for (uint fx = 0; fx < p.fW; ++fx) {
      const int ix = int(x * p.strideW) - p.padLeft + int(fx * p.dilW);
      if (ix < 0 || ix >= int(p.inW)) continue;
      const uint pixel = p.inOffset + ((b * p.inH + uint(iy)) * p.inW + uint(ix)) * p.inC;
      if (p.multiplier == 0) {
        const uint groupC = p.inC / p.groups;
        const uint first = (c / (p.outC / p.groups)) * groupC;
        const uint w = p.filterOffset + ((c * p.fH + fy) * p.fW + fx) * groupC;
        for (uint k = 0; k < groupC; ++k) sum += data[pixel + first + k] * data[w + k];
      } else {
        sum += data[pixel + c / p.multiplier] * data[p.filterOffset + (fy * p.fW + fx) * p.outC + c];
      }
    }
  }
  data[p.outOffset + i] = min(max(sum, p.lo), p.hi);
}
