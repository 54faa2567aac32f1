#include "ipc/client/remote_burst.h"

#include <unistd.h>

#include <cstring>

#include "common/vlog.h"
#include "ipc/burst_packets.h"

namespace nnhal::ipc {
namespace {

Error unavailable(const std::string& what) {
  return Error{ErrorStatus::DEVICE_UNAVAILABLE, what, {}};
}

/// A duplicate of a frame's descriptor (the frame closes its own).
common::UniqueFd duplicate(const Frame& frame, uint32_t index) {
  return common::UniqueFd(::fcntl(frame.fds[index].get(), F_DUPFD_CLOEXEC, 0));
}

}  // namespace

RemoteBurst::RemoteBurst(std::shared_ptr<Link> link, std::shared_ptr<RemotePreparedModel> model,
                         uint64_t burst, Fmq requests, Fmq results)
    : link_(std::move(link)),
      model_(std::move(model)),
      burst_(burst),
      requests_(std::move(requests)),
      results_(std::move(results)) {}

Result<std::shared_ptr<Burst>> RemoteBurst::configure(std::shared_ptr<Link> link,
                                                      std::shared_ptr<RemotePreparedModel> model,
                                                      uint32_t requestLength,
                                                      uint32_t resultLength) {
  Connection& connection = link->connection();
  NNHAL_ASSIGN_OR_RETURN(
      Frame frame, connection.roundTrip(MessageType::kConfigureBurst, [&](OutMessage& out) {
        encode(ConfigureBurst{model->handle(), requestLength, resultLength}, out);
      }));
  if (frame.header.type != static_cast<uint16_t>(MessageType::kBurstConfigured)) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "nnhald sent " + toString(static_cast<MessageType>(frame.header.type)) +
                    " where BurstConfigured was expected");
  }
  const size_t fdCount = frame.fds.size();
  NNHAL_ASSIGN_OR_RETURN(
      BurstConfigured reply,
      decodePayload(frame.payload, MessageType::kBurstConfigured,
                    [fdCount](ByteReader& in) { return decodeBurstConfigured(in, fdCount); }));
  if (reply.status.status != ErrorStatus::NONE) return std::unexpected(toError(reply.status));
  // A burst the daemon runs must be released on every path from here on.
  auto release = [&] {
    (void)connection.call(
        MessageType::kReleaseBurst,
        [burst = reply.burst](OutMessage& out) { encode(BurstHandle{burst}, out); }, {});
  };
  auto requests = Fmq::attach(duplicate(frame, reply.requestFdIndex),
                              {sizeof(FmqRequestDatum), reply.requestLength});
  auto results = Fmq::attach(duplicate(frame, reply.resultFdIndex),
                             {sizeof(FmqResultDatum), reply.resultLength});
  if (!requests || !results) {
    release();
    const Error& error = requests ? results.error() : requests.error();
    return fail(ErrorStatus::GENERAL_FAILURE, "nnhald's burst queues: " + error.message);
  }
  std::shared_ptr<RemoteBurst> burst(new RemoteBurst(link, std::move(model), reply.burst,
                                                     std::move(*requests), std::move(*results)));
  connection.registerBurst(reply.burst, burst);
  NNHAL_VLOG(Burst, "burst {} configured: request queue {} records, result queue {} records",
             reply.burst, reply.requestLength, reply.resultLength);
  return std::shared_ptr<Burst>(std::move(burst));
}

RemoteBurst::~RemoteBurst() {
  Connection& connection = link_->connection();
  connection.unregisterBurst(burst_);
  (void)connection.call(MessageType::kReleaseBurst,
                        [burst = burst_](OutMessage& out) { encode(BurstHandle{burst}, out); }, {});
}

int32_t RemoteBurst::slotOf(const Memory& memory) {
  std::lock_guard<std::mutex> lock(slotsMutex_);
  auto found = slotOfMemory_.find(memory.id());
  if (found != slotOfMemory_.end()) {
    NNHAL_VLOG(Burst, "burst {}: memory slot {} cached", burst_, found->second);
    return found->second;
  }
  int32_t slot;
  if (!freeSlots_.empty()) {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
    memories_[static_cast<size_t>(slot)] = memory;
  } else {
    slot = static_cast<int32_t>(memories_.size());
    memories_.push_back(memory);
  }
  slotOfMemory_.emplace(memory.id(), slot);
  NNHAL_VLOG(Burst, "burst {}: memory slot {} assigned to a new memory", burst_, slot);
  return slot;
}

BurstMemories RemoteBurst::provideMemories(const std::vector<int32_t>& slots, OutMessage& out,
                                           std::vector<Memory>& keep) {
  BurstMemories answer;
  std::lock_guard<std::mutex> lock(slotsMutex_);
  for (int32_t slot : slots) {
    if (slot < 0 || static_cast<size_t>(slot) >= memories_.size() ||
        !memories_[static_cast<size_t>(slot)].valid()) {
      answer.status = {ErrorStatus::INVALID_ARGUMENT,
                       "memory slot " + std::to_string(slot) + " is unknown to this burst"};
      answer.pools.clear();
      out.fds.clear();
      keep.clear();
      return answer;
    }
    const Memory& memory = memories_[static_cast<size_t>(slot)];
    keep.push_back(memory);
    answer.pools.push_back(poolWithFd(memory, out));
  }
  return answer;
}

void RemoteBurst::freeMemory(const Memory& memory) {
  int32_t slot;
  Memory released;  // closed after the lock
  {
    std::lock_guard<std::mutex> lock(slotsMutex_);
    auto found = slotOfMemory_.find(memory.id());
    if (!memory.valid() || found == slotOfMemory_.end()) return;
    slot = found->second;
    slotOfMemory_.erase(found);
    released = std::move(memories_[static_cast<size_t>(slot)]);
    memories_[static_cast<size_t>(slot)] = Memory();
  }
  NNHAL_VLOG(Burst, "burst {}: memory slot {} freed", burst_, slot);
  // The daemon lets go of the slot before the reply, so the slot can be reused safely.
  (void)link_->connection().roundTrip(MessageType::kBurstFreeMemory, [&](OutMessage& out) {
    encode(BurstSlot{burst_, slot}, out);
  });
  std::lock_guard<std::mutex> lock(slotsMutex_);
  freeSlots_.push_back(slot);
}

std::string RemoteBurst::lastErrorMessage(ErrorStatus status) {
  auto frame = link_->connection().roundTrip(
      MessageType::kBurstLastError, [&](OutMessage& out) { encode(BurstHandle{burst_}, out); });
  if (frame && frame->header.type == static_cast<uint16_t>(MessageType::kBurstReply)) {
    auto reply = decodePayload(frame->payload, MessageType::kBurstReply, decodeWireStatus);
    if (reply && reply->status == status && !reply->message.empty()) return reply->message;
  }
  return "the burst execution failed with " + std::string(toString(status));
}

Result<ExecutionResult> RemoteBurst::execute(const Request& request, MeasureTiming measure,
                                             OptionalTimePoint deadline) {
  Connection& connection = link_->connection();
  if (connection.lost()) return std::unexpected(unavailable("connection to nnhald lost"));
  ExecuteOptions options;
  options.measure = measure;
  options.deadline = deadline;
  BurstRequest packet;
  packet.inputs = request.inputs;
  packet.outputs = request.outputs;
  packet.measure = measure;
  packet.deadline = deadline;
  for (const RequestMemoryPool& pool : request.pools) {
    const Memory* memory = std::get_if<Memory>(&pool);
    if (memory == nullptr || !memory->valid()) {
      // Tokens (and empty pools, which the driver rejects) go the socket's way.
      return model_->executeSynchronously(request, options);
    }
    packet.slots.push_back(slotOf(*memory));
  }
  const std::vector<FmqRequestDatum> datums = serialize(packet);

  std::lock_guard<std::mutex> lock(executeMutex_);
  if (datums.size() > requests_.descriptor().capacity) {
    return model_->executeSynchronously(request, options);
  }
  FmqWaitPolicy policy;
  policy.pollWindow = kClientPollWindow;
  policy.keepWaiting = [&connection] { return !connection.lost(); };
  const auto bytes = std::as_bytes(std::span(datums));
  switch (requests_.writeBlocking(bytes, policy)) {
    case Fmq::Status::kOk:
      break;
    case Fmq::Status::kBroken:
      return fail(ErrorStatus::GENERAL_FAILURE, "the burst's request queue is broken");
    case Fmq::Status::kStopped:
    case Fmq::Status::kTimedOut:
      return std::unexpected(unavailable("connection to nnhald lost"));
  }
  switch (results_.readAvailableBlocking(resultBytes_, policy)) {
    case Fmq::Status::kOk:
      break;
    case Fmq::Status::kBroken:
      return fail(ErrorStatus::GENERAL_FAILURE, "the burst's result queue is broken");
    case Fmq::Status::kStopped:
    case Fmq::Status::kTimedOut:
      return std::unexpected(unavailable("connection to nnhald lost during a burst execution"));
  }
  std::vector<FmqResultDatum> resultDatums(resultBytes_.size() / sizeof(FmqResultDatum));
  std::memcpy(resultDatums.data(), resultBytes_.data(),
              resultDatums.size() * sizeof(FmqResultDatum));
  NNHAL_ASSIGN_OR_RETURN(BurstResult result, deserializeResult(resultDatums));
  if (result.status == ErrorStatus::NONE) {
    return ExecutionResult{std::move(result.outputShapes), result.timing};
  }
  return std::unexpected(
      Error{result.status, lastErrorMessage(result.status), std::move(result.outputShapes)});
}

}  // namespace nnhal::ipc
