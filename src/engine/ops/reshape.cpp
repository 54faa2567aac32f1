// RESHAPE (types.hal): same elements, new dimensions from a TENSOR_INT32 shape input.
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"

namespace nnhal::engine::ops {
namespace {

constexpr size_t kCopyGrainBytes = size_t{1} << 18;

/// Resolves the requested shape (one entry may be -1) for `elementCount` elements.
/// Returns an error text on failure, an empty string on success.
std::string resolveShape(const int32_t* shape, size_t n, size_t elementCount,
                         std::vector<uint32_t>* out) {
  out->assign(n, 0);
  size_t stretch = n;
  uint64_t known = 1;
  for (size_t i = 0; i < n; ++i) {
    const int32_t v = shape[i];
    if (v == -1) {
      if (stretch != n) return "has more than one -1 entry";
      stretch = i;
    } else if (v < 0) {
      return "entry " + std::to_string(i) + " is " + std::to_string(v);
    } else {
      (*out)[i] = static_cast<uint32_t>(v);
      known *= static_cast<uint64_t>(v);
      if (known > std::numeric_limits<uint32_t>::max()) return "describes too many elements";
    }
  }
  if (stretch != n) {
    if (known == 0) return "has a -1 entry next to a 0 entry";
    if (elementCount % known != 0) {
      return "cannot hold " + std::to_string(elementCount) + " elements";
    }
    (*out)[stretch] = static_cast<uint32_t>(elementCount / known);
    known *= (*out)[stretch];
  }
  if (known != elementCount) {
    return "describes " + std::to_string(known) + " elements but input 0 has " +
           std::to_string(elementCount);
  }
  return {};
}

/// RESHAPE of the types.hal operation, or with `int32` also of TENSOR_INT32 tensors (the
/// org.nnhal.tflite_compat RESHAPE).
PrepareResult prepareReshapeOf(PrepareContext& ctx, bool int32) {
  NNHAL_TRY(checkOperandCounts(ctx, 2, 2, 1));
  NNHAL_TRY(checkMovedTensorType(ctx, int32));
  const OperandInfo& in = ctx.input(0);
  NNHAL_TRY(checkOutputType(ctx, 0, in.type));
  NNHAL_TRY(checkRank(ctx, 0, 0, 4));
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkSameQuantization(ctx, 0, 0));
  NNHAL_TRY(checkInputType(ctx, 1, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, 1, 1, 1));

  const OperandInfo& shapeInfo = ctx.input(1);
  const size_t n = shapeInfo.dimensions[0];
  const size_t count = in.elementCount();
  std::vector<uint32_t> outDims;
  const bool constantShape = shapeInfo.isConstant() || n == 0;  // an empty shape has no bytes
  if (constantShape) {
    if (n > 0 && shapeInfo.constantLength != n * sizeof(int32_t)) {
      return invalidArgument(ctx.where(1) + " has " + std::to_string(shapeInfo.constantLength) +
                             " bytes for " + std::to_string(n) + " elements");
    }
    std::vector<int32_t> shape(n);
    if (n > 0) std::memcpy(shape.data(), shapeInfo.constantData, n * sizeof(int32_t));
    const std::string why = resolveShape(shape.data(), n, count, &outDims);
    if (!why.empty()) return invalidArgument(ctx.where(1) + " (shape) " + why);
  } else {
    // The shape arrives with the request: the model must declare the output dimensions,
    // and every execution checks that the shape agrees with them.
    outDims = ctx.output(0).dimensions;
    if (outDims.size() != n || !hal::hasFullySpecifiedShape(ctx.output(0).type, outDims) ||
        dimensionProduct(outDims, 0, outDims.size()) != count) {
      ctx.markValuesMissing();  // prepared again once the value is known
      return invalidArgument(ctx.where(1) +
                             " (shape) is not a constant and output 0 does not declare "
                             "dimensions holding the input's elements");
    }
  }
  NNHAL_TRY(ctx.setOutputShape(0, outDims));

  const size_t bytes = count * hal::sizeOfElement(in.type);
  return makeKernel([bytes, constantShape, n, count,
                     outDims = std::move(outDims)](const RunContext& rc) -> Result<void> {
    if (!constantShape) {
      std::vector<uint32_t> actual;
      const std::string why = resolveShape(rc.input<int32_t>(1), n, count, &actual);
      if (!why.empty() || actual != outDims) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "RESHAPE input 1 (shape) does not match the prepared output dimensions" +
                        (why.empty() ? std::string() : ": " + why));
      }
    }
    const auto* src = rc.input<uint8_t>(0);
    auto* dst = rc.output<uint8_t>(0);
    if (bytes == 0 || src == dst) return {};
    rc.parallel().forRange(bytes, kCopyGrainBytes, [&](size_t begin, size_t end) {
      std::memcpy(dst + begin, src + begin, end - begin);
    });
    return {};
  });
}

}  // namespace

PrepareResult prepareReshape(PrepareContext& ctx) { return prepareReshapeOf(ctx, false); }

PrepareResult prepareTfliteCompatReshape(PrepareContext& ctx) {
  return prepareReshapeOf(ctx, true);
}

}  // namespace nnhal::engine::ops
