// BIDIRECTIONAL_SEQUENCE_LSTM: a forward LSTM over the sequence followed by a backward one.
//
// Inputs (61): 0 input [maxTime, batch, inputSize] (time-major) or [batch, maxTime,
// inputSize]; 1..17 the forward cell's weights, biases and projection (LSTM inputs 1..17);
// 18..34 the backward cell's; 35/36 forward output / cell state; 37/38 backward ones; 39
// optional auxiliary input; 40..43 forward and 44..47 backward auxiliary input-to-{input,
// forget, cell, output} weights (optional); 48 activation; 49 cell clip; 50 projection clip;
// 51 BOOL mergeOutputs; 52 BOOL timeMajor; 53..56 forward and 57..60 backward layer
// normalization weights (optional).
//
// Auxiliary input: with its weights (cross-linking) both cells also multiply it; without
// them (parallel linking, HAL 1.3) the backward cell reads it instead of input 0.
//
// Outputs: 0 forward output [.., .., fwOutputSize (+ bwOutputSize when merged)], 1 backward
// output unless merged, then optionally (HAL 1.3) the final forward output state, forward
// cell state, backward output state and backward cell state.
#include <algorithm>

#include "engine/ops/lstm_cell.h"
#include "engine/ops/ops.h"
#include "engine/ops/sequence_common.h"

namespace nnhal::engine::ops {
namespace {

constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;
constexpr size_t kAuxInput = 39;

lstm::CellIndices directionIndices(bool backward) {
  const size_t base = backward ? 18 : 1;
  lstm::CellIndices x{};
  x.inputToInput = base;
  x.inputToForget = base + 1;
  x.inputToCell = base + 2;
  x.inputToOutput = base + 3;
  x.recurrentToInput = base + 4;
  x.recurrentToForget = base + 5;
  x.recurrentToCell = base + 6;
  x.recurrentToOutput = base + 7;
  x.cellToInput = base + 8;
  x.cellToForget = base + 9;
  x.cellToOutput = base + 10;
  x.inputGateBias = base + 11;
  x.forgetGateBias = base + 12;
  x.cellBias = base + 13;
  x.outputGateBias = base + 14;
  x.projectionWeights = base + 15;
  x.projectionBias = base + 16;
  x.outputState = backward ? 37 : 35;
  x.cellState = backward ? 38 : 36;
  const size_t aux = backward ? 44 : 40;
  x.auxToInput = aux;
  x.auxToForget = aux + 1;
  x.auxToCell = aux + 2;
  x.auxToOutput = aux + 3;
  const size_t norm = backward ? 57 : 53;
  x.inputLayerNorm = norm;
  x.forgetLayerNorm = norm + 1;
  x.cellLayerNorm = norm + 2;
  x.outputLayerNorm = norm + 3;
  return x;
}

/// Where one direction reads and writes during a run.
struct DirectionRun {
  const float* input;
  size_t inputSize;
  const float* aux;  // null without cross-linking
  size_t auxSize;
  float* output;  // row (t, b) at output + rows.row(t, b) * width
  size_t width;
  bool backward;
};

void runDirection(const lstm::Cell& cell, const kernels::LstmWeights& w,
                  const seq::SequenceRows& rows, const DirectionRun& d, float* outputState,
                  float* cellState, float* gates) {
  for (size_t k = 0; k < rows.maxTime; ++k) {
    const size_t t = d.backward ? rows.maxTime - 1 - k : k;
    const size_t row = rows.row(t, 0);
    kernels::lstmStep(cell.shape, w, d.input + row * d.inputSize, rows.batchStride() * d.inputSize,
                      d.aux != nullptr ? d.aux + row * d.auxSize : nullptr,
                      rows.batchStride() * d.auxSize, outputState, cellState, outputState,
                      cellState, d.output + row * d.width, rows.batchStride() * d.width, gates);
  }
}

}  // namespace

PrepareResult prepareBidirectionalSequenceLstm(PrepareContext& ctx) {
  NNHAL_TRY(seq::checkInputCount(ctx, {61}));
  NNHAL_TRY(seq::requireType(ctx, 0, kFloat, "input"));
  NNHAL_TRY(seq::requireRank(ctx, 0, 3, "input"));
  NNHAL_ASSIGN_OR_RETURN(const bool merge, seq::readBool(ctx, 51, "merge outputs"));
  NNHAL_ASSIGN_OR_RETURN(const bool timeMajor, seq::readBool(ctx, 52, "time major"));
  if (merge) {
    NNHAL_TRY(seq::checkOutputCount(ctx, {1, 5}));
  } else {
    NNHAL_TRY(seq::checkOutputCount(ctx, {2, 6}));
  }
  const auto& dims = ctx.input(0).dimensions;
  const seq::SequenceRows rows{timeMajor, timeMajor ? dims[0] : dims[1],
                               timeMajor ? dims[1] : dims[0]};
  const uint32_t inputSize = dims[2];
  const auto batch = static_cast<uint32_t>(rows.batch);

  // Linking mode, from the auxiliary input and the forward / backward aux-to-forget weights.
  NNHAL_ASSIGN_OR_RETURN(const bool hasAux, seq::optionalPresent(ctx, kAuxInput));
  NNHAL_ASSIGN_OR_RETURN(const bool fwAuxWeights, seq::optionalPresent(ctx, 41));
  NNHAL_ASSIGN_OR_RETURN(const bool bwAuxWeights, seq::optionalPresent(ctx, 45));
  if (fwAuxWeights != bwAuxWeights) {
    return invalidArgument(
        "BIDIRECTIONAL_SEQUENCE_LSTM forward and backward auxiliary weights must both be "
        "present or both be omitted");
  }
  if (fwAuxWeights && !hasAux) {
    return invalidArgument(
        "BIDIRECTIONAL_SEQUENCE_LSTM auxiliary weights need input 39 (auxiliary input)");
  }
  const bool cross = hasAux && fwAuxWeights;
  const bool parallel = hasAux && !fwAuxWeights;
  uint32_t auxSize = 0;
  if (hasAux) {
    NNHAL_TRY(seq::requireType(ctx, kAuxInput, kFloat, "auxiliary input"));
    NNHAL_TRY(seq::requireRank(ctx, kAuxInput, 3, "auxiliary input"));
    auxSize = ctx.input(kAuxInput).dimensions[2];
    NNHAL_TRY(seq::requireShape(ctx, kAuxInput, {dims[0], dims[1], auxSize}, "auxiliary input"));
  }

  NNHAL_ASSIGN_OR_RETURN(lstm::Cell fw, lstm::prepareCell(ctx, directionIndices(false), batch,
                                                          inputSize, cross ? auxSize : 0));
  const uint32_t bwInputSize = parallel ? auxSize : inputSize;
  NNHAL_ASSIGN_OR_RETURN(lstm::Cell bw, lstm::prepareCell(ctx, directionIndices(true), batch,
                                                          bwInputSize, cross ? auxSize : 0));
  for (lstm::Cell* cell : {&fw, &bw}) {
    NNHAL_ASSIGN_OR_RETURN(cell->shape.activation, seq::readActivation(ctx, 48));
    NNHAL_ASSIGN_OR_RETURN(cell->shape.cellClip, seq::readClip(ctx, 49, "cell clip"));
    NNHAL_ASSIGN_OR_RETURN(cell->shape.projClip, seq::readClip(ctx, 50, "projection clip"));
  }

  const auto fwOutput = static_cast<uint32_t>(fw.shape.outputSize);
  const auto bwOutput = static_cast<uint32_t>(bw.shape.outputSize);
  for (size_t o = 0; o < ctx.outputCount(); ++o) NNHAL_TRY(seq::requireOutputType(ctx, o, kFloat));
  const uint32_t fwWidth = merge ? fwOutput + bwOutput : fwOutput;
  NNHAL_TRY(ctx.setOutputShape(0, {dims[0], dims[1], fwWidth}));
  size_t next = 1;
  if (!merge) NNHAL_TRY(ctx.setOutputShape(next++, {dims[0], dims[1], bwOutput}));
  const bool stateOutputs = ctx.outputCount() > next;
  const size_t firstState = next;
  if (stateOutputs) {
    NNHAL_TRY(ctx.setOutputShape(next, {batch, fwOutput}));
    NNHAL_TRY(ctx.setOutputShape(next + 1, {batch, static_cast<uint32_t>(fw.shape.cells)}));
    NNHAL_TRY(ctx.setOutputShape(next + 2, {batch, bwOutput}));
    NNHAL_TRY(ctx.setOutputShape(next + 3, {batch, static_cast<uint32_t>(bw.shape.cells)}));
  }

  seq::ScratchPlan plan;
  const size_t gatesOffset = plan.reserve<float>(
      std::max(kernels::lstmGateScratchSize(fw.shape), kernels::lstmGateScratchSize(bw.shape)));
  const size_t fwOutputStateOffset = plan.reserve<float>(size_t{batch} * fwOutput);
  const size_t fwCellStateOffset = plan.reserve<float>(batch * fw.shape.cells);
  const size_t bwOutputStateOffset = plan.reserve<float>(size_t{batch} * bwOutput);
  const size_t bwCellStateOffset = plan.reserve<float>(batch * bw.shape.cells);
  ctx.requestScratch(plan.bytes());

  return makeKernel([=](const RunContext& rc) -> Result<void> {
    float* gates = seq::scratchAt<float>(rc, gatesOffset);
    float* fwOutputState = seq::scratchAt<float>(rc, fwOutputStateOffset);
    float* fwCellState = seq::scratchAt<float>(rc, fwCellStateOffset);
    float* bwOutputState = seq::scratchAt<float>(rc, bwOutputStateOffset);
    float* bwCellState = seq::scratchAt<float>(rc, bwCellStateOffset);
    const size_t b = rows.batch;
    std::copy(rc.input<float>(35), rc.input<float>(35) + b * fwOutput, fwOutputState);
    std::copy(rc.input<float>(36), rc.input<float>(36) + b * fw.shape.cells, fwCellState);
    std::copy(rc.input<float>(37), rc.input<float>(37) + b * bwOutput, bwOutputState);
    std::copy(rc.input<float>(38), rc.input<float>(38) + b * bw.shape.cells, bwCellState);

    const float* input = rc.input<float>(0);
    const float* aux = hasAux ? rc.input<float>(kAuxInput) : nullptr;
    float* output = rc.output<float>(0);
    const DirectionRun fwRun{input,   inputSize, cross ? aux : nullptr, auxSize, output,
                             fwWidth, false};
    runDirection(fw, lstm::cellWeights(rc, fw), rows, fwRun, fwOutputState, fwCellState, gates);
    const DirectionRun bwRun{parallel ? aux : input,
                             bwInputSize,
                             cross ? aux : nullptr,
                             auxSize,
                             merge ? output + fwOutput : rc.output<float>(1),
                             merge ? fwWidth : bwOutput,
                             true};
    runDirection(bw, lstm::cellWeights(rc, bw), rows, bwRun, bwOutputState, bwCellState, gates);
    if (stateOutputs) {
      std::copy(fwOutputState, fwOutputState + b * fwOutput, rc.output<float>(firstState));
      std::copy(fwCellState, fwCellState + b * fw.shape.cells, rc.output<float>(firstState + 1));
      std::copy(bwOutputState, bwOutputState + b * bwOutput, rc.output<float>(firstState + 2));
      std::copy(bwCellState, bwCellState + b * bw.shape.cells, rc.output<float>(firstState + 3));
    }
    return {};
  });
}

}  // namespace nnhal::engine::ops
