// ipc/burst_packets.h — the packets of a burst execution, as the NN HAL 1.2 lays them out
// in its fast message queues (types.hal FmqRequestDatum / FmqResultDatum; docs/BURST.md).
//
// A packet is a sequence of 24-byte datums, each a tagged union (a one-byte discriminator,
// three zero bytes, then the member at offset 4 or 8). One request packet:
//   packetInformation{packetSize, numberOfInputOperands, numberOfOutputOperands,
//                     numberOfPools}
//   per input:  inputOperandInformation{hasNoValue, location{poolIndex, offset, length},
//                                       numberOfDimensions}, then that many
//               inputOperandDimensionValue
//   per output: outputOperandInformation + outputOperandDimensionValue, the same way
//   per pool:   poolIdentifier (the memory's slot)
//   measureTiming
//   optional, nnhal's own: deadline (steady-clock ns, as two u32 halves)
// One result packet:
//   packetInformation{packetSize, errorStatus, numberOfOperands}
//   per output: operandInformation{isSufficient, numberOfDimensions} (padding bytes zero),
//               then that many operandDimensionValue
//   executionTiming{timeOnDevice, timeInDriver} (µs; UINT64_MAX when not measured)
// packetSize counts every datum of the packet, itself included.
//
// Serialization and deserialization are pure. Deserializers accept exactly the sequence
// above and nothing else: any other discriminator, count, a packetSize that is not the
// number of datums, or a trailing datum fails with INVALID_ARGUMENT naming the datum.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "nnhal/prepared_model.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::ipc {

/// FmqRequestDatum discriminators (types.hal order; kDeadline is nnhal's).
enum class RequestDatumKind : uint8_t {
  kPacketInformation = 0,
  kInputOperandInformation = 1,
  kInputOperandDimensionValue = 2,
  kOutputOperandInformation = 3,
  kOutputOperandDimensionValue = 4,
  kPoolIdentifier = 5,
  kMeasureTiming = 6,
  kDeadline = 7,
};

/// FmqResultDatum discriminators.
enum class ResultDatumKind : uint8_t {
  kPacketInformation = 0,
  kOperandInformation = 1,
  kOperandDimensionValue = 2,
  kExecutionTiming = 3,
};

struct FmqRequestDatum {
  struct PacketInformation {
    uint32_t packetSize;
    uint32_t numberOfInputOperands;
    uint32_t numberOfOutputOperands;
    uint32_t numberOfPools;
  };
  struct OperandInformation {
    /// The HAL's bool, kept as a byte: it arrives from the peer, and a bool holding any
    /// value but 0 or 1 is undefined behaviour. Deserialization refuses other values.
    uint8_t hasNoValue;
    uint32_t poolIndex;  ///< DataLocation
    uint32_t offset;
    uint32_t length;
    uint32_t numberOfDimensions;
  };
  struct Deadline {
    uint32_t low;   ///< steady-clock ns since its epoch, low half
    uint32_t high;  ///< high half
  };
  RequestDatumKind kind;
  uint8_t padding[3];
  union {
    PacketInformation packetInformation;
    OperandInformation operandInformation;  ///< input or output, as `kind` says
    uint32_t operandDimensionValue;         ///< input or output, as `kind` says
    int32_t poolIdentifier;
    int32_t measureTiming;  ///< MeasureTiming
    Deadline deadline;
  };
};
static_assert(sizeof(FmqRequestDatum) == 24);
static_assert(offsetof(FmqRequestDatum, packetInformation) == 4);

struct FmqResultDatum {
  struct PacketInformation {
    uint32_t packetSize;
    int32_t errorStatus;  ///< ErrorStatus
    uint32_t numberOfOperands;
  };
  struct OperandInformation {
    uint8_t isSufficient;  ///< the HAL's bool as a byte, 0 or 1 (see hasNoValue)
    uint8_t padding[3];    ///< always zero
    uint32_t numberOfDimensions;
  };
  struct ExecutionTiming {
    uint64_t timeOnDevice;
    uint64_t timeInDriver;
  };
  ResultDatumKind kind;
  uint8_t padding[7];
  union {
    PacketInformation packetInformation;
    OperandInformation operandInformation;
    uint32_t operandDimensionValue;
    ExecutionTiming executionTiming;
  };
};
static_assert(sizeof(FmqResultDatum) == 24);
static_assert(offsetof(FmqResultDatum, packetInformation) == 8);
static_assert(sizeof(FmqResultDatum::OperandInformation) == 8);
static_assert(offsetof(FmqResultDatum::OperandInformation, numberOfDimensions) == 4);

/// The content of one request packet. Pools are named by slots.
struct BurstRequest {
  std::vector<RequestArgument> inputs;
  std::vector<RequestArgument> outputs;
  std::vector<int32_t> slots;
  MeasureTiming measure = MeasureTiming::NO;
  OptionalTimePoint deadline;
};

/// The content of one result packet.
struct BurstResult {
  ErrorStatus status = ErrorStatus::NONE;
  std::vector<OutputShape> outputShapes;  ///< on NONE and OUTPUT_INSUFFICIENT_SIZE
  Timing timing;
};

/// A zero-filled datum of the given kind (padding and unused bytes zero).
FmqRequestDatum requestDatum(RequestDatumKind kind);
FmqResultDatum resultDatum(ResultDatumKind kind);

std::vector<FmqRequestDatum> serialize(const BurstRequest& request);
/// Errors: INVALID_ARGUMENT naming the first datum that breaks the layout.
Result<BurstRequest> deserializeRequest(std::span<const FmqRequestDatum> packet);

/// The result packet of `result`. When it would be longer than `maxDatums` (the result
/// queue's capacity), the GENERAL_FAILURE packet instead (1.2/IPreparedModel.hal).
std::vector<FmqResultDatum> serialize(const BurstResult& result, size_t maxDatums);
/// Errors: GENERAL_FAILURE naming the first datum that breaks the layout.
Result<BurstResult> deserializeResult(std::span<const FmqResultDatum> packet);

/// The result of an execution as a burst result (errors carry their shapes only for
/// OUTPUT_INSUFFICIENT_SIZE, and no timing).
BurstResult toBurstResult(const Result<ExecutionResult>& result);

}  // namespace nnhal::ipc
