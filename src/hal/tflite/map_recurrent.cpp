// Mapping functions of the recurrent operators (RNN, SVDF, LSTM and their sequence forms) and
// of the text operators (HASHTABLE_LOOKUP, LSH_PROJECTION).
//
// The tensors keep TFLite's order, which is NNAPI's; omitted optional tensors (-1) become
// NO_VALUE operands. Where NNAPI writes state outputs that TFLite keeps in its variable
// tensors (RNN, SVDF, LSTM), the state outputs are new temporaries of the state's shape that
// nothing reads: the imported model computes one step from the state tensors' initial
// value (see tflite_import.h).
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/mapping_helpers.h"
#include "hal/tflite/mappings.h"

namespace nnhal::hal::tfl {
namespace {

/// Positions 1..17 of an LSTM's weights block (TFLite and NNAPI order) that may be omitted:
/// input-to-input and recurrent-to-input weights and input gate bias (CIFG), peepholes,
/// projection weights and bias.
bool isOptionalLstmTensor(size_t position) {
  switch (position) {
    case 1:
    case 5:
    case 9:
    case 10:
    case 11:
    case 12:
    case 16:
    case 17:
      return true;
    default:
      return false;
  }
}

/// Operator inputs [0, count): those `optional` accepts may be omitted (NO_VALUE operands of
/// the type of input 0), the others must be present.
template <typename IsOptional>
Result<std::vector<uint32_t>> collectInputs(OperatorContext& c, size_t count, IsOptional optional) {
  NNHAL_ASSIGN_OR_RETURN(const uint32_t first, c.input(0));
  const OperandType omittedType = c.operand(first).type;
  std::vector<uint32_t> inputs{first};
  for (size_t i = 1; i < count; ++i) {
    if (optional(i)) {
      NNHAL_ASSIGN_OR_RETURN(const std::vector<uint32_t> one,
                             inputsOrOmitted(c, i, 1, omittedType));
      inputs.push_back(one[0]);
    } else {
      NNHAL_ASSIGN_OR_RETURN(const uint32_t operand, c.input(i));
      inputs.push_back(operand);
    }
  }
  return inputs;
}

/// Hybrid recurrent operators (TFLite's dynamic-range quantization: float input and state,
/// int8 or uint8 constant weights): every quantized input is DEQUANTIZEd into a float
/// temporary the float operation reads, as the delegate's AddDequantizeOperatorsWhereNeeded
/// does for LSTM. Inputs of a quantized operator (input 0 quantized) are left as they are.
void dequantizeHybridWeights(OperatorContext& c, std::vector<uint32_t>& inputs) {
  for (size_t i = 1; i < inputs.size(); ++i) {
    inputs[i] = dequantizedForFloatInput(c, inputs[0], inputs[i]);
  }
}

/// Appends activation, cell clip and projection clip (float scalars of the input's type).
Result<void> appendLstmParameters(OperatorContext& c, std::vector<uint32_t>& inputs,
                                  ::tflite::ActivationFunctionType activation, float cellClip,
                                  float projClip) {
  NNHAL_ASSIGN_OR_RETURN(const int32_t code, recurrentActivation(c, activation));
  if (cellClip < 0.0f) return c.error("cell_clip is negative");
  if (projClip < 0.0f) return c.error("proj_clip is negative");
  ModelBuilder& b = c.builder();
  const OperandType type = c.operand(inputs[0]).type;
  inputs.push_back(b.addInt32Scalar(code));
  inputs.push_back(addFloatScalarFor(b, type, cellClip));
  inputs.push_back(addFloatScalarFor(b, type, projClip));
  return {};
}

/// The 20 or 24 inputs of TFLite's full LSTM kernel forms.
Result<void> expectLstmInputs(const OperatorContext& c) {
  if (c.inputCount() != 20 && c.inputCount() != 24) {
    return c.error("has " + std::to_string(c.inputCount()) + " inputs; expected 20 or 24");
  }
  return {};
}

/// A new temporary for LSTM's scratch buffer: [batch, cells * 4], or * 3 with CIFG.
uint32_t addLstmScratch(OperatorContext& c, const std::vector<uint32_t>& inputs) {
  const auto& inDims = c.operand(inputs[0]).dimensions;
  const auto& forgetDims = c.operand(inputs[2]).dimensions;  // [cells, input size]
  const bool cifg = c.operand(inputs[1]).lifetime == OperandLifeTime::NO_VALUE;
  std::vector<uint32_t> dims;
  if (inDims.size() == 2 && !forgetDims.empty()) {
    dims = {inDims[0], forgetDims[0] * (cifg ? 3u : 4u)};
  }
  return addTemporaryLike(c.builder(), inputs[0], std::move(dims));
}

/// Expects `merged ? 1 : 2` outputs of a bidirectional operator.
Result<std::vector<uint32_t>> bidirectionalOutputs(const OperatorContext& c, bool merged) {
  const size_t expected = merged ? 1 : 2;
  if (c.outputCount() != expected) {
    return c.error("has " + std::to_string(c.outputCount()) + " outputs; expected " +
                   std::to_string(expected) + (merged ? " (merged outputs)" : ""));
  }
  return c.outputs();
}

}  // namespace

Result<void> mapRnn(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(5, 5, 1));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs,
                         collectInputs(c, 5, [](size_t) { return false; }));
  dequantizeHybridWeights(c, inputs);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto* options = c.options<::tflite::RNNOptions>();
  NNHAL_ASSIGN_OR_RETURN(const int32_t activation,
                         recurrentActivation(c, options ? options->fused_activation_function()
                                                        : ::tflite::ActivationFunctionType_NONE));
  ModelBuilder& b = c.builder();
  inputs.push_back(b.addInt32Scalar(activation));
  const uint32_t hiddenOut = addTemporaryLike(b, inputs[4], c.operand(inputs[4]).dimensions);
  c.addOperation(OperationType::RNN, std::move(inputs), {hiddenOut, output});
  return {};
}

Result<void> mapUnidirectionalSequenceRnn(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(5, 5, 1));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs,
                         collectInputs(c, 5, [](size_t) { return false; }));
  dequantizeHybridWeights(c, inputs);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto* options = c.options<::tflite::SequenceRNNOptions>();
  NNHAL_ASSIGN_OR_RETURN(const int32_t activation,
                         recurrentActivation(c, options ? options->fused_activation_function()
                                                        : ::tflite::ActivationFunctionType_NONE));
  const bool timeMajor = options != nullptr && options->time_major();
  ModelBuilder& b = c.builder();
  inputs.push_back(b.addInt32Scalar(activation));
  inputs.push_back(b.addInt32Scalar(timeMajor ? 1 : 0));
  c.addOperation(OperationType::UNIDIRECTIONAL_SEQUENCE_RNN, std::move(inputs), {output});
  return {};
}

/// Inputs 9-11 (auxiliary input and its weights) are optional.
Result<void> mapBidirectionalSequenceRnn(OperatorContext& c) {
  if (c.inputCount() < 9 || c.inputCount() > 12) {
    return c.error("has " + std::to_string(c.inputCount()) + " inputs; expected 9..12");
  }
  const auto* options = c.options<::tflite::BidirectionalSequenceRNNOptions>();
  const bool merged = options != nullptr && options->merge_outputs();
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outputs, bidirectionalOutputs(c, merged));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs,
                         collectInputs(c, 12, [](size_t i) { return i >= 9; }));
  dequantizeHybridWeights(c, inputs);
  NNHAL_ASSIGN_OR_RETURN(const int32_t activation,
                         recurrentActivation(c, options ? options->fused_activation_function()
                                                        : ::tflite::ActivationFunctionType_NONE));
  ModelBuilder& b = c.builder();
  inputs.push_back(b.addInt32Scalar(activation));
  inputs.push_back(b.addBoolScalar(options != nullptr && options->time_major()));
  inputs.push_back(b.addBoolScalar(merged));
  c.addOperation(OperationType::BIDIRECTIONAL_SEQUENCE_RNN, std::move(inputs), std::move(outputs));
  return {};
}

/// Input 3 (bias) is optional.
Result<void> mapSvdf(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(5, 5, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options,
                         c.requiredOptions<::tflite::SVDFOptions>("SVDFOptions"));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs,
                         collectInputs(c, 5, [](size_t i) { return i == 3; }));
  dequantizeHybridWeights(c, inputs);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_TRY(expectPositive(c, options->rank(), "rank"));
  NNHAL_ASSIGN_OR_RETURN(const int32_t activation,
                         recurrentActivation(c, options->fused_activation_function()));
  ModelBuilder& b = c.builder();
  inputs.push_back(b.addInt32Scalar(options->rank()));
  inputs.push_back(b.addInt32Scalar(activation));
  const uint32_t stateOut = addTemporaryLike(b, inputs[4], c.operand(inputs[4]).dimensions);
  c.addOperation(OperationType::SVDF, std::move(inputs), {stateOut, output});
  return {};
}

/// Only the full kernel (20 or 24 inputs): the basic kernel is NNAPI's QUANTIZED_16BIT_LSTM
/// with rearranged weights, which is not imported.
Result<void> mapLstm(OperatorContext& c) {
  const auto* options = c.options<::tflite::LSTMOptions>();
  if (options != nullptr && options->kernel_type() != ::tflite::LSTMKernelType_FULL) {
    return c.error("the BASIC kernel type is unsupported (only FULL)");
  }
  NNHAL_TRY(expectLstmInputs(c));
  NNHAL_TRY(c.expectCounts(c.inputCount(), c.inputCount(), 1));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs, collectInputs(c, 20, isOptionalLstmTensor));
  dequantizeHybridWeights(c, inputs);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_TRY(appendLstmParameters(
      c, inputs,
      options ? options->fused_activation_function() : ::tflite::ActivationFunctionType_NONE,
      options ? options->cell_clip() : 0.0f, options ? options->proj_clip() : 0.0f));
  if (c.inputCount() == 24) {
    NNHAL_ASSIGN_OR_RETURN(const std::vector<uint32_t> norms,
                           inputsOrOmitted(c, 20, 4, c.operand(inputs[0]).type));
    for (const uint32_t norm : norms)
      inputs.push_back(dequantizedForFloatInput(c, inputs[0], norm));
  }
  ModelBuilder& b = c.builder();
  const uint32_t scratch = addLstmScratch(c, inputs);
  const uint32_t outputState = addTemporaryLike(b, inputs[18], c.operand(inputs[18]).dimensions);
  const uint32_t cellState = addTemporaryLike(b, inputs[19], c.operand(inputs[19]).dimensions);
  c.addOperation(OperationType::LSTM, std::move(inputs), {scratch, outputState, cellState, output});
  return {};
}

Result<void> mapUnidirectionalSequenceLstm(OperatorContext& c) {
  NNHAL_TRY(expectLstmInputs(c));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t first, c.input(0));
  if (c.operand(first).type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    const auto* o = c.options<::tflite::UnidirectionalSequenceLSTMOptions>();
    if (c.subgraph() == nullptr) return c.error("a quantized LSTM needs its subgraph");
    NNHAL_TRY(c.expectCounts(24, 24, 1));
    if (o != nullptr && o->fused_activation_function() != ::tflite::ActivationFunctionType_TANH) {
      return c.error("a quantized LSTM computes tanh; other activations are unsupported");
    }
    return mapQuantizedSequenceLstm(c, *c.subgraph(), o != nullptr && o->time_major(),
                                    o != nullptr ? o->cell_clip() : 0.0f,
                                    o != nullptr ? o->proj_clip() : 0.0f);
  }
  NNHAL_TRY(c.expectCounts(c.inputCount(), c.inputCount(), 1));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs, collectInputs(c, 20, isOptionalLstmTensor));
  dequantizeHybridWeights(c, inputs);
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  const auto* options = c.options<::tflite::UnidirectionalSequenceLSTMOptions>();
  NNHAL_TRY(appendLstmParameters(
      c, inputs,
      options ? options->fused_activation_function() : ::tflite::ActivationFunctionType_NONE,
      options ? options->cell_clip() : 0.0f, options ? options->proj_clip() : 0.0f));
  inputs.push_back(c.builder().addBoolScalar(options != nullptr && options->time_major()));
  // Layer normalization weights: inputs 20-23 of the 24-input form, else omitted.
  NNHAL_ASSIGN_OR_RETURN(const std::vector<uint32_t> norms,
                         inputsOrOmitted(c, 20, 4, c.operand(inputs[0]).type));
  for (const uint32_t norm : norms) inputs.push_back(dequantizedForFloatInput(c, inputs[0], norm));
  c.addOperation(OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, std::move(inputs), {output});
  return {};
}

/// 48 inputs: input, forward weights (1-17), backward weights (18-34), the four states
/// (35-38), auxiliary input and weights (39-47, optional).
Result<void> mapBidirectionalSequenceLstm(OperatorContext& c) {
  if (c.inputCount() != 48) {
    return c.error("has " + std::to_string(c.inputCount()) + " inputs; expected 48");
  }
  const auto* options = c.options<::tflite::BidirectionalSequenceLSTMOptions>();
  const bool merged = options != nullptr && options->merge_outputs();
  // time_major defaults to true in the schema (version 1 files assumed it).
  const bool timeMajor = options == nullptr || options->time_major();
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> outputs, bidirectionalOutputs(c, merged));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint32_t> inputs, collectInputs(c, 48, [](size_t i) {
                           if (i >= 39) return true;
                           if (i >= 35) return false;
                           return isOptionalLstmTensor(i > 17 ? i - 17 : i);
                         }));
  dequantizeHybridWeights(c, inputs);
  NNHAL_TRY(appendLstmParameters(
      c, inputs,
      options ? options->fused_activation_function() : ::tflite::ActivationFunctionType_NONE,
      options ? options->cell_clip() : 0.0f, options ? options->proj_clip() : 0.0f));
  ModelBuilder& b = c.builder();
  inputs.push_back(b.addBoolScalar(merged));
  inputs.push_back(b.addBoolScalar(timeMajor));
  // TFLite has no layer normalization here: the 8 weights NNAPI takes are omitted.
  const OperandType type = c.operand(inputs[0]).type;
  for (int i = 0; i < 8; ++i) inputs.push_back(b.addOmitted(type));
  c.addOperation(OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, std::move(inputs), std::move(outputs));
  return {};
}

/// TFLite's SPARSE type is NNAPI's type 3 (sparse with the function index in the high bits;
/// NNAPI's type 1 is the deprecated form), DENSE is 2.
Result<void> mapLshProjection(OperatorContext& c) {
  NNHAL_TRY(c.expectCounts(2, 3, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto* options,
                         c.requiredOptions<::tflite::LSHProjectionOptions>("LSHProjectionOptions"));
  int32_t type = 0;
  switch (options->type()) {
    case ::tflite::LSHProjectionType_SPARSE:
      type = 3;
      break;
    case ::tflite::LSHProjectionType_DENSE:
      type = 2;
      break;
    default:
      return c.error("projection type " + std::to_string(static_cast<int>(options->type())) +
                     " is neither SPARSE nor DENSE");
  }
  NNHAL_ASSIGN_OR_RETURN(const uint32_t hash, c.input(0));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t input, c.input(1));
  NNHAL_ASSIGN_OR_RETURN(const uint32_t output, c.output(0));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<uint32_t> weight,
                         inputsOrOmitted(c, 2, 1, OperandType::TENSOR_FLOAT32));
  c.addOperation(OperationType::LSH_PROJECTION,
                 {hash, input, weight[0], c.builder().addInt32Scalar(type)}, {output});
  return {};
}

Result<void> mapHashtableLookup(OperatorContext& c) {
  return mapPassThrough(c, OperationType::HASHTABLE_LOOKUP, 3, 2);
}

}  // namespace nnhal::hal::tfl
