#include "hal/tflite/operator_mapping.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/mappings.h"

namespace nnhal::hal::tfl {
namespace {

using Op = OperationType;
namespace lite = ::tflite;

struct MappingEntry {
  lite::BuiltinOperator code;
  OperatorMapping mapping;
};

// Every builtin operator with an NN HAL equivalent. Operators missing here (MIRROR_PAD,
// SQUARE, SQUARED_DIFFERENCE, CEIL, COS, ROUND, RANK, WHILE, ...) are rejected by name;
// FLOOR_DIV and GATHER_ND import as vendor extension operations when the device reports the
// extension (map_extension.cpp), and are rejected by name otherwise.
constexpr std::array kMappings{
    // Arithmetic and activations.
    MappingEntry{lite::BuiltinOperator_ADD, &mapBinaryWithActivation<Op::ADD, lite::AddOptions>},
    MappingEntry{lite::BuiltinOperator_SUB, &mapBinaryWithActivation<Op::SUB, lite::SubOptions>},
    MappingEntry{lite::BuiltinOperator_MUL, &mapBinaryWithActivation<Op::MUL, lite::MulOptions>},
    MappingEntry{lite::BuiltinOperator_DIV, &mapBinaryWithActivation<Op::DIV, lite::DivOptions>},
    MappingEntry{lite::BuiltinOperator_MAXIMUM, &mapBinary<Op::MAXIMUM>},
    MappingEntry{lite::BuiltinOperator_MINIMUM, &mapBinary<Op::MINIMUM>},
    MappingEntry{lite::BuiltinOperator_POW, &mapBinary<Op::POW>},
    MappingEntry{lite::BuiltinOperator_ABS, &mapUnary<Op::ABS>},
    MappingEntry{lite::BuiltinOperator_EXP, &mapUnary<Op::EXP>},
    MappingEntry{lite::BuiltinOperator_LOG, &mapUnary<Op::LOG>},
    MappingEntry{lite::BuiltinOperator_NEG, &mapUnary<Op::NEG>},
    MappingEntry{lite::BuiltinOperator_RSQRT, &mapUnary<Op::RSQRT>},
    MappingEntry{lite::BuiltinOperator_SIN, &mapUnary<Op::SIN>},
    MappingEntry{lite::BuiltinOperator_SQRT, &mapUnary<Op::SQRT>},
    MappingEntry{lite::BuiltinOperator_FLOOR, &mapUnary<Op::FLOOR>},
    MappingEntry{lite::BuiltinOperator_RELU, &mapUnary<Op::RELU>},
    MappingEntry{lite::BuiltinOperator_RELU6, &mapUnary<Op::RELU6>},
    MappingEntry{lite::BuiltinOperator_RELU_N1_TO_1, &mapUnary<Op::RELU1>},
    MappingEntry{lite::BuiltinOperator_LOGISTIC, &mapUnary<Op::LOGISTIC>},
    MappingEntry{lite::BuiltinOperator_TANH, &mapUnary<Op::TANH>},
    MappingEntry{lite::BuiltinOperator_HARD_SWISH, &mapUnary<Op::HARD_SWISH>},
    MappingEntry{lite::BuiltinOperator_ELU, &mapElu},
    MappingEntry{lite::BuiltinOperator_PRELU, &mapBinary<Op::PRELU>},
    MappingEntry{lite::BuiltinOperator_LEAKY_RELU, &mapLeakyRelu},
    // Comparisons, logic, selection, type conversion.
    MappingEntry{lite::BuiltinOperator_EQUAL, &mapBinary<Op::EQUAL>},
    MappingEntry{lite::BuiltinOperator_NOT_EQUAL, &mapBinary<Op::NOT_EQUAL>},
    MappingEntry{lite::BuiltinOperator_GREATER, &mapBinary<Op::GREATER>},
    MappingEntry{lite::BuiltinOperator_GREATER_EQUAL, &mapBinary<Op::GREATER_EQUAL>},
    MappingEntry{lite::BuiltinOperator_LESS, &mapBinary<Op::LESS>},
    MappingEntry{lite::BuiltinOperator_LESS_EQUAL, &mapBinary<Op::LESS_EQUAL>},
    MappingEntry{lite::BuiltinOperator_LOGICAL_AND, &mapBinary<Op::LOGICAL_AND>},
    MappingEntry{lite::BuiltinOperator_LOGICAL_OR, &mapBinary<Op::LOGICAL_OR>},
    MappingEntry{lite::BuiltinOperator_LOGICAL_NOT, &mapUnary<Op::LOGICAL_NOT>},
    MappingEntry{lite::BuiltinOperator_SELECT, &mapSelect},
    MappingEntry{lite::BuiltinOperator_SELECT_V2, &mapSelect},
    MappingEntry{lite::BuiltinOperator_CAST, &mapUnary<Op::CAST>},
    MappingEntry{lite::BuiltinOperator_QUANTIZE, &mapQuantize},
    MappingEntry{lite::BuiltinOperator_DEQUANTIZE, &mapDequantize},
    // Convolution, pooling, normalization.
    MappingEntry{lite::BuiltinOperator_CONV_2D, &mapConv2d},
    MappingEntry{lite::BuiltinOperator_DEPTHWISE_CONV_2D, &mapDepthwiseConv2d},
    MappingEntry{lite::BuiltinOperator_TRANSPOSE_CONV, &mapTransposeConv},
    MappingEntry{lite::BuiltinOperator_FULLY_CONNECTED, &mapFullyConnected},
    MappingEntry{lite::BuiltinOperator_AVERAGE_POOL_2D, &mapPool2d<Op::AVERAGE_POOL_2D>},
    MappingEntry{lite::BuiltinOperator_MAX_POOL_2D, &mapPool2d<Op::MAX_POOL_2D>},
    MappingEntry{lite::BuiltinOperator_L2_POOL_2D, &mapPool2d<Op::L2_POOL_2D>},
    MappingEntry{lite::BuiltinOperator_SOFTMAX, &mapSoftmax},
    MappingEntry{lite::BuiltinOperator_LOG_SOFTMAX, &mapLogSoftmax},
    MappingEntry{lite::BuiltinOperator_L2_NORMALIZATION, &mapL2Normalization},
    MappingEntry{lite::BuiltinOperator_LOCAL_RESPONSE_NORMALIZATION,
                 &mapLocalResponseNormalization},
    MappingEntry{lite::BuiltinOperator_RESIZE_BILINEAR, &mapResizeBilinear},
    MappingEntry{lite::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR, &mapResizeNearestNeighbor},
    // Reductions.
    MappingEntry{lite::BuiltinOperator_MEAN, &mapMean},
    MappingEntry{lite::BuiltinOperator_SUM, &mapReduction<Op::REDUCE_SUM>},
    MappingEntry{lite::BuiltinOperator_REDUCE_PROD, &mapReduction<Op::REDUCE_PROD>},
    MappingEntry{lite::BuiltinOperator_REDUCE_MAX, &mapReduction<Op::REDUCE_MAX>},
    MappingEntry{lite::BuiltinOperator_REDUCE_MIN, &mapReduction<Op::REDUCE_MIN>},
    MappingEntry{lite::BuiltinOperator_REDUCE_ANY, &mapReduction<Op::REDUCE_ANY>},
    MappingEntry{lite::BuiltinOperator_REDUCE_ALL, &mapReduction<Op::REDUCE_ALL>},
    MappingEntry{lite::BuiltinOperator_ARG_MAX, &mapArgMax},
    MappingEntry{lite::BuiltinOperator_ARG_MIN, &mapArgMin},
    MappingEntry{lite::BuiltinOperator_TOPK_V2, &mapTopKV2},
    // Shapes and indexing.
    MappingEntry{lite::BuiltinOperator_RESHAPE, &mapReshape},
    MappingEntry{lite::BuiltinOperator_SQUEEZE, &mapSqueeze},
    MappingEntry{lite::BuiltinOperator_EXPAND_DIMS, &mapExpandDims},
    MappingEntry{lite::BuiltinOperator_CONCATENATION, &mapConcatenation},
    MappingEntry{lite::BuiltinOperator_PACK, &mapPack},
    MappingEntry{lite::BuiltinOperator_UNPACK, &mapUnpack},
    MappingEntry{lite::BuiltinOperator_SPLIT, &mapSplit},
    MappingEntry{lite::BuiltinOperator_SPLIT_V, &mapSplitV},
    MappingEntry{lite::BuiltinOperator_PAD, &mapPad},
    MappingEntry{lite::BuiltinOperator_PADV2, &mapPad},
    MappingEntry{lite::BuiltinOperator_SLICE, &mapTernary<Op::SLICE>},
    MappingEntry{lite::BuiltinOperator_STRIDED_SLICE, &mapStridedSlice},
    MappingEntry{lite::BuiltinOperator_TRANSPOSE, &mapBinary<Op::TRANSPOSE>},
    MappingEntry{lite::BuiltinOperator_TILE, &mapBinary<Op::TILE>},
    MappingEntry{lite::BuiltinOperator_GATHER, &mapGather},
    MappingEntry{lite::BuiltinOperator_FILL, &mapFill},
    MappingEntry{lite::BuiltinOperator_SPACE_TO_DEPTH, &mapSpaceToDepth},
    MappingEntry{lite::BuiltinOperator_DEPTH_TO_SPACE, &mapDepthToSpace},
    MappingEntry{lite::BuiltinOperator_SPACE_TO_BATCH_ND, &mapTernary<Op::SPACE_TO_BATCH_ND>},
    MappingEntry{lite::BuiltinOperator_BATCH_TO_SPACE_ND, &mapBatchToSpaceNd},
    // Lookups, hashing and recurrent layers.
    MappingEntry{lite::BuiltinOperator_EMBEDDING_LOOKUP, &mapBinary<Op::EMBEDDING_LOOKUP>},
    MappingEntry{lite::BuiltinOperator_HASHTABLE_LOOKUP, &mapHashtableLookup},
    MappingEntry{lite::BuiltinOperator_LSH_PROJECTION, &mapLshProjection},
    MappingEntry{lite::BuiltinOperator_RNN, &mapRnn},
    MappingEntry{lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_RNN, &mapUnidirectionalSequenceRnn},
    MappingEntry{lite::BuiltinOperator_BIDIRECTIONAL_SEQUENCE_RNN, &mapBidirectionalSequenceRnn},
    MappingEntry{lite::BuiltinOperator_SVDF, &mapSvdf},
    MappingEntry{lite::BuiltinOperator_LSTM, &mapLstm},
    MappingEntry{lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM,
                 &mapUnidirectionalSequenceLstm},
    MappingEntry{lite::BuiltinOperator_BIDIRECTIONAL_SEQUENCE_LSTM, &mapBidirectionalSequenceLstm},
};

}  // namespace

// --- OperatorContext ----------------------------------------------------------------------

bool OperatorContext::hasInput(size_t i) const {
  return i < inputCount() && op_.inputs()->Get(static_cast<flatbuffers::uoffset_t>(i)) >= 0;
}

Result<uint32_t> OperatorContext::tensorOperand(const flatbuffers::Vector<int32_t>* list, size_t i,
                                                std::string_view what) const {
  if (list == nullptr || i >= list->size()) {
    return error(std::string(what) + " " + std::to_string(i) + " is missing");
  }
  const int32_t tensor = list->Get(static_cast<flatbuffers::uoffset_t>(i));
  if (tensor < 0) return error(std::string(what) + " " + std::to_string(i) + " is omitted (-1)");
  // The importer has checked every index against the tensor count; re-check anyway.
  const auto t = static_cast<size_t>(tensor);
  if (t >= tensorOperands_.size() || !tensorOperands_[t]) {
    return error(std::string(what) + " " + std::to_string(i) + " names no tensor");
  }
  return *tensorOperands_[t];
}

Result<uint32_t> OperatorContext::input(size_t i) const {
  return tensorOperand(op_.inputs(), i, "input");
}

Result<uint32_t> OperatorContext::int32TensorInput(size_t i, std::string_view what) const {
  NNHAL_ASSIGN_OR_RETURN(const uint32_t index, input(i));
  if (operand(index).type != OperandType::TENSOR_INT32) {
    return error("the " + std::string(what) + " tensor must be INT32");
  }
  return index;
}

Result<uint32_t> OperatorContext::output(size_t i) const {
  return tensorOperand(op_.outputs(), i, "output");
}

std::optional<uint32_t> OperatorContext::optionalInput(size_t i) const {
  if (!hasInput(i)) return std::nullopt;
  auto operand = input(i);
  return operand ? std::optional<uint32_t>(*operand) : std::nullopt;
}

Result<std::vector<uint32_t>> OperatorContext::outputs() const {
  std::vector<uint32_t> operands;
  for (size_t i = 0; i < outputCount(); ++i) {
    NNHAL_ASSIGN_OR_RETURN(const uint32_t operand, output(i));
    operands.push_back(operand);
  }
  return operands;
}

Result<void> OperatorContext::expectCounts(size_t minInputs, size_t maxInputs,
                                           size_t outputs) const {
  if (inputCount() < minInputs || inputCount() > maxInputs) {
    const std::string expected = minInputs == maxInputs
                                     ? std::to_string(minInputs)
                                     : std::to_string(minInputs) + ".." + std::to_string(maxInputs);
    return error("has " + std::to_string(inputCount()) + " inputs; expected " + expected);
  }
  if (outputCount() != outputs) {
    return error("has " + std::to_string(outputCount()) + " outputs; expected " +
                 std::to_string(outputs));
  }
  return {};
}

Result<int32_t> OperatorContext::fusedActivation(
    ::tflite::ActivationFunctionType activation) const {
  switch (activation) {
    case ::tflite::ActivationFunctionType_NONE:
      return static_cast<int32_t>(FusedActivationFunc::NONE);
    case ::tflite::ActivationFunctionType_RELU:
      return static_cast<int32_t>(FusedActivationFunc::RELU);
    case ::tflite::ActivationFunctionType_RELU_N1_TO_1:
      return static_cast<int32_t>(FusedActivationFunc::RELU1);
    case ::tflite::ActivationFunctionType_RELU6:
      return static_cast<int32_t>(FusedActivationFunc::RELU6);
    case ::tflite::ActivationFunctionType_TANH:
    case ::tflite::ActivationFunctionType_SIGN_BIT:
      return error(std::string("fused activation ") +
                   ::tflite::EnumNameActivationFunctionType(activation) +
                   " has no NNAPI equivalent");
  }
  return error("unknown fused activation code " + std::to_string(static_cast<int>(activation)));
}

Result<int32_t> OperatorContext::paddingCode(::tflite::Padding padding) const {
  switch (padding) {
    case ::tflite::Padding_SAME:
      return 1;  // ANEURALNETWORKS_PADDING_SAME
    case ::tflite::Padding_VALID:
      return 2;  // ANEURALNETWORKS_PADDING_VALID
  }
  return error("unknown padding code " + std::to_string(static_cast<int>(padding)));
}

std::unexpected<Error> OperatorContext::error(std::string_view message) const {
  return invalidArgument("TFLite operator " + std::to_string(index_) + " (" + std::string(name_) +
                         "): " + std::string(message));
}

// --- lookups ------------------------------------------------------------------------------

OperatorMapping findOperatorMapping(int32_t builtinCode) {
  for (const MappingEntry& entry : kMappings) {
    if (static_cast<int32_t>(entry.code) == builtinCode) return entry.mapping;
  }
  return nullptr;
}

OperatorMapping findCustomOperatorMapping(std::string_view customCode) {
  if (customCode == "TFLite_Detection_PostProcess") return &mapDetectionPostprocess;
  return nullptr;
}

std::string_view builtinOperatorName(int32_t builtinCode) {
  if (builtinCode < ::tflite::BuiltinOperator_MIN || builtinCode > ::tflite::BuiltinOperator_MAX) {
    return "UNKNOWN";
  }
  const char* name =
      ::tflite::EnumNameBuiltinOperator(static_cast<::tflite::BuiltinOperator>(builtinCode));
  return name != nullptr && name[0] != '\0' ? std::string_view(name) : "UNKNOWN";
}

}  // namespace nnhal::hal::tfl
