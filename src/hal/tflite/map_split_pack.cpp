// Mapping functions of SPLIT, SPLIT_V, PACK and UNPACK. The last three have no single NNAPI
// operation; they become short chains joined by new temporary operands that carry the
// type and quantization of the tensor they come from:
//   SPLIT_V  -> SPLIT (equal sizes) or one SLICE per output,
//   PACK     -> EXPAND_DIMS of every input at the axis, then CONCATENATION along it,
//   UNPACK   -> SPLIT into size-1 slices along the axis, then SQUEEZE of that axis.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/mapping_helpers.h"
#include "hal/tflite/mappings.h"

namespace nnhal::hal::tfl {
namespace {

/// Error unless the operator has at least one output.
Result<size_t> outputCountAtLeastOne(const OperatorContext& c) {
  if (c.outputCount() == 0) return c.error("has no outputs");
  return c.outputCount();
}

/// The sizes of SPLIT_V with its -1 entry resolved against `total` (0 = unknown). Every size
/// must be >= 1 and, when the total is known, they must add up to it.
Result<std::vector<int32_t>> resolveSplitSizes(const OperatorContext& c, std::vector<int32_t> sizes,
                                               uint32_t total) {
  int64_t known = 0;
  size_t inferred = sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1 && inferred == sizes.size()) {
      inferred = i;
    } else if (sizes[i] < 1) {
      return c.error("size_splits[" + std::to_string(i) + "] is " + std::to_string(sizes[i]) +
                     "; sizes must be >= 1 (one may be -1)");
    } else {
      known += sizes[i];
    }
  }
  if (inferred != sizes.size()) {
    if (total == 0) return c.error("size_splits has -1 but the axis dimension is unknown");
    if (known >= total) {
      return c.error("size_splits leave nothing for the -1 entry (axis dimension " +
                     std::to_string(total) + ")");
    }
    sizes[inferred] = static_cast<int32_t>(total - known);
  } else if (total != 0 && known != total) {
    return c.error("size_splits add up to " + std::to_string(known) + ", not " +
                   std::to_string(total));
  }
  return sizes;
}

}  // namespace

/// TFLite's inputs are axis, value; NNAPI's input, axis, number of splits.
Result<void> mapSplit(OperatorContext& c) {
  NNHAL_ASSIGN_OR_RETURN(const size_t count, outputCountAtLeastOne(c));
  NNHAL_TRY(c.expectCounts(2, 2, count));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axisTensor, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outputs, c.outputs());
  NNHAL_ASSIGN_OR_RETURN(const int32_t axis, constantInt32(c, axisTensor, "axis"));
  const auto* options = c.options<::tflite::SplitOptions>();
  if (options != nullptr && options->num_splits() != static_cast<int32_t>(count)) {
    return c.error("num_splits is " + std::to_string(options->num_splits()) + " but there are " +
                   std::to_string(count) + " outputs");
  }
  ModelBuilder& b = c.builder();
  c.addOperation(OperationType::SPLIT,
                 {input, b.addInt32Scalar(axis), b.addInt32Scalar(static_cast<int32_t>(count))},
                 std::move(outputs));
  return {};
}

/// Inputs value, size_splits, axis (both constant).
Result<void> mapSplitV(OperatorContext& c) {
  NNHAL_ASSIGN_OR_RETURN(const size_t count, outputCountAtLeastOne(c));
  NNHAL_TRY(c.expectCounts(3, 3, count));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t sizesTensor, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t axisTensor, c.input(2));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outputs, c.outputs());
  NNHAL_ASSIGN_OR_RETURN(std::vector<int32_t> sizes, constantInt32s(c, sizesTensor, "size_splits"));
  NNHAL_ASSIGN_OR_RETURN(const int32_t rawAxis, constantInt32(c, axisTensor, "axis"));
  if (sizes.size() != count) {
    return c.error("size_splits has " + std::to_string(sizes.size()) + " entries for " +
                   std::to_string(count) + " outputs");
  }
  const std::vector<uint32_t> dims = c.operand(input).dimensions;
  if (dims.empty()) return c.error("the input rank must be known");
  NNHAL_ASSIGN_OR_RETURN(const int32_t axis, normalizeAxis(c, rawAxis, dims.size(), "axis"));
  const auto a = static_cast<size_t>(axis);
  NNHAL_ASSIGN_OR_RETURN(sizes, resolveSplitSizes(c, std::move(sizes), dims[a]));

  ModelBuilder& b = c.builder();
  if (std::all_of(sizes.begin(), sizes.end(), [&](int32_t s) { return s == sizes[0]; })) {
    c.addOperation(OperationType::SPLIT,
                   {input, b.addInt32Scalar(axis), b.addInt32Scalar(static_cast<int32_t>(count))},
                   std::move(outputs));
    return {};
  }
  // Unequal sizes: one SLICE per output. Other dimensions take their known extent, or -1
  // ("to the end") when unknown.
  int32_t offset = 0;
  for (size_t k = 0; k < count; ++k) {
    std::vector<int32_t> begin(dims.size(), 0);
    std::vector<int32_t> size(dims.size(), -1);
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] != 0) size[d] = static_cast<int32_t>(dims[d]);
    }
    begin[a] = offset;
    size[a] = sizes[k];
    offset += sizes[k];
    c.addOperation(OperationType::SLICE, {input, b.addInt32Vector(begin), b.addInt32Vector(size)},
                   {outputs[k]});
  }
  return {};
}

/// The axis counts in the output's rank (input rank + 1).
Result<void> mapPack(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(1, c.inputCount() == 0 ? 1 : c.inputCount(), 1));
  const size_t count = c.inputCount();
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto* options = c.options<::tflite::PackOptions>();
  if (options != nullptr && options->values_count() != 0 &&
      options->values_count() != static_cast<int32_t>(count)) {
    return c.error("values_count is " + std::to_string(options->values_count()) +
                   " but there are " + std::to_string(count) + " inputs");
  }
  std::vector<uint32_t> inputs;
  for (size_t i = 0; i < count; ++i) {
    NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(i));
    inputs.push_back(input);
  }
  const auto& outDims = c.operand(output).dimensions;
  const size_t rank = outDims.empty() ? c.operand(inputs[0]).dimensions.size() + 1 : outDims.size();
  NNHAL_ASSIGN_OR_RETURN(const int32_t axis,
                         normalizeAxis(c, options != nullptr ? options->axis() : 0, rank, "axis"));
  ModelBuilder& b = c.builder();
  if (count == 1) {
    c.addOperation(OperationType::EXPAND_DIMS, {inputs[0], b.addInt32Scalar(axis)}, {output});
    return {};
  }
  std::vector<uint32_t> expanded;
  for (const uint32_t input : inputs) {
    std::vector<uint32_t> dims = c.operand(input).dimensions;
    if (dims.size() + 1 == rank) {
      dims.insert(dims.begin() + axis, 1);
    } else {
      dims.clear();  // rank unknown
    }
    const uint32_t temporary = addTemporaryLike(b, input, std::move(dims));
    c.addOperation(OperationType::EXPAND_DIMS, {input, b.addInt32Scalar(axis)}, {temporary});
    expanded.push_back(temporary);
  }
  expanded.push_back(b.addInt32Scalar(axis));
  const OperationType type = int32Variant(c, OperationType::CONCATENATION, inputs[0]);
  c.addOperation(type, std::move(expanded), {output});
  return {};
}

/// The input rank must be known; the axis counts in it.
Result<void> mapUnpack(OperatorContext& c) {
  NNHAL_ASSIGN_OR_RETURN(const size_t count, outputCountAtLeastOne(c));
  NNHAL_TRY(c.expectCounts(1, 1, count));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<uint32_t> outputs, c.outputs());
  const auto* options = c.options<::tflite::UnpackOptions>();
  if (options != nullptr && options->num() != 0 && options->num() != static_cast<int32_t>(count)) {
    return c.error("num is " + std::to_string(options->num()) + " but there are " +
                   std::to_string(count) + " outputs");
  }
  const std::vector<uint32_t> dims = c.operand(input).dimensions;
  if (dims.empty()) return c.error("the input rank must be known");
  NNHAL_ASSIGN_OR_RETURN(
      const int32_t axis,
      normalizeAxis(c, options != nullptr ? options->axis() : 0, dims.size(), "axis"));
  const auto a = static_cast<size_t>(axis);
  if (dims[a] != 0 && dims[a] != count) {
    return c.error("the axis dimension is " + std::to_string(dims[a]) + " but there are " +
                   std::to_string(count) + " outputs");
  }
  ModelBuilder& b = c.builder();
  std::vector<uint32_t> slices;
  if (count == 1) {
    slices.push_back(input);
  } else {
    std::vector<uint32_t> sliceDims = dims;
    sliceDims[a] = 1;
    for (size_t k = 0; k < count; ++k) slices.push_back(addTemporaryLike(b, input, sliceDims));
    c.addOperation(OperationType::SPLIT,
                   {input, b.addInt32Scalar(axis), b.addInt32Scalar(static_cast<int32_t>(count))},
                   slices);
  }
  const std::vector<int32_t> squeezed{axis};
  for (size_t k = 0; k < count; ++k) {
    c.addOperation(OperationType::SQUEEZE, {slices[k], b.addInt32Vector(squeezed)}, {outputs[k]});
  }
  return {};
}

}  // namespace nnhal::hal::tfl
