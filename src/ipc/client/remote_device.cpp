#include "ipc/client/remote_device.h"

#include "common/vlog.h"
#include "ipc/client/remote_buffer.h"
#include "ipc/client/remote_burst.h"

#include <condition_variable>
#include <mutex>
#include <optional>

namespace nnhal::ipc {
namespace {

Result<ExecutionResult> executionResultFrom(const Frame& frame) {
  if (frame.header.type != static_cast<uint16_t>(MessageType::kExecutionReply)) {
    return std::unexpected(unexpectedReply(frame, MessageType::kExecutionReply));
  }
  NNHAL_ASSIGN_OR_RETURN(
      ExecutionReply reply,
      decodePayload(frame.payload, MessageType::kExecutionReply, decodeExecutionReply));
  if (reply.status.status != ErrorStatus::NONE) {
    return std::unexpected(toError(std::move(reply.status), std::move(reply.outputShapes)));
  }
  return ExecutionResult{std::move(reply.outputShapes), reply.timing};
}

/// The two replies of an asynchronous call: Launched (the status the daemon's driver
/// returned), then the outcome for the callback.
template <typename T>
struct Launch {
  std::mutex mutex;
  std::condition_variable cv;
  bool known = false;
  std::optional<Error> error;
  bool launchSeen = false;  // touched by the reader thread only
  std::move_only_function<void(Result<T>)> callback;

  void setLaunched(std::optional<Error> launchError) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      known = true;
      error = std::move(launchError);
    }
    cv.notify_one();
  }
  std::optional<Error> waitLaunched() {
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return known; });
    return error;
  }
};

/// The handler of an asynchronous call; `convert` turns the outcome frame into Result<T>.
template <typename T, typename Convert>
Connection::Handler launchHandler(Connection& connection, std::shared_ptr<Launch<T>> state,
                                  Convert convert) {
  return [&connection, state = std::move(state),
          convert = std::move(convert)](Result<Frame> frame) mutable {
    if (!state->launchSeen) {
      state->launchSeen = true;
      if (!frame) {
        state->setLaunched(frame.error());
        return true;
      }
      if (frame->header.type != static_cast<uint16_t>(MessageType::kLaunched)) {
        state->setLaunched(unexpectedReply(*frame, MessageType::kLaunched));
        return true;
      }
      auto status = decodePayload(frame->payload, MessageType::kLaunched, decodeWireStatus);
      if (!status) {
        state->setLaunched(status.error());
        return true;
      }
      if (status->status != ErrorStatus::NONE) {
        state->setLaunched(toError(std::move(*status)));
        return true;
      }
      state->setLaunched(std::nullopt);
      return false;
    }
    Result<T> result = frame ? convert(*frame) : Result<T>(std::unexpected(frame.error()));
    // Off the reader thread: the callback may make synchronous calls on this connection.
    connection.postCallback(
        [callback = std::move(state->callback), result = std::move(result)]() mutable {
          callback(std::move(result));
        });
    return true;
  };
}

/// Sends the call, waits for Launched; on a launch failure gives the callback the error on
/// this thread and returns its status (as the embedded driver does).
template <typename T>
ErrorStatus launch(Connection& connection, MessageType type, const Connection::Builder& build,
                   std::shared_ptr<Launch<T>> state, Connection::Handler handler) {
  if (auto sent = connection.call(type, build, std::move(handler)); !sent) {
    auto callback = std::move(state->callback);
    callback(std::unexpected(sent.error()));
    return sent.error().status;
  }
  std::optional<Error> error = state->waitLaunched();
  if (!error) return ErrorStatus::NONE;
  const ErrorStatus status = error->status;
  auto callback = std::move(state->callback);
  callback(std::unexpected(std::move(*error)));
  return status;
}

}  // namespace

// --- RemotePreparedModel ---------------------------------------------------------------

void Link::addPreparedModel(const PreparedModel* model, uint64_t handle) {
  std::lock_guard lock(mutex_);
  handles_[model] = handle;
}

void Link::removePreparedModel(const PreparedModel* model) {
  std::lock_guard lock(mutex_);
  handles_.erase(model);
}

std::optional<uint64_t> Link::handleOf(const PreparedModel* model) const {
  std::lock_guard lock(mutex_);
  const auto it = handles_.find(model);
  if (it == handles_.end()) return std::nullopt;
  return it->second;
}

RemotePreparedModel::RemotePreparedModel(std::shared_ptr<Link> link, uint64_t handle)
    : link_(std::move(link)), handle_(handle) {
  link_->addPreparedModel(this, handle_);
}

RemotePreparedModel::~RemotePreparedModel() {
  link_->removePreparedModel(this);
  (void)link_->connection().call(
      MessageType::kReleasePreparedModel,
      [handle = handle_](OutMessage& out) { encode(ReleasePreparedModel{handle}, out); }, {});
}

Execute RemotePreparedModel::describeExecute(const Request& request, const ExecuteOptions& options,
                                             OutMessage& out) const {
  Execute m;
  m.handle = handle_;
  m.request.inputs = request.inputs;
  m.request.outputs = request.outputs;
  m.request.pools.reserve(request.pools.size());
  for (const RequestMemoryPool& pool : request.pools) {
    m.request.pools.push_back(link_->connection().describeRequestPool(pool, out));
  }
  m.measure = static_cast<int32_t>(options.measure);
  m.deadline = options.deadline;
  m.loopTimeoutNs = options.loopTimeout.count();
  return m;
}

Connection::Builder RemotePreparedModel::executeBuilder(const Request& request,
                                                        const ExecuteOptions& options) const {
  return [this, &request, &options](OutMessage& out) {
    encode(describeExecute(request, options, out), out);
  };
}

Result<ExecutionResult> RemotePreparedModel::executeSynchronously(const Request& request,
                                                                  const ExecuteOptions& options) {
  NNHAL_ASSIGN_OR_RETURN(Frame frame,
                         link_->connection().roundTrip(MessageType::kExecuteSynchronously,
                                                       executeBuilder(request, options)));
  return executionResultFrom(frame);
}

ErrorStatus RemotePreparedModel::execute(Request request, const ExecuteOptions& options,
                                         ExecutionCallback callback) {
  auto state = std::make_shared<Launch<ExecutionResult>>();
  state->callback = std::move(callback);
  // The handler keeps the connection open until the outcome arrives.
  auto handler = launchHandler<ExecutionResult>(
      link_->connection(), state,
      [link = link_](const Frame& frame) { return executionResultFrom(frame); });
  return launch(link_->connection(), MessageType::kExecute, executeBuilder(request, options), state,
                std::move(handler));
}

Result<std::shared_ptr<Burst>> RemotePreparedModel::configureExecutionBurst() {
  return configureExecutionBurst(kDefaultFmqLength, kDefaultFmqLength);
}

Result<std::shared_ptr<Burst>> RemotePreparedModel::configureExecutionBurst(uint32_t requestLength,
                                                                            uint32_t resultLength) {
  return RemoteBurst::configure(link_, shared_from_this(), requestLength, resultLength);
}

// --- fenced executions -----------------------------------------------------------------

namespace {

/// Shared by the executeFenced call, its reply handler (which stays registered to learn of
/// a lost connection) and the callback object.
struct FencedState {
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<Result<FencedReply>> reply;  // the launch reply
  SyncFence fence;                           // the daemon's fence (a duplicate)
  bool lost = false;
};

class RemoteFencedCallback final : public FencedExecutionCallback {
 public:
  RemoteFencedCallback(std::shared_ptr<Link> link, uint64_t handle, uint64_t callId,
                       std::shared_ptr<FencedState> state)
      : link_(std::move(link)), handle_(handle), callId_(callId), state_(std::move(state)) {}

  ~RemoteFencedCallback() override {
    link_->connection().forget(callId_);
    (void)link_->connection().call(
        MessageType::kReleaseFenced,
        [handle = handle_](OutMessage& out) { encode(FencedHandle{handle}, out); }, {});
  }

  Result<FencedExecutionInfo> getExecutionInfo() override {
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      if (state_->lost) {
        return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                    "connection to nnhald lost before the fenced execution reported");
      }
    }
    NNHAL_ASSIGN_OR_RETURN(Frame frame,
                           link_->connection().roundTrip(MessageType::kGetFencedInfo,
                                                         [handle = handle_](OutMessage& out) {
                                                           encode(FencedHandle{handle}, out);
                                                         }));
    if (frame.header.type != static_cast<uint16_t>(MessageType::kFencedInfoReply)) {
      return std::unexpected(unexpectedReply(frame, MessageType::kFencedInfoReply));
    }
    NNHAL_ASSIGN_OR_RETURN(
        FencedInfoReply reply,
        decodePayload(frame.payload, MessageType::kFencedInfoReply, decodeFencedInfoReply));
    if (reply.status.status != ErrorStatus::NONE) {
      return std::unexpected(toError(std::move(reply.status)));
    }
    return FencedExecutionInfo{reply.executionStatus, reply.timingLaunched, reply.timingFenced};
  }

 private:
  std::shared_ptr<Link> link_;
  const uint64_t handle_;
  const uint64_t callId_;
  std::shared_ptr<FencedState> state_;
};

}  // namespace

Result<FencedExecutionResult> RemotePreparedModel::executeFenced(
    const Request& request, const std::vector<SyncFence>& waitFor, const ExecuteOptions& options,
    OptionalDuration timeoutAfterFence) {
  auto state = std::make_shared<FencedState>();
  auto build = [&](OutMessage& out) {
    ExecuteFenced m;
    m.execute = describeExecute(request, options, out);
    for (const SyncFence& fence : waitFor) {
      WireFence wire;
      wire.valid = fence.valid();
      if (wire.valid) wire.fdIndex = out.addFd(fence.fd());
      m.waitFor.push_back(wire);
    }
    if (timeoutAfterFence) m.timeoutAfterFenceNs = timeoutAfterFence->count();
    encode(m, out);
  };
  // Stays registered after the reply: a lost connection signals the fence.
  Connection::Handler handler = [state](Result<Frame> frame) -> bool {
    std::lock_guard<std::mutex> lock(state->mutex);
    if (state->reply.has_value()) {
      if (!frame) {
        state->lost = true;
        if (auto signalled = state->fence.signal(); !signalled) state->fence = SyncFence();
      }
      return true;
    }
    Result<FencedReply> reply = std::unexpected(Error{});
    if (!frame) {
      reply = std::unexpected(frame.error());
    } else if (frame->header.type != static_cast<uint16_t>(MessageType::kFencedReply)) {
      reply = std::unexpected(unexpectedReply(*frame, MessageType::kFencedReply));
    } else {
      const size_t fdCount = frame->fds.size();
      reply = decodePayload(frame->payload, MessageType::kFencedReply,
                            [fdCount](ByteReader& in) { return decodeFencedReply(in, fdCount); });
      if (reply && reply->status.status == ErrorStatus::NONE && reply->hasFence) {
        auto fence = SyncFence::fromFd(frame->fds[reply->fenceFdIndex].get());
        if (fence) {
          state->fence = std::move(*fence);
        } else {
          reply = std::unexpected(fence.error());
        }
      }
    }
    const bool done = !reply || reply->status.status != ErrorStatus::NONE;
    state->reply = std::move(reply);
    state->cv.notify_one();
    return done;
  };
  NNHAL_ASSIGN_OR_RETURN(uint64_t callId, link_->connection().call(MessageType::kExecuteFenced,
                                                                   build, std::move(handler)));
  std::unique_lock<std::mutex> lock(state->mutex);
  state->cv.wait(lock, [&] { return state->reply.has_value(); });
  if (!*state->reply) return std::unexpected(state->reply->error());
  const FencedReply& reply = **state->reply;
  if (reply.status.status != ErrorStatus::NONE) return std::unexpected(toError(reply.status));
  FencedExecutionResult result;
  result.syncFence = state->fence;
  const uint64_t handle = reply.handle;
  lock.unlock();
  result.callback = std::make_shared<RemoteFencedCallback>(link_, handle, callId, state);
  return result;
}

// --- RemoteDevice ----------------------------------------------------------------------

Result<std::vector<std::string>> RemoteDevice::explainSupportedOperations(
    const Model& model) const {
  NNHAL_ASSIGN_OR_RETURN(Frame frame, link_->connection().roundTrip(
                                          MessageType::kSupportedOperations, [&](OutMessage& out) {
                                            WireModel wire;
                                            wire.model = model;
                                            wire.model.pools.clear();
                                            for (const Memory& pool : model.pools)
                                              wire.pools.push_back(poolWithFd(pool, out));
                                            encode(wire, out);
                                          }));
  if (frame.header.type != static_cast<uint16_t>(MessageType::kSupportedOperationsReply)) {
    return std::unexpected(unexpectedReply(frame, MessageType::kSupportedOperationsReply));
  }
  NNHAL_ASSIGN_OR_RETURN(SupportedOperationsReply reply,
                         decodePayload(frame.payload, MessageType::kSupportedOperationsReply,
                                       decodeSupportedOperationsReply));
  if (reply.status.status != ErrorStatus::NONE) {
    return std::unexpected(toError(std::move(reply.status)));
  }
  return std::move(reply.reasons);
}

CompilationCaching RemoteDevice::getCompilationCaching() const {
  if (info_.cacheFiles.modelCache != 0 || info_.cacheFiles.dataCache != 0) return {true, ""};
  return {false,
          info_.cachingOff.empty() ? Device::getCompilationCaching().reason : info_.cachingOff};
}

Result<std::vector<bool>> RemoteDevice::getSupportedOperations(const Model& model) const {
  NNHAL_ASSIGN_OR_RETURN(auto reasons, explainSupportedOperations(model));
  std::vector<bool> supported;
  supported.reserve(reasons.size());
  for (const std::string& reason : reasons) supported.push_back(reason.empty());
  return supported;
}

ErrorStatus RemoteDevice::launchPreparation(MessageType type, const Connection::Builder& build,
                                            PrepareCallback callback) {
  using Prepared = std::shared_ptr<PreparedModel>;
  auto state = std::make_shared<Launch<Prepared>>();
  state->callback = std::move(callback);
  auto handler = launchHandler<Prepared>(
      link_->connection(), state, [link = link_](const Frame& frame) -> Result<Prepared> {
        if (frame.header.type != static_cast<uint16_t>(MessageType::kPrepareReply)) {
          return std::unexpected(unexpectedReply(frame, MessageType::kPrepareReply));
        }
        NNHAL_ASSIGN_OR_RETURN(
            PrepareReply reply,
            decodePayload(frame.payload, MessageType::kPrepareReply, decodePrepareReply));
        if (reply.status.status != ErrorStatus::NONE) {
          return std::unexpected(toError(std::move(reply.status)));
        }
        return Prepared(std::make_shared<RemotePreparedModel>(link, reply.handle));
      });
  return launch(link_->connection(), type, build, state, std::move(handler));
}

ErrorStatus RemoteDevice::prepareModel(Model model, const PrepareOptions& options,
                                       PrepareCallback callback) {
  return launchPreparation(
      MessageType::kPrepareModel,
      [&](OutMessage& out) {
        PrepareModel m;
        for (const Memory& pool : model.pools) m.model.pools.push_back(poolWithFd(pool, out));
        m.model.model = std::move(model);
        m.preference = static_cast<int32_t>(options.preference);
        m.priority = static_cast<int32_t>(options.priority);
        m.deadline = options.deadline;
        if (options.cache) m.cache = cacheFilesWithFds(*options.cache, out);
        encode(m, out);
        // The pools' descriptors stay open while the frame is sent: `out` borrows them from
        // Memory objects that `m` (alive until the send is done) still holds.
        model = std::move(m.model.model);
      },
      std::move(callback));
}

ErrorStatus RemoteDevice::prepareModelFromCache(const CacheFiles& cache, OptionalTimePoint deadline,
                                                PrepareCallback callback) {
  return launchPreparation(
      MessageType::kPrepareModelFromCache,
      [&](OutMessage& out) {
        PrepareFromCache m;
        m.cache = cacheFilesWithFds(cache, out);
        m.deadline = deadline;
        encode(m, out);
      },
      std::move(callback));
}

Result<Stats> RemoteDevice::daemonStats() const {
  NNHAL_ASSIGN_OR_RETURN(StatsReply reply, daemonStatsReply());
  return reply.counts;
}

Result<StatsReply> RemoteDevice::daemonStatsReply() const {
  NNHAL_ASSIGN_OR_RETURN(Frame frame,
                         link_->connection().roundTrip(MessageType::kGetStats, [](OutMessage&) {}));
  if (frame.header.type != static_cast<uint16_t>(MessageType::kStatsReply)) {
    return std::unexpected(unexpectedReply(frame, MessageType::kStatsReply));
  }
  return decodePayload(frame.payload, MessageType::kStatsReply, decodeStatsReply);
}

Result<AllocatedBuffer> RemoteDevice::allocate(
    const BufferDesc& desc, const std::vector<std::shared_ptr<PreparedModel>>& preparedModels,
    const std::vector<BufferRole>& inputRoles, const std::vector<BufferRole>& outputRoles) {
  return RemoteBuffer::allocate(link_, desc, preparedModels, inputRoles, outputRoles);
}

Result<DaemonStats> RemoteDevice::stats() const {
  NNHAL_ASSIGN_OR_RETURN(StatsReply reply, daemonStatsReply());
  DaemonStats stats;
  stats.wholeDaemon = reply.wholeDaemon;
  stats.clients = reply.counts.sessions;
  stats.preparedModels = reply.counts.preparedModels;
  stats.mappedPools = reply.counts.pools;
  stats.mappedPoolBytes = reply.poolBytes;
  stats.callsInFlight = reply.counts.callsInFlight;
  stats.bursts = reply.counts.bursts;
  stats.burstListeners = reply.counts.burstListeners;
  stats.burstMemories = reply.counts.burstMemories;
  stats.buffers = reply.counts.buffers;
  stats.residentBytes = reply.residentBytes;
  stats.uptime = std::chrono::milliseconds(reply.uptimeMs);
  for (const ApplicationUsage& a : reply.applications) {
    stats.applications.push_back({a.uid, a.weight, a.connections, a.preparedModels, a.constantBytes,
                                  a.pools, a.requests, a.bursts, a.buffers, a.arenaBytes,
                                  std::chrono::microseconds(a.driverTimeUs)});
  }
  return stats;
}

}  // namespace nnhal::ipc

namespace nnhal {

namespace {

/// The nnhald connection behind `device`; INVALID_ARGUMENT (naming `caller`) for an embedded
/// driver.
Result<const DaemonConnection*> daemonOf(const Device& device, const char* caller) {
  const DaemonConnection* daemon = device.daemonConnection();
  if (daemon == nullptr) {
    return fail(ErrorStatus::INVALID_ARGUMENT,
                std::string(caller) + ": '" + device.getName() +
                    "' is an embedded driver, not a connection to nnhald (nnhal::connect)");
  }
  return daemon;
}

}  // namespace

Result<DaemonStats> getDaemonStats(const Device& device) {
  NNHAL_ASSIGN_OR_RETURN(const DaemonConnection* daemon, daemonOf(device, "getDaemonStats"));
  return daemon->stats();
}

Result<std::shared_ptr<Device>> connect(const std::filesystem::path& socket,
                                        const ClientOptions& options) {
  NNHAL_VLOG(Manager, "connecting to nnhald at '{}'", socket.string());
  ipc::HelloReply hello;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<ipc::Connection> connection,
                         ipc::Connection::open(socket, options, &hello));
  auto link = std::make_shared<ipc::Link>(std::move(connection));
  return std::shared_ptr<Device>(std::make_shared<ipc::RemoteDevice>(
      std::move(link), std::move(hello.info), std::move(hello.devices)));
}

Result<std::vector<std::string>> daemonDevices(const Device& device) {
  NNHAL_ASSIGN_OR_RETURN(const DaemonConnection* daemon, daemonOf(device, "daemonDevices"));
  return daemon->devices();
}

}  // namespace nnhal
