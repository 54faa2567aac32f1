// RNN, UNIDIRECTIONAL_SEQUENCE_RNN and BIDIRECTIONAL_SEQUENCE_RNN: validation, output shapes
// and kernels over kernels::rnnStep.
//
// RNN inputs: 0 input [batch, inputSize], 1 weights [units, inputSize], 2 recurrent weights
// [units, units], 3 bias [units], 4 hidden state [batch, units], 5 activation. Outputs: 0
// hidden state (out), 1 output, both [batch, units].
//
// UNIDIRECTIONAL_SEQUENCE_RNN inputs: 0 input [maxTime, batch, inputSize] (time-major) or
// [batch, maxTime, inputSize], 1..4 as RNN, 5 activation, 6 INT32 timeMajor. Outputs: 0 the
// output sequence [.., .., units], optional 1 (HAL 1.3) the final hidden state [batch, units].
//
// BIDIRECTIONAL_SEQUENCE_RNN inputs: 0 input, 1..4 forward weights / recurrent / bias /
// hidden state, 5..8 the same backward, 9 auxiliary input, 10 forward and 11 backward
// auxiliary weights (all optional), 12 activation, 13 BOOL timeMajor, 14 BOOL mergeOutputs.
// With an auxiliary input and weights (cross-linking) both cells also see aux * auxWeights';
// with an auxiliary input alone (parallel linking, HAL 1.3) the backward cell reads the
// auxiliary input instead of input 0. Outputs: forward output (with the backward output
// concatenated on the last axis when merged), backward output unless merged, then optionally
// the final forward and backward hidden states (HAL 1.3).
#include <algorithm>
#include <optional>
#include <string>

#include "engine/ops/ops.h"
#include "engine/ops/sequence_common.h"
#include "kernels/recurrent.h"

namespace nnhal::engine::ops {
namespace {

using kernels::RecurrentActivation;
using seq::requireRank;
using seq::requireTensor;
using seq::requireType;
constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;

/// Weights of one RNN cell: inputs weights, recurrent, bias (indices), and its sizes.
struct CellInputs {
  size_t weights;
  size_t recurrent;
  size_t bias;
  size_t hidden;
};

/// Checks one cell's tensors for `inputSize` and `batch`; returns the number of units.
Result<uint32_t> checkCell(const PrepareContext& ctx, const CellInputs& c, uint32_t inputSize,
                           uint32_t batch, const char* prefix) {
  const std::string p(prefix);
  NNHAL_TRY(requireType(ctx, c.weights, kFloat, p + "weights"));
  NNHAL_TRY(requireRank(ctx, c.weights, 2, p + "weights"));
  const uint32_t units = ctx.input(c.weights).dimensions[0];
  NNHAL_TRY(requireTensor(ctx, c.weights, kFloat, {units, inputSize}, p + "weights"));
  NNHAL_TRY(requireTensor(ctx, c.recurrent, kFloat, {units, units}, p + "recurrent weights"));
  NNHAL_TRY(requireTensor(ctx, c.bias, kFloat, {units}, p + "bias"));
  NNHAL_TRY(requireTensor(ctx, c.hidden, kFloat, {batch, units}, p + "hidden state"));
  return units;
}

// What one cell's steps share: its weights, recurrent weights and bias at inputs `first` to
// first + 2 (and its aux weights at input auxWeights, when present), its hidden state updated
// in place at `hidden`, rows of inputSize, auxSize and outputWidth values.
struct CellRun {
  size_t first = 0;
  std::optional<size_t> auxWeights;
  size_t inputSize = 0, auxSize = 0, units = 0, outputWidth = 0;
};

kernels::RnnStep cellStep(const RunContext& rc, const seq::SequenceRows& rows, const CellRun& cell,
                          float* hidden, RecurrentActivation activation) {
  kernels::RnnStep s;
  s.inputSize = cell.inputSize;
  s.inputStride = rows.batchStride() * cell.inputSize;
  s.auxSize = cell.auxSize;
  s.auxStride = rows.batchStride() * cell.auxSize;
  s.weights = rc.input<float>(cell.first);
  s.recurrentWeights = rc.input<float>(cell.first + 1);
  s.bias = rc.input<float>(cell.first + 2);
  s.auxWeights = cell.auxWeights ? rc.input<float>(*cell.auxWeights) : nullptr;
  s.hiddenIn = hidden;
  s.hiddenOut = hidden;
  s.outputStride = rows.batchStride() * cell.outputWidth;
  s.batch = rows.batch;
  s.units = cell.units;
  s.activation = activation;
  return s;
}

// Runs `step` (cellStep's) once per time step of the sequence, first to last or (backward)
// last to first; each step reads its rows of `input` and, when the cell has aux weights, of
// `aux`, and writes its rows of `output`, outputWidth values per row.
void runSequence(kernels::RnnStep& step, const seq::SequenceRows& rows, bool backward,
                 const float* input, const float* aux, float* output, size_t outputWidth) {
  for (size_t k = 0; k < rows.maxTime; ++k) {
    const size_t row = rows.row(backward ? rows.maxTime - 1 - k : k, 0);
    step.input = input + row * step.inputSize;
    step.aux = step.auxWeights != nullptr ? aux + row * step.auxSize : nullptr;
    step.output = output + row * outputWidth;
    kernels::rnnStep(step);
  }
}

}  // namespace

PrepareResult prepareRnn(PrepareContext& ctx) {
  NNHAL_TRY(seq::checkInputCount(ctx, {6}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {2}));
  NNHAL_TRY(requireType(ctx, 0, kFloat, "input"));
  NNHAL_TRY(requireRank(ctx, 0, 2, "input"));
  const uint32_t batch = ctx.input(0).dimensions[0];
  const uint32_t inputSize = ctx.input(0).dimensions[1];
  NNHAL_ASSIGN_OR_RETURN(const uint32_t units, checkCell(ctx, {1, 2, 3, 4}, inputSize, batch, ""));
  NNHAL_ASSIGN_OR_RETURN(const RecurrentActivation activation, seq::readActivation(ctx, 5));
  NNHAL_TRY(seq::requireOutputType(ctx, 0, kFloat));
  NNHAL_TRY(seq::requireOutputType(ctx, 1, kFloat));
  NNHAL_TRY(ctx.setOutputShape(0, {batch, units}));
  NNHAL_TRY(ctx.setOutputShape(1, {batch, units}));
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    kernels::RnnStep s;
    s.input = rc.input<float>(0);
    s.inputStride = inputSize;
    s.inputSize = inputSize;
    s.weights = rc.input<float>(1);
    s.recurrentWeights = rc.input<float>(2);
    s.bias = rc.input<float>(3);
    s.hiddenIn = rc.input<float>(4);
    s.output = rc.output<float>(1);
    s.outputStride = units;
    s.hiddenOut = rc.output<float>(0);
    s.batch = batch;
    s.units = units;
    s.activation = activation;
    kernels::rnnStep(s);
    return {};
  });
}

PrepareResult prepareUnidirectionalSequenceRnn(PrepareContext& ctx) {
  NNHAL_TRY(seq::checkInputCount(ctx, {7}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {1, 2}));
  NNHAL_TRY(requireType(ctx, 0, kFloat, "input"));
  NNHAL_TRY(requireRank(ctx, 0, 3, "input"));
  NNHAL_ASSIGN_OR_RETURN(const RecurrentActivation activation, seq::readActivation(ctx, 5));
  NNHAL_ASSIGN_OR_RETURN(const int32_t timeMajor, seq::readInt32(ctx, 6, "time major"));
  if (timeMajor != 0 && timeMajor != 1) {
    return invalidArgument(seq::describe(ctx, 6, "time major") + " must be 0 or 1, got " +
                           std::to_string(timeMajor));
  }
  const auto& dims = ctx.input(0).dimensions;
  const seq::SequenceRows rows{timeMajor == 1, timeMajor ? dims[0] : dims[1],
                               timeMajor ? dims[1] : dims[0]};
  const uint32_t inputSize = dims[2];
  const auto batch = static_cast<uint32_t>(rows.batch);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t units, checkCell(ctx, {1, 2, 3, 4}, inputSize, batch, ""));
  for (size_t o = 0; o < ctx.outputCount(); ++o) NNHAL_TRY(seq::requireOutputType(ctx, o, kFloat));
  NNHAL_TRY(ctx.setOutputShape(0, {dims[0], dims[1], units}));
  const bool stateOutput = ctx.outputCount() == 2;
  if (stateOutput) NNHAL_TRY(ctx.setOutputShape(1, {batch, units}));

  seq::ScratchPlan plan;
  const size_t hiddenOffset = plan.reserve<float>(size_t{batch} * units);
  ctx.requestScratch(plan.bytes());
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    float* hidden = seq::scratchAt<float>(rc, hiddenOffset);
    const float* hiddenIn = rc.input<float>(4);
    std::copy(hiddenIn, hiddenIn + rows.batch * units, hidden);
    const float* input = rc.input<float>(0);
    float* output = rc.output<float>(0);
    kernels::RnnStep s = cellStep(rc, rows,
                                  {.first = 1,
                                   .auxWeights = std::nullopt,
                                   .inputSize = inputSize,
                                   .auxSize = 0,
                                   .units = units,
                                   .outputWidth = units},
                                  hidden, activation);
    runSequence(s, rows, false, input, nullptr, output, units);
    if (stateOutput) std::copy(hidden, hidden + rows.batch * units, rc.output<float>(1));
    return {};
  });
}

PrepareResult prepareBidirectionalSequenceRnn(PrepareContext& ctx) {
  NNHAL_TRY(seq::checkInputCount(ctx, {15}));
  NNHAL_TRY(requireType(ctx, 0, kFloat, "input"));
  NNHAL_TRY(requireRank(ctx, 0, 3, "input"));
  NNHAL_ASSIGN_OR_RETURN(const RecurrentActivation activation, seq::readActivation(ctx, 12));
  NNHAL_ASSIGN_OR_RETURN(const bool timeMajor, seq::readBool(ctx, 13, "time major"));
  NNHAL_ASSIGN_OR_RETURN(const bool merge, seq::readBool(ctx, 14, "merge outputs"));
  if (merge) {
    NNHAL_TRY(seq::checkOutputCount(ctx, {1, 3}));
  } else {
    NNHAL_TRY(seq::checkOutputCount(ctx, {2, 4}));
  }
  const auto& dims = ctx.input(0).dimensions;
  const seq::SequenceRows rows{timeMajor, timeMajor ? dims[0] : dims[1],
                               timeMajor ? dims[1] : dims[0]};
  const uint32_t inputSize = dims[2];
  const auto batch = static_cast<uint32_t>(rows.batch);

  // Auxiliary input: none, parallel linking (input only) or cross-linking (with weights).
  NNHAL_ASSIGN_OR_RETURN(const bool hasAux, seq::optionalPresent(ctx, 9));
  NNHAL_ASSIGN_OR_RETURN(const bool hasFwAuxWeights, seq::optionalPresent(ctx, 10));
  NNHAL_ASSIGN_OR_RETURN(const bool hasBwAuxWeights, seq::optionalPresent(ctx, 11));
  const bool cross = hasAux && hasFwAuxWeights && hasBwAuxWeights;
  const bool parallel = hasAux && !hasFwAuxWeights && !hasBwAuxWeights;
  if (!cross && !parallel && (hasAux || hasFwAuxWeights || hasBwAuxWeights)) {
    return invalidArgument(
        "BIDIRECTIONAL_SEQUENCE_RNN inputs 9..11 (auxiliary input and weights) must be all "
        "present, all omitted, or only input 9 present (parallel linking)");
  }
  uint32_t auxSize = 0;
  if (hasAux) {
    NNHAL_TRY(requireType(ctx, 9, kFloat, "auxiliary input"));
    NNHAL_TRY(requireRank(ctx, 9, 3, "auxiliary input"));
    const auto& auxDims = ctx.input(9).dimensions;
    auxSize = auxDims[2];
    NNHAL_TRY(seq::requireShape(ctx, 9, {dims[0], dims[1], auxSize}, "auxiliary input"));
  }
  const uint32_t bwInputSize = parallel ? auxSize : inputSize;
  NNHAL_ASSIGN_OR_RETURN(const uint32_t fwUnits,
                         checkCell(ctx, {1, 2, 3, 4}, inputSize, batch, "forward "));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t bwUnits,
                         checkCell(ctx, {5, 6, 7, 8}, bwInputSize, batch, "backward "));
  if (cross) {
    NNHAL_TRY(requireTensor(ctx, 10, kFloat, {fwUnits, auxSize}, "forward auxiliary weights"));
    NNHAL_TRY(requireTensor(ctx, 11, kFloat, {bwUnits, auxSize}, "backward auxiliary weights"));
  }

  for (size_t o = 0; o < ctx.outputCount(); ++o) NNHAL_TRY(seq::requireOutputType(ctx, o, kFloat));
  const uint32_t fwWidth = merge ? fwUnits + bwUnits : fwUnits;
  NNHAL_TRY(ctx.setOutputShape(0, {dims[0], dims[1], fwWidth}));
  size_t next = 1;
  if (!merge) NNHAL_TRY(ctx.setOutputShape(next++, {dims[0], dims[1], bwUnits}));
  const bool stateOutputs = ctx.outputCount() > next;
  const size_t fwStateOutput = next;
  if (stateOutputs) {
    NNHAL_TRY(ctx.setOutputShape(next, {batch, fwUnits}));
    NNHAL_TRY(ctx.setOutputShape(next + 1, {batch, bwUnits}));
  }

  seq::ScratchPlan plan;
  const size_t fwHiddenOffset = plan.reserve<float>(size_t{batch} * fwUnits);
  const size_t bwHiddenOffset = plan.reserve<float>(size_t{batch} * bwUnits);
  ctx.requestScratch(plan.bytes());
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    const float* input = rc.input<float>(0);
    const float* aux = hasAux ? rc.input<float>(9) : nullptr;
    float* fwHidden = seq::scratchAt<float>(rc, fwHiddenOffset);
    float* bwHidden = seq::scratchAt<float>(rc, bwHiddenOffset);
    std::copy(rc.input<float>(4), rc.input<float>(4) + rows.batch * fwUnits, fwHidden);
    std::copy(rc.input<float>(8), rc.input<float>(8) + rows.batch * bwUnits, bwHidden);

    const auto auxWeights = [&](size_t index) {
      return cross ? std::optional<size_t>(index) : std::nullopt;
    };
    kernels::RnnStep fw = cellStep(rc, rows,
                                   {.first = 1,
                                    .auxWeights = auxWeights(10),
                                    .inputSize = inputSize,
                                    .auxSize = auxSize,
                                    .units = fwUnits,
                                    .outputWidth = fwWidth},
                                   fwHidden, activation);
    float* fwOutput = rc.output<float>(0);
    runSequence(fw, rows, false, input, aux, fwOutput, fwWidth);

    const float* bwInput = parallel ? aux : input;
    const size_t bwWidth = merge ? fwWidth : bwUnits;
    float* bwOutput = merge ? fwOutput + fwUnits : rc.output<float>(1);
    kernels::RnnStep bw = cellStep(rc, rows,
                                   {.first = 5,
                                    .auxWeights = auxWeights(11),
                                    .inputSize = bwInputSize,
                                    .auxSize = auxSize,
                                    .units = bwUnits,
                                    .outputWidth = bwWidth},
                                   bwHidden, activation);
    runSequence(bw, rows, true, bwInput, aux, bwOutput, bwWidth);
    if (stateOutputs) {
      std::copy(fwHidden, fwHidden + rows.batch * fwUnits, rc.output<float>(fwStateOutput));
      std::copy(bwHidden, bwHidden + rows.batch * bwUnits, rc.output<float>(fwStateOutput + 1));
    }
    return {};
  });
}

}  // namespace nnhal::engine::ops
