#version 450
// AVERAGE_POOL_2D (op 0: the mean of the taps inside the input, padding not counted),
// MAX_POOL_2D (op 1), L2_POOL_2D (op 2: the square root of the mean of the squares) and
// the quantized AVERAGE_POOL_2D (op 3: the integer sum divided by the tap count, rounded
// half away from zero, as the CPU device's reference), NHWC, one invocation per output
// element; then the fused activation's clamp. 8-bit values are held as floats of their
// integer values, whose sums are exact below 2^24.
#include "common.glsl"

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
  const uint c = i % p.channels;
  uint t = i / p.channels;
  const uint x = t % p.outW;
  t /= p.outW;
  const uint y = t % p.outH;
  const uint b = t / p.outH;
  float sum = 0.0;
  float largest = -3.402823466e38;
  uint taps = 0;
  for (uint fy = 0; fy < p.fH; ++fy) {
    const int iy = int(y * p.strideH) - p.padTop + int(fy);
    if (iy < 0 || iy >= int(p.inH)) continue;
    for (uint fx = 0; fx < p.fW; ++fx) {
      const int ix = int(x * p.strideW) - p.padLeft + int(fx);
      if (ix < 0 || ix >= int(p.inW)) continue;
      const float v = data[p.inOffset + ((b * p.inH + uint(iy)) * p.inW + uint(ix)) * p.channels + c];
      sum += p.op == 2 ? v * v : v;
      largest = max(largest, v);
      ++taps;
    }
  }
  const float mean = taps > 0 ? sum / float(taps) : 0.0;
  float r = p.op == 0 ? mean : p.op == 2 ? sqrt(mean) : largest;
  if (p.op == 3) {
    const int total = int(sum);
    const int n = max(int(taps), 1);
    const int rounded = (abs(total) + n / 2) / n;
    r = float(total < 0 ? -rounded : rounded);
  }
  data[p.outOffset + i] = min(max(r, p.lo), p.hi);
}
