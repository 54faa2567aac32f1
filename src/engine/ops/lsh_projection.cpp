// LSH_PROJECTION: validation, output shape and the kernel over kernels::lshProjection.
//
// Inputs: 0 hash functions [numHash, numBits] (TENSOR_FLOAT32, numBits <= 32); 1 input of
// rank >= 1 (TENSOR_FLOAT32, TENSOR_INT32 or TENSOR_QUANT8_ASYMM; its rows along dimension 0
// are hashed as raw bytes); 2 optional weight [input dim 0] (TENSOR_FLOAT32; omitted: 1.0);
// 3 INT32 type: 1 sparse (deprecated, no offset), 2 dense, 3 sparse. Output TENSOR_INT32:
// [numHash] (sparse) or [numHash * numBits] (dense). Sparse types need numBits +
// ceil(log2(numHash)) <= 32 so that the offset signatures fit.
//
// Note: a TENSOR_FLOAT16 input reaches this prepare widened to float32 by the float16
// adapter, so its rows would hash as float32 bytes.
#include <bit>
#include <string>

#include "engine/ops/ops.h"
#include "engine/ops/sequence_common.h"
#include "hal/operand_utils.h"
#include "kernels/lsh_projection.h"

namespace nnhal::engine::ops {

PrepareResult prepareLshProjection(PrepareContext& ctx) {
  constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;
  NNHAL_TRY(seq::checkInputCount(ctx, {4}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {1}));
  NNHAL_TRY(seq::requireType(ctx, 0, kFloat, "hash functions"));
  NNHAL_TRY(seq::requireRank(ctx, 0, 2, "hash functions"));
  const uint32_t numHash = ctx.input(0).dimensions[0];
  const uint32_t numBits = ctx.input(0).dimensions[1];
  if (numBits > 32) {
    return invalidArgument(seq::describe(ctx, 0, "hash functions") +
                           " may have at most 32 bits per function, got " +
                           std::to_string(numBits));
  }
  if (!ctx.hasInput(1)) return invalidArgument(seq::describe(ctx, 1, "input") + " is required");
  const OperandInfo& input = ctx.input(1);
  if (input.type != kFloat && input.type != OperandType::TENSOR_INT32 &&
      input.type != OperandType::TENSOR_QUANT8_ASYMM) {
    return invalidArgument(seq::describe(ctx, 1, "input") + " has unsupported type " +
                           std::string(toString(input.type)));
  }
  if (input.dimensions.empty()) {
    return invalidArgument(seq::describe(ctx, 1, "input") + " must have rank >= 1");
  }
  const uint32_t rows = input.dimensions[0];
  const size_t rowBytes =
      rows == 0 ? 0 : input.elementCount() * hal::sizeOfElement(input.type) / rows;
  NNHAL_ASSIGN_OR_RETURN(const bool hasWeight, seq::optionalPresent(ctx, 2));
  if (hasWeight) NNHAL_TRY(seq::requireTensor(ctx, 2, kFloat, {rows}, "weight"));
  NNHAL_ASSIGN_OR_RETURN(const int32_t typeValue, seq::readInt32(ctx, 3, "type"));
  if (typeValue < 1 || typeValue > 3) {
    return invalidArgument(seq::describe(ctx, 3, "type") +
                           " must be 1 (sparse, deprecated), 2 (dense) or 3 (sparse), got " +
                           std::to_string(typeValue));
  }
  const auto type = static_cast<kernels::LshProjectionType>(typeValue);
  const bool dense = type == kernels::LshProjectionType::kDense;
  if (type == kernels::LshProjectionType::kSparse && numHash > 1 &&
      numBits + std::bit_width(numHash - 1) > 32) {
    return invalidArgument(seq::describe(ctx, 0, "hash functions") + " has " +
                           std::to_string(numHash) + " functions of " + std::to_string(numBits) +
                           " bits: sparse signatures need bits + ceil(log2(functions)) <= 32");
  }
  NNHAL_TRY(seq::requireOutputType(ctx, 0, OperandType::TENSOR_INT32));
  NNHAL_TRY(ctx.setOutputShape(0, {dense ? numHash * numBits : numHash}));

  seq::ScratchPlan plan;
  const size_t keyOffset = plan.reserve<uint8_t>(sizeof(float) + rowBytes);
  ctx.requestScratch(plan.bytes());
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    kernels::lshProjection(type, rc.input<float>(0), numHash, numBits, rc.input<uint8_t>(1), rows,
                           rowBytes, hasWeight ? rc.input<float>(2) : nullptr,
                           rc.output<int32_t>(0), seq::scratchAt<uint8_t>(rc, keyOffset));
    return {};
  });
}

}  // namespace nnhal::engine::ops
