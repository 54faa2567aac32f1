#include "engine/operation_registry.h"

#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "engine/ops/ops.h"
#include "nnhal/tflite_compat_extension.h"

namespace nnhal::engine {
namespace {

/// Every fundamental operation the engine implements, sorted by operation code (checked at
/// compile time below). IF and WHILE are absent: the interpreter runs them itself.
constexpr OperationDef kOperations[] = {
    {OperationType::ADD, ops::prepareAdd},
    {OperationType::AVERAGE_POOL_2D, ops::prepareAveragePool2D},
    {OperationType::CONCATENATION, ops::prepareConcatenation},
    {OperationType::CONV_2D, ops::prepareConv2D},
    {OperationType::DEPTHWISE_CONV_2D, ops::prepareDepthwiseConv2D},
    {OperationType::DEPTH_TO_SPACE, ops::prepareDepthToSpace},
    {OperationType::DEQUANTIZE, ops::prepareDequantize},
    {OperationType::EMBEDDING_LOOKUP, ops::prepareEmbeddingLookup},
    {OperationType::FLOOR, ops::prepareFloor},
    {OperationType::FULLY_CONNECTED, ops::prepareFullyConnected},
    {OperationType::HASHTABLE_LOOKUP, ops::prepareHashtableLookup},
    {OperationType::L2_NORMALIZATION, ops::prepareL2Normalization},
    {OperationType::L2_POOL_2D, ops::prepareL2Pool2D},
    {OperationType::LOCAL_RESPONSE_NORMALIZATION, ops::prepareLocalResponseNormalization},
    {OperationType::LOGISTIC, ops::prepareLogistic},
    {OperationType::LSH_PROJECTION, ops::prepareLshProjection},
    {OperationType::LSTM, ops::prepareLstm},
    {OperationType::MAX_POOL_2D, ops::prepareMaxPool2D},
    {OperationType::MUL, ops::prepareMul},
    {OperationType::RELU, ops::prepareRelu},
    {OperationType::RELU1, ops::prepareRelu1},
    {OperationType::RELU6, ops::prepareRelu6},
    {OperationType::RESHAPE, ops::prepareReshape},
    {OperationType::RESIZE_BILINEAR, ops::prepareResizeBilinear},
    {OperationType::RNN, ops::prepareRnn},
    {OperationType::SOFTMAX, ops::prepareSoftmax},
    {OperationType::SPACE_TO_DEPTH, ops::prepareSpaceToDepth},
    {OperationType::SVDF, ops::prepareSvdf},
    {OperationType::TANH, ops::prepareTanh},
    {OperationType::BATCH_TO_SPACE_ND, ops::prepareBatchToSpaceNd},
    {OperationType::DIV, ops::prepareDiv},
    {OperationType::MEAN, ops::prepareMean},
    {OperationType::PAD, ops::preparePad},
    {OperationType::SPACE_TO_BATCH_ND, ops::prepareSpaceToBatchNd},
    {OperationType::SQUEEZE, ops::prepareSqueeze},
    {OperationType::STRIDED_SLICE, ops::prepareStridedSlice},
    {OperationType::SUB, ops::prepareSub},
    {OperationType::TRANSPOSE, ops::prepareTranspose},
    {OperationType::ABS, ops::prepareAbs},
    {OperationType::ARGMAX, ops::prepareArgMax},
    {OperationType::ARGMIN, ops::prepareArgMin},
    {OperationType::AXIS_ALIGNED_BBOX_TRANSFORM, ops::prepareAxisAlignedBboxTransform},
    {OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, ops::prepareBidirectionalSequenceLstm},
    {OperationType::BIDIRECTIONAL_SEQUENCE_RNN, ops::prepareBidirectionalSequenceRnn},
    {OperationType::BOX_WITH_NMS_LIMIT, ops::prepareBoxWithNmsLimit},
    {OperationType::CAST, ops::prepareCast},
    {OperationType::CHANNEL_SHUFFLE, ops::prepareChannelShuffle},
    {OperationType::DETECTION_POSTPROCESSING, ops::prepareDetectionPostprocessing},
    {OperationType::EQUAL, ops::prepareEqual},
    {OperationType::EXP, ops::prepareExp},
    {OperationType::EXPAND_DIMS, ops::prepareExpandDims},
    {OperationType::GATHER, ops::prepareGather},
    {OperationType::GENERATE_PROPOSALS, ops::prepareGenerateProposals},
    {OperationType::GREATER, ops::prepareGreater},
    {OperationType::GREATER_EQUAL, ops::prepareGreaterEqual},
    {OperationType::GROUPED_CONV_2D, ops::prepareGroupedConv2D},
    {OperationType::HEATMAP_MAX_KEYPOINT, ops::prepareHeatmapMaxKeypoint},
    {OperationType::INSTANCE_NORMALIZATION, ops::prepareInstanceNormalization},
    {OperationType::LESS, ops::prepareLess},
    {OperationType::LESS_EQUAL, ops::prepareLessEqual},
    {OperationType::LOG, ops::prepareLog},
    {OperationType::LOGICAL_AND, ops::prepareLogicalAnd},
    {OperationType::LOGICAL_NOT, ops::prepareLogicalNot},
    {OperationType::LOGICAL_OR, ops::prepareLogicalOr},
    {OperationType::LOG_SOFTMAX, ops::prepareLogSoftmax},
    {OperationType::MAXIMUM, ops::prepareMaximum},
    {OperationType::MINIMUM, ops::prepareMinimum},
    {OperationType::NEG, ops::prepareNeg},
    {OperationType::NOT_EQUAL, ops::prepareNotEqual},
    {OperationType::PAD_V2, ops::preparePadV2},
    {OperationType::POW, ops::preparePow},
    {OperationType::PRELU, ops::preparePrelu},
    {OperationType::QUANTIZE, ops::prepareQuantize},
    {OperationType::QUANTIZED_16BIT_LSTM, ops::prepareQuantized16BitLstm},
    {OperationType::RANDOM_MULTINOMIAL, ops::prepareRandomMultinomial},
    {OperationType::REDUCE_ALL, ops::prepareReduceAll},
    {OperationType::REDUCE_ANY, ops::prepareReduceAny},
    {OperationType::REDUCE_MAX, ops::prepareReduceMax},
    {OperationType::REDUCE_MIN, ops::prepareReduceMin},
    {OperationType::REDUCE_PROD, ops::prepareReduceProd},
    {OperationType::REDUCE_SUM, ops::prepareReduceSum},
    {OperationType::ROI_ALIGN, ops::prepareRoiAlign},
    {OperationType::ROI_POOLING, ops::prepareRoiPooling},
    {OperationType::RSQRT, ops::prepareRsqrt},
    {OperationType::SELECT, ops::prepareSelect},
    {OperationType::SIN, ops::prepareSin},
    {OperationType::SLICE, ops::prepareSlice},
    {OperationType::SPLIT, ops::prepareSplit},
    {OperationType::SQRT, ops::prepareSqrt},
    {OperationType::TILE, ops::prepareTile},
    {OperationType::TOPK_V2, ops::prepareTopKV2},
    {OperationType::TRANSPOSE_CONV_2D, ops::prepareTransposeConv2D},
    {OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, ops::prepareUnidirectionalSequenceLstm},
    {OperationType::UNIDIRECTIONAL_SEQUENCE_RNN, ops::prepareUnidirectionalSequenceRnn},
    {OperationType::RESIZE_NEAREST_NEIGHBOR, ops::prepareResizeNearestNeighbor},
    {OperationType::QUANTIZED_LSTM, ops::prepareQuantizedLstm},
    {OperationType::ELU, ops::prepareElu},
    {OperationType::HARD_SWISH, ops::prepareHardSwish},
    {OperationType::FILL, ops::prepareFill},
    {OperationType::RANK, ops::prepareRank},
};

constexpr bool sortedWithoutRepeats() {
  for (size_t i = 1; i < std::size(kOperations); ++i) {
    if (static_cast<int32_t>(kOperations[i - 1].type) >=
        static_cast<int32_t>(kOperations[i].type)) {
      return false;
    }
  }
  return true;
}
static_assert(sortedWithoutRepeats(), "kOperations: sort by operation code, one entry per type");
static_assert(static_cast<int32_t>(kOperations[std::size(kOperations) - 1].type) <=
                  kOperationTypeFundamentalMax,
              "kOperations holds fundamental operation codes only");

// The operations whose kernels read these input slots as plain values (operation_registry.h,
// plainDataInputs), sorted by code: arithmetic that computes every output from the inputs'
// values. Left out on purpose: quantized SOFTMAX and LOG_SOFTMAX (a table indexed by
// max - x), DIV (an int32 divisor checked for zero), the normalizations (data-dependent
// shifts), every operation with index, shape or coordinate inputs beyond the listed slots
// (GATHER, EMBEDDING_LOOKUP, ROI_*, detection...), and the operations that copy bytes
// (RESHAPE, CONCATENATION, PAD, TRANSPOSE, the resizes...): with an output that overlaps its
// input in the same pool, their memcpy would be undefined.
struct PlainDataDef {
  OperationType type;
  uint32_t inputs;
};
constexpr uint32_t kFirst = 0b1;
constexpr uint32_t kFirstTwo = 0b11;
constexpr PlainDataDef kPlainData[] = {
    {OperationType::ADD, kFirstTwo},
    {OperationType::AVERAGE_POOL_2D, kFirst},
    {OperationType::CONV_2D, kFirst},
    {OperationType::DEPTHWISE_CONV_2D, kFirst},
    {OperationType::DEQUANTIZE, kFirst},
    {OperationType::FLOOR, kFirst},
    {OperationType::FULLY_CONNECTED, kFirst},
    {OperationType::L2_POOL_2D, kFirst},
    {OperationType::LOGISTIC, kFirst},
    {OperationType::MAX_POOL_2D, kFirst},
    {OperationType::MUL, kFirstTwo},
    {OperationType::RELU, kFirst},
    {OperationType::RELU1, kFirst},
    {OperationType::RELU6, kFirst},
    {OperationType::TANH, kFirst},
    {OperationType::MEAN, kFirst},
    {OperationType::SUB, kFirstTwo},
    {OperationType::ABS, kFirst},
    {OperationType::GROUPED_CONV_2D, kFirst},
    {OperationType::MAXIMUM, kFirstTwo},
    {OperationType::MINIMUM, kFirstTwo},
    {OperationType::NEG, kFirst},
    {OperationType::PRELU, kFirstTwo},
    {OperationType::QUANTIZE, kFirst},
    {OperationType::TRANSPOSE_CONV_2D, kFirst},
    {OperationType::HARD_SWISH, kFirst},
};

constexpr bool plainDataSorted() {
  for (size_t i = 1; i < std::size(kPlainData); ++i) {
    if (static_cast<int32_t>(kPlainData[i - 1].type) >= static_cast<int32_t>(kPlainData[i].type)) {
      return false;
    }
  }
  return true;
}
static_assert(plainDataSorted(), "kPlainData: sort by operation code, one entry per type");

/// One operation of a vendor extension: its extension's name, its type within the extension
/// (the low 16 bits of the code), its name and its prepare function. The full code depends on
/// the prefix each model gives the extension in Model::extensionNameToPrefix.
struct ExtensionOperationDef {
  std::string_view extension;
  uint16_t type = 0;
  std::string_view name;
  OperationDef def;
};

constexpr ExtensionOperationDef extensionOperation(tflite_compat::Operation operation,
                                                   std::string_view name, PrepareFn prepare) {
  return {tflite_compat::kExtensionName, static_cast<uint16_t>(operation), name,
          OperationDef{OperationType::OEM_OPERATION, prepare}};
}

/// The operations of the extensions the engine implements (org.nnhal.tflite_compat).
constexpr ExtensionOperationDef kExtensionOperations[] = {
    extensionOperation(tflite_compat::Operation::FLOOR_DIV, "FLOOR_DIV", ops::prepareFloorDiv),
    extensionOperation(tflite_compat::Operation::GATHER_ND, "GATHER_ND", ops::prepareGatherNd),
    extensionOperation(tflite_compat::Operation::RESHAPE, "RESHAPE",
                       ops::prepareTfliteCompatReshape),
    extensionOperation(tflite_compat::Operation::CONCATENATION, "CONCATENATION",
                       ops::prepareTfliteCompatConcatenation),
};

bool isExtensionCode(OperationType type) { return static_cast<uint32_t>(type) > 0xFFFFu; }

/// The name `model` gives the prefix of extension code `type`; nullopt when it lists none.
std::optional<std::string_view> extensionNameOf(OperationType type, const Model& model) {
  const uint16_t prefix = extensionPrefixOf(static_cast<uint32_t>(type));
  for (const ExtensionNameAndPrefix& entry : model.extensionNameToPrefix) {
    if (entry.prefix == prefix) return std::string_view(entry.name);
  }
  return std::nullopt;
}

const ExtensionOperationDef* findExtensionOperation(OperationType type, const Model& model) {
  const auto name = extensionNameOf(type, model);
  if (!name) return nullptr;
  const uint16_t low = extensionTypeOf(static_cast<uint32_t>(type));
  for (const ExtensionOperationDef& def : kExtensionOperations) {
    if (def.extension == *name && def.type == low) return &def;
  }
  return nullptr;
}

bool isSupportedExtension(std::string_view name) { return name == tflite_compat::kExtensionName; }

}  // namespace

std::span<const OperationDef> implementedOperations() { return kOperations; }

const OperationDef* findOperation(OperationType type) {
  const auto* end = std::end(kOperations);
  const auto* found = std::lower_bound(
      std::begin(kOperations), end, static_cast<int32_t>(type),
      [](const OperationDef& def, int32_t code) { return static_cast<int32_t>(def.type) < code; });
  return found != end && found->type == type ? found : nullptr;
}

uint32_t plainDataInputs(OperationType type) {
  const auto* end = std::end(kPlainData);
  const auto* found = std::lower_bound(
      std::begin(kPlainData), end, static_cast<int32_t>(type),
      [](const PlainDataDef& def, int32_t code) { return static_cast<int32_t>(def.type) < code; });
  return found != end && found->type == type ? found->inputs : 0;
}

const OperationDef* findOperation(OperationType type, const Model& model) {
  if (!isExtensionCode(type)) return findOperation(type);
  const ExtensionOperationDef* def = findExtensionOperation(type, model);
  return def != nullptr ? &def->def : nullptr;
}

std::string operationName(OperationType type, const Model& model) {
  if (!isExtensionCode(type)) return std::string(toString(type));
  if (const ExtensionOperationDef* def = findExtensionOperation(type, model)) {
    return std::string(def->name);
  }
  const auto name = extensionNameOf(type, model);
  return fmt::format("extension operation {:#x} ({})", static_cast<uint32_t>(type),
                     name ? *name : std::string_view("prefix not in extensionNameToPrefix"));
}

std::string unsupportedReason(OperationType type, const Model& model) {
  if (findOperation(type, model) != nullptr) return {};
  if (!isExtensionCode(type)) return "no implementation of " + std::string(toString(type));
  const auto name = extensionNameOf(type, model);
  if (name && isSupportedExtension(*name)) {
    return fmt::format("no implementation of type {} of extension {}",
                       extensionTypeOf(static_cast<uint32_t>(type)), *name);
  }
  return fmt::format("no implementation of {}: this driver does not support extension {}",
                     operationName(type, model),
                     name ? *name : std::string_view("(prefix not listed)"));
}

std::vector<Extension> supportedExtensions() { return {tflite_compat::describe()}; }

}  // namespace nnhal::engine
