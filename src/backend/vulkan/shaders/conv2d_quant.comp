#version 450
// CONV_2D, GROUPED_CONV_2D (multiplier 0) and DEPTHWISE_CONV_2D (multiplier >= 1) on 8-bit
// quantized tensors, NHWC, one invocation per output element (b, y, x, c); FULLY_CONNECTED
// runs here as a 1x1 convolution. Bit-exact with the CPU device's reference kernels:
//   acc = bias[c] + sum over taps of (x - inZero) * (w - filterZero)   (int32, wrapping)
//   out = clamp(requantize(acc, multiplier[c], shift[c]) + outZero, lo, hi)
// with gemmlowp's rounding (quant.glsl). 8-bit values are held as floats of their integer
// value; the bias and the per-channel (multiplier, shift) pairs as raw int32 words.
#include "common.glsl"
#include "quant.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  uint filterOffset;
  uint biasOffset;
  uint requantOffset;  // outC pairs (multiplier, shift)
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
  uint groups;
  int inZero;
  int filterZero;
  int outZero;
  int lo;
  int hi;
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
  int acc = 0;
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
        for (uint k = 0; k < groupC; ++k) {
          acc += (int(data[pixel + first + k]) - p.inZero) * (int(data[w + k]) - p.filterZero);
        }
      } else {
        const int v = int(data[pixel + c / p.multiplier]) - p.inZero;
        acc += v * (int(data[p.filterOffset + (fy * p.fW + fx) * p.outC + c]) - p.filterZero);
      }
    }
  }
  acc += words[p.biasOffset + c];
  const int scaled = requantize(acc, words[p.requantOffset + 2 * c],
                                words[p.requantOffset + 2 * c + 1]);
  data[p.outOffset + i] = float(clamp(scaled + p.outZero, p.lo, p.hi));
}
