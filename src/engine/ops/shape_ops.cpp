// SQUEEZE, EXPAND_DIMS, FILL and RANK (types.hal): operations that only change or report a
// shape (the element bytes are copied unchanged), or produce a tensor from a shape.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/data_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"
#include "kernels/strided_copy.h"

namespace nnhal::engine::ops {

PrepareResult prepareSqueeze(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 2, 1));
  NNHAL_TRY(data::checkMovedFloatOrQuant8(ctx, 0, 4));
  const std::vector<uint32_t>& dims = ctx.input(0).dimensions;
  const size_t rank = dims.size();
  std::vector<bool> squeeze(rank, false);
  if (!ctx.hasInput(1)) {
    // Omitted: every dimension of size 1 goes.
    for (size_t d = 0; d < rank; ++d) squeeze[d] = dims[d] == 1;
  } else {
    NNHAL_TRY(checkInputType(ctx, 1, {OperandType::TENSOR_INT32}));
    NNHAL_TRY(checkRank(ctx, 1, 1, 1));
    NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> axes, ctx.values<int32_t>(1));
    if (axes.size() != ctx.input(1).dimensions[0]) {
      return invalidArgument(ctx.where(1) + " (squeeze dims) holds " + std::to_string(axes.size()) +
                             " values, expected " + std::to_string(ctx.input(1).dimensions[0]));
    }
    const auto r = static_cast<int64_t>(rank);
    for (const int32_t axis : axes) {
      if (axis < -r || axis >= r) {
        return invalidArgument(ctx.where(1) + " (squeeze dims) entry " + std::to_string(axis) +
                               " is outside [-" + std::to_string(rank) + ", " +
                               std::to_string(rank) + ")");
      }
      const auto d = static_cast<size_t>(axis < 0 ? axis + r : axis);
      if (dims[d] != 1) {
        return invalidArgument(ctx.where(1) + " (squeeze dims) names dimension " +
                               std::to_string(d) + " of size " + std::to_string(dims[d]) +
                               ", not 1");
      }
      squeeze[d] = true;
    }
  }
  std::vector<uint32_t> outDims;
  for (size_t d = 0; d < rank; ++d) {
    if (!squeeze[d]) outDims.push_back(dims[d]);
  }
  // Squeezing every dimension leaves one element: a tensor of shape [1] (a tensor of rank 0
  // would read as "unknown rank").
  if (outDims.empty()) outDims.push_back(1);
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  return data::makeCopyKernel(ctx.input(0).elementCount() * hal::sizeOfElement(ctx.input(0).type));
}

PrepareResult prepareExpandDims(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(data::checkMainTensor(
      ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
            OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  const std::vector<uint32_t>& dims = ctx.input(0).dimensions;
  NNHAL_ASSIGN_OR_RETURN(const int32_t axis, data::readInt(ctx, 1));
  const auto r = static_cast<int64_t>(dims.size());
  if (axis < -(r + 1) || axis > r) {
    return invalidArgument(ctx.where(1) + " (axis) is " + std::to_string(axis) + ", outside [-" +
                           std::to_string(r + 1) + ", " + std::to_string(r) + "]");
  }
  const auto at = static_cast<size_t>(axis < 0 ? axis + r + 1 : axis);
  std::vector<uint32_t> outDims = dims;
  outDims.insert(outDims.begin() + static_cast<ptrdiff_t>(at), 1);
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  return data::makeCopyKernel(ctx.input(0).elementCount() * hal::sizeOfElement(ctx.input(0).type));
}

PrepareResult prepareFill(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, 0, 1, 1));
  const OperandType outType = ctx.output(0).type;
  if (outType != OperandType::TENSOR_FLOAT32 && outType != OperandType::TENSOR_INT32) {
    return invalidArgument(outputWhere(ctx, 0) + " must be TENSOR_FLOAT32 or TENSOR_INT32, got " +
                           std::string(toString(outType)));
  }
  std::array<uint8_t, 4> value{};
  if (outType == OperandType::TENSOR_FLOAT32) {
    NNHAL_TRY(checkInputType(ctx, 1, {OperandType::FLOAT32}));
    NNHAL_ASSIGN_OR_RETURN(const float v, ctx.scalar<float>(1));
    std::memcpy(value.data(), &v, sizeof(v));
  } else {
    NNHAL_ASSIGN_OR_RETURN(const int32_t v, data::readInt(ctx, 1));
    std::memcpy(value.data(), &v, sizeof(v));
  }
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> shape, ctx.values<int32_t>(0));
  if (shape.size() != ctx.input(0).dimensions[0]) {
    return invalidArgument(ctx.where(0) + " (dims) holds " + std::to_string(shape.size()) +
                           " values, expected " + std::to_string(ctx.input(0).dimensions[0]));
  }
  std::vector<uint32_t> outDims(shape.size());
  uint64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] < 0) {
      return invalidArgument(ctx.where(0) + " (dims) entry " + std::to_string(d) +
                             " must be >= 0, got " + std::to_string(shape[d]));
    }
    outDims[d] = static_cast<uint32_t>(shape[d]);
    count *= outDims[d];
    NNHAL_TRY(data::toDimension(ctx, count));
  }
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));
  return makeKernel(
      [value, count = static_cast<size_t>(count)](const RunContext& rc) -> Result<void> {
        void* dst = rc.output<void>(0);
        rc.parallel().forRange(count, data::kCopyGrainBytes, [&](size_t begin, size_t end) {
          kernels::fillElements(dst, value.data(), sizeof(value), begin, end);
        });
        return {};
      });
}

PrepareResult prepareRank(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 1, 1));
  if (!ctx.hasInput(0) || !hal::isTensorType(ctx.input(0).type)) {
    return invalidArgument(ctx.where(0) + " must be a tensor");
  }
  NNHAL_TRY(checkOutputType(ctx, 0, OperandType::INT32));
  NNHAL_TRY(ctx.setOutputShape(0, {}));
  const auto rank = static_cast<int32_t>(ctx.input(0).dimensions.size());
  return makeKernel([rank](const RunContext& rc) -> Result<void> {
    std::memcpy(rc.output<void>(0), &rank, sizeof(rank));
    return {};
  });
}

}  // namespace nnhal::engine::ops
