// GROUPED_CONV_2D: validation, output shape, and one CONV_2D GEMM kernel (gemm_kernel.h)
// per group. Each group's kernel is prepared on a context describing that group alone (the
// input and output channel slices, the filter and bias slices); at run time the group's
// input channels are copied into scratch, its kernel runs into a scratch output, and the
// result is copied into the group's output channels. With one group the kernel runs on the
// operands directly. The NCHW layout runs the NHWC kernel between transposes.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/ops/conv_common.h"
#include "engine/ops/gemm_kernel.h"
#include "engine/ops/ops.h"
#include "hal/operand_utils.h"
#include "kernels/channel_slice.h"
#include "kernels/conv.h"

namespace nnhal::engine::ops {
namespace {

using spatial::ScratchLayout;

// Everything a run needs; groupKernels[g] computes group g.
struct GroupedState {
  std::vector<std::shared_ptr<const Kernel>> groupKernels;
  size_t pixelsIn = 0, pixelsOut = 0;  // batches * height * width of input / output
  size_t depthIn = 0, depthOut = 0, groupIn = 0, groupOut = 0;
  size_t elementBytes = 0;      // input / output element
  size_t filterGroupBytes = 0;  // bytes of one group's filter slice
  size_t inAt = 0, outAt = 0, innerAt = 0;
};

// The operand description of one group's slice of `info` (a tensor whose dimension
// `axis` is split into `groups` parts); constant bytes point into the slice.
OperandInfo sliceOperand(const OperandInfo& info, size_t axis, uint32_t groups, uint32_t g,
                         size_t elementBytes) {
  OperandInfo slice = info;
  slice.dimensions[axis] = info.dimensions[axis] / groups;
  if (info.isConstant()) {
    size_t groupBytes = elementBytes;
    for (uint32_t d : slice.dimensions) groupBytes *= d;
    // Only slicing along axis 0 keeps a slice contiguous.
    slice.constantData = info.constantData + g * groupBytes;
    slice.constantLength = groupBytes;
  }
  return slice;
}

}  // namespace

PrepareResult prepareGroupedConv2D(PrepareContext& ctx) {
  using namespace spatial;
  if (ctx.inputCount() != 9 && ctx.inputCount() != 12) {
    return invalidArgument("GROUPED_CONV_2D takes 9 or 12 inputs, got " +
                           std::to_string(ctx.inputCount()));
  }
  NNHAL_TRY(checkConvOperands(ctx));
  NNHAL_ASSIGN_OR_RETURN(
      WindowParams w, parseWindow(ctx, WindowLayout{.first = 3, .extras = 1, .dilation = false}));
  const int32_t groups = w.extras[0];
  const size_t groupsInput = w.implicitPadding ? 6 : 9;
  if (groups <= 0) {
    return invalidArgument(ctx.where(groupsInput) + " (numGroups) must be > 0, got " +
                           std::to_string(groups));
  }
  if (w.nchw) return prepareNchwAsNhwc(ctx, w.layoutInput, &prepareGroupedConv2D);

  const OperandType type = ctx.input(0).type;
  const bool quant = isQuant8(type);
  const auto& in = ctx.input(0).dimensions;
  const auto& filter = ctx.input(1).dimensions;
  const auto numGroups = static_cast<uint32_t>(groups);
  NNHAL_TRY(checkNonEmptyImage(ctx));
  if (filter[0] == 0 || filter[1] == 0 || filter[2] == 0 || filter[3] == 0) {
    return invalidArgument(ctx.where(1) + " (filter) must have non-zero dimensions");
  }
  if (uint64_t{filter[3]} * numGroups != in[3]) {
    return invalidArgument(ctx.where(1) + " (filter) depth " + std::to_string(filter[3]) +
                           " times numGroups " + std::to_string(numGroups) +
                           " does not match the input depth " + std::to_string(in[3]));
  }
  if (filter[0] % numGroups != 0) {
    return invalidArgument(ctx.where(1) + " (filter) output depth " + std::to_string(filter[0]) +
                           " is not a multiple of numGroups " + std::to_string(numGroups));
  }
  const bool hasBias = ctx.hasInput(2);
  NNHAL_TRY(checkBiasLength(ctx, filter[0]));
  NNHAL_ASSIGN_OR_RETURN(const kernels::WindowGeometry window,
                         resolveOutputWindow(ctx, w, filter[1], filter[2], filter[0]));

  const size_t elementBytes = hal::sizeOfElement(type);
  const size_t filterBytes = quant ? 1 : sizeof(float);
  const size_t filterCount = size_t{filter[0]} * filter[1] * filter[2] * filter[3];
  NNHAL_TRY(checkConstantBytes(ctx, 1, filterCount * filterBytes));
  if (hasBias) NNHAL_TRY(checkConstantBytes(ctx, 2, size_t{filter[0]} * 4));
  std::vector<kernels::QuantizedMultiplier> multipliers;
  if (quant) {
    NNHAL_ASSIGN_OR_RETURN(multipliers, convMultipliers(ctx, 1, 2, 0, filter[0]));
  }

  // One group's convolution: filter[3] input and filter[0] / numGroups output channels.
  kernels::ConvGeometry g{window};
  g.outDepth = filter[0] / numGroups;
  g.inDepth = filter[3];

  auto s = std::make_shared<GroupedState>();
  s->pixelsIn = size_t{in[0]} * in[1] * in[2];
  s->pixelsOut = size_t{in[0]} * g.outHeight * g.outWidth;
  s->depthIn = in[3];
  s->depthOut = filter[0];
  s->groupIn = g.inDepth;
  s->groupOut = g.outDepth;
  s->elementBytes = elementBytes;
  s->filterGroupBytes = filterCount / numGroups * filterBytes;
  size_t innerScratch = 0;
  for (uint32_t group = 0; group < numGroups; ++group) {
    std::vector<OperandInfo> inputs;
    OperandInfo input = ctx.input(0);
    input.dimensions[3] = g.inDepth;
    input.constantData = nullptr;  // the group's slice is copied at run time
    input.constantLength = 0;
    inputs.push_back(std::move(input));
    inputs.push_back(sliceOperand(ctx.input(1), 0, numGroups, group, filterBytes));
    inputs.push_back(hasBias ? sliceOperand(ctx.input(2), 0, numGroups, group, 4) : ctx.input(2));
    std::vector<OperandInfo> outputs{ctx.output(0)};
    outputs[0].dimensions = {in[0], g.outHeight, g.outWidth, g.outDepth};
    PrepareContext inner(ctx.type(), std::move(inputs), std::move(outputs), ctx.relaxedFloat32());
    std::unique_ptr<Kernel> kernel;
    if (quant) {
      const std::vector<kernels::QuantizedMultiplier> groupMultipliers(
          multipliers.begin() + group * g.outDepth, multipliers.begin() + (group + 1) * g.outDepth);
      NNHAL_ASSIGN_OR_RETURN(
          kernel, spatial::makeQuantGemmKernel(inner, g, groupMultipliers, w.activation));
    } else {
      NNHAL_ASSIGN_OR_RETURN(kernel, spatial::makeFloatGemmKernel(inner, g, w.activation));
    }
    innerScratch = std::max(innerScratch, inner.scratchBytes());
    s->groupKernels.push_back(std::move(kernel));
  }
  ScratchLayout layout;
  if (numGroups > 1) {
    s->inAt = layout.add(s->pixelsIn * s->groupIn * elementBytes);
    s->outAt = layout.add(s->pixelsOut * s->groupOut * elementBytes);
  }
  s->innerAt = layout.add(innerScratch);
  ctx.requestScratch(layout.total());

  return makeKernel([s = std::shared_ptr<const GroupedState>(std::move(s))](
                        const RunContext& rc) -> Result<void> {
    const GroupedState& st = *s;
    uint8_t* base = ScratchLayout::base(rc.scratch());
    std::vector<const void*> inputs(3);
    const auto* filter = rc.input<uint8_t>(1);
    const auto* bias = rc.input<uint8_t>(2);
    if (st.groupKernels.size() == 1) {
      inputs = {rc.input<void>(0), filter, bias};
      const std::vector<void*> outputs{rc.output<void>(0)};
      return st.groupKernels[0]->run(RunContext(inputs, outputs, base + st.innerAt, rc.parallel()));
    }
    const std::vector<void*> outputs{base + st.outAt};
    for (size_t group = 0; group < st.groupKernels.size(); ++group) {
      kernels::extractChannels(rc.input<uint8_t>(0), st.pixelsIn, st.depthIn, group * st.groupIn,
                               st.groupIn, st.elementBytes, base + st.inAt);
      inputs[0] = base + st.inAt;
      inputs[1] = filter != nullptr ? filter + group * st.filterGroupBytes : nullptr;
      inputs[2] = bias != nullptr ? bias + group * st.groupOut * 4 : nullptr;
      NNHAL_TRY(st.groupKernels[group]->run(
          RunContext(inputs, outputs, base + st.innerAt, rc.parallel())));
      kernels::insertChannels(base + st.outAt, st.pixelsOut, st.depthOut, group * st.groupOut,
                              st.groupOut, st.elementBytes, rc.output<uint8_t>(0));
    }
    return {};
  });
}

}  // namespace nnhal::engine::ops
