#include "ipc/session.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <mutex>
#include <optional>

#include "hal/pool_io.h"

namespace nnhal::ipc {
namespace {

/// Most bytes of replies queued for a client that does not read them before it is dropped.
constexpr size_t kMaxQueuedBytes = size_t{256} << 20;

/// Result of an asynchronous driver call (prepareModel, execute) that may call its callback
/// before it returns: such an early result is kept here and handled after the return status
/// is known.
template <typename T>
struct LaunchState {
  std::mutex mutex;
  bool returned = false;
  std::optional<Result<T>> early;

  /// From the callback: true when the result was kept (the launch call has not returned).
  bool keepIfEarly(Result<T>& result) {
    std::lock_guard<std::mutex> lock(mutex);
    if (returned) return false;
    early = std::move(result);
    return true;
  }
  /// After the launch call returned: the early result, if any.
  std::optional<Result<T>> markReturned() {
    std::lock_guard<std::mutex> lock(mutex);
    returned = true;
    return std::move(early);
  }
};

ExecuteOptions executeOptions(const Execute& m) {
  ExecuteOptions options;
  options.measure = static_cast<MeasureTiming>(m.measure);
  options.deadline = m.deadline;
  options.loopTimeout = std::chrono::nanoseconds(m.loopTimeoutNs);
  return options;
}

ExecutionReply executionReply(const Result<ExecutionResult>& result) {
  ExecutionReply reply;
  if (result) {
    reply.outputShapes = result->outputShapes;
    reply.timing = result->timing;
  } else {
    reply.status = toWireStatus(result.error());
    reply.outputShapes = result.error().outputShapes;
  }
  return reply;
}

/// Checks the kind and metadata of a pool described on the wire. Errors: GENERAL_FAILURE.
Result<MemoryKind> checkKind(const WirePool& pool, size_t index, const char* what) {
  const std::string name = std::string(what) + "[" + std::to_string(index) + "]";
  switch (pool.kind) {
    case static_cast<int32_t>(MemoryKind::ASHMEM):
    case static_cast<int32_t>(MemoryKind::MMAP_FD):
      return static_cast<MemoryKind>(pool.kind);
    case static_cast<int32_t>(MemoryKind::HARDWARE_BUFFER_BLOB):
      if (pool.desc.width != pool.size || pool.desc.height != 1 || pool.desc.layers != 1) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    name + ": hardware_buffer_blob of " + std::to_string(pool.desc.width) + "x" +
                        std::to_string(pool.desc.height) + "x" + std::to_string(pool.desc.layers) +
                        " does not describe a BLOB buffer of " + std::to_string(pool.size) +
                        " bytes");
      }
      return MemoryKind::HARDWARE_BUFFER_BLOB;
    default:
      return fail(ErrorStatus::GENERAL_FAILURE,
                  name + ": unknown memory kind " + std::to_string(pool.kind));
  }
}

Result<Memory> mapPool(const WirePool& pool, const std::vector<UniqueFd>& fds, size_t index,
                       const char* what) {
  NNHAL_ASSIGN_OR_RETURN(MemoryKind kind, checkKind(pool, index, what));
  return hal::adoptClientPool(fds[pool.fdIndex].get(), kind, pool.size, pool.offset, pool.writable,
                              std::string(what) + "[" + std::to_string(index) + "]");
}

CacheFiles cacheFiles(const WireCacheFiles& wire, const std::vector<UniqueFd>& fds) {
  CacheFiles files;
  files.token = wire.token;
  for (const auto& handle : wire.modelCache) {
    CacheHandle& out = files.modelCache.emplace_back();
    for (uint32_t index : handle) out.push_back(fds[index].get());
  }
  for (const auto& handle : wire.dataCache) {
    CacheHandle& out = files.dataCache.emplace_back();
    for (uint32_t index : handle) out.push_back(fds[index].get());
  }
  return files;
}

}  // namespace

/// A prepared model held by a session or an execution; counted while alive.
struct Session::TrackedModel {
  TrackedModel(std::shared_ptr<PreparedModel> m, std::shared_ptr<ServerCounters> c)
      : model(std::move(m)), counters(std::move(c)) {
    ++counters->preparedModels;
  }
  ~TrackedModel() {
    model.reset();
    --counters->preparedModels;
  }
  std::shared_ptr<PreparedModel> model;
  std::shared_ptr<ServerCounters> counters;
};

/// A request pool of a session: its mapping, or why it cannot be mapped; counted while alive.
struct Session::TrackedPool {
  TrackedPool(Result<Memory> m, std::shared_ptr<ServerCounters> c)
      : memory(std::move(m)), counters(std::move(c)) {
    ++counters->pools;
  }
  ~TrackedPool() {
    memory = Memory();
    --counters->pools;
  }
  Result<Memory> memory;
  std::shared_ptr<ServerCounters> counters;
};

Session::Session(Socket socket, std::shared_ptr<Device> device,
                 std::shared_ptr<ServerCounters> counters, uint32_t maxPayloadBytes, uint64_t id)
    : socket_(std::move(socket)),
      strand_(boost::asio::make_strand(
          static_cast<boost::asio::io_context&>(socket_.get_executor().context()))),
      device_(std::move(device)),
      counters_(std::move(counters)),
      parser_(maxPayloadBytes),
      id_(id) {
  ++counters_->sessions;
}

Session::~Session() {
  fenced_.clear();
  models_.clear();
  pools_.clear();
  --counters_->sessions;
}

template <typename Handler>
void Session::onStrand(Handler&& handler) {
  boost::asio::post(strand_, std::forward<Handler>(handler));
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
    boost::system::error_code ec;
    self->socket_.cancel(ec);  // the read wait ends; a write wait is re-armed by flush()
    self->finishIfDrained();
  });
}

void Session::waitReadable() {
  socket_.async_wait(Socket::wait_read,
                     boost::asio::bind_executor(
                         strand_, [self = shared_from_this()](boost::system::error_code ec) {
                           if (ec || self->closed_ || self->draining_) return;
                           self->onReadable();
                         }));
}

void Session::onReadable() {
  bool peerClosed = false;
  for (int reads = 0; reads < 16; ++reads) {
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
  while (!closed_ && !draining_) {
    auto next = parser_.next();
    if (!next) {
      close("malformed stream: " + next.error().message);
      return;
    }
    if (!next->has_value()) break;
    const bool moreWaiting = parser_.hasCompleteFrame();
    if (!handleFrame(std::move(**next), moreWaiting)) break;
  }
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
  waitReadable();
}

bool Session::handleFrame(Frame frame, bool moreWaiting) {
  const auto type = static_cast<MessageType>(frame.header.type);
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
  switch (type) {
    case MessageType::kHello:
      return handleHello(frame);
    case MessageType::kSupportedOperations:
      return handleSupportedOperations(frame);
    case MessageType::kPrepareModel:
      return handlePrepareModel(std::move(frame));
    case MessageType::kPrepareModelFromCache:
      return handlePrepareFromCache(std::move(frame));
    case MessageType::kReleasePreparedModel: {
      auto m = decodePayload(frame.payload, type, decodeReleasePreparedModel);
      if (!m) break;
      if (models_.erase(m->handle) == 0) {
        spdlog::debug("session {}: release of unknown prepared model {}", id_, m->handle);
      }
      return true;
    }
    case MessageType::kExecuteSynchronously:
      return handleExecute(std::move(frame), false, moreWaiting);
    case MessageType::kExecute:
      return handleExecute(std::move(frame), true, moreWaiting);
    case MessageType::kReleasePools: {
      auto m = decodePayload(frame.payload, type, decodeReleasePools);
      if (!m) break;
      for (uint64_t id : m->ids) pools_.erase(id);
      return true;
    }
    case MessageType::kExecuteFenced:
      return handleExecuteFenced(std::move(frame));
    case MessageType::kGetFencedInfo:
      return handleGetFencedInfo(frame);
    case MessageType::kReleaseFenced: {
      auto m = decodePayload(frame.payload, type, decodeFencedHandle);
      if (!m) break;
      fenced_.erase(m->handle);
      return true;
    }
    case MessageType::kGetStats: {
      if (!frame.payload.empty()) break;
      OutMessage out;
      encode(counters_->snapshot(), out);
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
  reply.info.name = device_->getName();
  reply.info.version = device_->getVersionString();
  reply.info.type = device_->getType();
  reply.info.capabilities = device_->getCapabilities();
  reply.info.extensions = device_->getSupportedExtensions();
  reply.info.cacheFiles = device_->getNumberOfCacheFilesNeeded();
  OutMessage out;
  encode(reply, out);
  send(MessageType::kHelloReply, frame.header.callId, out);
  spdlog::debug("session {}: hello from '{}'", id_, hello->clientName);
  return true;
}

Result<uint64_t> Session::attachModelPools(Model& model, const std::vector<WirePool>& pools,
                                           const std::vector<UniqueFd>& fds) {
  std::vector<Memory> memories;
  memories.reserve(pools.size());
  for (size_t i = 0; i < pools.size(); ++i) {
    const WirePool& pool = pools[i];
    if (pool.source == WirePool::Source::kEmpty) {
      memories.emplace_back();
      continue;
    }
    if (pool.source != WirePool::Source::kFd) {
      return invalidArgument("model.pools[" + std::to_string(i) +
                             "]: a model pool must be shared memory");
    }
    NNHAL_ASSIGN_OR_RETURN(Memory memory, mapPool(pool, fds, i, "model.pools"));
    memories.push_back(std::move(memory));
  }
  model.pools = std::move(memories);
  // The client can rewrite or shrink its pools at any time: the driver compiles and runs
  // with its own copy of the constants they hold.
  NNHAL_ASSIGN_OR_RETURN(const uint64_t copied, hal::copyModelPoolsPrivately(model));
  return copied + model.operandValues.size();
}

Result<Request> Session::requestFrom(WireRequest wire, const std::vector<UniqueFd>& fds) {
  Request request;
  request.inputs = std::move(wire.inputs);
  request.outputs = std::move(wire.outputs);
  request.pools.reserve(wire.pools.size());
  for (size_t i = 0; i < wire.pools.size(); ++i) {
    const WirePool& pool = wire.pools[i];
    switch (pool.source) {
      case WirePool::Source::kFd: {
        // A pool that cannot be used is remembered too: the client names it by id from now on
        // and must keep getting the same error.
        auto memory = mapPool(pool, fds, i, "request.pools");
        auto tracked = std::make_shared<TrackedPool>(memory, counters_);
        pools_[pool.id] = tracked;
        if (!memory) return std::unexpected(memory.error());
        request.pools.emplace_back(*memory);
        break;
      }
      case WirePool::Source::kCached: {
        auto found = pools_.find(pool.id);
        if (found == pools_.end()) {
          return invalidArgument("request.pools[" + std::to_string(i) + "]: pool id " +
                                 std::to_string(pool.id) + " is unknown to this connection");
        }
        if (!found->second->memory) return std::unexpected(found->second->memory.error());
        request.pools.emplace_back(*found->second->memory);
        break;
      }
      case WirePool::Source::kToken:
        request.pools.emplace_back(MemoryDomainToken{pool.token});
        break;
      case WirePool::Source::kEmpty:
        request.pools.emplace_back(Memory());
        break;
    }
  }
  return request;
}

bool Session::handleSupportedOperations(const Frame& frame) {
  auto m = decodePayload(frame.payload, MessageType::kSupportedOperations,
                         [&](ByteReader& in) { return decodeWireModel(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  SupportedOperationsReply reply;
  auto constants = attachModelPools(m->model, m->pools, frame.fds);
  if (!constants) {
    reply.status = toWireStatus(constants.error());
  } else {
    auto reasons = device_->explainSupportedOperations(m->model);
    if (reasons) {
      reply.reasons = std::move(*reasons);
    } else {
      reply.status = toWireStatus(reasons.error());
    }
  }
  OutMessage out;
  encode(reply, out);
  send(MessageType::kSupportedOperationsReply, frame.header.callId, out);
  return true;
}

void Session::sendLaunched(uint64_t callId, const WireStatus& status) {
  OutMessage out;
  encode(status, out);
  send(MessageType::kLaunched, callId, out);
}

void Session::replyPrepared(uint64_t callId, Result<std::shared_ptr<PreparedModel>> result) {
  --inFlight_;
  --counters_->callsInFlight;
  if (closed_) return;
  PrepareReply reply;
  if (result) {
    reply.handle = nextHandle_++;
    models_[reply.handle] = std::make_shared<TrackedModel>(std::move(*result), counters_);
  } else {
    reply.status = toWireStatus(result.error());
  }
  OutMessage out;
  encode(reply, out);
  send(MessageType::kPrepareReply, callId, out);
  finishIfDrained();
}

void Session::launchPreparation(uint64_t callId, std::shared_ptr<std::vector<UniqueFd>> fds,
                                const std::function<ErrorStatus(PrepareCallback)>& start) {
  using PreparedResult = Result<std::shared_ptr<PreparedModel>>;
  auto state = std::make_shared<LaunchState<std::shared_ptr<PreparedModel>>>();
  const ErrorStatus status =
      start([self = shared_from_this(), state, fds, callId,
             work = boost::asio::make_work_guard(strand_)](PreparedResult result) mutable {
        if (state->keepIfEarly(result)) return;
        self->onStrand(
            [self, callId, result = std::move(result), fds, work = std::move(work)]() mutable {
              self->replyPrepared(callId, std::move(result));
            });
      });
  auto early = state->markReturned();
  if (status != ErrorStatus::NONE) {
    sendLaunched(callId, {status, early && !*early ? early->error().message : std::string()});
    --inFlight_;
    --counters_->callsInFlight;
    finishIfDrained();
    return;
  }
  sendLaunched(callId, {});
  if (early) replyPrepared(callId, std::move(*early));
}

bool Session::handlePrepareModel(Frame frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kPrepareModel,
                         [&](ByteReader& in) { return decodePrepareModel(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto fds = std::make_shared<std::vector<UniqueFd>>(std::move(frame.fds));
  ++inFlight_;
  ++counters_->callsInFlight;
  auto constants = attachModelPools(m->model.model, m->model.pools, *fds);
  if (!constants) {
    // Like a pool the driver cannot use: the preparation itself fails.
    sendLaunched(callId, {});
    replyPrepared(callId, std::unexpected(constants.error()));
    return true;
  }
  PrepareOptions options;
  options.preference = static_cast<ExecutionPreference>(m->preference);
  options.priority = static_cast<Priority>(m->priority);
  options.deadline = m->deadline;
  if (m->cache) options.cache = cacheFiles(*m->cache, *fds);
  launchPreparation(callId, fds, [&](PrepareCallback callback) {
    return device_->prepareModel(std::move(m->model.model), options, std::move(callback));
  });
  return true;
}

bool Session::handlePrepareFromCache(Frame frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kPrepareModelFromCache, [&](ByteReader& in) {
    return decodePrepareFromCache(in, frame.fds.size());
  });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto fds = std::make_shared<std::vector<UniqueFd>>(std::move(frame.fds));
  ++inFlight_;
  ++counters_->callsInFlight;
  launchPreparation(callId, fds, [&](PrepareCallback callback) {
    return device_->prepareModelFromCache(cacheFiles(m->cache, *fds), m->deadline,
                                          std::move(callback));
  });
  return true;
}

bool Session::handleExecute(Frame frame, bool async, bool moreWaiting) {
  const uint64_t callId = frame.header.callId;
  const MessageType type = async ? MessageType::kExecute : MessageType::kExecuteSynchronously;
  auto m = decodePayload(frame.payload, type,
                         [&](ByteReader& in) { return decodeExecute(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [this, callId](const Result<ExecutionResult>& result) {
    OutMessage out;
    encode(executionReply(result), out);
    send(MessageType::kExecutionReply, callId, out);
  };
  auto launched = [this, callId](const WireStatus& status) { sendLaunched(callId, status); };
  // Faults found here are reported as the driver would report them: INVALID_ARGUMENT as the
  // launch status, GENERAL_FAILURE (a pool it cannot use) as the execution's outcome.
  auto refuse = [&](const Error& error) {
    if (!async) {
      reply(std::unexpected(error));
    } else if (error.status == ErrorStatus::GENERAL_FAILURE) {
      launched({});
      reply(std::unexpected(error));
    } else {
      launched(toWireStatus(error));
    }
    return true;
  };
  auto found = models_.find(m->handle);
  if (found == models_.end()) {
    return refuse(Error{ErrorStatus::INVALID_ARGUMENT,
                        "unknown prepared model handle " + std::to_string(m->handle),
                        {}});
  }
  std::shared_ptr<TrackedModel> tracked = found->second;
  auto request = requestFrom(std::move(m->request), frame.fds);
  if (!request) return refuse(request.error());
  const ExecuteOptions options = executeOptions(*m);

  if (!async && !moreWaiting) {
    // The fast path: run it here, on the session's thread.
    ++counters_->callsInFlight;
    auto result = tracked->model->executeSynchronously(*request, options);
    --counters_->callsInFlight;
    reply(result);
    return true;
  }

  auto deliver = [this, reply, tracked](Result<ExecutionResult> result) {
    --inFlight_;
    --counters_->callsInFlight;
    if (closed_) return;
    reply(result);
    finishIfDrained();
  };
  ++inFlight_;
  ++counters_->callsInFlight;
  auto state = std::make_shared<LaunchState<ExecutionResult>>();
  const ErrorStatus status = tracked->model->execute(
      std::move(*request), options,
      [self = shared_from_this(), state, deliver,
       work = boost::asio::make_work_guard(strand_)](Result<ExecutionResult> result) mutable {
        if (state->keepIfEarly(result)) return;
        // The work guard keeps the io_context running until the reply is written.
        self->onStrand([self, deliver = std::move(deliver), result = std::move(result),
                        work = std::move(work)]() mutable { deliver(std::move(result)); });
      });
  auto early = state->markReturned();
  if (status != ErrorStatus::NONE) {
    const Error error = early && !*early ? early->error() : Error{status, "", {}};
    if (async) {
      launched(toWireStatus(error));
    } else {
      reply(std::unexpected(error));
    }
    --inFlight_;
    --counters_->callsInFlight;
    finishIfDrained();
    return true;
  }
  if (async) launched({});
  if (early) deliver(std::move(*early));
  return true;
}

bool Session::handleExecuteFenced(Frame frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kExecuteFenced,
                         [&](ByteReader& in) { return decodeExecuteFenced(in, frame.fds.size()); });
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto refuse = [&](const Error& error) {
    FencedReply reply;
    reply.status = toWireStatus(error);
    OutMessage out;
    encode(reply, out);
    send(MessageType::kFencedReply, callId, out);
    return true;
  };
  auto found = models_.find(m->execute.handle);
  if (found == models_.end()) {
    return refuse(Error{ErrorStatus::INVALID_ARGUMENT,
                        "unknown prepared model handle " + std::to_string(m->execute.handle),
                        {}});
  }
  std::shared_ptr<TrackedModel> tracked = found->second;
  auto request = requestFrom(std::move(m->execute.request), frame.fds);
  if (!request) return refuse(request.error());
  std::vector<SyncFence> waitFor;
  waitFor.reserve(m->waitFor.size());
  for (size_t i = 0; i < m->waitFor.size(); ++i) {
    if (!m->waitFor[i].valid) {
      waitFor.emplace_back();
      continue;
    }
    auto fence = SyncFence::fromFd(frame.fds[m->waitFor[i].fdIndex].get());
    if (!fence) {
      return refuse(Error{fence.error().status,
                          "waitFor[" + std::to_string(i) + "]: " + fence.error().message,
                          {}});
    }
    waitFor.push_back(std::move(*fence));
  }
  OptionalDuration timeoutAfterFence;
  if (m->timeoutAfterFenceNs) timeoutAfterFence = std::chrono::nanoseconds(*m->timeoutAfterFenceNs);
  auto launched = tracked->model->executeFenced(*request, waitFor, executeOptions(m->execute),
                                                timeoutAfterFence);
  if (!launched) return refuse(launched.error());

  FencedReply reply;
  reply.handle = nextFenced_++;
  fenced_[reply.handle] = Fenced{launched->callback, launched->syncFence};
  OutMessage out;
  if (launched->syncFence.valid()) {
    reply.hasFence = true;
    reply.fenceFdIndex = out.addFd(launched->syncFence.fd());
  }
  encode(reply, out);
  // The fence's descriptor stays open until the frame is written.
  send(MessageType::kFencedReply, callId, out, std::make_shared<SyncFence>(launched->syncFence));
  return true;
}

bool Session::handleGetFencedInfo(const Frame& frame) {
  const uint64_t callId = frame.header.callId;
  auto m = decodePayload(frame.payload, MessageType::kGetFencedInfo, decodeFencedHandle);
  if (!m) {
    close(m.error().message);
    return false;
  }
  auto reply = [this, callId](const Result<FencedExecutionInfo>& info) {
    FencedInfoReply r;
    if (info) {
      r.executionStatus = info->status;
      r.timingLaunched = info->timingLaunched;
      r.timingFenced = info->timingFenced;
    } else {
      r.status = toWireStatus(info.error());
    }
    OutMessage out;
    encode(r, out);
    send(MessageType::kFencedInfoReply, callId, out);
  };
  auto found = fenced_.find(m->handle);
  if (found == fenced_.end()) {
    reply(fail(ErrorStatus::INVALID_ARGUMENT,
               "unknown fenced execution handle " + std::to_string(m->handle)));
    return true;
  }
  const Fenced entry = found->second;
  if (!entry.fence.valid() || entry.fence.state() != SyncFence::State::kActive) {
    reply(entry.callback->getExecutionInfo());  // finished: does not block
    return true;
  }
  // getExecutionInfo would block until the fence signals: wait for it without a thread.
  const int fd = ::fcntl(entry.fence.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    reply(fail(ErrorStatus::GENERAL_FAILURE, "cannot duplicate the fence descriptor"));
    return true;
  }
  auto descriptor =
      std::make_shared<boost::asio::posix::stream_descriptor>(socket_.get_executor(), fd);
  const uint64_t waitId = nextFenceWait_++;
  fenceWaits_[waitId] = descriptor;
  descriptor->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                         boost::asio::bind_executor(
                             strand_, [self = shared_from_this(), waitId, descriptor, reply,
                                       callback = entry.callback](boost::system::error_code ec) {
                               self->fenceWaits_.erase(waitId);
                               if (ec || self->closed_) return;
                               reply(callback->getExecutionInfo());
                             }));
  return true;
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
  queuedBytes_ += frame.bytes.size();
  writeQueue_.push_back(std::move(frame));
  if (queuedBytes_ > kMaxQueuedBytes) {
    close("the client does not read its replies (" + std::to_string(queuedBytes_) +
          " bytes queued)");
    return;
  }
  if (!writeWaiting_) flush();
}

void Session::flush() {
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
      writeQueue_.pop_front();
    }
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
  if (draining_ && !closed_ && inFlight_ == 0 && writeQueue_.empty()) {
    close("draining done");
  }
}

void Session::close(const std::string& reason) {
  if (closed_) return;
  closed_ = true;
  if (reason == "client disconnected" || reason == "draining done") {
    spdlog::debug("session {}: closed: {}", id_, reason);
  } else {
    spdlog::warn("session {}: closing: {}", id_, reason);
  }
  boost::system::error_code ec;
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
  writeQueue_.clear();
  queuedBytes_ = 0;
  for (auto& [id, descriptor] : fenceWaits_) {
    descriptor->cancel(ec);
    descriptor->close(ec);
  }
  fenceWaits_.clear();
  fenced_.clear();
  models_.clear();
  pools_.clear();
}

}  // namespace nnhal::ipc
