// engine/ops/data_common.h — checks, parameter readers and Kernel builders shared by the
// prepare functions of the data movement operations (space, pad, shape, slice, permute, gather
// and arg/top-k files).
//
// Every failure is INVALID_ARGUMENT with a message that starts with the operation and the
// operand ("PAD input 1 ..."). Names live in ops::data so they cannot collide with the
// helpers of other families.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "engine/operation.h"
#include "kernels/strided_copy.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine::ops::data {

/// Bytes each chunk of a parallel copy moves at least.
inline constexpr size_t kCopyGrainBytes = size_t{1} << 16;

/// Input 0 is one of `allowed`, output `o` has its type and (for quantized types) its
/// scale and zero point, and input 0 has a valid quantization.
Result<void> checkMainTensor(const PrepareContext& ctx, std::initializer_list<OperandType> allowed,
                             size_t o = 0);

/// checkMainTensor for the data-movement operations over float and 8-bit asymmetric tensors
/// (TENSOR_FLOAT32, TENSOR_QUANT8_ASYMM, TENSOR_QUANT8_ASYMM_SIGNED), with input 0 of rank
/// minRank..maxRank.
Result<void> checkMovedFloatOrQuant8(const PrepareContext& ctx, size_t minRank, size_t maxRank);

/// Reads INT32 scalar input `i` (checking its type).
Result<int32_t> readInt(const PrepareContext& ctx, size_t i);

/// Reads the optional layout BOOL at input `i`: false (NHWC) when absent or omitted, true for
/// NCHW.
Result<bool> readLayout(const PrepareContext& ctx, size_t i);

/// Reads TENSOR_INT32 input `i`, which must have rank 1 and `count` elements.
Result<std::vector<int32_t>> readIntVector(const PrepareContext& ctx, size_t i, size_t count);

/// The dimensions of `info` widened to size_t.
std::vector<size_t> dimsOf(const OperandInfo& info);

/// Builds a strided view (see kernels/strided_copy.h) of input 0 for the element type of
/// input 0. Errors: INVALID_ARGUMENT when the view's rank exceeds kernels::kMaxViewRank.
Result<kernels::StridedView> makeView(const PrepareContext& ctx, const std::vector<size_t>& dims,
                                      const std::vector<ptrdiff_t>& strides, ptrdiff_t offset);

/// A Kernel copying `view` of input 0 into output `output`.
std::unique_ptr<Kernel> makeViewKernel(kernels::StridedView view, size_t output = 0);

/// A Kernel copying each views[o] of input 0 into output o.
std::unique_ptr<Kernel> makeViewsKernel(std::vector<kernels::StridedView> views);

/// A Kernel copying the `bytes` bytes of input 0 into output 0 unchanged.
std::unique_ptr<Kernel> makeCopyKernel(size_t bytes);

/// Checked conversion of a computed dimension to uint32_t.
Result<uint32_t> toDimension(const PrepareContext& ctx, uint64_t value, size_t output = 0);

}  // namespace nnhal::engine::ops::data
