// The operations that read their input by indices given as a tensor: GATHER and
// EMBEDDING_LOOKUP (vulkan_planner.h).
#include "backend/vulkan/vulkan_planner.h"

#include <algorithm>
#include <bit>
#include <string>

#include "kernels/gather.h"

namespace nnhal::backend::vulkan::planning {

Planned<void> Planner::gatherAlongAxis() {
  // GATHER: 0 the values, 1 the axis (INT32 scalar), 2 the TENSOR_INT32 indices.
  NNHAL_PLAN_TRY(axis, scalarInt(1));
  return gatherBy(0, 2, axis, "GATHER input 2 (indices)");
}

Planned<void> Planner::embeddingLookup() {
  // EMBEDDING_LOOKUP: 0 the TENSOR_INT32 lookups, 1 the values; rows along axis 0.
  return gatherBy(1, 0, 0, "EMBEDDING_LOOKUP input 0 (lookups)");
}

Planned<void> Planner::gatherBy(size_t valuesAt, size_t indicesAt, int32_t axisValue,
                                const std::string& what) {
  // The output is the values with their axis replaced by the indices' dimensions.
  if (output(0).type != input(valuesAt).type || output(0).scale != input(valuesAt).scale ||
      output(0).zeroPoint != input(valuesAt).zeroPoint) {
    return invalid("the output's type and quantization must be the values'");
  }
  const bool movesQuant = isQuant8(input(valuesAt).type);
  const std::vector<uint32_t> in = input(valuesAt).dimensions;
  const std::vector<uint32_t> indexDims = input(indicesAt).dimensions;
  if (input(indicesAt).type != OperandType::TENSOR_INT32) {
    return invalid("the indices must be INT32");
  }
  const auto rank = static_cast<int32_t>(in.size());
  if (rank < 1 || axisValue < -rank || axisValue >= rank) {
    return invalid("the axis is outside the input's rank");
  }
  const auto axis = static_cast<size_t>(axisValue < 0 ? axisValue + rank : axisValue);
  std::vector<uint32_t> outDims(in.begin(), in.begin() + static_cast<ptrdiff_t>(axis));
  outDims.insert(outDims.end(), indexDims.begin(), indexDims.end());
  outDims.insert(outDims.end(), in.begin() + static_cast<ptrdiff_t>(axis) + 1, in.end());
  const uint32_t axisSize = in[axis];
  uint32_t inner = 1;
  for (size_t d = axis + 1; d < in.size(); ++d) inner *= in[d];
  uint32_t indices = 0;
  if (constantAt(inputIndex(indicesAt)) != nullptr) {
    // Checked here, and kept as floats (a TENSOR_INT32 constant is otherwise raw words).
    NNHAL_PLAN_TRY(values, constantInts(indicesAt));
    if (const auto bad = kernels::findIndexOutOfRange(values.data(), values.size(), axisSize)) {
      return invalid(kernels::indexOutOfRangeMessage(what, *bad, values[*bad], axisSize));
    }
    NNHAL_PLAN_TRY(t, floatConstant(std::vector<float>(values.begin(), values.end())));
    indices = t;
  } else {
    const auto& inputs = model_.main.inputIndexes;
    const auto at = std::find(inputs.begin(), inputs.end(), inputIndex(indicesAt));
    if (at == inputs.end()) return refuse("the indices must be a constant or a model input");
    NNHAL_PLAN_TRY(t, tensor(inputIndex(indicesAt), false, true));
    indices = t;
    indexChecks_.push_back({static_cast<size_t>(at - inputs.begin()), axisSize, what});
  }
  NNHAL_PLAN_TRY(from, tensor(inputIndex(valuesAt), movesQuant));
  NNHAL_PLAN_CHECK(shapeOutput(std::move(outDims)));
  NNHAL_PLAN_TRY(out, tensor(outputIndex(0), movesQuant));
  uint32_t indexCount = 1;
  for (uint32_t d : indexDims) indexCount *= d;
  dispatch(Shader::kGatherAxis, elementsOf(output(0)),
           {elementsOf(output(0)), offsetWord(out), offsetWord(from), offsetWord(indices), axisSize,
            indexCount, inner});
  return {};
}

}  // namespace nnhal::backend::vulkan::planning
