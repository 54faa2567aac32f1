// Names of the public enums: the NN HAL's as types.hal spells them, and nnhal's own.
#include <array>
#include <string>
#include <utility>

#include "common/enum_names.h"
#include "nnhal/cache_directory.h"
#include "nnhal/device.h"
#include "nnhal/memory.h"
#include "nnhal/status.h"
#include "nnhal/types.h"
#include "nnhal/version_compliance.h"

namespace nnhal {
namespace {

constexpr common::EnumNames<OperandType, 18> kOperandTypeNames{{
    {OperandType::FLOAT32, "FLOAT32"},
    {OperandType::INT32, "INT32"},
    {OperandType::UINT32, "UINT32"},
    {OperandType::TENSOR_FLOAT32, "TENSOR_FLOAT32"},
    {OperandType::TENSOR_INT32, "TENSOR_INT32"},
    {OperandType::TENSOR_QUANT8_ASYMM, "TENSOR_QUANT8_ASYMM"},
    {OperandType::BOOL, "BOOL"},
    {OperandType::TENSOR_QUANT16_SYMM, "TENSOR_QUANT16_SYMM"},
    {OperandType::TENSOR_FLOAT16, "TENSOR_FLOAT16"},
    {OperandType::TENSOR_BOOL8, "TENSOR_BOOL8"},
    {OperandType::FLOAT16, "FLOAT16"},
    {OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, "TENSOR_QUANT8_SYMM_PER_CHANNEL"},
    {OperandType::TENSOR_QUANT16_ASYMM, "TENSOR_QUANT16_ASYMM"},
    {OperandType::TENSOR_QUANT8_SYMM, "TENSOR_QUANT8_SYMM"},
    {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, "TENSOR_QUANT8_ASYMM_SIGNED"},
    {OperandType::SUBGRAPH, "SUBGRAPH"},
    {OperandType::OEM, "OEM"},
    {OperandType::TENSOR_OEM_BYTE, "TENSOR_OEM_BYTE"},
}};

constexpr common::EnumNames<OperationType, 103> kOperationTypeNames{{
    {OperationType::ADD, "ADD"},
    {OperationType::AVERAGE_POOL_2D, "AVERAGE_POOL_2D"},
    {OperationType::CONCATENATION, "CONCATENATION"},
    {OperationType::CONV_2D, "CONV_2D"},
    {OperationType::DEPTHWISE_CONV_2D, "DEPTHWISE_CONV_2D"},
    {OperationType::DEPTH_TO_SPACE, "DEPTH_TO_SPACE"},
    {OperationType::DEQUANTIZE, "DEQUANTIZE"},
    {OperationType::EMBEDDING_LOOKUP, "EMBEDDING_LOOKUP"},
    {OperationType::FLOOR, "FLOOR"},
    {OperationType::FULLY_CONNECTED, "FULLY_CONNECTED"},
    {OperationType::HASHTABLE_LOOKUP, "HASHTABLE_LOOKUP"},
    {OperationType::L2_NORMALIZATION, "L2_NORMALIZATION"},
    {OperationType::L2_POOL_2D, "L2_POOL_2D"},
    {OperationType::LOCAL_RESPONSE_NORMALIZATION, "LOCAL_RESPONSE_NORMALIZATION"},
    {OperationType::LOGISTIC, "LOGISTIC"},
    {OperationType::LSH_PROJECTION, "LSH_PROJECTION"},
    {OperationType::LSTM, "LSTM"},
    {OperationType::MAX_POOL_2D, "MAX_POOL_2D"},
    {OperationType::MUL, "MUL"},
    {OperationType::RELU, "RELU"},
    {OperationType::RELU1, "RELU1"},
    {OperationType::RELU6, "RELU6"},
    {OperationType::RESHAPE, "RESHAPE"},
    {OperationType::RESIZE_BILINEAR, "RESIZE_BILINEAR"},
    {OperationType::RNN, "RNN"},
    {OperationType::SOFTMAX, "SOFTMAX"},
    {OperationType::SPACE_TO_DEPTH, "SPACE_TO_DEPTH"},
    {OperationType::SVDF, "SVDF"},
    {OperationType::TANH, "TANH"},
    {OperationType::BATCH_TO_SPACE_ND, "BATCH_TO_SPACE_ND"},
    {OperationType::DIV, "DIV"},
    {OperationType::MEAN, "MEAN"},
    {OperationType::PAD, "PAD"},
    {OperationType::SPACE_TO_BATCH_ND, "SPACE_TO_BATCH_ND"},
    {OperationType::SQUEEZE, "SQUEEZE"},
    {OperationType::STRIDED_SLICE, "STRIDED_SLICE"},
    {OperationType::SUB, "SUB"},
    {OperationType::TRANSPOSE, "TRANSPOSE"},
    {OperationType::ABS, "ABS"},
    {OperationType::ARGMAX, "ARGMAX"},
    {OperationType::ARGMIN, "ARGMIN"},
    {OperationType::AXIS_ALIGNED_BBOX_TRANSFORM, "AXIS_ALIGNED_BBOX_TRANSFORM"},
    {OperationType::BIDIRECTIONAL_SEQUENCE_LSTM, "BIDIRECTIONAL_SEQUENCE_LSTM"},
    {OperationType::BIDIRECTIONAL_SEQUENCE_RNN, "BIDIRECTIONAL_SEQUENCE_RNN"},
    {OperationType::BOX_WITH_NMS_LIMIT, "BOX_WITH_NMS_LIMIT"},
    {OperationType::CAST, "CAST"},
    {OperationType::CHANNEL_SHUFFLE, "CHANNEL_SHUFFLE"},
    {OperationType::DETECTION_POSTPROCESSING, "DETECTION_POSTPROCESSING"},
    {OperationType::EQUAL, "EQUAL"},
    {OperationType::EXP, "EXP"},
    {OperationType::EXPAND_DIMS, "EXPAND_DIMS"},
    {OperationType::GATHER, "GATHER"},
    {OperationType::GENERATE_PROPOSALS, "GENERATE_PROPOSALS"},
    {OperationType::GREATER, "GREATER"},
    {OperationType::GREATER_EQUAL, "GREATER_EQUAL"},
    {OperationType::GROUPED_CONV_2D, "GROUPED_CONV_2D"},
    {OperationType::HEATMAP_MAX_KEYPOINT, "HEATMAP_MAX_KEYPOINT"},
    {OperationType::INSTANCE_NORMALIZATION, "INSTANCE_NORMALIZATION"},
    {OperationType::LESS, "LESS"},
    {OperationType::LESS_EQUAL, "LESS_EQUAL"},
    {OperationType::LOG, "LOG"},
    {OperationType::LOGICAL_AND, "LOGICAL_AND"},
    {OperationType::LOGICAL_NOT, "LOGICAL_NOT"},
    {OperationType::LOGICAL_OR, "LOGICAL_OR"},
    {OperationType::LOG_SOFTMAX, "LOG_SOFTMAX"},
    {OperationType::MAXIMUM, "MAXIMUM"},
    {OperationType::MINIMUM, "MINIMUM"},
    {OperationType::NEG, "NEG"},
    {OperationType::NOT_EQUAL, "NOT_EQUAL"},
    {OperationType::PAD_V2, "PAD_V2"},
    {OperationType::POW, "POW"},
    {OperationType::PRELU, "PRELU"},
    {OperationType::QUANTIZE, "QUANTIZE"},
    {OperationType::QUANTIZED_16BIT_LSTM, "QUANTIZED_16BIT_LSTM"},
    {OperationType::RANDOM_MULTINOMIAL, "RANDOM_MULTINOMIAL"},
    {OperationType::REDUCE_ALL, "REDUCE_ALL"},
    {OperationType::REDUCE_ANY, "REDUCE_ANY"},
    {OperationType::REDUCE_MAX, "REDUCE_MAX"},
    {OperationType::REDUCE_MIN, "REDUCE_MIN"},
    {OperationType::REDUCE_PROD, "REDUCE_PROD"},
    {OperationType::REDUCE_SUM, "REDUCE_SUM"},
    {OperationType::ROI_ALIGN, "ROI_ALIGN"},
    {OperationType::ROI_POOLING, "ROI_POOLING"},
    {OperationType::RSQRT, "RSQRT"},
    {OperationType::SELECT, "SELECT"},
    {OperationType::SIN, "SIN"},
    {OperationType::SLICE, "SLICE"},
    {OperationType::SPLIT, "SPLIT"},
    {OperationType::SQRT, "SQRT"},
    {OperationType::TILE, "TILE"},
    {OperationType::TOPK_V2, "TOPK_V2"},
    {OperationType::TRANSPOSE_CONV_2D, "TRANSPOSE_CONV_2D"},
    {OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM, "UNIDIRECTIONAL_SEQUENCE_LSTM"},
    {OperationType::UNIDIRECTIONAL_SEQUENCE_RNN, "UNIDIRECTIONAL_SEQUENCE_RNN"},
    {OperationType::RESIZE_NEAREST_NEIGHBOR, "RESIZE_NEAREST_NEIGHBOR"},
    {OperationType::QUANTIZED_LSTM, "QUANTIZED_LSTM"},
    {OperationType::IF, "IF"},
    {OperationType::WHILE, "WHILE"},
    {OperationType::ELU, "ELU"},
    {OperationType::HARD_SWISH, "HARD_SWISH"},
    {OperationType::FILL, "FILL"},
    {OperationType::RANK, "RANK"},
    {OperationType::OEM_OPERATION, "OEM_OPERATION"},
}};

constexpr common::EnumNames<OperandLifeTime, 7> kOperandLifeTimeNames{{
    {OperandLifeTime::TEMPORARY_VARIABLE, "TEMPORARY_VARIABLE"},
    {OperandLifeTime::SUBGRAPH_INPUT, "SUBGRAPH_INPUT"},
    {OperandLifeTime::SUBGRAPH_OUTPUT, "SUBGRAPH_OUTPUT"},
    {OperandLifeTime::CONSTANT_COPY, "CONSTANT_COPY"},
    {OperandLifeTime::CONSTANT_REFERENCE, "CONSTANT_REFERENCE"},
    {OperandLifeTime::NO_VALUE, "NO_VALUE"},
    {OperandLifeTime::SUBGRAPH, "SUBGRAPH"},
}};

constexpr common::EnumNames<ExecutionPreference, 3> kExecutionPreferenceNames{{
    {ExecutionPreference::LOW_POWER, "LOW_POWER"},
    {ExecutionPreference::FAST_SINGLE_ANSWER, "FAST_SINGLE_ANSWER"},
    {ExecutionPreference::SUSTAINED_SPEED, "SUSTAINED_SPEED"},
}};

constexpr common::EnumNames<Priority, 3> kPriorityNames{{
    {Priority::LOW, "LOW"},
    {Priority::MEDIUM, "MEDIUM"},
    {Priority::HIGH, "HIGH"},
}};

constexpr common::EnumNames<DeviceType, 4> kDeviceTypeNames{{
    {DeviceType::OTHER, "OTHER"},
    {DeviceType::CPU, "CPU"},
    {DeviceType::GPU, "GPU"},
    {DeviceType::ACCELERATOR, "ACCELERATOR"},
}};

constexpr common::EnumNames<ErrorStatus, 9> kErrorStatusNames{{
    {ErrorStatus::NONE, "NONE"},
    {ErrorStatus::DEVICE_UNAVAILABLE, "DEVICE_UNAVAILABLE"},
    {ErrorStatus::GENERAL_FAILURE, "GENERAL_FAILURE"},
    {ErrorStatus::OUTPUT_INSUFFICIENT_SIZE, "OUTPUT_INSUFFICIENT_SIZE"},
    {ErrorStatus::INVALID_ARGUMENT, "INVALID_ARGUMENT"},
    {ErrorStatus::MISSED_DEADLINE_TRANSIENT, "MISSED_DEADLINE_TRANSIENT"},
    {ErrorStatus::MISSED_DEADLINE_PERSISTENT, "MISSED_DEADLINE_PERSISTENT"},
    {ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "RESOURCE_EXHAUSTED_TRANSIENT"},
    {ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT, "RESOURCE_EXHAUSTED_PERSISTENT"},
}};

constexpr common::EnumNames<MemoryKind, 3> kMemoryKindNames{{
    {MemoryKind::ASHMEM, "ashmem"},
    {MemoryKind::MMAP_FD, "mmap_fd"},
    {MemoryKind::HARDWARE_BUFFER_BLOB, "hardware_buffer_blob"},
}};

constexpr common::EnumNames<CacheOutcome, 4> kCacheOutcomeNames{{
    {CacheOutcome::kLoaded, "loaded"},
    {CacheOutcome::kCompiledAndSaved, "compiled and saved"},
    {CacheOutcome::kCompiled, "compiled"},
    {CacheOutcome::kCachingOff, "caching off"},
}};

constexpr common::EnumNames<PreparationPolicy, 3> kPreparationPolicyNames{{
    {PreparationPolicy::kIdle, "idle"},
    {PreparationPolicy::kNice, "nice"},
    {PreparationPolicy::kNormal, "normal"},
}};

constexpr common::EnumNames<HalVersion, 4> kHalVersionNames{{
    {HalVersion::V1_0, "1.0"},
    {HalVersion::V1_1, "1.1"},
    {HalVersion::V1_2, "1.2"},
    {HalVersion::V1_3, "1.3"},
}};

}  // namespace

std::string_view toString(OperandType type) {
  return common::nameOf(kOperandTypeNames, type, "OperandType(?)");
}
std::string_view toString(OperationType type) {
  return common::nameOf(kOperationTypeNames, type, "OperationType(?)");
}
std::string_view toString(OperandLifeTime lifetime) {
  return common::nameOf(kOperandLifeTimeNames, lifetime, "OperandLifeTime(?)");
}
std::string_view toString(ExecutionPreference preference) {
  return common::nameOf(kExecutionPreferenceNames, preference, "ExecutionPreference(?)");
}
std::string_view toString(Priority priority) {
  return common::nameOf(kPriorityNames, priority, "Priority(?)");
}
std::string_view toString(DeviceType type) {
  return common::nameOf(kDeviceTypeNames, type, "DeviceType(?)");
}

std::string_view toString(ErrorStatus status) {
  return common::nameOf(kErrorStatusNames, status, "ErrorStatus(?)");
}
std::string_view toString(MemoryKind kind) {
  return common::nameOf(kMemoryKindNames, kind, "unknown");
}
std::string_view toString(CacheOutcome outcome) {
  return common::nameOf(kCacheOutcomeNames, outcome, "unknown");
}
std::string_view toString(PreparationPolicy policy) {
  return common::nameOf(kPreparationPolicyNames, policy, "unknown");
}
std::string_view toString(HalVersion version) {
  return common::nameOf(kHalVersionNames, version, "HalVersion(?)");
}

std::optional<OperationType> operationTypeFromString(std::string_view name) {
  return common::valueNamed(kOperationTypeNames, name);
}
std::optional<OperandType> operandTypeFromString(std::string_view name) {
  return common::valueNamed(kOperandTypeNames, name);
}

}  // namespace nnhal
