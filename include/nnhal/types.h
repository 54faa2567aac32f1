// nnhal/types.h — the NN HAL 1.3 vocabulary as plain C++ value types.
//
// Names, numeric codes and semantics follow hardware/interfaces/neuralnetworks/1.x/
// types.hal (NN HAL 1.0-1.3). Operand and operation type codes equal the NNAPI
// ANEURALNETWORKS_* values. All types here are values: copying a Model copies its
// operandValues but shares its Memory pools (see nnhal/memory.h).
//
// Thread safety: plain values; concurrent reads are safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "nnhal/memory.h"
#include "nnhal/status.h"

namespace nnhal {

/// Operand types (types.hal OperandType; code = NNAPI ANEURALNETWORKS_* value).
enum class OperandType : int32_t {
  FLOAT32 = 0,
  INT32 = 1,
  UINT32 = 2,
  TENSOR_FLOAT32 = 3,
  TENSOR_INT32 = 4,
  TENSOR_QUANT8_ASYMM = 5,
  BOOL = 6,                             // 1.2
  TENSOR_QUANT16_SYMM = 7,              // 1.2
  TENSOR_FLOAT16 = 8,                   // 1.2
  TENSOR_BOOL8 = 9,                     // 1.2
  FLOAT16 = 10,                         // 1.2
  TENSOR_QUANT8_SYMM_PER_CHANNEL = 11,  // 1.2
  TENSOR_QUANT16_ASYMM = 12,            // 1.2
  TENSOR_QUANT8_SYMM = 13,              // 1.2
  TENSOR_QUANT8_ASYMM_SIGNED = 14,      // 1.3
  SUBGRAPH = 15,                        // 1.3
  OEM = 10000,                          // deprecated
  TENSOR_OEM_BYTE = 10001,              // deprecated
};

/// Operation types (types.hal OperationType; code = NNAPI ANEURALNETWORKS_* value).
enum class OperationType : int32_t {
  // 1.0
  ADD = 0,
  AVERAGE_POOL_2D = 1,
  CONCATENATION = 2,
  CONV_2D = 3,
  DEPTHWISE_CONV_2D = 4,
  DEPTH_TO_SPACE = 5,
  DEQUANTIZE = 6,
  EMBEDDING_LOOKUP = 7,
  FLOOR = 8,
  FULLY_CONNECTED = 9,
  HASHTABLE_LOOKUP = 10,
  L2_NORMALIZATION = 11,
  L2_POOL_2D = 12,
  LOCAL_RESPONSE_NORMALIZATION = 13,
  LOGISTIC = 14,
  LSH_PROJECTION = 15,
  LSTM = 16,
  MAX_POOL_2D = 17,
  MUL = 18,
  RELU = 19,
  RELU1 = 20,
  RELU6 = 21,
  RESHAPE = 22,
  RESIZE_BILINEAR = 23,
  RNN = 24,
  SOFTMAX = 25,
  SPACE_TO_DEPTH = 26,
  SVDF = 27,
  TANH = 28,
  // 1.1
  BATCH_TO_SPACE_ND = 29,
  DIV = 30,
  MEAN = 31,
  PAD = 32,
  SPACE_TO_BATCH_ND = 33,
  SQUEEZE = 34,
  STRIDED_SLICE = 35,
  SUB = 36,
  TRANSPOSE = 37,
  // 1.2
  ABS = 38,
  ARGMAX = 39,
  ARGMIN = 40,
  AXIS_ALIGNED_BBOX_TRANSFORM = 41,
  BIDIRECTIONAL_SEQUENCE_LSTM = 42,
  BIDIRECTIONAL_SEQUENCE_RNN = 43,
  BOX_WITH_NMS_LIMIT = 44,
  CAST = 45,
  CHANNEL_SHUFFLE = 46,
  DETECTION_POSTPROCESSING = 47,
  EQUAL = 48,
  EXP = 49,
  EXPAND_DIMS = 50,
  GATHER = 51,
  GENERATE_PROPOSALS = 52,
  GREATER = 53,
  GREATER_EQUAL = 54,
  GROUPED_CONV_2D = 55,
  HEATMAP_MAX_KEYPOINT = 56,
  INSTANCE_NORMALIZATION = 57,
  LESS = 58,
  LESS_EQUAL = 59,
  LOG = 60,
  LOGICAL_AND = 61,
  LOGICAL_NOT = 62,
  LOGICAL_OR = 63,
  LOG_SOFTMAX = 64,
  MAXIMUM = 65,
  MINIMUM = 66,
  NEG = 67,
  NOT_EQUAL = 68,
  PAD_V2 = 69,
  POW = 70,
  PRELU = 71,
  QUANTIZE = 72,
  QUANTIZED_16BIT_LSTM = 73,
  RANDOM_MULTINOMIAL = 74,
  REDUCE_ALL = 75,
  REDUCE_ANY = 76,
  REDUCE_MAX = 77,
  REDUCE_MIN = 78,
  REDUCE_PROD = 79,
  REDUCE_SUM = 80,
  ROI_ALIGN = 81,
  ROI_POOLING = 82,
  RSQRT = 83,
  SELECT = 84,
  SIN = 85,
  SLICE = 86,
  SPLIT = 87,
  SQRT = 88,
  TILE = 89,
  TOPK_V2 = 90,
  TRANSPOSE_CONV_2D = 91,
  UNIDIRECTIONAL_SEQUENCE_LSTM = 92,
  UNIDIRECTIONAL_SEQUENCE_RNN = 93,
  RESIZE_NEAREST_NEIGHBOR = 94,
  // 1.3
  QUANTIZED_LSTM = 95,
  IF = 96,
  WHILE = 97,
  ELU = 98,
  HARD_SWISH = 99,
  FILL = 100,
  RANK = 101,
  // deprecated
  OEM_OPERATION = 10000,
};

/// Highest fundamental operation code (types.hal OperationTypeRange::FUNDAMENTAL_MAX).
inline constexpr int32_t kOperationTypeFundamentalMax = 101;
/// Highest fundamental operand type code (types.hal OperandTypeRange::FUNDAMENTAL_MAX).
inline constexpr int32_t kOperandTypeFundamentalMax = 15;

/// Where an operand's value lives (1.3 names; 1.0 MODEL_INPUT/OUTPUT = SUBGRAPH_INPUT/OUTPUT).
enum class OperandLifeTime : int32_t {
  TEMPORARY_VARIABLE = 0,
  SUBGRAPH_INPUT = 1,
  SUBGRAPH_OUTPUT = 2,
  CONSTANT_COPY = 3,       ///< bytes in Model::operandValues at `location`
  CONSTANT_REFERENCE = 4,  ///< bytes in Model::pools[location.poolIndex] at `location`
  NO_VALUE = 5,            ///< an omitted optional argument
  SUBGRAPH = 6,            ///< operand refers to Model::referenced[value]; used by IF/WHILE
};

/// Fused activation function codes (types.hal FusedActivationFunc).
enum class FusedActivationFunc : int32_t { NONE = 0, RELU = 1, RELU1 = 2, RELU6 = 3 };

enum class ExecutionPreference : int32_t {
  LOW_POWER = 0,
  FAST_SINGLE_ANSWER = 1,
  SUSTAINED_SPEED = 2,
};

enum class Priority : int32_t { LOW = 0, MEDIUM = 1, HIGH = 2 };

enum class MeasureTiming : int32_t { NO = 0, YES = 1 };

enum class DeviceType : int32_t { OTHER = 1, CPU = 2, GPU = 3, ACCELERATOR = 4 };

/// A byte range: inside Model::operandValues (CONSTANT_COPY, poolIndex 0), inside
/// Model::pools[poolIndex] (CONSTANT_REFERENCE), or inside Request::pools[poolIndex].
/// `offset` and `length` are in bytes.
struct DataLocation {
  uint32_t poolIndex = 0;
  uint32_t offset = 0;
  uint32_t length = 0;
  bool operator==(const DataLocation&) const = default;
};

/// Per-channel quantization of TENSOR_QUANT8_SYMM_PER_CHANNEL operands:
/// real = scales[c] * q, where c is the index along dimension `channelDim`.
struct SymmPerChannelQuantParams {
  std::vector<float> scales;
  uint32_t channelDim = 0;
  bool operator==(const SymmPerChannelQuantParams&) const = default;
};

/// Operand::extraParams: none, per-channel quantization, or opaque extension bytes.
using OperandExtraParams =
    std::variant<std::monostate, SymmPerChannelQuantParams, std::vector<uint8_t>>;

/// One operand of a Subgraph (types.hal 1.3 Operand).
/// `dimensions`: empty for scalars, or for tensors of unknown rank; a 0 entry is an
/// unknown dimension (resolved at execution). Quantized real value =
/// scale * (q - zeroPoint).
struct Operand {
  OperandType type = OperandType::TENSOR_FLOAT32;
  std::vector<uint32_t> dimensions;
  uint32_t numberOfConsumers = 0;
  float scale = 0.0f;
  int32_t zeroPoint = 0;
  OperandLifeTime lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  DataLocation location;
  OperandExtraParams extraParams;
};

/// One operation: its type and the indexes (into Subgraph::operands) of its inputs and
/// outputs, in the order the operation's definition in types.hal gives.
struct Operation {
  OperationType type = OperationType::ADD;
  std::vector<uint32_t> inputs;
  std::vector<uint32_t> outputs;
};

/// A graph of operations (types.hal 1.3 Subgraph). Operations must be listed in an
/// order where every operand is written before it is read.
struct Subgraph {
  std::vector<Operand> operands;
  std::vector<Operation> operations;
  std::vector<uint32_t> inputIndexes;
  std::vector<uint32_t> outputIndexes;
};

struct ExtensionNameAndPrefix {
  std::string name;
  uint16_t prefix = 0;
};

/// A complete model (types.hal 1.3 Model): the main subgraph, the subgraphs IF/WHILE refer
/// to, the bytes of CONSTANT_COPY operands and the pools of CONSTANT_REFERENCE operands.
struct Model {
  Subgraph main;
  std::vector<Subgraph> referenced;
  std::vector<uint8_t> operandValues;
  std::vector<Memory> pools;
  /// Float32 may be computed with the range and precision of float16.
  bool relaxComputationFloat32toFloat16 = false;
  std::vector<ExtensionNameAndPrefix> extensionNameToPrefix;
};

/// One input or output of a Request (types.hal RequestArgument).
/// `dimensions` empty = use the model's; otherwise it must agree with every known
/// dimension of the model operand and may fill in the unknown ones.
struct RequestArgument {
  bool hasNoValue = false;
  DataLocation location;
  std::vector<uint32_t> dimensions;
};

/// A token naming driver-managed memory from IDevice::allocate (types.hal 1.3
/// Request.MemoryPool::token). 0 is never a valid token.
struct MemoryDomainToken {
  uint32_t value = 0;
  bool operator==(const MemoryDomainToken&) const = default;
};

/// Request.MemoryPool (1.3): shared memory, or a token of driver-managed memory.
using RequestMemoryPool = std::variant<Memory, MemoryDomainToken>;

/// The inputs and outputs of one execution (types.hal 1.3 Request).
struct Request {
  std::vector<RequestArgument> inputs;
  std::vector<RequestArgument> outputs;
  std::vector<RequestMemoryPool> pools;
};

/// Performance of an operation class relative to the CPU reference: lower is better;
/// 1.0 = as fast/efficient as the reference (types.hal PerformanceInfo).
struct PerformanceInfo {
  float execTime = std::numeric_limits<float>::max();
  float powerUsage = std::numeric_limits<float>::max();
};

struct OperandPerformance {
  OperandType type = OperandType::TENSOR_FLOAT32;
  PerformanceInfo info;
};

/// Device capabilities (types.hal 1.3 Capabilities). `operandPerformance` is sorted by
/// type and lists every fundamental operand type.
struct Capabilities {
  PerformanceInfo relaxedFloat32toFloat16PerformanceScalar;
  PerformanceInfo relaxedFloat32toFloat16PerformanceTensor;
  std::vector<OperandPerformance> operandPerformance;
  PerformanceInfo ifPerformance;
  PerformanceInfo whilePerformance;
};

struct Extension {
  std::string name;
  struct OperandTypeInformation {
    uint16_t type = 0;
    bool isTensor = false;
    uint32_t byteSize = 0;
  };
  std::vector<OperandTypeInformation> operandTypes;
};

/// Value of a Timing field meaning "not available".
inline constexpr uint64_t kNoTiming = std::numeric_limits<uint64_t>::max();

/// Execution timing in microseconds (types.hal 1.2 Timing). Both are kNoTiming unless the
/// execution asked for MeasureTiming::YES and succeeded; timeOnDevice <= timeInDriver.
struct Timing {
  uint64_t timeOnDevice = kNoTiming;  ///< µs spent computing on the device
  uint64_t timeInDriver = kNoTiming;  ///< µs from the driver seeing the call to replying
  bool operator==(const Timing&) const = default;
};

/// A point on the steady clock, or none (types.hal 1.3 OptionalTimePoint).
using OptionalTimePoint = std::optional<std::chrono::steady_clock::time_point>;

/// A duration, or none (types.hal 1.3 OptionalTimeoutDuration).
using OptionalDuration = std::optional<std::chrono::nanoseconds>;

/// WHILE loop timeout (types.hal 1.3 LoopTimeoutDurationNs), nanoseconds.
inline constexpr std::chrono::nanoseconds kDefaultLoopTimeout{2'000'000'000};
inline constexpr std::chrono::nanoseconds kMaxLoopTimeout{15'000'000'000};

/// Deepest nesting of control flow this driver accepts: a subgraph called by IF/WHILE of
/// main is at depth 1, one called from that subgraph at depth 2... Models nesting deeper are
/// INVALID_ARGUMENT (validateModel, getSupportedOperations, prepareModel), so that running
/// them can never exhaust a thread's stack. Not a HAL constant: a limit of this driver.
inline constexpr uint32_t kMaxSubgraphNesting = 64;

/// Size of a compilation cache token in bytes (types.hal 1.2 Constant).
inline constexpr size_t kByteSizeOfCacheToken = 32;
/// Maximum number of model cache files and of data cache files (types.hal 1.2 Constant).
inline constexpr uint32_t kMaxNumberOfCacheFiles = 32;

// Names of enum values as types.hal spells them; "<Enum>(<n>)" for unknown values.
std::string_view toString(OperandType type);
std::string_view toString(OperationType type);
std::string_view toString(OperandLifeTime lifetime);
std::string_view toString(ExecutionPreference preference);
std::string_view toString(Priority priority);
std::string_view toString(DeviceType type);

/// Looks up an operation or operand type by its types.hal name ("CONV_2D").
std::optional<OperationType> operationTypeFromString(std::string_view name);
std::optional<OperandType> operandTypeFromString(std::string_view name);

}  // namespace nnhal
