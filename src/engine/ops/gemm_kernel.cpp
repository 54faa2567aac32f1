#include "engine/ops/gemm_kernel.h"

#include <algorithm>
#include <cstring>
#include <span>
#include <string>
#include <utility>

#include "engine/ops/conv_common.h"
#include "engine/ops/shape_utils.h"
#include "kernels/gemm.h"
#include "kernels/value_range.h"

namespace nnhal::engine::ops::spatial {
namespace {

using kernels::ConvGeometry;
using kernels::gemmGroups;
using kernels::kGemmGroup;
using kernels::kGemmRows;

// Below this many multiply-adds an operation runs as one task (threads cost more).
constexpr size_t kSerialWork = 1 << 17;

// Splits rows x column groups into tiles.
struct GemmPlan {
  size_t rows = 0, groups = 0;
  size_t rowsPerTask = 1, groupsPerTask = 1;
  size_t rowTasks = 1, groupTasks = 1;

  size_t tasks() const { return rowTasks * groupTasks; }
  std::pair<size_t, size_t> rowsOf(size_t t) const {
    const size_t r = t / groupTasks;
    return {std::min(rows, r * rowsPerTask), std::min(rows, (r + 1) * rowsPerTask)};
  }
  std::pair<size_t, size_t> groupsOf(size_t t) const {
    const size_t q = t % groupTasks;
    return {std::min(groups, q * groupsPerTask), std::min(groups, (q + 1) * groupsPerTask)};
  }
};

size_t ceilDiv(size_t a, size_t b) { return (a + b - 1) / b; }

GemmPlan planGemm(const ConvGeometry& g) {
  GemmPlan p;
  p.rows = g.outputRows();
  p.groups = gemmGroups(g.outDepth);
  p.rowsPerTask = std::max<size_t>(p.rows, 1);
  p.groupsPerTask = std::max<size_t>(p.groups, 1);
  if (p.rows * g.reduction() * g.outDepth <= kSerialWork) return p;
  const size_t rowBlocks = ceilDiv(p.rows, kGemmRows);
  size_t rowTasks = std::min(rowBlocks, kMaxTasks);
  size_t groupTasks = std::min(p.groups, std::max<size_t>(1, kMaxTasks / rowTasks));
  p.rowsPerTask = ceilDiv(ceilDiv(p.rows, rowTasks), kGemmRows) * kGemmRows;
  p.rowTasks = ceilDiv(p.rows, p.rowsPerTask);
  p.groupsPerTask = ceilDiv(p.groups, groupTasks);
  p.groupTasks = ceilDiv(p.groups, p.groupsPerTask);
  return p;
}

// Compilation caching: the state a GEMM kernel saves (PrepareContext::saveState) is its
// packed constant weights, for the quantized kernel followed by the column sums
// (gemmGroups(n) * 16 int32). Packed weights of any value are safe to compute with; column
// sums are accepted only within the range real int8 weights give ([-128 k, 127 k]), so that
// every int32 sum the kernel forms stays within what a real model can produce.

/// Checks restored quantized state: column sums of the n real columns within [-128 k, 127 k].
bool quantStateValid(const int32_t* sums, size_t n, size_t k) {
  const auto [lo, hi] = kernels::minMaxWithZero(sums, n);
  return lo >= -128 * static_cast<int64_t>(k) && hi <= 127 * static_cast<int64_t>(k);
}

struct QuantState {
  ConvGeometry geometry;
  GemmPlan plan;
  kernels::QuantGemmOffsets offsets;
  kernels::QuantGemmParams params;  // pointers into this state (or replaced at run time)
  AlignedBytes packed;              // empty when the packed weights were restored
  const int32_t* sums = nullptr;    // column sums: columnSums.data() or restored state
  std::vector<int32_t> columnSums, columnOffset, multiplier, shift;
  bool weightsConstant = false;
  bool biasConstant = false;
  bool hasBias = false;
  // Scratch regions.
  size_t packedAt = 0, sumsAt = 0, offsetAt = 0, slotsAt = 0, slotBytes = 0;
};

struct FloatState {
  ConvGeometry geometry;
  GemmPlan plan;
  kernels::FloatGemmParams params;
  AlignedBytes packed;
  std::vector<float> bias;
  bool weightsConstant = false;
  bool biasConstant = false;
  bool hasBias = false;
  size_t packedAt = 0, biasAt = 0, slotsAt = 0, slotBytes = 0;
};

}  // namespace

Result<std::unique_ptr<Kernel>> makeQuantGemmKernel(
    PrepareContext& ctx, const ConvGeometry& g,
    const std::vector<kernels::QuantizedMultiplier>& multipliers, FusedActivationFunc activation) {
  auto s = std::make_shared<QuantState>();
  s->geometry = g;
  s->plan = planGemm(g);
  const OperandInfo& in = ctx.input(0);
  const OperandInfo& w = ctx.input(1);
  const OperandInfo& out = ctx.output(0);
  const size_t n = g.outDepth, k = g.reduction();
  const size_t columns = gemmGroups(n) * kGemmGroup;
  const bool perChannel = w.type == OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL;
  s->offsets = kernels::quantGemmOffsets(in.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED,
                                         in.zeroPoint, w.type != OperandType::TENSOR_QUANT8_ASYMM,
                                         perChannel ? 0 : w.zeroPoint);
  s->hasBias = ctx.hasInput(2);
  s->weightsConstant = w.isConstant();
  s->biasConstant = !s->hasBias || ctx.input(2).isConstant();
  NNHAL_TRY(checkConstantBytes(ctx, 1, n * k));
  if (s->hasBias) NNHAL_TRY(checkConstantBytes(ctx, 2, n * sizeof(int32_t)));
  if (ctx.checksOnly()) return checkedKernel();  // no packing for a check

  s->multiplier.assign(columns, 0);
  s->shift.assign(columns, 0);
  bool anyLeftShift = false;
  for (size_t c = 0; c < n; ++c) {
    s->multiplier[c] = multipliers[c].multiplier;
    s->shift[c] = multipliers[c].shift;
    anyLeftShift |= multipliers[c].shift > 0;
  }
  const auto [lo, hi] = quantizedActivationRange(out, activation);

  kernels::QuantGemmParams& p = s->params;
  p.k = k;
  p.n = n;
  p.multiplier = s->multiplier.data();
  p.shift = s->shift.data();
  p.anyLeftShift = anyLeftShift;
  p.rowSumFactor = -s->offsets.zwPrime;
  p.outputZeroPoint = out.zeroPoint;
  p.outputMin = lo;
  p.outputMax = hi;
  if (s->weightsConstant) {
    const size_t packedBytes = kernels::quantPackedWeightsBytes(n, k);
    const size_t stateBytes = packedBytes + columns * sizeof(int32_t);
    const std::span<const uint8_t> restored = ctx.restoredState(stateBytes);
    const auto* restoredSums =
        restored.empty() ? nullptr
                         : reinterpret_cast<const int32_t*>(restored.data() + packedBytes);
    if (restoredSums != nullptr && quantStateValid(restoredSums, n, k)) {
      ctx.acceptRestoredState();
      p.packedWeights = reinterpret_cast<const int8_t*>(restored.data());
      s->sums = restoredSums;
    } else {
      s->packed = AlignedBytes(packedBytes);
      s->columnSums.assign(columns, 0);
      // In steps, letting more urgent work run between them (PrepareContext::yieldPoint).
      const size_t groups = kernels::gemmGroups(n);
      const size_t step = kernels::quantPackGroupsPerStep(k);
      for (size_t g = 0; g < groups; g += step) {
        if (g > 0) ctx.yieldPoint();
        kernels::packQuantWeightGroups(w.constantData, n, k, s->offsets.wMask,
                                       s->packed.as<int8_t>(), s->columnSums.data(), g,
                                       std::min(groups, g + step));
      }
      p.packedWeights = s->packed.as<int8_t>();
      s->sums = s->columnSums.data();
      if (ctx.savesState()) {
        std::vector<uint8_t> state(stateBytes);
        std::memcpy(state.data(), s->packed.as<uint8_t>(), packedBytes);
        std::memcpy(state.data() + packedBytes, s->columnSums.data(), columns * sizeof(int32_t));
        ctx.saveState(std::move(state), {1});
      }
    }
    if (s->biasConstant) {
      std::vector<int32_t> bias;
      if (s->hasBias) {
        bias.resize(n);
        std::memcpy(bias.data(), ctx.input(2).constantData, n * sizeof(int32_t));
      }
      s->columnOffset.assign(columns, 0);
      kernels::quantColumnOffsets(s->hasBias ? bias.data() : nullptr, s->sums, n, k,
                                  s->offsets.zaPrime, s->offsets.zwPrime, s->columnOffset.data());
      p.columnOffset = s->columnOffset.data();
    }
  }

  ScratchLayout layout;
  if (!s->weightsConstant) {
    s->packedAt = layout.add(kernels::quantPackedWeightsBytes(n, k));
    s->sumsAt = layout.add(columns * sizeof(int32_t));
  }
  if (!s->weightsConstant || !s->biasConstant) {
    s->offsetAt = layout.add(columns * sizeof(int32_t));
  }
  const size_t perSlot = kernels::convQuantScratchBytes(g, p.rowSumFactor, s->offsets.aMask);
  s->slotBytes = (perSlot + 63) / 64 * 64;
  s->slotsAt = layout.add(s->slotBytes * s->plan.tasks());
  ctx.requestScratch(layout.total());

  return makeKernel(
      [s = std::shared_ptr<const QuantState>(std::move(s))](const RunContext& rc) -> Result<void> {
        const QuantState& st = *s;
        if (st.plan.rows == 0) return {};
        uint8_t* scratch = ScratchLayout::base(rc.scratch());
        const size_t n = st.geometry.outDepth, k = st.geometry.reduction();
        kernels::QuantGemmParams p = st.params;
        const int32_t* sums = st.sums;
        if (!st.weightsConstant) {
          auto* packed = reinterpret_cast<int8_t*>(scratch + st.packedAt);
          auto* runSums = reinterpret_cast<int32_t*>(scratch + st.sumsAt);
          kernels::packQuantWeights(rc.input<uint8_t>(1), n, k, st.offsets.wMask, packed, runSums);
          p.packedWeights = packed;
          sums = runSums;
        }
        if (!st.weightsConstant || !st.biasConstant) {
          auto* offsets = reinterpret_cast<int32_t*>(scratch + st.offsetAt);
          kernels::quantColumnOffsets(st.hasBias ? rc.input<int32_t>(2) : nullptr, sums, n, k,
                                      st.offsets.zaPrime, st.offsets.zwPrime, offsets);
          p.columnOffset = offsets;
        }
        const uint8_t* input = rc.input<uint8_t>(0);
        uint8_t* output = rc.output<uint8_t>(0);
        rc.parallel().forRange(st.plan.tasks(), 1, [&](size_t begin, size_t end) {
          for (size_t t = begin; t < end; ++t) {
            const auto [r0, r1] = st.plan.rowsOf(t);
            const auto [g0, g1] = st.plan.groupsOf(t);
            if (r0 >= r1 || g0 >= g1) continue;
            kernels::convQuant(st.geometry, input, st.offsets.aMask, st.offsets.padByte(), p, r0,
                               r1, g0, g1, scratch + st.slotsAt + t * st.slotBytes, output);
          }
        });
        return {};
      });
}

Result<std::unique_ptr<Kernel>> makeFloatGemmKernel(PrepareContext& ctx, const ConvGeometry& g,
                                                    FusedActivationFunc activation) {
  auto s = std::make_shared<FloatState>();
  s->geometry = g;
  s->plan = planGemm(g);
  const OperandInfo& w = ctx.input(1);
  const size_t n = g.outDepth, k = g.reduction();
  const size_t columns = gemmGroups(n) * kGemmGroup;
  s->hasBias = ctx.hasInput(2);
  s->weightsConstant = w.isConstant();
  s->biasConstant = !s->hasBias || ctx.input(2).isConstant();
  NNHAL_TRY(checkConstantBytes(ctx, 1, n * k * sizeof(float)));
  if (s->hasBias) NNHAL_TRY(checkConstantBytes(ctx, 2, n * sizeof(float)));
  if (ctx.checksOnly()) return checkedKernel();  // no packing for a check

  kernels::FloatGemmParams& p = s->params;
  p.k = k;
  p.n = n;
  kernels::activationRangeFloat(activation, &p.outputMin, &p.outputMax);
  if (s->weightsConstant) {
    const size_t packedBytes = kernels::floatPackedWeightsCount(n, k) * sizeof(float);
    const std::span<const uint8_t> restored = ctx.restoredState(packedBytes);
    if (!restored.empty()) {  // any float bits are safe to compute with
      ctx.acceptRestoredState();
      p.packedWeights = reinterpret_cast<const float*>(restored.data());
    } else {
      s->packed = AlignedBytes(packedBytes);
      std::vector<float> weights(n * k);
      std::memcpy(weights.data(), w.constantData, n * k * sizeof(float));
      kernels::packFloatWeights(weights.data(), n, k, s->packed.as<float>());
      p.packedWeights = s->packed.as<float>();
      if (ctx.savesState()) {
        const auto* bytes = s->packed.as<uint8_t>();
        ctx.saveState(std::vector<uint8_t>(bytes, bytes + packedBytes), {1});
      }
    }
  }
  if (s->biasConstant) {
    s->bias.assign(columns, 0.0f);
    if (s->hasBias) std::memcpy(s->bias.data(), ctx.input(2).constantData, n * sizeof(float));
    p.bias = s->bias.data();
  }
  ScratchLayout layout;
  if (!s->weightsConstant) {
    s->packedAt = layout.add(kernels::floatPackedWeightsCount(n, k) * sizeof(float));
  }
  if (!s->biasConstant) s->biasAt = layout.add(columns * sizeof(float));
  s->slotBytes = (kernels::convFloatScratchBytes(g) + 63) / 64 * 64;
  s->slotsAt = layout.add(s->slotBytes * s->plan.tasks());
  ctx.requestScratch(layout.total());

  return makeKernel(
      [s = std::shared_ptr<const FloatState>(std::move(s))](const RunContext& rc) -> Result<void> {
        const FloatState& st = *s;
        if (st.plan.rows == 0) return {};
        uint8_t* scratch = ScratchLayout::base(rc.scratch());
        const size_t n = st.geometry.outDepth, k = st.geometry.reduction();
        kernels::FloatGemmParams p = st.params;
        if (!st.weightsConstant) {
          auto* packed = reinterpret_cast<float*>(scratch + st.packedAt);
          kernels::packFloatWeights(rc.input<float>(1), n, k, packed);
          p.packedWeights = packed;
        }
        if (!st.biasConstant) {
          auto* bias = reinterpret_cast<float*>(scratch + st.biasAt);
          std::fill(bias, bias + gemmGroups(n) * kGemmGroup, 0.0f);
          std::memcpy(bias, rc.input<float>(2), n * sizeof(float));
          p.bias = bias;
        }
        const float* input = rc.input<float>(0);
        float* output = rc.output<float>(0);
        rc.parallel().forRange(st.plan.tasks(), 1, [&](size_t begin, size_t end) {
          for (size_t t = begin; t < end; ++t) {
            const auto [r0, r1] = st.plan.rowsOf(t);
            const auto [g0, g1] = st.plan.groupsOf(t);
            if (r0 >= r1 || g0 >= g1) continue;
            kernels::convFloat(st.geometry, input, p, r0, r1, g0, g1,
                               scratch + st.slotsAt + t * st.slotBytes, output);
          }
        });
        return {};
      });
}

}  // namespace nnhal::engine::ops::spatial
