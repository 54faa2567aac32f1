#version 450
// DEQUANTIZE (op 0): scale * (q - zeroPoint), the 8-bit values held as floats; QUANTIZE
// (op 1): zeroPoint + round(x / scale), half away from zero as the NNAPI reference rounds,
// saturated to [lo, hi] (the 8-bit type's range), NaN to the zero point; DEQUANTIZE of
// TENSOR_QUANT8_SYMM_PER_CHANNEL (op 2): scales[channel] * q, the channel (i / inner) %
// channels, the scales at scalesOffset.
#include "common.glsl"
#include "quant.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint op;
  uint outOffset;
  uint inOffset;
  float scale;
  float zeroPoint;
  float lo;
  float hi;
  uint scalesOffset;  // op 2
  uint inner;         // op 2: the product of the dimensions after the channel dimension
  uint channels;      // op 2
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  const float x = data[p.inOffset + i];
  if (p.op == 0) {
    data[p.outOffset + i] = p.scale * (x - p.zeroPoint);
    return;
  }
  if (p.op == 2) {
    data[p.outOffset + i] = data[p.scalesOffset + (i / p.inner) % p.channels] * x;
    return;
  }
  precise const float q = x / p.scale;
  const float rounded = p.zeroPoint + roundHalfAway(q);
  data[p.outOffset + i] = isnan(rounded) ? clamp(p.zeroPoint, p.lo, p.hi)
                                         : min(max(rounded, p.lo), p.hi);
}
