#version 450
// TRANSPOSE_CONV_2D, NHWC float32: one invocation per output element (b, y, x, c), summing
// the filter taps [c, i, j, :] that a strided input pixel reaches there: i = y + padTop -
// h * strideH for an input row h (and likewise for columns); then the bias and the fused
// activation's clamp.
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
  float lo;
  float hi;
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
  float sum = 0.0;
  const int ty = int(y) + p.padTop;
  const int tx = int(x) + p.padLeft;
  if (ty >= 0 && tx >= 0) {
    for (int fy = ty % int(p.strideH); fy < int(p.fH) && fy <= ty; fy += int(p.strideH)) {
      const uint h = uint(ty - fy) / p.strideH;
      if (h >= p.inH) continue;
      for (int fx = tx % int(p.strideW); fx < int(p.fW) && fx <= tx; fx += int(p.strideW)) {
        const uint w = uint(tx - fx) / p.strideW;
        if (w >= p.inW) continue;
        const uint pixel = p.inOffset + ((b * p.inH + h) * p.inW + w) * p.inC;
        const uint tap = p.filterOffset + ((c * p.fH + uint(fy)) * p.fW + uint(fx)) * p.inC;
        for (uint k = 0; k < p.inC; ++k) sum += data[pixel + k] * data[tap + k];
      }
    }
  }
  data[p.outOffset + i] = min(max(sum + data[p.biasOffset + c], p.lo), p.hi);
}
