// FLOOR_DIV and GATHER_ND of the org.nnhal.tflite_compat extension
// (nnhal/tflite_compat_extension.h, docs/EXTENSIONS.md): TFLite's semantics, checked at
// preparation (types, ranks, shapes) and at execution (values: zero divisors, indices out
// of range), each failure with a message naming the operation and operand.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/data_common.h"
#include "engine/ops/elementwise_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"
#include "kernels/floor_div.h"
#include "kernels/gather_nd.h"

namespace nnhal::engine::ops {
namespace {

constexpr OperandType kF32 = OperandType::TENSOR_FLOAT32;
constexpr OperandType kI32 = OperandType::TENSOR_INT32;

}  // namespace

PrepareResult prepareFloorDiv(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {kF32, kI32}));
  const OperandType type = ctx.input(0).type;
  NNHAL_TRY(checkInputType(ctx, 1, {type}));
  NNHAL_TRY(checkOutputType(ctx, 0, type));
  NNHAL_ASSIGN_OR_RETURN(const kernels::BroadcastLayout layout,
                         broadcastToOutput(ctx, kernels::kMaxBroadcastRank));
  if (type == kF32) {
    return makeBinaryKernel<float, float, float>(layout, kernels::floorDivFloat32);
  }
  const size_t divisors = ctx.input(1).elementCount();
  const std::string what = ctx.where(1);
  return makeKernel([layout, divisors, what](const RunContext& rc) -> Result<void> {
    const auto* a = rc.input<int32_t>(0);
    const auto* b = rc.input<int32_t>(1);
    if (const auto zero = kernels::findZeroDivisor(b, divisors)) {
      return fail(
          ErrorStatus::GENERAL_FAILURE,
          what + " (divisor) element " + std::to_string(*zero) + " is 0: integer division by zero");
    }
    auto* out = rc.output<int32_t>(0);
    rc.parallel().forRange(layout.outputCount, kElementGrain, [&](size_t begin, size_t end) {
      kernels::floorDivInt32(a, b, out, layout, begin, end);
    });
    return {};
  });
}

PrepareResult prepareGatherNd(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(data::checkMainTensor(
      ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16, OperandType::TENSOR_INT32,
            OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED,
            OperandType::TENSOR_BOOL8}));
  NNHAL_TRY(checkRank(ctx, 0, 1, SIZE_MAX));
  NNHAL_TRY(checkInputType(ctx, 1, {kI32}));
  NNHAL_TRY(checkRank(ctx, 1, 1, SIZE_MAX));
  const std::vector<uint32_t>& params = ctx.input(0).dimensions;
  const std::vector<uint32_t>& indices = ctx.input(1).dimensions;
  const size_t n = indices.back();
  if (n > params.size()) {
    return invalidArgument(ctx.where(1) + " (indices) has tuples of " + std::to_string(n) +
                           " indices (its last dimension), more than the rank " +
                           std::to_string(params.size()) + " of input 0 (params)");
  }
  std::vector<uint32_t> outDims(indices.begin(), indices.end() - 1);
  outDims.insert(outDims.end(), params.begin() + static_cast<std::ptrdiff_t>(n), params.end());
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));

  const size_t sliceBytes =
      dimensionProduct(params, n, params.size()) * hal::sizeOfElement(ctx.input(0).type);
  const size_t tuples = dimensionProduct(indices, 0, indices.size() - 1);
  const std::vector<uint32_t> dims(params.begin(), params.begin() + static_cast<std::ptrdiff_t>(n));
  const size_t grain = std::max<size_t>(1, data::kCopyGrainBytes / std::max<size_t>(1, sliceBytes));
  const std::string what = ctx.where(1) + " (indices)";
  return makeKernel([dims, sliceBytes, tuples, grain, what](const RunContext& rc) -> Result<void> {
    const auto* index = rc.input<int32_t>(1);
    if (const auto bad = kernels::findGatherNdIndexOutOfRange(index, tuples, dims)) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  what + " tuple " + std::to_string(bad->tuple) + " component " +
                      std::to_string(bad->component) + " is " +
                      std::to_string(index[bad->tuple * dims.size() + bad->component]) +
                      ", outside [0, " + std::to_string(dims[bad->component]) + ")");
    }
    const void* src = rc.input<void>(0);
    void* dst = rc.output<void>(0);
    rc.parallel().forRange(tuples, grain, [&](size_t begin, size_t end) {
      kernels::gatherNd(src, dims, sliceBytes, index, dst, begin, end);
    });
    return {};
  });
}

}  // namespace nnhal::engine::ops
