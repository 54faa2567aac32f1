// Session: driver-managed buffers (IDevice::allocate, IBuffer::copyTo / copyFrom).
#include <string>

#include "ipc/daemon/internal/session_detail.h"

namespace nnhal::ipc {

bool Session::handleAllocate(const Frame& frame) {
  auto m = decodePayload(frame.payload, MessageType::kAllocate, decodeAllocate);
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [this, callId = frame.header.callId](const Allocated& allocated) {
    OutMessage out;
    encode(allocated, out);
    send(MessageType::kAllocated, callId, out);
    return true;
  };
  std::vector<std::shared_ptr<PreparedModel>> models;
  models.reserve(m->models.size());
  for (size_t i = 0; i < m->models.size(); ++i) {
    auto found = models_.find(m->models[i]);
    if (found == models_.end()) {
      return reply({{ErrorStatus::INVALID_ARGUMENT,
                     "preparedModels[" + std::to_string(i) + "]: prepared model handle " +
                         std::to_string(m->models[i]) + " is unknown to this connection"}});
    }
    models.push_back(found->second->model);
  }
  auto charged = charge(Resource::kBuffers);
  if (!charged) return reply({toWireStatus(charged.error())});
  // The role checks are cheap (no copy of data): they run here, on the strand.
  auto allocated = served_->device->allocate(BufferDesc{std::move(m->dimensions)}, models,
                                             m->inputRoles, m->outputRoles);
  if (!allocated) return reply({toWireStatus(allocated.error())});
  const uint64_t handle = buffers_.add(std::make_shared<TrackedBuffer>(
      allocated->buffer, allocated->token, config_->counters, std::move(*charged)));
  bufferTokens_[allocated->token] = handle;
  return reply({{}, handle, allocated->token});
}

bool Session::handleBufferCopy(Frame& frame, bool copyFrom) {
  const MessageType type = copyFrom ? MessageType::kBufferCopyFrom : MessageType::kBufferCopyTo;
  auto m = decodePayload(frame.payload, type,
                         [&](ByteReader& in) { return decodeBufferCopy(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [this, callId = frame.header.callId](const WireStatus& status) {
    OutMessage out;
    encode(status, out);
    send(MessageType::kBufferReply, callId, out);
  };
  auto found = buffers_.find(m->buffer);
  if (found == buffers_.end()) {
    reply({ErrorStatus::INVALID_ARGUMENT,
           "buffer " + std::to_string(m->buffer) + " is unknown to this connection"});
    return true;
  }
  if (m->pool.source != WirePool::Source::kFd) {
    reply({ErrorStatus::INVALID_ARGUMENT,
           copyFrom ? "copyFrom: src is not a valid memory" : "copyTo: dst is not a valid memory"});
    return true;
  }
  auto ticket = admitRequest();
  if (!ticket) {
    reply(toWireStatus(ticket.error()));
    return true;
  }
  // Copies may be large and read client files: they run off the io threads, on the
  // application's lane.
  queue_.schedule(std::move(*ticket), [this, buffer = found->second, copyFrom, reply,
                                       m = std::make_shared<BufferCopy>(*m),
                                       fds = std::make_shared<std::vector<UniqueFd>>(std::move(
                                           frame.fds))](WorkQueue::Running running) mutable {
    offIoThread(
        [buffer, copyFrom, m, fds]() -> Result<void> {
          NNHAL_ASSIGN_OR_RETURN(
              const Memory memory,
              mapClientPool(m->pool, *fds, copyFrom ? "copyFrom: src" : "copyTo: dst"));
          return copyFrom ? buffer->buffer->copyFrom(memory, m->dimensions)
                          : buffer->buffer->copyTo(memory);
        },
        [this, reply, running = std::move(running)](Result<void> copied) mutable {
          running.answered();
          reply(copied ? WireStatus{} : toWireStatus(copied.error()));
          running.end();
          finishIfDrained();
        });
  });
  return true;
}

void Session::releaseBuffer(uint64_t buffer) {
  auto found = buffers_.find(buffer);
  if (found == buffers_.end()) return;
  bufferTokens_.erase(found->second->token);
  buffers_.erase(found);
}

}  // namespace nnhal::ipc
