// PAD and PAD_V2 (types.hal): pads each dimension of a tensor before and after by the
// TENSOR_INT32 paddings [rank, 2]. PAD pads with 0 (the zero point for quantized tensors);
// PAD_V2 takes the pad value as a FLOAT32 scalar (float tensors) or an INT32 quantized value.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/data_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"
#include "kernels/pad.h"

namespace nnhal::engine::ops {
namespace {

using PadValue = std::array<uint8_t, 4>;

/// Validates input 0 and the paddings (input 1), sets the output shape and returns the
/// kernel padding with `padValue` (one element, little-endian bytes).
PrepareResult preparePadding(PrepareContext& ctx, const PadValue& padValue) {
  const OperandInfo& in = ctx.input(0);
  const size_t rank = in.dimensions.size();
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::TENSOR_INT32}));
  const std::vector<uint32_t> expected{static_cast<uint32_t>(rank), 2};
  if (ctx.input(1).dimensions != expected) {
    return invalidArgument(ctx.where(1) + " (paddings) must have shape [" + std::to_string(rank) +
                           ", 2]");
  }
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> pads, ctx.values<int32_t>(1));
  if (pads.size() != rank * 2) {
    return invalidArgument(ctx.where(1) + " (paddings) holds " + std::to_string(pads.size()) +
                           " values, expected " + std::to_string(rank * 2));
  }
  std::vector<size_t> before(rank);
  std::vector<size_t> after(rank);
  std::vector<uint32_t> outDims(rank);
  for (size_t d = 0; d < rank; ++d) {
    if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) {
      return invalidArgument(ctx.where(1) + " (paddings) of dimension " + std::to_string(d) +
                             " must be >= 0, got [" + std::to_string(pads[2 * d]) + ", " +
                             std::to_string(pads[2 * d + 1]) + "]");
    }
    before[d] = static_cast<size_t>(pads[2 * d]);
    after[d] = static_cast<size_t>(pads[2 * d + 1]);
    NNHAL_ASSIGN_OR_RETURN(
        outDims[d], data::toDimension(ctx, uint64_t{in.dimensions[d]} + before[d] + after[d]));
  }
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  const auto layout =
      kernels::makePadLayout(data::dimsOf(in), before, after, hal::sizeOfElement(in.type));
  if (!layout) return invalidArgument(ctx.where(0) + " has an unsupported rank");
  const size_t rowBytes = layout->outDims[layout->rank - 1] * layout->elementBytes;
  const size_t grain = std::max<size_t>(1, data::kCopyGrainBytes / std::max<size_t>(1, rowBytes));
  return makeKernel([layout = *layout, padValue, grain](const RunContext& rc) -> Result<void> {
    const void* src = rc.input<void>(0);
    void* dst = rc.output<void>(0);
    rc.parallel().forRange(layout.rows, grain, [&](size_t begin, size_t end) {
      kernels::padCopy(layout, src, padValue.data(), dst, begin, end);
    });
    return {};
  });
}

Result<void> checkPadInput(const PrepareContext& ctx, size_t inputs) {
  NNHAL_TRY(checkOperandCounts(ctx, inputs, inputs, 1));
  NNHAL_TRY(data::checkMovedFloatOrQuant8(ctx, 1, kernels::kMaxViewRank));
  return {};
}

}  // namespace

PrepareResult preparePad(PrepareContext& ctx) {
  NNHAL_TRY(checkPadInput(ctx, 2));
  PadValue padValue{};  // 0.0f
  if (ctx.input(0).type != OperandType::TENSOR_FLOAT32) {
    padValue[0] = static_cast<uint8_t>(ctx.input(0).zeroPoint);
  }
  return preparePadding(ctx, padValue);
}

PrepareResult preparePadV2(PrepareContext& ctx) {
  NNHAL_TRY(checkPadInput(ctx, 3));
  PadValue padValue{};
  const OperandType type = ctx.input(0).type;
  if (type == OperandType::TENSOR_FLOAT32) {
    NNHAL_TRY(checkInputType(ctx, 2, {OperandType::FLOAT32}));
    NNHAL_ASSIGN_OR_RETURN(const float value, ctx.scalar<float>(2));
    std::memcpy(padValue.data(), &value, sizeof(value));
  } else {
    NNHAL_ASSIGN_OR_RETURN(const int32_t value, data::readInt(ctx, 2));
    const auto [lo, hi] = quant8Range(type);
    if (value < lo || value > hi) {
      return invalidArgument(ctx.where(2) + " (pad value) " + std::to_string(value) +
                             " is outside the range [" + std::to_string(lo) + ", " +
                             std::to_string(hi) + "] of input 0");
    }
    padValue[0] = static_cast<uint8_t>(value);
  }
  return preparePadding(ctx, padValue);
}

}  // namespace nnhal::engine::ops
