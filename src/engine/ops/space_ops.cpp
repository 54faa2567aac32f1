// BATCH_TO_SPACE_ND, SPACE_TO_BATCH_ND, DEPTH_TO_SPACE and SPACE_TO_DEPTH (types.hal): 4-D
// rearrangements between the batch, spatial and depth dimensions, NHWC or NCHW (the optional
// layout BOOL). All but SPACE_TO_BATCH_ND are strided views of the input; SPACE_TO_BATCH_ND
// also pads (with 0, or the zero point of quantized tensors).
#include <algorithm>
#include <array>
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

/// A 4-D tensor's sizes by meaning and its element strides, whatever the layout.
struct Image {
  size_t n = 0, h = 0, w = 0, c = 0;
  ptrdiff_t sN = 0, sH = 0, sW = 0, sC = 0;
};

Image imageOf(const std::vector<uint32_t>& dims, bool nchw) {
  // Row-major element strides of the four dimensions as stored.
  ptrdiff_t stride[4];
  stride[3] = 1;
  for (size_t k = 3; k > 0; --k) stride[k - 1] = stride[k] * static_cast<ptrdiff_t>(dims[k]);
  // Where height, width and channels are stored.
  const size_t h = nchw ? 2 : 1, w = nchw ? 3 : 2, c = nchw ? 1 : 3;
  Image im;
  im.n = dims[0];
  im.h = dims[h];
  im.w = dims[w];
  im.c = dims[c];
  im.sN = stride[0];
  im.sH = stride[h];
  im.sW = stride[w];
  im.sC = stride[c];
  return im;
}

/// Output dimensions in the operation's layout, each checked to fit uint32_t.
Result<std::vector<uint32_t>> outputDims(const PrepareContext& ctx, uint64_t n, uint64_t h,
                                         uint64_t w, uint64_t c, bool nchw) {
  NNHAL_ASSIGN_OR_RETURN(const uint32_t n32, data::toDimension(ctx, n));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t h32, data::toDimension(ctx, h));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t w32, data::toDimension(ctx, w));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t c32, data::toDimension(ctx, c));
  if (nchw) return std::vector<uint32_t>{n32, c32, h32, w32};
  return std::vector<uint32_t>{n32, h32, w32, c32};
}

/// Common checks: input counts, a 4-D float32/quant8 input 0, same-typed output.
Result<void> checkImageOperation(const PrepareContext& ctx, size_t minInputs, size_t maxInputs) {
  NNHAL_TRY(checkOperandCounts(ctx, minInputs, maxInputs, 1));
  NNHAL_TRY(data::checkMovedFloatOrQuant8(ctx, 4, 4));
  return {};
}

/// Reads the TENSOR_INT32 block shape [2] at input `i`; both entries must be >= 1.
Result<std::array<size_t, 2>> readBlockShape(const PrepareContext& ctx, size_t i) {
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> block, data::readIntVector(ctx, i, 2));
  for (size_t k = 0; k < 2; ++k) {
    if (block[k] < 1) {
      return invalidArgument(ctx.where(i) + " (block shape) entry " + std::to_string(k) +
                             " must be >= 1, got " + std::to_string(block[k]));
    }
  }
  return std::array<size_t, 2>{static_cast<size_t>(block[0]), static_cast<size_t>(block[1])};
}

/// Reads the INT32 block size at input 1; must be >= 1.
Result<size_t> readBlockSize(const PrepareContext& ctx) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t block, data::readInt(ctx, 1));
  if (block < 1) {
    return invalidArgument(ctx.where(1) + " (block size) must be >= 1, got " +
                           std::to_string(block));
  }
  return static_cast<size_t>(block);
}

}  // namespace

PrepareResult prepareBatchToSpaceNd(PrepareContext& ctx) {
  NNHAL_TRY(checkImageOperation(ctx, 2, 3));
  NNHAL_ASSIGN_OR_RETURN(const auto block, readBlockShape(ctx, 1));
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, data::readLayout(ctx, 2));
  const Image in = imageOf(ctx.input(0).dimensions, nchw);
  const size_t bh = block[0];
  const size_t bw = block[1];
  if (in.n % (bh * bw) != 0) {
    return invalidArgument(ctx.where(0) + " batch size " + std::to_string(in.n) +
                           " is not a multiple of the block size product " +
                           std::to_string(bh * bw));
  }
  const size_t n = in.n / (bh * bw);
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outDims,
                         outputDims(ctx, n, uint64_t{in.h} * bh, uint64_t{in.w} * bw, in.c, nchw));
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));

  // Output pixel (n, h * bh + sy, w * bw + sx) is input batch (sy * bw + sx) * n + n's pixel
  // (h, w).
  const auto batchStride = static_cast<ptrdiff_t>(n) * in.sN;
  const auto sy = static_cast<ptrdiff_t>(bw) * batchStride;
  const ptrdiff_t sx = batchStride;
  std::vector<size_t> dims;
  std::vector<ptrdiff_t> strides;
  if (nchw) {
    dims = {n, in.c, in.h, bh, in.w, bw};
    strides = {in.sN, in.sC, in.sH, sy, in.sW, sx};
  } else {
    dims = {n, in.h, bh, in.w, bw, in.c};
    strides = {in.sN, in.sH, sy, in.sW, sx, in.sC};
  }
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view, data::makeView(ctx, dims, strides, 0));
  return data::makeViewKernel(view);
}

PrepareResult prepareSpaceToBatchNd(PrepareContext& ctx) {
  NNHAL_TRY(checkImageOperation(ctx, 3, 4));
  NNHAL_ASSIGN_OR_RETURN(const auto block, readBlockShape(ctx, 1));
  NNHAL_TRY(checkInputType(ctx, 2, {OperandType::TENSOR_INT32}));
  const std::vector<uint32_t>& padDims = ctx.input(2).dimensions;
  if (padDims != std::vector<uint32_t>{2, 2}) {
    return invalidArgument(ctx.where(2) + " (paddings) must have shape [2, 2]");
  }
  NNHAL_ASSIGN_OR_RETURN(const std::vector<int32_t> pads, ctx.values<int32_t>(2));
  if (pads.size() != 4) {
    return invalidArgument(ctx.where(2) + " (paddings) holds " + std::to_string(pads.size()) +
                           " values, expected 4");
  }
  for (size_t k = 0; k < 4; ++k) {
    if (pads[k] < 0) {
      return invalidArgument(ctx.where(2) + " (paddings) entry " + std::to_string(k) +
                             " must be >= 0, got " + std::to_string(pads[k]));
    }
  }
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, data::readLayout(ctx, 3));
  const Image in = imageOf(ctx.input(0).dimensions, nchw);
  const uint64_t paddedH = uint64_t{in.h} + static_cast<uint64_t>(pads[0]) + pads[1];
  const uint64_t paddedW = uint64_t{in.w} + static_cast<uint64_t>(pads[2]) + pads[3];
  if (paddedH % block[0] != 0 || paddedW % block[1] != 0) {
    return invalidArgument(ctx.where(0) + " padded spatial size " + std::to_string(paddedH) + "x" +
                           std::to_string(paddedW) + " is not a multiple of the block " +
                           std::to_string(block[0]) + "x" + std::to_string(block[1]));
  }
  kernels::SpaceToBatchLayout layout;
  layout.nchw = nchw;
  layout.batches = in.n;
  layout.height = in.h;
  layout.width = in.w;
  layout.channels = in.c;
  layout.blockHeight = block[0];
  layout.blockWidth = block[1];
  layout.padTop = static_cast<size_t>(pads[0]);
  layout.padLeft = static_cast<size_t>(pads[2]);
  layout.outHeight = static_cast<size_t>(paddedH / block[0]);
  layout.outWidth = static_cast<size_t>(paddedW / block[1]);
  layout.elementBytes = hal::sizeOfElement(ctx.input(0).type);
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outDims,
                         outputDims(ctx, uint64_t{in.n} * block[0] * block[1], layout.outHeight,
                                    layout.outWidth, in.c, nchw));
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));

  // Pad with 0.0f, or the zero point of quantized tensors.
  std::array<uint8_t, 4> padValue{};
  if (ctx.input(0).type != OperandType::TENSOR_FLOAT32) {
    padValue[0] = static_cast<uint8_t>(ctx.input(0).zeroPoint);
  }
  const size_t rowBytes =
      (nchw ? layout.outWidth : layout.outWidth * layout.channels) * layout.elementBytes;
  const size_t grain = std::max<size_t>(1, data::kCopyGrainBytes / std::max<size_t>(1, rowBytes));
  return makeKernel([layout, padValue, grain](const RunContext& rc) -> Result<void> {
    const void* src = rc.input<void>(0);
    void* dst = rc.output<void>(0);
    rc.parallel().forRange(kernels::spaceToBatchRows(layout), grain, [&](size_t begin, size_t end) {
      kernels::spaceToBatch(layout, src, padValue.data(), dst, begin, end);
    });
    return {};
  });
}

PrepareResult prepareDepthToSpace(PrepareContext& ctx) {
  NNHAL_TRY(checkImageOperation(ctx, 2, 3));
  NNHAL_ASSIGN_OR_RETURN(const size_t bs, readBlockSize(ctx));
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, data::readLayout(ctx, 2));
  const Image in = imageOf(ctx.input(0).dimensions, nchw);
  if (in.c % (bs * bs) != 0) {
    return invalidArgument(ctx.where(0) + " depth " + std::to_string(in.c) +
                           " is not a multiple of the squared block size " +
                           std::to_string(bs * bs));
  }
  const size_t depth = in.c / (bs * bs);
  NNHAL_ASSIGN_OR_RETURN(
      std::vector<uint32_t> outDims,
      outputDims(ctx, in.n, uint64_t{in.h} * bs, uint64_t{in.w} * bs, depth, nchw));
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));

  // Output (n, h * bs + by, w * bs + bx, c) is input (n, h, w, (by * bs + bx) * depth + c).
  const ptrdiff_t sBy = static_cast<ptrdiff_t>(bs * depth) * in.sC;
  const ptrdiff_t sBx = static_cast<ptrdiff_t>(depth) * in.sC;
  std::vector<size_t> dims;
  std::vector<ptrdiff_t> strides;
  if (nchw) {
    dims = {in.n, depth, in.h, bs, in.w, bs};
    strides = {in.sN, in.sC, in.sH, sBy, in.sW, sBx};
  } else {
    dims = {in.n, in.h, bs, in.w, bs, depth};
    strides = {in.sN, in.sH, sBy, in.sW, sBx, in.sC};
  }
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view, data::makeView(ctx, dims, strides, 0));
  return data::makeViewKernel(view);
}

PrepareResult prepareSpaceToDepth(PrepareContext& ctx) {
  NNHAL_TRY(checkImageOperation(ctx, 2, 3));
  NNHAL_ASSIGN_OR_RETURN(const size_t bs, readBlockSize(ctx));
  NNHAL_ASSIGN_OR_RETURN(const bool nchw, data::readLayout(ctx, 2));
  const Image in = imageOf(ctx.input(0).dimensions, nchw);
  if (in.h % bs != 0 || in.w % bs != 0) {
    return invalidArgument(ctx.where(0) + " spatial size " + std::to_string(in.h) + "x" +
                           std::to_string(in.w) + " is not a multiple of the block size " +
                           std::to_string(bs));
  }
  const size_t oh = in.h / bs;
  const size_t ow = in.w / bs;
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outDims,
                         outputDims(ctx, in.n, oh, ow, uint64_t{in.c} * bs * bs, nchw));
  NNHAL_TRY(ctx.setOutputShape(0, std::move(outDims)));

  // Output (n, oh, ow, (by * bs + bx) * c + k) is input (n, oh * bs + by, ow * bs + bx, k).
  const ptrdiff_t sOh = static_cast<ptrdiff_t>(bs) * in.sH;
  const ptrdiff_t sOw = static_cast<ptrdiff_t>(bs) * in.sW;
  std::vector<size_t> dims;
  std::vector<ptrdiff_t> strides;
  if (nchw) {
    dims = {in.n, bs, bs, in.c, oh, ow};
    strides = {in.sN, in.sH, in.sW, in.sC, sOh, sOw};
  } else {
    dims = {in.n, oh, ow, bs, bs, in.c};
    strides = {in.sN, sOh, sOw, in.sH, in.sW, in.sC};
  }
  NNHAL_ASSIGN_OR_RETURN(kernels::StridedView view, data::makeView(ctx, dims, strides, 0));
  return data::makeViewKernel(view);
}

}  // namespace nnhal::engine::ops
