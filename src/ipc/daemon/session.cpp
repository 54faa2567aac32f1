// Session: reading frames, dispatching them, writing replies, closing (ipc/daemon/session.h).
#include "ipc/daemon/session.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <fstream>
#include <new>

#include "common/vlog.h"
#include "hal/driver_control.h"
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
    : strand_(boost::asio::make_strand(
          static_cast<boost::asio::io_context&>(socket.get_executor().context()))),
      config_(std::move(config)),
      limits_(config_->limits),
      served_(&config_->devices.front()),
      counters_(*config_->counters),
      id_(id),
      admin_(admin),
      account_(std::move(account)),
      application_(account_->application()),
      connectionCharge_(std::move(connection)),
      channel_(std::move(socket), strand_, limits_, config_->maxPayloadBytes, config_->ledger,
               account_),
      queue_(strand_, limits_.maxRunning, limits_.maxQueued,
             std::shared_ptr<std::atomic<uint64_t>>(config_->counters,
                                                    &config_->counters->callsInFlight)) {
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
    if (auto started = self->channel_.start(self->weak_from_this()); !started) {
      self->close(started.error().message);
    }
  });
}

void Session::drain() {
  onStrand([self = shared_from_this()] {
    if (self->closed_ || self->draining_) return;
    self->startDraining();
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

void Session::startDraining() {
  draining_ = true;
  channel_.stopReading();
  finishIfDrained();
}

bool Session::onFrame(Frame frame, bool moreWaiting) {
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
      startDraining();  // close once the reply is written
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
  // A reply of type `replyType` carrying nothing but the failure.
  const auto replyWith = [&]<typename Reply>(MessageType replyType, Reply reply) {
    OutMessage out;
    reply.status = toWireStatus(error);
    encode(reply, out);
    send(replyType, callId, out);
  };
  switch (type) {
    case MessageType::kSupportedOperations:
      replyWith(MessageType::kSupportedOperationsReply, SupportedOperationsReply{});
      return;
    case MessageType::kPrepareModel:
    case MessageType::kPrepareModelFromCache:
    case MessageType::kExecute:
      sendLaunched(callId, toWireStatus(error));
      return;
    case MessageType::kExecuteSynchronously:
      replyWith(MessageType::kExecutionReply, ExecutionReply{});
      return;
    case MessageType::kExecuteFenced:
      replyWith(MessageType::kFencedReply, FencedReply{});
      return;
    case MessageType::kGetFencedInfo:
      replyWith(MessageType::kFencedInfoReply, FencedInfoReply{});
      return;
    default:
      // Requests without a reply of their own (releases, Hello, GetStats): the connection
      // cannot be kept in a known state.
      close(toString(type) + ": " + error.message);
      return;
  }
}

template <typename Decoder, typename Use>
bool Session::whenDecoded(const Frame& frame, Decoder decoder, Use use) {
  const auto type = static_cast<MessageType>(frame.header.type);
  auto m = decodePayload(frame.payload, type, decoder);
  if (!m) {
    close("malformed " + toString(type) + " payload");
    return false;
  }
  use(*m);
  return true;
}

const Session::HandlerEntry* Session::handlerFor(MessageType type) {
  // One entry per message a client may send, sorted by type; the replies and the daemon's
  // own calls (kBurstGetMemories) have none, so a client sending one is closed.
  static constexpr std::array<HandlerEntry, 21> kHandlers{{
      {MessageType::kHello, [](Session& s, Frame& f, bool) { return s.handleHello(f); }},
      {MessageType::kSupportedOperations,
       [](Session& s, Frame& f, bool) { return s.handleSupportedOperations(f); }},
      {MessageType::kPrepareModel,
       [](Session& s, Frame& f, bool) { return s.handlePrepareModel(f); }},
      {MessageType::kPrepareModelFromCache,
       [](Session& s, Frame& f, bool) { return s.handlePrepareFromCache(f); }},
      {MessageType::kReleasePreparedModel,
       [](Session& s, Frame& f, bool) {
         return s.whenDecoded(f, decodeReleasePreparedModel,
                              [&](const ReleasePreparedModel& m) { s.releaseModel(m.handle); });
       }},
      {MessageType::kExecuteSynchronously,
       [](Session& s, Frame& f, bool more) { return s.handleExecute(f, false, more); }},
      {MessageType::kExecute,
       [](Session& s, Frame& f, bool more) { return s.handleExecute(f, true, more); }},
      {MessageType::kReleasePools,
       [](Session& s, Frame& f, bool) {
         return s.whenDecoded(f, decodeReleasePools, [&](const ReleasePools& m) {
           for (uint64_t id : m.ids) s.pools_.erase(id);
         });
       }},
      {MessageType::kGetStats, [](Session& s, Frame& f, bool) { return s.handleGetStats(f); }},
      {MessageType::kExecuteFenced,
       [](Session& s, Frame& f, bool) { return s.handleExecuteFenced(f); }},
      {MessageType::kGetFencedInfo,
       [](Session& s, Frame& f, bool) { return s.handleGetFencedInfo(f); }},
      {MessageType::kReleaseFenced,
       [](Session& s, Frame& f, bool) {
         return s.whenDecoded(f, decodeFencedHandle,
                              [&](const FencedHandle& m) { s.fenced_.erase(m.handle); });
       }},
      {MessageType::kConfigureBurst,
       [](Session& s, Frame& f, bool) { return s.handleConfigureBurst(f); }},
      {MessageType::kReleaseBurst,
       [](Session& s, Frame& f, bool) {
         return s.whenDecoded(f, decodeBurstHandle,
                              [&](const BurstHandle& m) { s.releaseBurst(m.burst); });
       }},
      {MessageType::kBurstFreeMemory,
       [](Session& s, Frame& f, bool) { return s.handleBurstFreeMemory(f); }},
      {MessageType::kBurstMemories,
       [](Session& s, Frame& f, bool) { return s.handleBurstMemories(f); }},
      {MessageType::kBurstLastError,
       [](Session& s, Frame& f, bool) { return s.handleBurstLastError(f); }},
      {MessageType::kAllocate, [](Session& s, Frame& f, bool) { return s.handleAllocate(f); }},
      {MessageType::kBufferCopyTo,
       [](Session& s, Frame& f, bool) { return s.handleBufferCopy(f, false); }},
      {MessageType::kBufferCopyFrom,
       [](Session& s, Frame& f, bool) { return s.handleBufferCopy(f, true); }},
      {MessageType::kReleaseBuffer,
       [](Session& s, Frame& f, bool) {
         return s.whenDecoded(f, decodeBufferHandle,
                              [&](const BufferHandle& m) { s.releaseBuffer(m.buffer); });
       }},
  }};
  static_assert(
      std::is_sorted(kHandlers.begin(), kHandlers.end(),
                     [](const HandlerEntry& a, const HandlerEntry& b) { return a.type < b.type; }));
  const auto* found =
      std::lower_bound(kHandlers.begin(), kHandlers.end(), type,
                       [](const HandlerEntry& entry, MessageType t) { return entry.type < t; });
  return found != kHandlers.end() && found->type == type ? found : nullptr;
}

bool Session::dispatch(Frame& frame, bool moreWaiting) {
  const auto type = static_cast<MessageType>(frame.header.type);
  const HandlerEntry* entry = handlerFor(type);
  if (entry == nullptr) {
    close("unexpected message type " + toString(type));
    return false;
  }
  return entry->handle(*this, frame, moreWaiting);
}

bool Session::handleGetStats(const Frame& frame) {
  if (!frame.payload.empty()) {
    close("malformed " + toString(MessageType::kGetStats) + " payload");
    return false;
  }
  OutMessage out;
  encode(admin_ ? daemonStats() : ownStats(), out);
  send(MessageType::kStatsReply, frame.header.callId, out);
  return true;
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
  // Summed over the devices' runtimes, each counted once (an application's weight is the
  // same on each).
  std::vector<uint64_t> runtimes;
  for (const ServedDevice& served : config_->devices) {
    const auto report = served.driver->applicationReport(account.application());
    if (std::find(runtimes.begin(), runtimes.end(), report.runtime) != runtimes.end()) continue;
    runtimes.push_back(report.runtime);
    usage.weight = report.weight;
    usage.arenaBytes += report.arenaBytes;
    usage.driverTimeUs += report.serviceNs / 1000;
  }
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
  // A refused Hello gets its reason, then the connection closes.
  auto refuse = [&](std::string reason) {
    reply.status = {ErrorStatus::DEVICE_UNAVAILABLE, std::move(reason)};
    OutMessage out;
    encode(reply, out);
    send(MessageType::kHelloReply, frame.header.callId, out);
    startDraining();
    return false;
  };
  if (hello->protocolVersion != kProtocolVersion) {
    return refuse("nnhald speaks protocol version " + std::to_string(kProtocolVersion) + ", not " +
                  std::to_string(hello->protocolVersion));
  }
  for (const ServedDevice& served : config_->devices) {
    reply.devices.push_back(served.device->getName());
    if (served.device->getName() == hello->device) served_ = &served;
  }
  if (!hello->device.empty() && served_->device->getName() != hello->device) {
    std::string names;
    for (const std::string& name : reply.devices) names += (names.empty() ? "" : ", ") + name;
    return refuse("nnhald serves no device '" + hello->device + "' (it serves " + names + ")");
  }
  helloDone_ = true;
  const Device& device = *served_->device;
  reply.info.name = device.getName();
  reply.info.version = device.getVersionString();
  reply.info.type = device.getType();
  reply.info.capabilities = device.getCapabilities();
  reply.info.extensions = device.getSupportedExtensions();
  reply.info.cacheFiles = device.getNumberOfCacheFilesNeeded();
  if (const CompilationCaching caching = device.getCompilationCaching(); !caching.available) {
    reply.info.cachingOff = "nnhald: " + caching.reason;
  }
  OutMessage out;
  encode(reply, out);
  send(MessageType::kHelloReply, frame.header.callId, out);
  spdlog::debug("session {}: hello from '{}' for device '{}'", id_, hello->clientName,
                device.getName());
  NNHAL_VLOG(Ipc, "session {}: hello from '{}' for device '{}'", id_, hello->clientName,
             device.getName());
  return true;
}

void Session::sendLaunched(uint64_t callId, const WireStatus& status) {
  OutMessage out;
  encode(status, out);
  send(MessageType::kLaunched, callId, out);
}

void Session::finishIfDrained() {
  if (draining_ && !closed_ && queue_.inFlight() == 0 && !channel_.writing()) {
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
  channel_.close();
  queue_.close();  // queued work of a departed client never runs
  boost::system::error_code ec;
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
