#version 450
// PAD, PAD_V2, TRANSPOSE, SLICE, STRIDED_SLICE, CHANNEL_SHUFFLE and the block moves
// (DEPTH_TO_SPACE, SPACE_TO_DEPTH, BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND): output element i,
// at coordinates c over viewDims (rank 6, leading 1s), reads the input at inBase + sum of
// (c[d] - before[d]) * inStrides[d] (strides may be negative: a reversed slice); a
// coordinate c[d] - before[d] outside [0, inDims[d]) reads padValue instead.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint inOffset;
  float padValue;
  uint outDims[6];
  int before[6];
  uint inDims[6];
  int inStrides[6];
  int inBase;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  uint rest = i;
  int from = p.inBase;
  bool inside = true;
  for (int d = 5; d >= 0; --d) {
    const int c = int(rest % p.outDims[d]) - p.before[d];
    rest /= p.outDims[d];
    if (c < 0 || c >= int(p.inDims[d])) inside = false;
    from += max(c, 0) * p.inStrides[d];
  }
  data[p.outOffset + i] = inside ? data[int(p.inOffset) + from] : p.padValue;
}
