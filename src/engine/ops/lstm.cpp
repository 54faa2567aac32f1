// LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM: validation, output shapes and kernels over
// kernels::lstmStep.
//
// LSTM inputs (HAL 1.0: 23, HAL 1.2: 27): 0 input [batch, inputSize]; 1..4 input-to-{input,
// forget, cell, output} weights [cells, inputSize] (input-to-input optional); 5..8
// recurrent-to-* weights [cells, outputSize] (recurrent-to-input optional); 9..11 optional
// cell-to-{input, forget, output} peephole weights [cells]; 12..15 {input, forget, cell,
// output} gate biases [cells] (input gate bias optional); 16 optional projection weights
// [outputSize, cells]; 17 optional projection bias [outputSize]; 18 output state
// [batch, outputSize]; 19 cell state [batch, cells]; 20 activation; 21 cell clip; 22
// projection clip; 23..26 optional layer normalization weights [cells]. Outputs: 0 scratch
// buffer [batch, cells * (CIFG ? 3 : 4)] (the gate values), 1 output state, 2 cell state,
// 3 output [batch, outputSize].
//
// UNIDIRECTIONAL_SEQUENCE_LSTM inputs: 0 input [maxTime, batch, inputSize] (time-major) or
// [batch, maxTime, inputSize]; 1..22 as LSTM; 23 BOOL timeMajor; 24..27 layer normalization
// weights. Outputs: 0 the output sequence [.., .., outputSize], optionally (HAL 1.3) 1 the
// final output state and 2 the final cell state.
#include <algorithm>

#include "engine/ops/lstm_cell.h"
#include "engine/ops/ops.h"
#include "engine/ops/sequence_common.h"

namespace nnhal::engine::ops {
namespace {

constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;

/// Inputs 1..19 of LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM; layer norms from `firstNorm`.
lstm::CellIndices cellIndices(size_t firstNorm) {
  lstm::CellIndices x{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
  if (firstNorm != lstm::kAbsent) {
    x.inputLayerNorm = firstNorm;
    x.forgetLayerNorm = firstNorm + 1;
    x.cellLayerNorm = firstNorm + 2;
    x.outputLayerNorm = firstNorm + 3;
  }
  return x;
}

/// Reads the activation (20) and clips (21, 22) into `shape`.
Result<void> readCellParams(const PrepareContext& ctx, kernels::LstmShape* shape) {
  NNHAL_ASSIGN_OR_RETURN(shape->activation, seq::readActivation(ctx, 20));
  NNHAL_ASSIGN_OR_RETURN(shape->cellClip, seq::readClip(ctx, 21, "cell clip"));
  NNHAL_ASSIGN_OR_RETURN(shape->projClip, seq::readClip(ctx, 22, "projection clip"));
  return {};
}

}  // namespace

PrepareResult prepareLstm(PrepareContext& ctx) {
  NNHAL_TRY(seq::checkInputCount(ctx, {23, 27}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {4}));
  NNHAL_TRY(seq::requireType(ctx, 0, kFloat, "input"));
  NNHAL_TRY(seq::requireRank(ctx, 0, 2, "input"));
  const uint32_t batch = ctx.input(0).dimensions[0];
  const uint32_t inputSize = ctx.input(0).dimensions[1];
  NNHAL_ASSIGN_OR_RETURN(
      lstm::Cell cell,
      lstm::prepareCell(ctx, cellIndices(ctx.inputCount() == 27 ? 23 : lstm::kAbsent), batch,
                        inputSize, 0));
  NNHAL_TRY(readCellParams(ctx, &cell.shape));
  const auto cells = static_cast<uint32_t>(cell.shape.cells);
  const auto outputSize = static_cast<uint32_t>(cell.shape.outputSize);
  for (size_t o = 0; o < 4; ++o) NNHAL_TRY(seq::requireOutputType(ctx, o, kFloat));
  NNHAL_TRY(ctx.setOutputShape(0, {batch, cells * (cell.shape.cifg ? 3u : 4u)}));
  NNHAL_TRY(ctx.setOutputShape(1, {batch, outputSize}));
  NNHAL_TRY(ctx.setOutputShape(2, {batch, cells}));
  NNHAL_TRY(ctx.setOutputShape(3, {batch, outputSize}));
  return makeKernel([cell](const RunContext& rc) -> Result<void> {
    const kernels::LstmWeights w = lstm::cellWeights(rc, cell);
    // The scratch-buffer output holds the gates, as in the reference.
    kernels::lstmStep(cell.shape, w, rc.input<float>(0), cell.shape.inputSize, nullptr, 0,
                      rc.input<float>(18), rc.input<float>(19), rc.output<float>(1),
                      rc.output<float>(2), rc.output<float>(3), cell.shape.outputSize,
                      rc.output<float>(0));
    return {};
  });
}

PrepareResult prepareUnidirectionalSequenceLstm(PrepareContext& ctx) {
  NNHAL_TRY(seq::checkInputCount(ctx, {28}));
  NNHAL_TRY(seq::checkOutputCount(ctx, {1, 3}));
  NNHAL_TRY(seq::requireType(ctx, 0, kFloat, "input"));
  NNHAL_TRY(seq::requireRank(ctx, 0, 3, "input"));
  NNHAL_ASSIGN_OR_RETURN(const bool timeMajor, seq::readBool(ctx, 23, "time major"));
  const auto& dims = ctx.input(0).dimensions;
  const seq::SequenceRows rows{timeMajor, timeMajor ? dims[0] : dims[1],
                               timeMajor ? dims[1] : dims[0]};
  const uint32_t inputSize = dims[2];
  NNHAL_ASSIGN_OR_RETURN(
      lstm::Cell cell,
      lstm::prepareCell(ctx, cellIndices(24), static_cast<uint32_t>(rows.batch), inputSize, 0));
  NNHAL_TRY(readCellParams(ctx, &cell.shape));
  const auto cells = static_cast<uint32_t>(cell.shape.cells);
  const auto outputSize = static_cast<uint32_t>(cell.shape.outputSize);
  const auto batch = static_cast<uint32_t>(rows.batch);
  for (size_t o = 0; o < ctx.outputCount(); ++o) NNHAL_TRY(seq::requireOutputType(ctx, o, kFloat));
  NNHAL_TRY(ctx.setOutputShape(0, {dims[0], dims[1], outputSize}));
  const bool stateOutputs = ctx.outputCount() == 3;
  if (stateOutputs) {
    NNHAL_TRY(ctx.setOutputShape(1, {batch, outputSize}));
    NNHAL_TRY(ctx.setOutputShape(2, {batch, cells}));
  }

  seq::ScratchPlan plan;
  const size_t gatesOffset = plan.reserve<float>(kernels::lstmGateScratchSize(cell.shape));
  const size_t outputStateOffset = plan.reserve<float>(size_t{batch} * outputSize);
  const size_t cellStateOffset = plan.reserve<float>(size_t{batch} * cells);
  ctx.requestScratch(plan.bytes());
  return makeKernel([=](const RunContext& rc) -> Result<void> {
    const kernels::LstmWeights w = lstm::cellWeights(rc, cell);
    float* gates = seq::scratchAt<float>(rc, gatesOffset);
    float* outputState = seq::scratchAt<float>(rc, outputStateOffset);
    float* cellState = seq::scratchAt<float>(rc, cellStateOffset);
    std::copy(rc.input<float>(18), rc.input<float>(18) + rows.batch * outputSize, outputState);
    std::copy(rc.input<float>(19), rc.input<float>(19) + rows.batch * cells, cellState);
    const float* input = rc.input<float>(0);
    float* output = rc.output<float>(0);
    for (size_t t = 0; t < rows.maxTime; ++t) {
      kernels::lstmStep(cell.shape, w, input + rows.row(t, 0) * inputSize,
                        rows.batchStride() * inputSize, nullptr, 0, outputState, cellState,
                        outputState, cellState, output + rows.row(t, 0) * outputSize,
                        rows.batchStride() * outputSize, gates);
    }
    if (stateOutputs) {
      std::copy(outputState, outputState + rows.batch * outputSize, rc.output<float>(1));
      std::copy(cellState, cellState + rows.batch * cells, rc.output<float>(2));
    }
    return {};
  });
}

}  // namespace nnhal::engine::ops
