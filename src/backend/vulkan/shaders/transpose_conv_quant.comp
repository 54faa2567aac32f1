#version 450
// TRANSPOSE_CONV_2D on 8-bit quantized tensors, NHWC: one invocation per output element
// (b, y, x, c), over the same taps as transpose_conv.comp. Bit-exact with the CPU device's
// kernel (kernels/transpose_conv.h):
//   acc = bias[c] + sum over taps of (x - inZero) * (w - filterZero)   (int32, wrapping)
//   out = clamp(requantize(acc, multiplier[c], shift[c]) + outZero, lo, hi)
// 8-bit values are held as floats of their integer value; the bias and the per-channel
// (multiplier, shift) pairs as raw int32 words (quant.glsl).
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
  int acc = words[p.biasOffset + c];
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
        for (uint k = 0; k < p.inC; ++k) {
          acc += (int(data[pixel + k]) - p.inZero) * (int(data[tap + k]) - p.filterZero);
        }
      }
    }
  }
  const int scaled = requantize(acc, words[p.requantOffset + 2 * c],
                                words[p.requantOffset + 2 * c + 1]);
  data[p.outOffset + i] = float(clamp(scaled + p.outZero, p.lo, p.hi));
}
