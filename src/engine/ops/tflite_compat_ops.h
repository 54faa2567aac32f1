// engine/ops/tflite_compat_ops.h — prepare functions of the org.nnhal.tflite_compat
// extension's operations (tflite_compat_ops.cpp, reshape.cpp, concatenation.cpp; registered in
// tflite_compat_family.cpp).
#pragma once

#include "engine/ops/ops.h"

namespace nnhal::engine::ops {

/// FLOOR_DIV: inputs a, b (both TENSOR_FLOAT32 or both TENSOR_INT32, broadcast, rank <= 6).
PrepareResult prepareFloorDiv(PrepareContext& ctx);
/// GATHER_ND: inputs params (rank >= 1), indices (TENSOR_INT32, rank >= 1, last dim <= rank
/// of params).
PrepareResult prepareGatherNd(PrepareContext& ctx);
/// RESHAPE (reshape.cpp) and CONCATENATION (concatenation.cpp): the types.hal operations'
/// inputs and rules, for TENSOR_INT32 tensors too.
PrepareResult prepareTfliteCompatReshape(PrepareContext& ctx);
PrepareResult prepareTfliteCompatConcatenation(PrepareContext& ctx);
/// Input 0 of RESHAPE and CONCATENATION: TENSOR_FLOAT32 or an 8-bit asymmetric type, and with
/// `int32` (the extension's forms) TENSOR_INT32 too.
Result<void> checkMovedTensorType(const PrepareContext& ctx, bool int32);

}  // namespace nnhal::engine::ops
