#include "ipc/burst_packets.h"

#include <cstring>
#include <limits>
#include <string>

namespace nnhal::ipc {

FmqRequestDatum requestDatum(RequestDatumKind kind) {
  FmqRequestDatum datum;
  std::memset(static_cast<void*>(&datum), 0, sizeof(datum));
  datum.kind = kind;
  return datum;
}

FmqResultDatum resultDatum(ResultDatumKind kind) {
  FmqResultDatum datum;
  std::memset(static_cast<void*>(&datum), 0, sizeof(datum));
  datum.kind = kind;
  return datum;
}

// --- request packets --------------------------------------------------------------------

namespace {

void appendArguments(const std::vector<RequestArgument>& arguments, RequestDatumKind info,
                     RequestDatumKind dimension, std::vector<FmqRequestDatum>& packet) {
  for (const RequestArgument& argument : arguments) {
    FmqRequestDatum datum = requestDatum(info);
    datum.operandInformation.hasNoValue = argument.hasNoValue ? 1 : 0;
    datum.operandInformation.poolIndex = argument.location.poolIndex;
    datum.operandInformation.offset = argument.location.offset;
    datum.operandInformation.length = argument.location.length;
    datum.operandInformation.numberOfDimensions = static_cast<uint32_t>(argument.dimensions.size());
    packet.push_back(datum);
    for (uint32_t value : argument.dimensions) {
      FmqRequestDatum d = requestDatum(dimension);
      d.operandDimensionValue = value;
      packet.push_back(d);
    }
  }
}

/// Reads the datums of a packet in order; every failure names the datum.
class RequestCursor {
 public:
  explicit RequestCursor(std::span<const FmqRequestDatum> packet) : packet_(packet) {}

  Result<const FmqRequestDatum*> next(RequestDatumKind kind, const char* what) {
    if (at_ >= packet_.size()) {
      return invalidArgument("burst request packet: ends at datum " + std::to_string(at_) +
                             " where " + what + " was expected");
    }
    const FmqRequestDatum& datum = packet_[at_];
    if (datum.kind != kind) {
      return invalidArgument("burst request packet: datum " + std::to_string(at_) + " has kind " +
                             std::to_string(static_cast<int>(datum.kind)) + " where " + what +
                             " was expected");
    }
    ++at_;
    return &datum;
  }
  size_t position() const { return at_; }
  size_t remaining() const { return packet_.size() - at_; }
  bool done() const { return at_ == packet_.size(); }

 private:
  std::span<const FmqRequestDatum> packet_;
  size_t at_ = 0;
};

Result<std::vector<RequestArgument>> readArguments(RequestCursor& cursor, uint32_t count,
                                                   RequestDatumKind info,
                                                   RequestDatumKind dimension, const char* name) {
  std::vector<RequestArgument> arguments;
  if (count > cursor.remaining()) {
    return invalidArgument(std::string("burst request packet: ") + std::to_string(count) + " " +
                           name + " operands cannot fit in the packet");
  }
  arguments.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    NNHAL_ASSIGN_OR_RETURN(const FmqRequestDatum* datum,
                           cursor.next(info, "an operand information datum"));
    const auto& operand = datum->operandInformation;
    if (operand.hasNoValue > 1) {
      return invalidArgument("burst request packet: datum " +
                             std::to_string(cursor.position() - 1) + ": hasNoValue " +
                             std::to_string(operand.hasNoValue) + " is not a bool (0 or 1)");
    }
    RequestArgument argument;
    argument.hasNoValue = operand.hasNoValue != 0;
    argument.location = DataLocation{operand.poolIndex, operand.offset, operand.length};
    if (operand.numberOfDimensions > cursor.remaining()) {
      return invalidArgument(
          "burst request packet: datum " + std::to_string(cursor.position() - 1) + " announces " +
          std::to_string(operand.numberOfDimensions) + " dimensions, more than the packet holds");
    }
    argument.dimensions.reserve(operand.numberOfDimensions);
    for (uint32_t d = 0; d < operand.numberOfDimensions; ++d) {
      NNHAL_ASSIGN_OR_RETURN(const FmqRequestDatum* value,
                             cursor.next(dimension, "a dimension value datum"));
      argument.dimensions.push_back(value->operandDimensionValue);
    }
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

}  // namespace

std::vector<FmqRequestDatum> serialize(const BurstRequest& request) {
  std::vector<FmqRequestDatum> packet;
  packet.push_back(requestDatum(RequestDatumKind::kPacketInformation));
  appendArguments(request.inputs, RequestDatumKind::kInputOperandInformation,
                  RequestDatumKind::kInputOperandDimensionValue, packet);
  appendArguments(request.outputs, RequestDatumKind::kOutputOperandInformation,
                  RequestDatumKind::kOutputOperandDimensionValue, packet);
  for (int32_t slot : request.slots) {
    FmqRequestDatum datum = requestDatum(RequestDatumKind::kPoolIdentifier);
    datum.poolIdentifier = slot;
    packet.push_back(datum);
  }
  FmqRequestDatum measure = requestDatum(RequestDatumKind::kMeasureTiming);
  measure.measureTiming = static_cast<int32_t>(request.measure);
  packet.push_back(measure);
  if (request.deadline) {
    const auto ns = static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(request.deadline->time_since_epoch())
            .count());
    FmqRequestDatum deadline = requestDatum(RequestDatumKind::kDeadline);
    deadline.deadline.low = static_cast<uint32_t>(ns);
    deadline.deadline.high = static_cast<uint32_t>(ns >> 32);
    packet.push_back(deadline);
  }
  auto& info = packet.front().packetInformation;
  info.packetSize = static_cast<uint32_t>(packet.size());
  info.numberOfInputOperands = static_cast<uint32_t>(request.inputs.size());
  info.numberOfOutputOperands = static_cast<uint32_t>(request.outputs.size());
  info.numberOfPools = static_cast<uint32_t>(request.slots.size());
  return packet;
}

Result<BurstRequest> deserializeRequest(std::span<const FmqRequestDatum> packet) {
  RequestCursor cursor(packet);
  NNHAL_ASSIGN_OR_RETURN(
      const FmqRequestDatum* first,
      cursor.next(RequestDatumKind::kPacketInformation, "the packet information datum"));
  const auto info = first->packetInformation;
  if (info.packetSize != packet.size()) {
    return invalidArgument("burst request packet: packetSize " + std::to_string(info.packetSize) +
                           " but " + std::to_string(packet.size()) + " datums were received");
  }
  BurstRequest request;
  NNHAL_ASSIGN_OR_RETURN(
      request.inputs,
      readArguments(cursor, info.numberOfInputOperands, RequestDatumKind::kInputOperandInformation,
                    RequestDatumKind::kInputOperandDimensionValue, "input"));
  NNHAL_ASSIGN_OR_RETURN(request.outputs,
                         readArguments(cursor, info.numberOfOutputOperands,
                                       RequestDatumKind::kOutputOperandInformation,
                                       RequestDatumKind::kOutputOperandDimensionValue, "output"));
  if (info.numberOfPools > cursor.remaining()) {
    return invalidArgument("burst request packet: " + std::to_string(info.numberOfPools) +
                           " pools cannot fit in the packet");
  }
  request.slots.reserve(info.numberOfPools);
  for (uint32_t i = 0; i < info.numberOfPools; ++i) {
    NNHAL_ASSIGN_OR_RETURN(const FmqRequestDatum* datum,
                           cursor.next(RequestDatumKind::kPoolIdentifier, "a pool identifier"));
    request.slots.push_back(datum->poolIdentifier);
  }
  NNHAL_ASSIGN_OR_RETURN(const FmqRequestDatum* measure,
                         cursor.next(RequestDatumKind::kMeasureTiming, "the measureTiming datum"));
  request.measure = static_cast<MeasureTiming>(measure->measureTiming);
  if (!cursor.done()) {
    NNHAL_ASSIGN_OR_RETURN(const FmqRequestDatum* deadline,
                           cursor.next(RequestDatumKind::kDeadline, "the end of the packet"));
    const uint64_t ns = (uint64_t{deadline->deadline.high} << 32) | deadline->deadline.low;
    if (ns > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return invalidArgument("burst request packet: deadline out of range");
    }
    request.deadline = std::chrono::steady_clock::time_point(
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::nanoseconds(static_cast<int64_t>(ns))));
  }
  if (!cursor.done()) {
    return invalidArgument("burst request packet: datum " + std::to_string(cursor.position()) +
                           " follows the last one");
  }
  return request;
}

// --- result packets ---------------------------------------------------------------------

std::vector<FmqResultDatum> serialize(const BurstResult& result, size_t maxDatums) {
  std::vector<FmqResultDatum> packet;
  packet.push_back(resultDatum(ResultDatumKind::kPacketInformation));
  for (const OutputShape& shape : result.outputShapes) {
    FmqResultDatum datum = resultDatum(ResultDatumKind::kOperandInformation);
    datum.operandInformation.isSufficient = shape.isSufficient ? 1 : 0;
    datum.operandInformation.numberOfDimensions = static_cast<uint32_t>(shape.dimensions.size());
    packet.push_back(datum);
    for (uint32_t value : shape.dimensions) {
      FmqResultDatum d = resultDatum(ResultDatumKind::kOperandDimensionValue);
      d.operandDimensionValue = value;
      packet.push_back(d);
    }
  }
  FmqResultDatum timing = resultDatum(ResultDatumKind::kExecutionTiming);
  timing.executionTiming.timeOnDevice = result.timing.timeOnDevice;
  timing.executionTiming.timeInDriver = result.timing.timeInDriver;
  packet.push_back(timing);
  auto& info = packet.front().packetInformation;
  info.packetSize = static_cast<uint32_t>(packet.size());
  info.errorStatus = static_cast<int32_t>(result.status);
  info.numberOfOperands = static_cast<uint32_t>(result.outputShapes.size());
  if (packet.size() > maxDatums) {
    BurstResult failure;
    failure.status = ErrorStatus::GENERAL_FAILURE;
    return serialize(failure, std::numeric_limits<size_t>::max());
  }
  return packet;
}

namespace {

Error badResult(size_t at, const std::string& what) {
  return Error{ErrorStatus::GENERAL_FAILURE,
               "burst result packet from nnhald: datum " + std::to_string(at) + ": " + what,
               {}};
}

}  // namespace

Result<BurstResult> deserializeResult(std::span<const FmqResultDatum> packet) {
  if (packet.empty() || packet[0].kind != ResultDatumKind::kPacketInformation) {
    return std::unexpected(badResult(0, "not the packet information"));
  }
  const auto info = packet[0].packetInformation;
  if (info.packetSize != packet.size()) {
    return std::unexpected(badResult(0, "packetSize " + std::to_string(info.packetSize) + " but " +
                                            std::to_string(packet.size()) + " datums"));
  }
  BurstResult result;
  result.status = static_cast<ErrorStatus>(info.errorStatus);
  size_t at = 1;
  if (info.numberOfOperands > packet.size()) {
    return std::unexpected(badResult(0, "too many operands"));
  }
  for (uint32_t i = 0; i < info.numberOfOperands; ++i) {
    if (at >= packet.size() || packet[at].kind != ResultDatumKind::kOperandInformation) {
      return std::unexpected(badResult(at, "not an operand information"));
    }
    const auto operand = packet[at++].operandInformation;
    if (operand.isSufficient > 1)
      return std::unexpected(badResult(at - 1, "isSufficient is not a bool"));
    OutputShape shape;
    shape.isSufficient = operand.isSufficient != 0;
    if (operand.numberOfDimensions > packet.size() - at) {
      return std::unexpected(badResult(at - 1, "too many dimensions"));
    }
    for (uint32_t d = 0; d < operand.numberOfDimensions; ++d) {
      if (packet[at].kind != ResultDatumKind::kOperandDimensionValue) {
        return std::unexpected(badResult(at, "not a dimension value"));
      }
      shape.dimensions.push_back(packet[at++].operandDimensionValue);
    }
    result.outputShapes.push_back(std::move(shape));
  }
  if (at >= packet.size() || packet[at].kind != ResultDatumKind::kExecutionTiming) {
    return std::unexpected(badResult(at, "not the execution timing"));
  }
  result.timing.timeOnDevice = packet[at].executionTiming.timeOnDevice;
  result.timing.timeInDriver = packet[at].executionTiming.timeInDriver;
  if (++at != packet.size()) return std::unexpected(badResult(at, "follows the last one"));
  return result;
}

BurstResult toBurstResult(const Result<ExecutionResult>& result) {
  BurstResult out;
  if (result) {
    out.outputShapes = result->outputShapes;
    out.timing = result->timing;
    return out;
  }
  out.status = result.error().status;
  if (out.status == ErrorStatus::OUTPUT_INSUFFICIENT_SIZE) {
    out.outputShapes = result.error().outputShapes;
  }
  return out;
}

}  // namespace nnhal::ipc
