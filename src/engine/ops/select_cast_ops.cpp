// SELECT (element-wise choice by a TENSOR_BOOL8 condition, no broadcasting) and CAST (element
// type conversion) (types.hal).
#include <cstdint>
#include <cstring>
#include <string>

#include "engine/ops/elementwise_common.h"
#include "engine/ops/ops.h"
#include "engine/ops/shape_utils.h"
#include "hal/operand_utils.h"
#include "kernels/binary_math.h"
#include "kernels/cast.h"
#include "kernels/select.h"

namespace nnhal::engine::ops {
namespace {

Result<void> checkSameDimensions(const PrepareContext& ctx, size_t i, size_t reference) {
  if (ctx.input(i).dimensions != ctx.input(reference).dimensions) {
    return invalidArgument(ctx.where(i) + " must have the dimensions of input " +
                           std::to_string(reference));
  }
  return {};
}

template <typename T>
PrepareResult makeSelectKernel(size_t count) {
  return makeKernel([count](const RunContext& rc) -> Result<void> {
    const uint8_t* condition = rc.input<uint8_t>(0);
    const T* a = rc.input<T>(1);
    const T* b = rc.input<T>(2);
    T* out = rc.output<T>(0);
    rc.parallel().forRange(count, kElementGrain, [&](size_t begin, size_t end) {
      kernels::selectElements<T>(condition, a, b, out, begin, end);
    });
    return {};
  });
}

template <typename T>
PrepareResult makeQuantSelectKernel(const PrepareContext& ctx, size_t count) {
  const OperandInfo& out = ctx.output(0);
  const auto tableA = kernels::makeRequantizeTable<T>(ctx.input(1).scale, ctx.input(1).zeroPoint,
                                                      out.scale, out.zeroPoint);
  const auto tableB = kernels::makeRequantizeTable<T>(ctx.input(2).scale, ctx.input(2).zeroPoint,
                                                      out.scale, out.zeroPoint);
  return makeKernel([count, tableA, tableB](const RunContext& rc) -> Result<void> {
    const uint8_t* condition = rc.input<uint8_t>(0);
    const T* a = rc.input<T>(1);
    const T* b = rc.input<T>(2);
    T* out = rc.output<T>(0);
    rc.parallel().forRange(count, kElementGrain, [&](size_t begin, size_t end) {
      kernels::selectQuant8<T>(condition, a, b, out, tableA, tableB, begin, end);
    });
    return {};
  });
}

template <typename From, typename To>
PrepareResult makeCastKernel(size_t count) {
  return makeUnaryKernel<From, To>(count, kernels::castElements<From, To>);
}

template <typename From>
PrepareResult makeCastFrom(OperandType to, size_t count) {
  switch (to) {
    case OperandType::TENSOR_FLOAT32:
      return makeCastKernel<From, float>(count);
    case OperandType::TENSOR_INT32:
      return makeCastKernel<From, int32_t>(count);
    default:
      return makeCastKernel<From, uint8_t>(count);
  }
}

bool isConvertible(OperandType type) {
  return type == OperandType::TENSOR_FLOAT32 || type == OperandType::TENSOR_INT32 ||
         type == OperandType::TENSOR_QUANT8_ASYMM;
}

/// Types CAST copies unchanged to the same type (HAL 1.3).
bool isCopyable(OperandType type) {
  return type == OperandType::TENSOR_BOOL8 || type == OperandType::TENSOR_QUANT16_ASYMM ||
         type == OperandType::TENSOR_QUANT16_SYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED || type == OperandType::TENSOR_QUANT8_SYMM;
}

}  // namespace

PrepareResult prepareSelect(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 3, 3, 1));
  NNHAL_TRY(checkInputType(ctx, 0, {OperandType::TENSOR_BOOL8}));
  NNHAL_TRY(
      checkInputType(ctx, 1,
                     {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32,
                      OperandType::TENSOR_QUANT8_ASYMM, OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  const OperandType type = ctx.input(1).type;
  NNHAL_TRY(checkInputType(ctx, 2, {type}));
  NNHAL_TRY(checkOutputType(ctx, 0, type));
  NNHAL_TRY(checkInputQuantization(ctx, 1));
  NNHAL_TRY(checkInputQuantization(ctx, 2));
  NNHAL_TRY(checkOutputQuantization(ctx, 0));
  NNHAL_TRY(checkSameDimensions(ctx, 1, 0));
  NNHAL_TRY(checkSameDimensions(ctx, 2, 0));
  NNHAL_TRY(sameShapeOutput(ctx));
  const size_t count = ctx.input(0).elementCount();
  switch (type) {
    case OperandType::TENSOR_FLOAT32:
      return makeSelectKernel<float>(count);
    case OperandType::TENSOR_INT32:
      return makeSelectKernel<int32_t>(count);
    case OperandType::TENSOR_QUANT8_ASYMM:
      return makeQuantSelectKernel<uint8_t>(ctx, count);
    default:
      return makeQuantSelectKernel<int8_t>(ctx, count);
  }
}

PrepareResult prepareCast(PrepareContext& ctx) {
  NNHAL_TRY(checkOperandCounts(ctx, 1, 1, 1));
  if (!ctx.hasInput(0)) return invalidArgument(ctx.where(0) + " is required");
  const OperandType from = ctx.input(0).type;
  const OperandType to = ctx.output(0).type;
  const bool convertible = isConvertible(from) && isConvertible(to);
  const bool copyable = from == to && isCopyable(from);
  if (!convertible && !copyable) {
    return invalidArgument("CAST from " + std::string(toString(from)) + " to " +
                           std::string(toString(to)) + " is not supported");
  }
  NNHAL_TRY(sameShapeOutput(ctx));
  const size_t count = ctx.input(0).elementCount();
  if (copyable) {
    const size_t bytes = count * hal::sizeOfElement(from);
    return makeKernel([bytes](const RunContext& rc) -> Result<void> {
      if (bytes > 0) std::memcpy(rc.output<void>(0), rc.input<void>(0), bytes);
      return {};
    });
  }
  switch (from) {
    case OperandType::TENSOR_FLOAT32:
      return makeCastFrom<float>(to, count);
    case OperandType::TENSOR_INT32:
      return makeCastFrom<int32_t>(to, count);
    default:
      return makeCastFrom<uint8_t>(to, count);
  }
}

}  // namespace nnhal::engine::ops
