#include "engine/ops/lstm_cell.h"

#include <string>

#include "engine/ops/sequence_common.h"

namespace nnhal::engine::ops::lstm {
namespace {

constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;

std::string opName(const PrepareContext& ctx) { return std::string(toString(ctx.type())); }

/// Whether optional tensor `i` is present (kAbsent: the operation has no such input).
Result<bool> present(const PrepareContext& ctx, size_t i) {
  if (i == kAbsent) return false;
  return seq::optionalPresent(ctx, i);
}

/// Present optional tensor `i` of `dims`; absent ones (kAbsent or omitted) return false.
Result<bool> optionalTensor(const PrepareContext& ctx, size_t i, const std::vector<uint32_t>& dims,
                            const char* role) {
  NNHAL_ASSIGN_OR_RETURN(const bool isPresent, present(ctx, i));
  if (!isPresent) return false;
  NNHAL_TRY(seq::requireTensor(ctx, i, kFloat, dims, role));
  return true;
}

Result<void> mustBeOmitted(const PrepareContext& ctx, size_t i, bool present, const char* role,
                           const char* reason) {
  if (!present) return {};
  return invalidArgument(seq::describe(ctx, i, role) + " must be omitted " + reason);
}

/// The layer normalization weights of an LSTM cell: all present (the input gate's omitted
/// with CIFG) or all omitted. True when present.
Result<bool> checkLayerNorm(const PrepareContext& ctx, const CellIndices& x, uint32_t cells,
                            bool cifg) {
  NNHAL_ASSIGN_OR_RETURN(const bool inputNorm, optionalTensor(ctx, x.inputLayerNorm, {cells},
                                                              "input layer norm weights"));
  NNHAL_ASSIGN_OR_RETURN(const bool forgetNorm, optionalTensor(ctx, x.forgetLayerNorm, {cells},
                                                               "forget layer norm weights"));
  NNHAL_ASSIGN_OR_RETURN(const bool cellNorm,
                         optionalTensor(ctx, x.cellLayerNorm, {cells}, "cell layer norm weights"));
  NNHAL_ASSIGN_OR_RETURN(const bool outputNorm, optionalTensor(ctx, x.outputLayerNorm, {cells},
                                                               "output layer norm weights"));
  const bool layerNorm = forgetNorm && cellNorm && outputNorm && (inputNorm || cifg);
  if (cifg) {
    NNHAL_TRY(
        mustBeOmitted(ctx, x.inputLayerNorm, inputNorm, "input layer norm weights", "with CIFG"));
  }
  if (!layerNorm && (inputNorm || forgetNorm || cellNorm || outputNorm)) {
    return invalidArgument(opName(ctx) +
                           " layer normalization weights must all be present (the input gate's "
                           "omitted with CIFG) or all be omitted");
  }
  return layerNorm;
}

/// The auxiliary input weights of an LSTM cell: omitted without an auxiliary input
/// (auxSize 0), else all present [cells, auxSize] (auxiliary input-to-input omitted with
/// CIFG).
Result<void> checkAuxWeights(const PrepareContext& ctx, const CellIndices& x, uint32_t cells,
                             uint32_t auxSize, bool cifg) {
  NNHAL_ASSIGN_OR_RETURN(const bool auxToInput, present(ctx, x.auxToInput));
  NNHAL_ASSIGN_OR_RETURN(const bool auxToForget, present(ctx, x.auxToForget));
  NNHAL_ASSIGN_OR_RETURN(const bool auxToCell, present(ctx, x.auxToCell));
  NNHAL_ASSIGN_OR_RETURN(const bool auxToOutput, present(ctx, x.auxToOutput));
  if (auxSize == 0) {
    if (auxToInput || auxToForget || auxToCell || auxToOutput) {
      return invalidArgument(opName(ctx) +
                             " auxiliary weights must be omitted without an auxiliary input");
    }
  } else {
    if (cifg) {
      NNHAL_TRY(mustBeOmitted(ctx, x.auxToInput, auxToInput, "auxiliary input-to-input weights",
                              "with CIFG"));
    }
    if (!auxToForget || !auxToCell || !auxToOutput || (!cifg && !auxToInput)) {
      return invalidArgument(opName(ctx) +
                             " auxiliary weights must all be present with an auxiliary input "
                             "(auxiliary input-to-input omitted with CIFG)");
    }
    if (!cifg) {
      NNHAL_TRY(seq::requireTensor(ctx, x.auxToInput, kFloat, {cells, auxSize},
                                   "auxiliary input-to-input weights"));
    }
    NNHAL_TRY(seq::requireTensor(ctx, x.auxToForget, kFloat, {cells, auxSize},
                                 "auxiliary input-to-forget weights"));
    NNHAL_TRY(seq::requireTensor(ctx, x.auxToCell, kFloat, {cells, auxSize},
                                 "auxiliary input-to-cell weights"));
    NNHAL_TRY(seq::requireTensor(ctx, x.auxToOutput, kFloat, {cells, auxSize},
                                 "auxiliary input-to-output weights"));
  }
  return {};
}

}  // namespace

Result<Cell> prepareCell(const PrepareContext& ctx, const CellIndices& x, uint32_t batch,
                         uint32_t inputSize, uint32_t auxSize) {
  Cell cell;
  cell.indices = x;
  // Required weights fix the number of cells and the output size.
  NNHAL_TRY(seq::requireType(ctx, x.inputToOutput, kFloat, "input-to-output weights"));
  NNHAL_TRY(seq::requireRank(ctx, x.inputToOutput, 2, "input-to-output weights"));
  const uint32_t cells = ctx.input(x.inputToOutput).dimensions[0];
  NNHAL_TRY(seq::requireShape(ctx, x.inputToOutput, {cells, inputSize}, "input-to-output weights"));
  NNHAL_TRY(seq::requireTensor(ctx, x.inputToForget, kFloat, {cells, inputSize},
                               "input-to-forget weights"));
  NNHAL_TRY(
      seq::requireTensor(ctx, x.inputToCell, kFloat, {cells, inputSize}, "input-to-cell weights"));
  NNHAL_TRY(seq::requireType(ctx, x.recurrentToOutput, kFloat, "recurrent-to-output weights"));
  NNHAL_TRY(seq::requireRank(ctx, x.recurrentToOutput, 2, "recurrent-to-output weights"));
  const uint32_t outputSize = ctx.input(x.recurrentToOutput).dimensions[1];
  NNHAL_TRY(seq::requireShape(ctx, x.recurrentToOutput, {cells, outputSize},
                              "recurrent-to-output weights"));
  NNHAL_TRY(seq::requireTensor(ctx, x.recurrentToForget, kFloat, {cells, outputSize},
                               "recurrent-to-forget weights"));
  NNHAL_TRY(seq::requireTensor(ctx, x.recurrentToCell, kFloat, {cells, outputSize},
                               "recurrent-to-cell weights"));

  // CIFG: the input gate's weights are both present or both omitted.
  NNHAL_ASSIGN_OR_RETURN(
      const bool inputToInput,
      optionalTensor(ctx, x.inputToInput, {cells, inputSize}, "input-to-input weights"));
  NNHAL_ASSIGN_OR_RETURN(
      const bool recurrentToInput,
      optionalTensor(ctx, x.recurrentToInput, {cells, outputSize}, "recurrent-to-input weights"));
  if (inputToInput != recurrentToInput) {
    return invalidArgument(opName(ctx) + " inputs " + std::to_string(x.inputToInput) + " and " +
                           std::to_string(x.recurrentToInput) +
                           " (input-to-input and recurrent-to-input weights) must both be "
                           "present or both be omitted");
  }
  const bool cifg = !inputToInput;

  // Peephole.
  NNHAL_ASSIGN_OR_RETURN(const bool cellToInput,
                         optionalTensor(ctx, x.cellToInput, {cells}, "cell-to-input weights"));
  NNHAL_ASSIGN_OR_RETURN(const bool cellToForget,
                         optionalTensor(ctx, x.cellToForget, {cells}, "cell-to-forget weights"));
  NNHAL_ASSIGN_OR_RETURN(const bool cellToOutput,
                         optionalTensor(ctx, x.cellToOutput, {cells}, "cell-to-output weights"));
  const bool peephole = cellToForget && cellToOutput && (cellToInput || cifg);
  if (!peephole && (cellToInput || cellToForget || cellToOutput)) {
    return invalidArgument(opName(ctx) + " inputs " + std::to_string(x.cellToInput) + ".." +
                           std::to_string(x.cellToOutput) +
                           " (peephole weights) must all be present (cell-to-input may be "
                           "omitted with CIFG) or all be omitted");
  }

  // Biases.
  NNHAL_ASSIGN_OR_RETURN(const bool inputGateBias,
                         optionalTensor(ctx, x.inputGateBias, {cells}, "input gate bias"));
  if (cifg) {
    NNHAL_TRY(mustBeOmitted(ctx, x.inputGateBias, inputGateBias, "input gate bias",
                            "with CIFG (no input-to-input weights)"));
  } else if (!inputGateBias) {
    return invalidArgument(seq::describe(ctx, x.inputGateBias, "input gate bias") +
                           " is required without CIFG");
  }
  NNHAL_TRY(seq::requireTensor(ctx, x.forgetGateBias, kFloat, {cells}, "forget gate bias"));
  NNHAL_TRY(seq::requireTensor(ctx, x.cellBias, kFloat, {cells}, "cell bias"));
  NNHAL_TRY(seq::requireTensor(ctx, x.outputGateBias, kFloat, {cells}, "output gate bias"));

  // Projection.
  NNHAL_ASSIGN_OR_RETURN(
      const bool projection,
      optionalTensor(ctx, x.projectionWeights, {outputSize, cells}, "projection weights"));
  NNHAL_ASSIGN_OR_RETURN(const bool projectionBias,
                         optionalTensor(ctx, x.projectionBias, {outputSize}, "projection bias"));
  if (!projection) {
    NNHAL_TRY(mustBeOmitted(ctx, x.projectionBias, projectionBias, "projection bias",
                            "without projection weights"));
    if (outputSize != cells) {
      return invalidArgument(opName(ctx) + " without projection weights needs an output size (" +
                             std::to_string(outputSize) + ") equal to the number of cells (" +
                             std::to_string(cells) + ")");
    }
  }

  NNHAL_ASSIGN_OR_RETURN(const bool layerNorm, checkLayerNorm(ctx, x, cells, cifg));
  NNHAL_TRY(checkAuxWeights(ctx, x, cells, auxSize, cifg));

  // States.
  NNHAL_TRY(seq::requireTensor(ctx, x.outputState, kFloat, {batch, outputSize}, "output state"));
  NNHAL_TRY(seq::requireTensor(ctx, x.cellState, kFloat, {batch, cells}, "cell state"));

  cell.shape.batch = batch;
  cell.shape.inputSize = inputSize;
  cell.shape.auxSize = auxSize;
  cell.shape.cells = cells;
  cell.shape.outputSize = outputSize;
  cell.shape.cifg = cifg;
  cell.shape.peephole = peephole;
  cell.shape.layerNorm = layerNorm;
  cell.projection = projection;
  cell.projectionBias = projectionBias;
  cell.auxWeights = auxSize > 0;
  return cell;
}

kernels::LstmWeights cellWeights(const RunContext& rc, const Cell& cell) {
  const CellIndices& x = cell.indices;
  const kernels::LstmShape& s = cell.shape;
  auto get = [&](size_t i, bool used) -> const float* {
    return used && i != kAbsent ? rc.input<float>(i) : nullptr;
  };
  kernels::LstmWeights w;
  w.inputToInput = get(x.inputToInput, !s.cifg);
  w.inputToForget = get(x.inputToForget, true);
  w.inputToCell = get(x.inputToCell, true);
  w.inputToOutput = get(x.inputToOutput, true);
  w.recurrentToInput = get(x.recurrentToInput, !s.cifg);
  w.recurrentToForget = get(x.recurrentToForget, true);
  w.recurrentToCell = get(x.recurrentToCell, true);
  w.recurrentToOutput = get(x.recurrentToOutput, true);
  w.cellToInput = get(x.cellToInput, s.peephole && !s.cifg);
  w.cellToForget = get(x.cellToForget, s.peephole);
  w.cellToOutput = get(x.cellToOutput, s.peephole);
  w.auxToInput = get(x.auxToInput, cell.auxWeights && !s.cifg);
  w.auxToForget = get(x.auxToForget, cell.auxWeights);
  w.auxToCell = get(x.auxToCell, cell.auxWeights);
  w.auxToOutput = get(x.auxToOutput, cell.auxWeights);
  w.inputGateBias = get(x.inputGateBias, !s.cifg);
  w.forgetGateBias = get(x.forgetGateBias, true);
  w.cellBias = get(x.cellBias, true);
  w.outputGateBias = get(x.outputGateBias, true);
  w.projectionWeights = get(x.projectionWeights, cell.projection);
  w.projectionBias = get(x.projectionBias, cell.projectionBias);
  w.inputLayerNorm = get(x.inputLayerNorm, s.layerNorm && !s.cifg);
  w.forgetLayerNorm = get(x.forgetLayerNorm, s.layerNorm);
  w.cellLayerNorm = get(x.cellLayerNorm, s.layerNorm);
  w.outputLayerNorm = get(x.outputLayerNorm, s.layerNorm);
  return w;
}

}  // namespace nnhal::engine::ops::lstm
