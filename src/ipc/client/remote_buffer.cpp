#include "ipc/client/remote_buffer.h"

#include <string>

namespace nnhal::ipc {

RemoteBuffer::~RemoteBuffer() {
  (void)link_->connection().call(
      MessageType::kReleaseBuffer,
      [handle = handle_](OutMessage& out) { encode(BufferHandle{handle}, out); }, {});
}

Result<void> RemoteBuffer::copy(MessageType type, const Memory& memory,
                                const std::vector<uint32_t>& dimensions) {
  const bool copyFrom = type == MessageType::kBufferCopyFrom;
  if (!memory.valid() || memory.fd() < 0) {
    return invalidArgument(copyFrom ? "copyFrom: src is not a valid memory"
                                    : "copyTo: dst is not a valid memory");
  }
  NNHAL_ASSIGN_OR_RETURN(Frame frame, link_->connection().roundTrip(type, [&](OutMessage& out) {
    encode(BufferCopy{handle_, poolWithFd(memory, out), dimensions}, out);
  }));
  if (frame.header.type != static_cast<uint16_t>(MessageType::kBufferReply)) {
    return std::unexpected(unexpectedReply(frame, MessageType::kBufferReply));
  }
  NNHAL_ASSIGN_OR_RETURN(WireStatus status,
                         decodePayload(frame.payload, MessageType::kBufferReply, decodeWireStatus));
  if (status.status != ErrorStatus::NONE) return std::unexpected(toError(std::move(status)));
  return {};
}

Result<void> RemoteBuffer::copyTo(const Memory& dst) {
  return copy(MessageType::kBufferCopyTo, dst, {});
}

Result<void> RemoteBuffer::copyFrom(const Memory& src, const std::vector<uint32_t>& dimensions) {
  return copy(MessageType::kBufferCopyFrom, src, dimensions);
}

Result<AllocatedBuffer> RemoteBuffer::allocate(
    const std::shared_ptr<Link>& link, const BufferDesc& desc,
    const std::vector<std::shared_ptr<PreparedModel>>& preparedModels,
    const std::vector<BufferRole>& inputRoles, const std::vector<BufferRole>& outputRoles) {
  Allocate m;
  m.dimensions = desc.dimensions;
  m.inputRoles = inputRoles;
  m.outputRoles = outputRoles;
  for (size_t i = 0; i < preparedModels.size(); ++i) {
    const std::optional<uint64_t> handle = link->handleOf(preparedModels[i].get());
    if (!handle) {
      return invalidArgument("preparedModels[" + std::to_string(i) + "]: " +
                             (preparedModels[i] ? "not a prepared model of this device" : "null"));
    }
    m.models.push_back(*handle);
  }
  NNHAL_ASSIGN_OR_RETURN(Frame frame,
                         link->connection().roundTrip(MessageType::kAllocate,
                                                      [&](OutMessage& out) { encode(m, out); }));
  if (frame.header.type != static_cast<uint16_t>(MessageType::kAllocated)) {
    return std::unexpected(unexpectedReply(frame, MessageType::kAllocated));
  }
  NNHAL_ASSIGN_OR_RETURN(Allocated reply,
                         decodePayload(frame.payload, MessageType::kAllocated, decodeAllocated));
  if (reply.status.status != ErrorStatus::NONE) {
    return std::unexpected(toError(std::move(reply.status)));
  }
  if (reply.token == 0) {
    return fail(ErrorStatus::GENERAL_FAILURE, "nnhald returned token 0 for a buffer");
  }
  return AllocatedBuffer{std::make_shared<RemoteBuffer>(link, reply.buffer), reply.token};
}

}  // namespace nnhal::ipc
