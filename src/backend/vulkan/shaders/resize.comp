#version 450
// RESIZE_BILINEAR (op 0) and RESIZE_NEAREST_NEIGHBOR (op 1), NHWC float32, one invocation
// per output element, with the CPU kernels' sampling (kernels/resize.cpp): the source
// position dst * scale, or (dst + 0.5) * scale (- 0.5 for bilinear) with half-pixel
// centers; nearest rounds half away from zero with align_corners, else floors. On 8-bit
// values (held as floats of their integers) bilinear rounds half away from zero and
// saturates to [lo, hi]; `precise` keeps every step the CPU kernel's (no fused multiply-add).
#include "common.glsl"
#include "quant.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint op;
  uint outOffset;
  uint inOffset;
  uint inH;
  uint inW;
  uint channels;
  uint outH;
  uint outW;
  float scaleH;
  float scaleW;
  uint alignCorners;
  uint halfPixel;
  uint quantized;
  float lo;
  float hi;
} p;

// Bilinear: the lower and upper source index and the weight of the upper one.
void sampleAt(uint dst, float scale, uint size, out uint lower, out uint upper, out float frac) {
  precise const float src =
      p.halfPixel != 0 ? (float(dst) + 0.5) * scale - 0.5 : float(dst) * scale;
  const int lo = int(floor(src));
  const int hi = int(ceil(src));
  lower = uint(clamp(lo, 0, int(size) - 1));
  upper = uint(clamp(hi, 0, int(size) - 1));
  frac = src - float(max(lo, 0));
}

uint nearestAt(uint dst, float scale, uint size) {
  precise const float src = p.halfPixel != 0 ? (float(dst) + 0.5) * scale : float(dst) * scale;
  const float index = p.alignCorners != 0 ? roundHalfAway(src) : floor(src);
  return uint(clamp(int(index), 0, int(size) - 1));
}

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  const uint c = i % p.channels;
  uint t = i / p.channels;
  const uint x = t % p.outW;
  t /= p.outW;
  const uint y = t % p.outH;
  const uint b = t / p.outH;
  const uint image = p.inOffset + b * p.inH * p.inW * p.channels + c;
  if (p.op == 1) {
    const uint sy = nearestAt(y, p.scaleH, p.inH);
    const uint sx = nearestAt(x, p.scaleW, p.inW);
    data[p.outOffset + i] = data[image + (sy * p.inW + sx) * p.channels];
    return;
  }
  uint y0, y1, x0, x1;
  float fy, fx;
  sampleAt(y, p.scaleH, p.inH, y0, y1, fy);
  sampleAt(x, p.scaleW, p.inW, x0, x1, fx);
  precise const float w00 = (1.0 - fy) * (1.0 - fx);
  precise const float w10 = fy * (1.0 - fx);
  precise const float w01 = (1.0 - fy) * fx;
  precise const float w11 = fy * fx;
  precise const float v = data[image + (y0 * p.inW + x0) * p.channels] * w00 +
                          data[image + (y1 * p.inW + x0) * p.channels] * w10 +
                          data[image + (y0 * p.inW + x1) * p.channels] * w01 +
                          data[image + (y1 * p.inW + x1) * p.channels] * w11;
  data[p.outOffset + i] = p.quantized != 0 ? clamp(roundHalfAway(v), p.lo, p.hi) : v;
}
