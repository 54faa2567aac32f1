#include "engine/ops/detection_common.h"

#include <cstring>

#include "engine/ops/shape_utils.h"
#include "kernels/detection_quant.h"

namespace nnhal::engine::ops::detection {
namespace {

std::string typeName(OperandType type) { return std::string(toString(type)); }

Result<void> expectBoxQuant(const std::string& where, const OperandInfo& info) {
  if (info.type != OperandType::TENSOR_QUANT16_ASYMM) return {};
  if (info.scale != 0.125f || info.zeroPoint != 0) {
    return invalidArgument(where + " (boxes) must have scale 0.125 and zeroPoint 0, got " +
                           std::to_string(info.scale) + " and " + std::to_string(info.zeroPoint));
  }
  return {};
}

/// Calls fn.template operator()<T>() with T the stored element type of quantized `type`
/// (uint8_t, int8_t, uint16_t, int16_t); nothing for other types.
template <typename Fn>
void forStoredType(OperandType type, Fn&& fn) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
      return fn.template operator()<uint8_t>();
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return fn.template operator()<int8_t>();
    case OperandType::TENSOR_QUANT16_ASYMM:
      return fn.template operator()<uint16_t>();
    case OperandType::TENSOR_QUANT16_SYMM:
      return fn.template operator()<int16_t>();
    default:
      return;
  }
}

OperandType typeOf(Role role, OperandType type) {
  const bool quantized = type != OperandType::TENSOR_FLOAT32;
  switch (role) {
    case Role::kMain:
    case Role::kMainSameQuant:
      return type;
    case Role::kBoxes:
      return quantized ? OperandType::TENSOR_QUANT16_ASYMM : OperandType::TENSOR_FLOAT32;
    case Role::kSymm16:
      return quantized ? OperandType::TENSOR_QUANT16_SYMM : OperandType::TENSOR_FLOAT32;
    case Role::kInt32:
      break;
  }
  return OperandType::TENSOR_INT32;
}

}  // namespace

Result<void> checkOperands(const PrepareContext& ctx, std::initializer_list<Role> inputs,
                           std::initializer_list<Role> outputs) {
  NNHAL_TRY(checkInputType(ctx, 0,
                           {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM,
                            OperandType::TENSOR_QUANT8_ASYMM_SIGNED}));
  const OperandType type = ctx.input(0).type;
  size_t i = 1;
  for (Role role : inputs) NNHAL_TRY(expectInput(ctx, i++, typeOf(role, type)));
  size_t o = 0;
  for (Role role : outputs) NNHAL_TRY(expectOutput(ctx, o++, typeOf(role, type)));
  if (type == OperandType::TENSOR_FLOAT32) return {};
  NNHAL_TRY(checkInputQuantization(ctx, 0));
  i = 1;
  for (Role role : inputs) {
    if (role == Role::kMain) NNHAL_TRY(checkInputQuantization(ctx, i));
    if (role == Role::kBoxes) NNHAL_TRY(expectBoxQuantization(ctx, i));
    ++i;
  }
  o = 0;
  for (Role role : outputs) {
    if (role == Role::kMain) NNHAL_TRY(checkOutputQuantization(ctx, o));
    if (role == Role::kMainSameQuant) NNHAL_TRY(checkSameQuantization(ctx, 0, o));
    if (role == Role::kBoxes) NNHAL_TRY(expectOutputBoxQuantization(ctx, o));
    ++o;
  }
  return {};
}

Result<kernels::RoiWindow> prepareRoiWindow(PrepareContext& ctx, size_t layoutInput) {
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, readBool(ctx, layoutInput));
  NNHAL_TRY(expectRanks(ctx, {4, 2, 1}));
  NNHAL_ASSIGN_OR_RETURN(const int32_t outHeight, readInt32(ctx, 3));
  NNHAL_ASSIGN_OR_RETURN(const int32_t outWidth, readInt32(ctx, 4));
  NNHAL_ASSIGN_OR_RETURN(const float heightStride, readFloat32(ctx, 5));
  NNHAL_ASSIGN_OR_RETURN(const float widthStride, readFloat32(ctx, 6));
  if (outHeight <= 0 || outWidth <= 0) {
    return invalidArgument(ctx.where(3) + " and input 4 (output size) must be > 0, got " +
                           std::to_string(outHeight) + "x" + std::to_string(outWidth));
  }
  if (!(heightStride > 0.0f) || !(widthStride > 0.0f)) {
    return invalidArgument(ctx.where(5) + " and input 6 (strides) must be > 0, got " +
                           std::to_string(heightStride) + " and " + std::to_string(widthStride));
  }
  kernels::RoiWindow w;
  w.outHeight = static_cast<uint32_t>(outHeight);
  w.outWidth = static_cast<uint32_t>(outWidth);
  w.heightScale = 1.0f / heightStride;
  w.widthScale = 1.0f / widthStride;
  w.input = featureMapOf(ctx, 0, nchw);
  if (w.input.batches == 0 || w.input.height == 0 || w.input.width == 0 || w.input.depth == 0) {
    return invalidArgument(ctx.where(0) + " must have non-zero batches, height, width and depth");
  }
  const uint32_t numRois = ctx.input(1).dimensions[0];
  NNHAL_TRY(expectDim(ctx, 1, 1, 4, "box size"));
  NNHAL_TRY(expectDim(ctx, 2, 0, numRois, "number of rois"));
  if (nchw) {
    NNHAL_TRY(ctx.setOutputShape(0, {numRois, w.input.depth, w.outHeight, w.outWidth}));
  } else {
    NNHAL_TRY(ctx.setOutputShape(0, {numRois, w.outHeight, w.outWidth, w.input.depth}));
  }
  return w;
}

Result<void> expectInput(const PrepareContext& ctx, size_t i, OperandType type) {
  if (!ctx.hasInput(i)) return invalidArgument(ctx.where(i) + " is required");
  if (ctx.input(i).type != type) {
    return invalidArgument(ctx.where(i) + " must be " + typeName(type) + ", got " +
                           typeName(ctx.input(i).type));
  }
  return {};
}

Result<void> expectOutput(const PrepareContext& ctx, size_t o, OperandType type) {
  return checkOutputType(ctx, o, type);
}

Result<void> expectRank(const PrepareContext& ctx, size_t i, size_t rank) {
  const size_t actual = ctx.input(i).dimensions.size();
  if (actual != rank) {
    return invalidArgument(ctx.where(i) + " must have rank " + std::to_string(rank) + ", got " +
                           std::to_string(actual));
  }
  return {};
}

kernels::FeatureMap featureMapOf(const PrepareContext& ctx, size_t i, bool nchw) {
  const std::vector<uint32_t>& dims = ctx.input(i).dimensions;
  return kernels::FeatureMap{dims[0], dims[nchw ? 2 : 1], dims[nchw ? 3 : 2], dims[nchw ? 1 : 3],
                             nchw};
}

Result<void> expectRanks(const PrepareContext& ctx, std::initializer_list<size_t> ranks) {
  size_t i = 0;
  for (const size_t rank : ranks) NNHAL_TRY(expectRank(ctx, i++, rank));
  return {};
}

Result<void> expectDim(const PrepareContext& ctx, size_t i, size_t d, uint32_t expected,
                       const std::string& what) {
  const uint32_t actual = ctx.input(i).dimensions[d];
  if (actual != expected) {
    return invalidArgument(ctx.where(i) + " dimension " + std::to_string(d) + " must be " +
                           std::to_string(expected) + " (" + what + "), got " +
                           std::to_string(actual));
  }
  return {};
}

Result<void> expectBoxQuantization(const PrepareContext& ctx, size_t i) {
  return expectBoxQuant(ctx.where(i), ctx.input(i));
}

Result<void> expectOutputBoxQuantization(const PrepareContext& ctx, size_t o) {
  return expectBoxQuant(outputWhere(ctx, o), ctx.output(o));
}

Result<int32_t> readInt32(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(expectInput(ctx, i, OperandType::INT32));
  return ctx.scalar<int32_t>(i);
}

Result<float> readFloat32(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(expectInput(ctx, i, OperandType::FLOAT32));
  return ctx.scalar<float>(i);
}

Result<bool> readBool(const PrepareContext& ctx, size_t i) {
  NNHAL_TRY(expectInput(ctx, i, OperandType::BOOL));
  NNHAL_ASSIGN_OR_RETURN(const uint8_t value, ctx.scalar<uint8_t>(i));
  return value != 0;
}

size_t elementBytes(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_FLOAT32:
    case OperandType::TENSOR_INT32:
      return 4;
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
      return 2;
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return 1;
    default:
      return 0;
  }
}

void loadFloats(OperandType type, float scale, int32_t zeroPoint, const void* in, size_t n,
                float* out) {
  if (n == 0) return;
  if (type == OperandType::TENSOR_FLOAT32) {
    std::memcpy(out, in, n * sizeof(float));
    return;
  }
  forStoredType(type, [&]<typename T>() {
    kernels::dequantizeDetection(static_cast<const T*>(in), n, scale, zeroPoint, out);
  });
}

void storeFloats(OperandType type, float scale, int32_t zeroPoint, const float* in, size_t n,
                 void* out) {
  if (n == 0) return;
  if (type == OperandType::TENSOR_FLOAT32) {
    std::memcpy(out, in, n * sizeof(float));
    return;
  }
  forStoredType(type, [&]<typename T>() {
    kernels::quantizeDetection(in, n, scale, zeroPoint, static_cast<T*>(out));
  });
}

Result<std::vector<float>> floatValues(const PrepareContext& ctx, size_t i) {
  const OperandInfo& in = ctx.input(i);
  NNHAL_ASSIGN_OR_RETURN(const std::vector<uint8_t> bytes, ctx.values<uint8_t>(i));
  const size_t size = elementBytes(in.type);
  const size_t n = in.elementCount();
  if (size == 0 || bytes.size() != n * size) {
    return invalidArgument(ctx.where(i) + " has " + std::to_string(bytes.size()) +
                           " bytes of data, expected " + std::to_string(n * size));
  }
  std::vector<float> out(n);
  loadFloats(in.type, in.scale, in.zeroPoint, bytes.data(), n, out.data());
  return out;
}

std::vector<uint8_t> storedBytes(const PrepareContext& ctx, size_t o,
                                 const std::vector<float>& values) {
  const OperandInfo& out = ctx.output(o);
  std::vector<uint8_t> bytes(values.size() * elementBytes(out.type));
  storeFloats(out.type, out.scale, out.zeroPoint, values.data(), values.size(), bytes.data());
  return bytes;
}

void copyToOutput(const RunContext& rc, size_t o, const std::vector<uint8_t>& bytes) {
  if (!bytes.empty()) std::memcpy(rc.output<uint8_t>(o), bytes.data(), bytes.size());
}

std::vector<float> nchwToNhwc(const std::vector<float>& in, const std::vector<uint32_t>& dims) {
  const size_t n = dims[0], c = dims[1], h = dims[2], w = dims[3];
  std::vector<float> out(in.size());
  for (size_t b = 0; b < n; ++b) {
    for (size_t ch = 0; ch < c; ++ch) {
      for (size_t p = 0; p < h * w; ++p)
        out[(b * h * w + p) * c + ch] = in[(b * c + ch) * h * w + p];
    }
  }
  return out;
}

}  // namespace nnhal::engine::ops::detection
