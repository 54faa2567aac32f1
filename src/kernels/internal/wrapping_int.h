// kernels/internal/wrapping_int.h — int32 addition and multiplication that wrap in two's
// complement instead of overflowing (undefined behaviour in C++).
//
// The quantized accumulators of the convolution, depthwise and fully connected kernels are
// int32, as in the NN HAL's reference: a model whose filter has enough taps can carry a sum
// past INT32_MAX. The SIMD kernels wrap by construction; the portable and reference kernels
// use these so that every level gives the same (wrapped) result for such a model.
//
// In an unnamed namespace on purpose: the files of src/kernels/x86/ are compiled for other
// instruction sets, and each must get its own copy (kernels/x86/simd_avx512.h says why).
#pragma once

#include <cstdint>

namespace nnhal::kernels::internal {
namespace {

inline int32_t wrapAdd(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(b));
}
inline int32_t wrapMul(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) * static_cast<uint32_t>(b));
}

}  // namespace
}  // namespace nnhal::kernels::internal
