// GATHER, EMBEDDING_LOOKUP and HASHTABLE_LOOKUP (types.hal): row copies chosen by index
// values that arrive with the request, so out-of-range indices fail at execution time
// (GENERAL_FAILURE).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/data_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"
#include "kernels/gather.h"

namespace nnhal::engine::ops {
namespace {

/// A Kernel gathering blocks of `innerBytes` of input `data` (viewed as
/// [outer, axisSize, inner]) by the int32 indices of input `indicesInput`. `what` names the
/// index input in failure messages.
std::unique_ptr<Kernel> makeGatherKernel(size_t data, size_t indicesInput, size_t outer,
                                         size_t axisSize, size_t innerBytes, size_t indexCount,
                                         std::string what) {
  const size_t grain = std::max<size_t>(1, data::kCopyGrainBytes / std::max<size_t>(1, innerBytes));
  return makeKernel([=, what = std::move(what)](const RunContext& rc) -> Result<void> {
    const auto* indices = rc.input<int32_t>(indicesInput);
    if (const auto bad = kernels::findIndexOutOfRange(indices, indexCount, axisSize)) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  kernels::indexOutOfRangeMessage(what, *bad, indices[*bad], axisSize));
    }
    const void* src = rc.input<void>(data);
    void* dst = rc.output<void>(0);
    rc.parallel().forRange(outer * indexCount, grain, [&](size_t begin, size_t end) {
      kernels::gatherBlocks(src, axisSize, innerBytes, indices, indexCount, dst, begin, end);
    });
    return {};
  });
}

}  // namespace

PrepareResult prepareGather(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(data::checkMainTensor(
      ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
            OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkRank(ctx, 0, 1, SIZE_MAX));
  const std::vector<uint32_t>& inDims = ctx.input(0).dimensions;
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axis, readAxis(ctx, 1, inDims.size()));
  NNHAL_TRY(checkInputType(ctx, 2, {OperandType::TENSOR_INT32}));
  const std::vector<uint32_t>& indexDims = ctx.input(2).dimensions;

  std::vector<uint32_t> outDims(inDims.begin(), inDims.begin() + axis);
  outDims.insert(outDims.end(), indexDims.begin(), indexDims.end());
  outDims.insert(outDims.end(), inDims.begin() + axis + 1, inDims.end());
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));

  const size_t outer = dimensionProduct(inDims, 0, axis);
  const size_t inner = dimensionProduct(inDims, axis + 1, inDims.size());
  return makeGatherKernel(0, 2, outer, inDims[axis], inner * hal::sizeOfElement(ctx.input(0).type),
                          ctx.input(2).elementCount(), "GATHER input 2 (indices)");
}

PrepareResult prepareEmbeddingLookup(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, 0, 1, 1));
  NNHAL_TRY(
      checkInputType(ctx, 1,
                     {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
                      OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkRank(ctx, 1, 2, SIZE_MAX));
  NNHAL_TRY(checkOutputType(ctx, 0, ctx.input(1).type));
  NNHAL_TRY(checkInputQuantization(ctx, 1));
  NNHAL_TRY(checkSameQuantization(ctx, 1, 0));
  const std::vector<uint32_t>& valueDims = ctx.input(1).dimensions;
  const uint32_t lookups = ctx.input(0).dimensions[0];
  std::vector<uint32_t> outDims = valueDims;
  outDims[0] = lookups;
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  const size_t rowBytes =
      dimensionProduct(valueDims, 1, valueDims.size()) * hal::sizeOfElement(ctx.input(1).type);
  return makeGatherKernel(1, 0, 1, valueDims[0], rowBytes, lookups,
                          "EMBEDDING_LOOKUP input 0 (lookups)");
}

PrepareResult prepareHashtableLookup(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 2));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, 0, 1, 1));
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, 1, 1, 1));
  NNHAL_TRY(checkInputType(
      ctx, 2,
      {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32, OperandType::TENSOR_QUANT8_ASYMM}));
  NNHAL_TRY(checkRank(ctx, 2, 1, SIZE_MAX));
  NNHAL_TRY(checkOutputType(ctx, 0, ctx.input(2).type));
  NNHAL_TRY(checkInputQuantization(ctx, 2));
  NNHAL_TRY(checkSameQuantization(ctx, 2, 0));
  NNHAL_TRY(checkOutputType(ctx, 1, OperandType::TENSOR_QUANT8_ASYMM));
  const std::vector<uint32_t>& valueDims = ctx.input(2).dimensions;
  const uint32_t lookups = ctx.input(0).dimensions[0];
  const uint32_t keys = ctx.input(1).dimensions[0];
  if (valueDims[0] != keys) {
    return invalidArgument(ctx.where(2) + " (values) has " + std::to_string(valueDims[0]) +
                           " rows but input 1 (keys) has " + std::to_string(keys) + " keys");
  }
  std::vector<uint32_t> outDims = valueDims;
  outDims[0] = lookups;
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  NNHAL_TRY(ctx.setOutputShape(1, {lookups}));
  const size_t rowBytes =
      dimensionProduct(valueDims, 1, valueDims.size()) * hal::sizeOfElement(ctx.input(2).type);
  const size_t grain = std::max<size_t>(1, data::kCopyGrainBytes / std::max<size_t>(1, rowBytes));
  return makeKernel([lookups = size_t{lookups}, keys = size_t{keys}, rowBytes,
                     grain](const RunContext& rc) -> Result<void> {
    const auto* lookupValues = rc.input<int32_t>(0);
    const auto* keyValues = rc.input<int32_t>(1);
    const void* values = rc.input<void>(2);
    void* out = rc.output<void>(0);
    auto* hits = rc.output<uint8_t>(1);
    rc.parallel().forRange(lookups, grain, [&](size_t begin, size_t end) {
      kernels::hashtableLookup(lookupValues, keyValues, keys, values, rowBytes, out, hits, begin,
                               end);
    });
    return {};
  });
}

}  // namespace nnhal::engine::ops
