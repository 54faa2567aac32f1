#include "engine/ops/data_common.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"

namespace nnhal::engine::ops::data {

Result<void> checkMainTensor(const PrepareContext& ctx, std::initializer_list<OperandType> allowed,
                             size_t o) {
  NNHAL_TRY(checkInputType(ctx, 0, allowed));
  if (o >= ctx.outputCount()) {
    return invalidArgument(ctx.name() + " has no output " + std::to_string(o));
  }
  NNHAL_TRY(checkOutputType(ctx, o, ctx.input(0).type));
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  NNHAL_TRY(checkSameQuantization(ctx, 0, o));
  return {};
}

Result<void> checkMovedFloatOrQuant8(const PrepareContext& ctx, size_t minRank, size_t maxRank) {
  NNHAL_TRY(checkMainTensor(ctx, {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM,
                                  OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  return checkRank(ctx, 0, minRank, maxRank);
}

Result<int32_t> readInt(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(checkInputType(ctx, i, {OperandType::INT32}));
  return ctx.scalar<int32_t>(i);
}

Result<bool> readLayout(const PrepareContext& ctx, size_t i) {
  if (!ctx.hasInput(i)) return false;
  NNHAL_TRY(checkInputType(ctx, i, {OperandType::BOOL}));
  NNHAL_ASSIGN_OR_RETURN(const uint8_t value, ctx.scalar<uint8_t>(i));
  return value != 0;
}

Result<std::vector<int32_t>> readIntVector(const PrepareContext& ctx, size_t i, size_t count) {
  NNHAL_TRY(checkInputType(ctx, i, {OperandType::TENSOR_INT32}));
  NNHAL_TRY(checkRank(ctx, i, 1, 1));
  const size_t n = ctx.input(i).dimensions[0];
  if (n != count) {
    return invalidArgument(ctx.where(i) + " must have " + std::to_string(count) +
                           " elements, got " + std::to_string(n));
  }
  NNHAL_ASSIGN_OR_RETURN(std::vector<int32_t> values, ctx.values<int32_t>(i));
  if (values.size() != count) {
    return invalidArgument(ctx.where(i) + " holds " + std::to_string(values.size()) +
                           " values, expected " + std::to_string(count));
  }
  return values;
}

std::vector<size_t> dimsOf(const OperandInfo& info) {
  return std::vector<size_t>(info.dimensions.begin(), info.dimensions.end());
}

Result<kernels::StridedView> makeView(const PrepareContext& ctx, const std::vector<size_t>& dims,
                                      const std::vector<ptrdiff_t>& strides, ptrdiff_t offset) {
  const auto view =
      kernels::makeStridedView(dims, strides, offset, hal::sizeOfElement(ctx.input(0).type));
  if (!view) {
    return invalidArgument(ctx.name() + " needs a copy of rank " + std::to_string(dims.size()) +
                           ", more than the supported " + std::to_string(kernels::kMaxViewRank));
  }
  return *view;
}

namespace {

size_t rowGrain(const kernels::StridedView& view) {
  const size_t rowBytes = view.dims[view.rank - 1] * view.elementBytes;
  return std::max<size_t>(1, kCopyGrainBytes / std::max<size_t>(1, rowBytes));
}

}  // namespace

std::unique_ptr<Kernel> makeViewKernel(kernels::StridedView view, size_t output) {
  return makeKernel([view, output](const RunContext& rc) -> Result<void> {
    const void* src = rc.input<void>(0);
    void* dst = rc.output<void>(output);
    rc.parallel().forRange(view.rows, rowGrain(view), [&](size_t begin, size_t end) {
      kernels::stridedCopy(view, src, dst, begin, end);
    });
    return {};
  });
}

std::unique_ptr<Kernel> makeViewsKernel(std::vector<kernels::StridedView> views) {
  return makeKernel([views = std::move(views)](const RunContext& rc) -> Result<void> {
    const void* src = rc.input<void>(0);
    for (size_t o = 0; o < views.size(); ++o) {
      const kernels::StridedView& view = views[o];
      void* dst = rc.output<void>(o);
      rc.parallel().forRange(view.rows, rowGrain(view), [&](size_t begin, size_t end) {
        kernels::stridedCopy(view, src, dst, begin, end);
      });
    }
    return {};
  });
}

std::unique_ptr<Kernel> makeCopyKernel(size_t bytes) {
  return makeKernel([bytes](const RunContext& rc) -> Result<void> {
    const auto* src = rc.input<uint8_t>(0);
    auto* dst = rc.output<uint8_t>(0);
    if (bytes == 0 || src == dst) return {};
    rc.parallel().forRange(bytes, kCopyGrainBytes * 4, [&](size_t begin, size_t end) {
      std::memcpy(dst + begin, src + begin, end - begin);
    });
    return {};
  });
}

Result<uint32_t> toDimension(const PrepareContext& ctx, uint64_t value, size_t output) {
  if (value > std::numeric_limits<uint32_t>::max()) {
    return invalidArgument(outputWhere(ctx, output) + " would have a dimension of " +
                           std::to_string(value) + ", more than 2^32 - 1");
  }
  return static_cast<uint32_t>(value);
}

}  // namespace nnhal::engine::ops::data
