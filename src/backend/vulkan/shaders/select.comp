#version 450
// SELECT: output element i is a[i] where condition[i] (TENSOR_BOOL8, any non-zero byte) is
// true, else b[i]; all four tensors of one shape. 8-bit inputs of other scales or zero points
// than the output's go through the CPU device's requantization tables (tabled: 512 floats,
// a's then b's, by stored byte), as kernels/select.h does.
#include "common.glsl"

layout(push_constant) uniform Params {
  uint count;
  uint outOffset;
  uint conditionOffset;
  uint aOffset;
  uint bOffset;
  uint tableOffset;
  uint tabled;
} p;

void main() {
  const uint i = invocationIndex();
  if (i >= p.count) return;
  const bool chosen = data[p.conditionOffset + i] != 0.0;
  const float a = data[p.aOffset + i];
  const float b = data[p.bOffset + i];
  float r = chosen ? a : b;
  if (p.tabled != 0u) {
    r = chosen ? data[p.tableOffset + (uint(int(a)) & 255u)]
               : data[p.tableOffset + 256u + (uint(int(b)) & 255u)];
  }
  data[p.outOffset + i] = r;
}
