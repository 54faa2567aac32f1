#include "engine/ops/shape_utils.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/quantization.h"

namespace nnhal::engine::ops {
namespace {

std::string opName(const PrepareContext& ctx) { return ctx.name(); }

std::string dimsToString(const std::vector<uint32_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Result<void> checkQuantization(const OperandInfo& info, const std::string& where) {
  if (!isQuant8Asymm(info.type)) return {};
  if (!(info.scale > 0.0f) || !std::isfinite(info.scale)) {
    return invalidArgument(where + " must have a positive finite scale, got " +
                           std::to_string(info.scale));
  }
  const auto [lo, hi] = quant8Range(info.type);
  if (info.zeroPoint < lo || info.zeroPoint > hi) {
    return invalidArgument(where + " has zeroPoint " + std::to_string(info.zeroPoint) +
                           " outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return {};
}

}  // namespace

std::string outputWhere(const PrepareContext& ctx, size_t output) {
  return opName(ctx) + " output " + std::to_string(output);
}

bool isQuant8Asymm(OperandType type) {
  return type == OperandType::TENSOR_QUANT8_ASYMM ||
         type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
}

std::pair<int32_t, int32_t> quant8Range(OperandType type) {
  if (type == OperandType::TENSOR_QUANT8_ASYMM) return {0, 255};
  return {-128, 127};
}

Result<void> checkOperandCounts(const PrepareContext& ctx, size_t minInputs, size_t maxInputs,
                                size_t outputs) {
  const size_t n = ctx.inputCount();
  if (n < minInputs || n > maxInputs) {
    std::string expected = std::to_string(minInputs);
    if (maxInputs == std::numeric_limits<size_t>::max()) {
      expected = "at least " + expected;
    } else if (maxInputs != minInputs) {
      expected += " to " + std::to_string(maxInputs);
    }
    return invalidArgument(opName(ctx) + " takes " + expected + " inputs, got " +
                           std::to_string(n));
  }
  if (ctx.outputCount() != outputs) {
    return invalidArgument(opName(ctx) + " has " + std::to_string(outputs) + " output(s), got " +
                           std::to_string(ctx.outputCount()));
  }
  return {};
}

Result<void> checkInputType(const PrepareContext& ctx, size_t i,
                            std::initializer_list<OperandType> allowed) {
  if (!ctx.hasInput(i)) return invalidArgument(ctx.where(i) + " is required");
  const OperandType type = ctx.input(i).type;
  for (OperandType t : allowed) {
    if (t == type) return {};
  }
  std::string names;
  for (OperandType t : allowed) {
    if (!names.empty()) names += ", ";
    names += toString(t);
  }
  return invalidArgument(ctx.where(i) + " has unsupported type " + std::string(toString(type)) +
                         " (expected " + names + ")");
}

Result<void> checkOutputType(const PrepareContext& ctx, size_t o, OperandType expected) {
  if (ctx.output(o).type != expected) {
    return invalidArgument(outputWhere(ctx, o) + " has type " +
                           std::string(toString(ctx.output(o).type)) + ", expected " +
                           std::string(toString(expected)));
  }
  return {};
}

Result<void> checkRank(const PrepareContext& ctx, size_t i, size_t minRank, size_t maxRank) {
  const size_t rank = ctx.input(i).dimensions.size();
  if (rank < minRank || rank > maxRank) {
    return invalidArgument(ctx.where(i) + " has rank " + std::to_string(rank) +
                           ", supported ranks are " + std::to_string(minRank) + " to " +
                           std::to_string(maxRank));
  }
  return {};
}

Result<void> checkInputQuantization(const PrepareContext& ctx, size_t i) {
  return checkQuantization(ctx.input(i), ctx.where(i));
}

Result<void> checkOutputQuantization(const PrepareContext& ctx, size_t o) {
  return checkQuantization(ctx.output(o), outputWhere(ctx, o));
}

Result<void> checkSameQuantization(const PrepareContext& ctx, size_t i, size_t o) {
  const OperandInfo& in = ctx.input(i);
  const OperandInfo& out = ctx.output(o);
  if (!isQuant8Asymm(in.type)) return {};
  if (in.scale != out.scale || in.zeroPoint != out.zeroPoint) {
    return invalidArgument(outputWhere(ctx, o) + " must have the scale and zeroPoint of input " +
                           std::to_string(i) + " (" + std::to_string(in.scale) + ", " +
                           std::to_string(in.zeroPoint) + "), got (" + std::to_string(out.scale) +
                           ", " + std::to_string(out.zeroPoint) + ")");
  }
  return {};
}

Result<FusedActivationFunc> readActivation(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(checkInputType(ctx, i, {OperandType::INT32}));
  NNHAL_ASSIGN_OR_RETURN(const int32_t value, ctx.scalar<int32_t>(i));
  if (value < 0 || value > 3) {
    return invalidArgument(ctx.where(i) + " (fused activation) must be 0..3, got " +
                           std::to_string(value));
  }
  return static_cast<FusedActivationFunc>(value);
}

Result<uint32_t> readAxis(const PrepareContext& ctx, size_t i, size_t rank) {
  NNHAL_TRY(checkInputType(ctx, i, {OperandType::INT32}));
  NNHAL_ASSIGN_OR_RETURN(const int32_t value, ctx.scalar<int32_t>(i));
  const auto r = static_cast<int64_t>(rank);
  if (value < -r || value >= r) {
    return invalidArgument(ctx.where(i) + " (axis) is " + std::to_string(value) + ", outside [-" +
                           std::to_string(rank) + ", " + std::to_string(rank) + ")");
  }
  return static_cast<uint32_t>(value < 0 ? value + r : value);
}

Result<std::vector<uint32_t>> broadcastDimensions(const PrepareContext& ctx, size_t a, size_t b) {
  const std::vector<uint32_t>& da = ctx.input(a).dimensions;
  const std::vector<uint32_t>& db = ctx.input(b).dimensions;
  const size_t rank = std::max(da.size(), db.size());
  std::vector<uint32_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    const uint32_t x = k < da.size() ? da[da.size() - 1 - k] : 1;
    const uint32_t y = k < db.size() ? db[db.size() - 1 - k] : 1;
    if (x != y && x != 1 && y != 1) {
      return invalidArgument(ctx.where(b) + " dimensions " + dimsToString(db) +
                             " cannot be broadcast with input " + std::to_string(a) + " " +
                             dimsToString(da));
    }
    out[rank - 1 - k] = x == 1 ? y : x;
  }
  return out;
}

size_t dimensionProduct(const std::vector<uint32_t>& dims, size_t from, size_t to) {
  size_t p = 1;
  for (size_t d = from; d < to && d < dims.size(); ++d) p *= dims[d];
  return p;
}

std::pair<int32_t, int32_t> quantizedActivationRange(const OperandInfo& out,
                                                     FusedActivationFunc activation) {
  const auto [qmin, qmax] = quant8Range(out.type);
  int32_t lo = qmin;
  int32_t hi = qmax;
  kernels::activationRangeQuantized(activation, out.scale, out.zeroPoint, qmin, qmax, &lo, &hi);
  return {lo, hi};
}

Result<void> checkFloatOrQuant8Tensor(const PrepareContext& ctx, size_t minRank, size_t maxRank) {
  NNHAL_TRY(checkInputType(ctx, 0,
                           {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM,
                            OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  NNHAL_TRY(checkOutputType(ctx, 0, ctx.input(0).type));
  return checkRank(ctx, 0, minRank, maxRank);
}

Result<void> checkMovedTensorType(const PrepareContext& ctx, bool int32) {
  if (int32) {
    return checkInputType(
        ctx, 0,
        {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_INT32, OperandType::TENSOR_QUANT8_ASYMM,
         OperandType::TENSOR_QUANT8_ASYMM_SIGNED});
  }
  return checkInputType(ctx, 0,
                        {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM,
                         OperandType::TENSOR_QUANT8_ASYMM_SIGNED});
}

}  // namespace nnhal::engine::ops
