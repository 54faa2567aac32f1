// CONCATENATION (types.hal): n tensors joined along an axis, quantized inputs requantized to
// the output's scale and zero point where they differ.
#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "kernels/concatenation.h"

namespace nnhal::engine::ops {
namespace {

template <typename T>
PrepareResult makeQuantKernel(std::vector<size_t> chunks,
                              std::vector<kernels::ConcatRequant> requant, size_t rows,
                              size_t grain) {
  return makeKernel([chunks = std::move(chunks), requant = std::move(requant), rows,
                     grain](const RunContext& rc) -> Result<void> {
    std::vector<const T*> inputs(chunks.size());
    for (size_t i = 0; i < chunks.size(); ++i) inputs[i] = rc.input<T>(i);
    T* out = rc.output<T>(0);
    rc.parallel().forRange(rows, grain, [&](size_t begin, size_t end) {
      kernels::concatenateQuant8<T>(inputs.data(), chunks.data(), requant.data(), chunks.size(),
                                    out, begin, end);
    });
    return {};
  });
}

/// CONCATENATION of the types.hal operation, or with `int32` also of TENSOR_INT32 tensors
/// (the org.nnhal.tflite_compat CONCATENATION).
PrepareResult prepareConcatenationOf(PrepareContext& ctx, bool int32) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, std::numeric_limits<size_t>::max(), 1));
  const size_t n = ctx.inputCount() - 1;  // tensors; the last input is the axis
  NNHAL_TRY(checkMovedTensorType(ctx, int32));
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(checkOutputType(ctx, 0, type));
  NNHAL_TRY(checkOutputQuantization(ctx, 0));
  NNHAL_TRY(checkRank(ctx, 0, 1, 4));
  const std::vector<uint32_t>& dims0 = ctx.input(0).dimensions;
  const size_t rank = dims0.size();

  NNHAL_TRY(checkInputType(ctx, n, {OperandType::INT32}));
  NNHAL_ASSIGN_OR_RETURN(const int32_t axisValue, ctx.scalar<int32_t>(n));
  if (axisValue < 0 || static_cast<size_t>(axisValue) >= rank) {
    return invalidArgument(ctx.where(n) + " (axis) is " + std::to_string(axisValue) +
                           ", outside [0, " + std::to_string(rank) + ")");
  }
  const auto axis = static_cast<size_t>(axisValue);

  std::vector<uint32_t> outDims = dims0;
  outDims[axis] = 0;
  std::vector<size_t> chunks(n);
  for (size_t i = 0; i < n; ++i) {
    NNHAL_TRY(checkInputType(ctx, i, {type}));
    NNHAL_TRY(checkInputQuantization(ctx, i));
    const std::vector<uint32_t>& dims = ctx.input(i).dimensions;
    if (dims.size() != rank) {
      return invalidArgument(ctx.where(i) + " has rank " + std::to_string(dims.size()) +
                             ", input 0 has rank " + std::to_string(rank));
    }
    for (size_t d = 0; d < rank; ++d) {
      if (d != axis && dims[d] != dims0[d]) {
        return invalidArgument(ctx.where(i) + " dimension " + std::to_string(d) + " is " +
                               std::to_string(dims[d]) + ", input 0 has " +
                               std::to_string(dims0[d]));
      }
    }
    const uint64_t sum = uint64_t{outDims[axis]} + dims[axis];
    if (sum > std::numeric_limits<uint32_t>::max()) {
      return invalidArgument(outputWhere(ctx, 0) + " dimension " + std::to_string(axis) +
                             " overflows");
    }
    outDims[axis] = static_cast<uint32_t>(sum);
    chunks[i] = dimensionProduct(dims, axis, rank);
  }
  const size_t rows = dimensionProduct(dims0, 0, axis);
  size_t rowSize = 0;
  for (size_t c : chunks) rowSize += c;
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  const size_t grain = std::max<size_t>(1, kElementGrain / std::max<size_t>(1, rowSize));

  if (type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_INT32) {
    // Both 4-byte elements copied as they are.
    std::vector<size_t> chunkBytes(n);
    for (size_t i = 0; i < n; ++i) chunkBytes[i] = chunks[i] * sizeof(float);
    return makeKernel(
        [chunkBytes = std::move(chunkBytes), rows, grain](const RunContext& rc) -> Result<void> {
          std::vector<const void*> inputs(chunkBytes.size());
          for (size_t i = 0; i < chunkBytes.size(); ++i) inputs[i] = rc.input<void>(i);
          void* out = rc.output<void>(0);
          rc.parallel().forRange(rows, grain, [&](size_t begin, size_t end) {
            kernels::concatenateBytes(inputs.data(), chunkBytes.data(), chunkBytes.size(), out,
                                      begin, end);
          });
          return {};
        });
  }

  const OperandInfo& out = ctx.output(0);
  std::vector<kernels::ConcatRequant> requant(n);
  for (size_t i = 0; i < n; ++i) {
    requant[i] = kernels::makeConcatRequant(ctx.input(i).scale, ctx.input(i).zeroPoint, out.scale,
                                            out.zeroPoint);
  }
  if (type == OperandType::TENSOR_QUANT8_ASYMM) {
    return makeQuantKernel<uint8_t>(std::move(chunks), std::move(requant), rows, grain);
  }
  return makeQuantKernel<int8_t>(std::move(chunks), std::move(requant), rows, grain);
}

}  // namespace

PrepareResult prepareConcatenation(PrepareContext& ctx) {
  return prepareConcatenationOf(ctx, false);
}

PrepareResult prepareTfliteCompatConcatenation(PrepareContext& ctx) {
  return prepareConcatenationOf(ctx, true);
}

}  // namespace nnhal::engine::ops
