// Session: reading frames, dispatching them, writing replies, closing (ipc/daemon/session.h).
#include "ipc/daemon/session.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <fstream>
#include <new>

#include "hal/driver_control.h"
#include "hal/vlog.h"
#include "ipc/daemon/burst_listener.h"
#include "ipc/daemon/internal/session_detail.h"

namespace nnhal::ipc {
namespace {

/// This process's resident memory (/proc/self/statm, in pages), bytes; 0 when unreadable.
uint64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t sizePages = 0, residentPages = 0;
  if (!(statm >> sizePages >> residentPages)) return 0;
  return residentPages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

}  // namespace

Session::Session(Socket socket, std::shared_ptr<const SessionConfig> config, uint64_t id,
                 bool admin, std::shared_ptr<Account> account, Charge connection)
    : socket_(std::move(socket)),
      strand_(boost::asio::make_strand(
          static_cast<boost::asio::io_context&>(socket_.get_executor().context()))),
      config_(std::move(config)),
      limits_(config_->limits),
      device_(*config_->device),
      counters_(*config_->counters),
      parser_(config_->maxPayloadBytes),
      id_(id),
      admin_(admin),
      account_(std::move(account)),
      application_(account_->application()),
      connectionCharge_(std::move(connection)),
      frameTimer_(strand_),
      queue_(strand_, limits_.maxRunning, limits_.maxQueued) {
  ++counters_.sessions;
}

Session::~Session() {
  for (auto& [id, listener] : bursts_) listener->stop();
  bursts_.clear();
  queue_.close();
  fenced_.clear();
  buffers_.clear();
  models_.clear();
  pools_.clear();
  --counters_.sessions;
}

void Session::start() {
  onStrand([self = shared_from_this()] {
    boost::system::error_code ec;
    self->socket_.non_blocking(true, ec);
    if (ec) {
      self->close("cannot make the socket non-blocking: " + ec.message());
      return;
    }
    self->waitReadable();
  });
}

void Session::drain() {
  onStrand([self = shared_from_this()] {
    if (self->closed_ || self->draining_) return;
    self->draining_ = true;
    self->finishIfDrained();
  });
}

void Session::onClosed(std::function<void()> done) {
  onStrand([self = shared_from_this(), done = std::move(done)]() mutable {
    if (self->closed_) {
      done();
      return;
    }
    self->onClosed_ = std::move(done);
  });
}

void Session::waitReadable() {
  if (readWaiting_ || closed_ || draining_) return;
  readWaiting_ = true;
  socket_.async_wait(Socket::wait_read,
                     boost::asio::bind_executor(
                         strand_, [self = shared_from_this()](boost::system::error_code ec) {
                           self->readWaiting_ = false;
                           if (ec || self->closed_ || self->draining_) return;
                           self->onReadable();
                         }));
}

bool Session::readPausedByReplies() const { return queuedBytes_ > limits_.maxUnreadReplyBytes / 4; }

void Session::onReadable() {
  bool peerClosed = false;
  // A few reads per wake-up, so that a client flooding small requests takes turns with the
  // other clients of this io thread.
  for (int reads = 0; reads < 4; ++reads) {
    auto got = receiveSome(socket_.native_handle(), parser_, true);
    if (!got) {
      close(got.error().message);
      return;
    }
    if (*got == ReceiveStatus::kWouldBlock) break;
    if (*got == ReceiveStatus::kClosed) {
      peerClosed = true;
      break;
    }
  }
  handleBuffered();
  if (closed_) return;
  if (peerClosed) {
    close(parser_.hasPartialFrame() ? "client disconnected in the middle of a frame"
                                    : "client disconnected");
    return;
  }
  if (draining_) {
    finishIfDrained();
    return;
  }
  if (!readPausedByReplies()) waitReadable();
}

void Session::handleBuffered() {
  while (!closed_ && !draining_ && !readPausedByReplies()) {
    auto next = parser_.next();
    if (!next) {
      close("malformed stream: " + next.error().message);
      return;
    }
    if (!next->has_value()) break;
    ++framesHandled_;
    const bool moreWaiting = parser_.hasCompleteFrame();
    if (!handleFrame(std::move(**next), moreWaiting)) break;
  }
  if (!closed_ && parser_.hasPartialFrame()) armFrameTimer();
}

void Session::armFrameTimer() {
  if (frameTimerArmed_) return;
  frameTimerArmed_ = true;
  const uint64_t handled = framesHandled_;
  frameTimer_.expires_after(limits_.frameTimeout);
  frameTimer_.async_wait([self = shared_from_this(), handled](boost::system::error_code ec) {
    self->frameTimerArmed_ = false;
    if (ec || self->closed_) return;
    const bool stuck = self->framesHandled_ == handled && self->parser_.hasPartialFrame() &&
                       !self->parser_.hasCompleteFrame() && !self->readPausedByReplies();
    if (stuck) {
      self->close("a frame did not arrive whole within " +
                  std::to_string(self->limits_.frameTimeout.count()) + " ms");
      return;
    }
    if (self->parser_.hasPartialFrame()) self->armFrameTimer();
  });
}

bool Session::handleFrame(Frame frame, bool moreWaiting) {
  const auto type = static_cast<MessageType>(frame.header.type);
  const ScopedTraceSpan span(
      config_->trace.get(), "ipc",
      config_->trace != nullptr ? "handle " + toString(type) : std::string());
  if (frame.header.version != kProtocolVersion) {
    if (type == MessageType::kHello) {
      HelloReply reply;
      reply.status = {ErrorStatus::DEVICE_UNAVAILABLE,
                      "nnhald speaks protocol version " + std::to_string(kProtocolVersion) +
                          ", not " + std::to_string(frame.header.version)};
      reply.protocolVersion = kProtocolVersion;
      OutMessage out;
      encode(reply, out);
      send(MessageType::kHelloReply, frame.header.callId, out);
      spdlog::info("session {}: {}", id_, reply.status.message);
      draining_ = true;  // close once the reply is written
      finishIfDrained();
      return false;
    }
    close("frame of protocol version " + std::to_string(frame.header.version) + ", expected " +
          std::to_string(kProtocolVersion));
    return false;
  }
  if (!helloDone_ && type != MessageType::kHello) {
    close("expected Hello, got " + toString(type));
    return false;
  }
  const uint64_t callId = frame.header.callId;
  NNHAL_VLOG(Ipc, "session {}: {} (call {}, {} payload bytes, {} descriptors)", id_, toString(type),
             callId, frame.payload.size(), frame.fds.size());
  // Allocation failures and library exceptions end this request, not the daemon.
  try {
    return dispatch(frame, moreWaiting);
  } catch (const std::bad_alloc&) {
    spdlog::warn("session {}: out of memory handling {}", id_, toString(type));
    replyFailure(type, callId,
                 Error{ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                       "the daemon ran out of memory handling " + toString(type),
                       {}});
  } catch (const std::exception& e) {
    spdlog::warn("session {}: {} failed: {}", id_, toString(type), e.what());
    replyFailure(type, callId,
                 Error{ErrorStatus::GENERAL_FAILURE, toString(type) + " failed: " + e.what(), {}});
  }
  return !closed_;
}

void Session::replyFailure(MessageType type, uint64_t callId, const Error& error) {
  OutMessage out;
  switch (type) {
    case MessageType::kSupportedOperations: {
      SupportedOperationsReply reply;
      reply.status = toWireStatus(error);
      encode(reply, out);
      send(MessageType::kSupportedOperationsReply, callId, out);
      return;
    }
    case MessageType::kPrepareModel:
    case MessageType::kPrepareModelFromCache:
    case MessageType::kExecute:
      sendLaunched(callId, toWireStatus(error));
      return;
    case MessageType::kExecuteSynchronously: {
      ExecutionReply reply;
      reply.status = toWireStatus(error);
      encode(reply, out);
      send(MessageType::kExecutionReply, callId, out);
      return;
    }
    case MessageType::kExecuteFenced: {
      FencedReply reply;
      reply.status = toWireStatus(error);
      encode(reply, out);
      send(MessageType::kFencedReply, callId, out);
      return;
    }
    case MessageType::kGetFencedInfo: {
      FencedInfoReply reply;
      reply.status = toWireStatus(error);
      encode(reply, out);
      send(MessageType::kFencedInfoReply, callId, out);
      return;
    }
    default:
      // Requests without a reply of their own (releases, Hello, GetStats): the connection
      // cannot be kept in a known state.
      close(toString(type) + ": " + error.message);
      return;
  }
}

bool Session::dispatch(Frame& frame, bool moreWaiting) {
  const auto type = static_cast<MessageType>(frame.header.type);
  switch (type) {
    case MessageType::kHello:
      return handleHello(frame);
    case MessageType::kSupportedOperations:
      return handleSupportedOperations(frame);
    case MessageType::kPrepareModel:
      return handlePrepareModel(frame);
    case MessageType::kPrepareModelFromCache:
      return handlePrepareFromCache(frame);
    case MessageType::kReleasePreparedModel: {
      auto m = decodePayload(frame.payload, type, decodeReleasePreparedModel);
      if (!m) break;
      releaseModel(m->handle);
      return true;
    }
    case MessageType::kExecuteSynchronously:
      return handleExecute(frame, false, moreWaiting);
    case MessageType::kExecute:
      return handleExecute(frame, true, moreWaiting);
    case MessageType::kReleasePools: {
      auto m = decodePayload(frame.payload, type, decodeReleasePools);
      if (!m) break;
      for (uint64_t id : m->ids) pools_.erase(id);
      return true;
    }
    case MessageType::kExecuteFenced:
      return handleExecuteFenced(frame);
    case MessageType::kGetFencedInfo:
      return handleGetFencedInfo(frame);
    case MessageType::kReleaseFenced: {
      auto m = decodePayload(frame.payload, type, decodeFencedHandle);
      if (!m) break;
      fenced_.erase(m->handle);
      return true;
    }
    case MessageType::kConfigureBurst:
      return handleConfigureBurst(frame);
    case MessageType::kReleaseBurst: {
      auto m = decodePayload(frame.payload, type, decodeBurstHandle);
      if (!m) break;
      releaseBurst(m->burst);
      return true;
    }
    case MessageType::kBurstFreeMemory:
      return handleBurstFreeMemory(frame);
    case MessageType::kBurstMemories:
      return handleBurstMemories(frame);
    case MessageType::kBurstLastError:
      return handleBurstLastError(frame);
    case MessageType::kAllocate:
      return handleAllocate(frame);
    case MessageType::kBufferCopyTo:
    case MessageType::kBufferCopyFrom:
      return handleBufferCopy(frame, type == MessageType::kBufferCopyFrom);
    case MessageType::kReleaseBuffer: {
      auto m = decodePayload(frame.payload, type, decodeBufferHandle);
      if (!m) break;
      releaseBuffer(m->buffer);
      return true;
    }
    case MessageType::kGetStats: {
      if (!frame.payload.empty()) break;
      OutMessage out;
      encode(admin_ ? daemonStats() : ownStats(), out);
      send(MessageType::kStatsReply, frame.header.callId, out);
      return true;
    }
    default:
      close("unexpected message type " + toString(type));
      return false;
  }
  close("malformed " + toString(type) + " payload");
  return false;
}

ApplicationUsage Session::usageOf(const Account& account) const {
  const Usage& held = account.usage();
  ApplicationUsage usage;
  usage.uid = static_cast<uint32_t>(account.application());
  usage.connections = held.held(Resource::kConnections);
  usage.preparedModels = held.held(Resource::kPreparedModels);
  usage.constantBytes = held.held(Resource::kConstantBytes);
  usage.pools = held.held(Resource::kPools);
  usage.requests = held.held(Resource::kRequests);
  usage.bursts = held.held(Resource::kBursts);
  usage.buffers = held.held(Resource::kBuffers);
  const auto report = config_->driver->applicationReport(account.application());
  usage.weight = report.weight;
  usage.arenaBytes = report.arenaBytes;
  usage.driverTimeUs = report.serviceNs / 1000;
  return usage;
}

StatsReply Session::ownStats() const {
  // A client sees its own objects and its own application only: nothing of other clients
  // leaks through statistics.
  StatsReply reply;
  reply.counts = {1, models_.size(), pools_.size(), queue_.inFlight(), bursts_.size(), 0,
                  0, buffers_.size()};
  for (const auto& [id, pool] : pools_) reply.poolBytes += pool->bytes;
  reply.applications.push_back(usageOf(*account_));
  return reply;
}

StatsReply Session::daemonStats() const {
  StatsReply reply;
  reply.counts = counters_.snapshot();
  reply.wholeDaemon = true;
  reply.poolBytes = counters_.poolBytes.load();
  reply.residentBytes = residentBytes();
  reply.uptimeMs = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                             std::chrono::steady_clock::now() - counters_.started)
                                             .count());
  for (const auto& [id, account] : config_->ledger->accounts()) {
    reply.applications.push_back(usageOf(*account));
  }
  std::sort(reply.applications.begin(), reply.applications.end(),
            [](const ApplicationUsage& a, const ApplicationUsage& b) { return a.uid < b.uid; });
  return reply;
}

bool Session::handleHello(const Frame& frame) {
  auto hello = decodePayload(frame.payload, MessageType::kHello, decodeHello);
  if (!hello) {
    close(hello.error().message);
    return false;
  }
  if (helloDone_) {
    close("a second Hello");
    return false;
  }
  HelloReply reply;
  reply.protocolVersion = kProtocolVersion;
  if (hello->protocolVersion != kProtocolVersion) {
    reply.status = {ErrorStatus::DEVICE_UNAVAILABLE,
                    "nnhald speaks protocol version " + std::to_string(kProtocolVersion) +
                        ", not " + std::to_string(hello->protocolVersion)};
    OutMessage out;
    encode(reply, out);
    send(MessageType::kHelloReply, frame.header.callId, out);
    draining_ = true;
    finishIfDrained();
    return false;
  }
  helloDone_ = true;
  reply.info.name = device_.getName();
  reply.info.version = device_.getVersionString();
  reply.info.type = device_.getType();
  reply.info.capabilities = device_.getCapabilities();
  reply.info.extensions = device_.getSupportedExtensions();
  reply.info.cacheFiles = device_.getNumberOfCacheFilesNeeded();
  if (const CompilationCaching caching = device_.getCompilationCaching(); !caching.available) {
    reply.info.cachingOff = "nnhald: " + caching.reason;
  }
  OutMessage out;
  encode(reply, out);
  send(MessageType::kHelloReply, frame.header.callId, out);
  spdlog::debug("session {}: hello from '{}'", id_, hello->clientName);
  NNHAL_VLOG(Ipc, "session {}: hello from '{}'", id_, hello->clientName);
  return true;
}

void Session::sendLaunched(uint64_t callId, const WireStatus& status) {
  OutMessage out;
  encode(status, out);
  send(MessageType::kLaunched, callId, out);
}

void Session::send(MessageType type, uint64_t callId, OutMessage& message,
                   std::shared_ptr<void> keep) {
  if (closed_) return;
  FrameHeader header;
  header.type = static_cast<uint16_t>(type);
  header.callId = callId;
  header.payloadBytes = static_cast<uint32_t>(message.payload.size());
  header.fdCount = static_cast<uint32_t>(message.fds.size());
  OutFrame frame;
  frame.bytes.resize(kFrameHeaderBytes + message.payload.size());
  encodeHeader(header,
               std::span<uint8_t, kFrameHeaderBytes>(frame.bytes.data(), kFrameHeaderBytes));
  std::copy(message.payload.buffer().begin(), message.payload.buffer().end(),
            frame.bytes.begin() + kFrameHeaderBytes);
  frame.fds = message.fds;
  frame.keep = std::move(keep);
  const size_t bytes = frame.bytes.size();
  queuedBytes_ += bytes;
  writeQueue_.push_back(std::move(frame));
  if (queuedBytes_ > limits_.maxUnreadReplyBytes) {
    close("the client does not read its replies (" + std::to_string(queuedBytes_) +
          " bytes queued)");
    return;
  }
  // Its application's and the daemon's unread replies: all its connections together.
  if (auto charged =
          config_->ledger->extend(replyCharge_, nullptr, account_, Resource::kReplyBytes, bytes);
      !charged) {
    close("the client does not read its replies: " + charged.error().message);
    return;
  }
  if (!writeWaiting_) flush();
}

void Session::flush() {
  const bool wasPaused = readPausedByReplies();
  while (!writeQueue_.empty() && !closed_) {
    OutFrame& front = writeQueue_.front();
    const std::span<const uint8_t> rest(front.bytes.data() + front.sent,
                                        front.bytes.size() - front.sent);
    auto sent =
        sendSome(socket_.native_handle(), rest, {},
                 front.sent == 0 ? std::span<const int>(front.fds) : std::span<const int>());
    if (!sent) {
      close("cannot write to the client: " + sent.error().message);
      return;
    }
    if (*sent == 0) {
      waitWritable();
      return;
    }
    front.sent += *sent;
    if (front.sent == front.bytes.size()) {
      queuedBytes_ -= front.bytes.size();
      replyCharge_.giveBack(front.bytes.size());
      writeQueue_.pop_front();
    }
  }
  if (wasPaused && !readPausedByReplies() && !closed_ && !draining_) {
    // The client read its replies: its requests are read again.
    onStrand([self = shared_from_this()] {
      self->handleBuffered();
      if (!self->closed_ && !self->draining_ && !self->readPausedByReplies()) {
        self->waitReadable();
      }
    });
  }
}

void Session::waitWritable() {
  writeWaiting_ = true;
  socket_.async_wait(
      Socket::wait_write,
      boost::asio::bind_executor(strand_, [self = shared_from_this()](boost::system::error_code) {
        self->writeWaiting_ = false;
        if (self->closed_) return;
        self->flush();
        self->finishIfDrained();
      }));
}

void Session::finishIfDrained() {
  if (draining_ && !closed_ && queue_.inFlight() == 0 && writeQueue_.empty()) {
    close("draining done");
  }
}

void Session::close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  cancelled_->store(true);
  NNHAL_VLOG(Ipc, "session {}: closed: {}", id_, reason);
  if (reason == "client disconnected" || reason == "draining done") {
    spdlog::debug("session {}: closed: {}", id_, reason);
  } else {
    spdlog::warn("session {}: closing: {}", id_, reason);
  }
  boost::system::error_code ec;
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
  frameTimer_.cancel();
  writeQueue_.clear();
  queuedBytes_ = 0;
  replyCharge_.reset();
  queue_.close();  // queued work of a departed client never runs
  for (auto& [id, descriptor] : fenceWaits_) {
    descriptor->cancel(ec);
    descriptor->close(ec);
  }
  fenceWaits_.clear();
  // Fences over client files are the daemon's: signalled now, so that nothing (another
  // process holding a duplicate) waits for them forever.
  for (auto& [handle, fenced] : fenced_) {
    if (fenced.bridge) (void)fenced.bridge->clientFence.signal();
  }
  fenced_.clear();
  for (auto& [id, listener] : bursts_) disposeBurst(std::move(listener));
  bursts_.clear();
  memoryCalls_.clear();  // their listeners are stopping: they stop waiting
  buffers_.clear();      // a departed client's buffers go with it
  models_.clear();
  pools_.clear();
  connectionCharge_.reset();
  if (onClosed_) {
    auto done = std::move(onClosed_);
    onClosed_ = nullptr;
    done();
  }
}

}  // namespace nnhal::ipc
