// ipc/daemon/session.h — one client connection of the daemon.
//
// A Session interprets what one client asks (docs/IPC_PROTOCOL.md): its Channel
// (ipc/daemon/channel.h) reads the frames from the socket and writes the replies under the
// protocol's pace rules; the session decodes each frame, calls the daemon's embedded Device,
// and queues the work that runs on the driver's threads in its WorkQueue
// (ipc/daemon/work_queue.h). It owns the client's objects: a table {handle -> prepared
// model}, a table {pool id -> pool}, its fenced executions; handles and pool ids are per
// session, so a client can only ever name its own objects (an unknown handle gets the same
// error whether or not another client uses that number). Everything a session holds is
// released when it closes, and its work still queued is dropped; its running executions are
// cancelled before their next step.
//
// The client is untrusted (docs/ARCHITECTURE.md, "Trust boundary"):
//  - its pools go through hal::adoptClientPool, model constants are copied
//    (hal::copyModelPoolsPrivately), request arguments are staged by the engine;
//  - ClientLimits bound what it holds (prepared models, constant bytes, pools, fenced
//    executions), what it runs at once (the WorkQueue: maxRunning preparations and
//    executions on the driver's threads, the rest queued in order, at most maxQueued) and
//    how it may pace its traffic (the Channel: frames must finish within frameTimeout;
//    replies it does not read stop its requests from being read, then close the
//    connection);
//  - exceptions of a handler become an error reply for that request.
//
// Threading: every handler runs on the session's strand, on one of the io threads, and
// never waits there: preparations and executions run on the driver's threads and post
// their replies back to the strand. The one exception is a synchronous execution the
// driver knows to be short (hal::PreparedModelControl::runsQuickly: a fully static plan whose
// recent runs each took < 200 µs), which runs right on the strand when nothing else of this
// session is queued: that fast path keeps a tiny round trip in the tens of microseconds and
// delays other clients on that io thread by at most about that long. Writes are
// non-blocking: what the socket does not take at once is queued and flushed when it becomes
// writable.
//
// Fenced executions: the waitFor fences arrive as descriptors; the driver's returned fence
// goes back as a descriptor; GetFencedInfo is answered once that fence signalled, waiting for
// it asynchronously. Fenced executions are not queued (a queue could deadlock a chain of
// fences the client signals later); ClientLimits::maxFencedExecutions bounds them instead.
//
// A malformed or oversized frame, a bad magic or version, descriptors that do not match the
// header, or an unknown message type close this session only, with the reason logged.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "hal/application.h"
#include "hal/driver_control.h"
#include "hal/file_pool_staging.h"
#include "ipc/daemon/channel.h"
#include "ipc/daemon/client_cache.h"
#include "ipc/daemon/client_limits.h"
#include "ipc/daemon/handle_table.h"
#include "ipc/daemon/quota.h"
#include "ipc/daemon/server_counters.h"
#include "ipc/daemon/work_queue.h"
#include "ipc/frame.h"
#include "ipc/messages.h"
#include "nnhal/device.h"
#include "nnhal/sync_fence.h"

namespace nnhal::hal {
class DeviceControl;
}  // namespace nnhal::hal

namespace nnhal::ipc {

/// Sees a model a client sent to be prepared (ServerOptions::onModelReceived): the model,
/// the client's application (its uid) and its connection (the session's id).
using ModelObserver =
    std::function<void(const Model& model, hal::ApplicationId application, uint64_t connection)>;

/// One device the daemon serves.
struct ServedDevice {
  std::shared_ptr<Device> device;
  /// The control of `device` (the embedded driver's own checks and cancellation).
  std::shared_ptr<hal::DeviceControl> driver;
  /// Caches the preparations of clients that pass no cache files; null = none.
  std::shared_ptr<const ClientCache> clientCache{};
};

/// What every session of a server shares.
struct SessionConfig {
  /// Every device served, by distinct names; [0] is the one a client gets when its Hello
  /// names none. A session serves one of them, chosen at its Hello.
  std::vector<ServedDevice> devices;
  std::shared_ptr<ServerCounters> counters;
  ClientLimits limits;
  /// The quotas per connection, per application and of the daemon (ipc/daemon/quota.h).
  std::shared_ptr<Ledger> ledger;
  uint32_t maxPayloadBytes = kDefaultMaxPayloadBytes;
  /// Runs model intake (adopting model pools, copying their constants, validating, the
  /// supported-operations check) off the io threads, on the application's lane
  /// (hal/lanes.h). Owned by the server.
  std::function<void(hal::ApplicationId, std::move_only_function<void()>)> runIntake;
  /// Where each received frame's handling is recorded as an "ipc" span; null = none.
  std::shared_ptr<TraceRecorder> trace{};
  /// ServerOptions::onModelReceived; empty = none.
  ModelObserver onModelReceived{};
};

class Session : public std::enable_shared_from_this<Session>, public ChannelOwner {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;

  /// `admin`: a connection of the admin socket, whose GetStats reports the whole daemon.
  /// `account`: the client's application (its uid, hal/application.h), as which its
  /// preparations and executions run and to which its quotas are charged; `connection`: this
  /// connection's charge, given back when it closes.
  Session(Socket socket, std::shared_ptr<const SessionConfig> config, uint64_t id, bool admin,
          std::shared_ptr<Account> account, Charge connection);
  ~Session();

  /// Starts reading (posts to the strand).
  void start();
  /// Graceful stop: read no more requests, let in-flight and queued work reply, then close.
  void drain();
  /// Calls `done` once, on the strand, when the session closed (for the server's tables).
  void onClosed(std::function<void()> done);

 private:
  struct TrackedModel;
  struct TrackedPool;

  // --- the channel's events (session.cpp)
  /// Handles one decoded frame; `moreWaiting` when further complete frames are buffered.
  /// Returns false when the session closed or stopped reading (the reason is logged).
  bool onFrame(Frame frame, bool moreWaiting) override;
  void onChannelClosed(const std::string& reason) override { close(reason); }
  void onChannelQuiet() override { finishIfDrained(); }

  // --- dispatch (session.cpp)
  /// Handles a frame by its type (handlerFor); an unknown type closes the session.
  bool dispatch(Frame& frame, bool moreWaiting);
  /// The handler of one message type a client may send: false when the session must stop
  /// reading (it closed or drains).
  struct HandlerEntry {
    MessageType type;
    bool (*handle)(Session& session, Frame& frame, bool moreWaiting);
  };
  /// The entry of `type`, or null for a type no client may send.
  static const HandlerEntry* handlerFor(MessageType type);
  /// Decodes `frame`'s payload with `decoder` and gives it to `use`; a malformed payload
  /// closes the session (false).
  template <typename Decoder, typename Use>
  bool whenDecoded(const Frame& frame, Decoder decoder, Use use);
  bool handleGetStats(const Frame& frame);
  /// The error reply a request gets when its handler failed unexpectedly.
  void replyFailure(MessageType type, uint64_t callId, const Error& error);
  bool handleHello(const Frame& frame);
  /// Reads no more requests and closes once the work in flight replied (a refused Hello,
  /// drain()).
  void startDraining();
  StatsReply ownStats() const;
  /// What `account`'s application holds (quotas) and the driver did for it.
  ApplicationUsage usageOf(const Account& account) const;
  /// The whole daemon's counts (admin socket), with its resident memory and uptime.
  StatsReply daemonStats() const;

  // --- preparations (session_prepare.cpp)
  bool handleSupportedOperations(Frame& frame);
  bool handlePrepareModel(Frame& frame);
  bool handlePrepareFromCache(Frame& frame);
  /// What a preparation in progress holds (session_detail.h).
  struct PreparationCharges;
  using Charges = std::shared_ptr<PreparationCharges>;
  /// Calls `start` (the driver's preparation given its callback; Launched was sent after
  /// the driver's checks), then replies PrepareReply with the outcome, the status `start`
  /// returned included, and ends `running`. `charges` are given back if the preparation
  /// fails. `lowPower`: prepared for ExecutionPreference::LOW_POWER (its bursts do not poll).
  void launchPreparation(WorkQueue::Running running, uint64_t callId, Charges charges,
                         bool lowPower, const std::function<ErrorStatus(PrepareCallback)>& start);
  /// Answers `running`'s request, registers a prepared model under a new handle (or carries
  /// the error) and replies.
  void replyPrepared(WorkQueue::Running& running, uint64_t callId, Charges charges, bool lowPower,
                     Result<std::shared_ptr<PreparedModel>> result);
  void sendLaunched(uint64_t callId, const WireStatus& status);
  /// An admitted preparation: its prepared-model charge and its request's ticket.
  struct AdmittedPreparation {
    Charges charges;
    WorkQueue::Ticket ticket;
  };
  /// Admits one more preparation within the prepared-model and request quotas, or gives the
  /// error to reply.
  Result<AdmittedPreparation> admitPreparation();
  /// Runs `intake` on the application's intake lane (hal/lanes.h: a thread of its
  /// own, so that a stalled file or a large copy delays only this application), then `then`
  /// on the strand (within the calling job's running slot).
  template <typename Intake, typename Then>
  void offIoThread(Intake intake, Then then);
  void releaseModel(uint64_t handle);

  // --- executions (session_execute.cpp)
  bool handleExecute(Frame& frame, bool async, bool moreWaiting);
  bool handleExecuteFenced(Frame& frame);
  bool handleGetFencedInfo(const Frame& frame);
  /// Builds a Request, mapping new pools into the session's table.
  Result<Request> requestFrom(WireRequest wire, const std::vector<UniqueFd>& fds);
  ExecuteOptions executeOptions(const Execute& m) const;

  // --- bursts (session_burst.cpp)
  bool handleConfigureBurst(const Frame& frame);
  bool handleBurstFreeMemory(const Frame& frame);
  bool handleBurstMemories(const Frame& frame);
  bool handleBurstLastError(const Frame& frame);
  void releaseBurst(uint64_t burst);
  /// Replies BurstReply with `answer(listener)`, or INVALID_ARGUMENT for an unknown burst.
  void replyAboutBurst(uint64_t callId, uint64_t burst,
                       const std::function<WireStatus(class BurstListener&)>& answer);
  /// Stops a listener and destroys it (joining its thread) on an intake thread.
  void disposeBurst(std::shared_ptr<class BurstListener> listener);
  /// The listener's getMemories: asks the client on the strand, waits on the caller's
  /// (listener's) thread for the answer, at most kGetMemoriesTimeout.
  static Result<std::vector<Memory>> askMemories(std::weak_ptr<Session> weak, uint64_t burst,
                                                 const std::vector<int32_t>& slots,
                                                 const std::function<bool()>& keepWaiting);
  struct MemoryCall;

  // --- driver-managed buffers (session_buffer.cpp)
  bool handleAllocate(const Frame& frame);
  bool handleBufferCopy(Frame& frame, bool copyFrom);
  void releaseBuffer(uint64_t buffer);
  struct TrackedBuffer;

  // --- quotas (session_execute.cpp)
  /// One more request running or waiting (queue_), charged to the application and the
  /// daemon until its ticket is answered; or the error to reply.
  Result<WorkQueue::Ticket> admitRequest();
  /// Charges `amount` of `resource` to this connection, its application and the daemon.
  Result<Charge> charge(Resource resource, uint64_t amount = 1);

  // --- writing and closing (session.cpp)
  void send(MessageType type, uint64_t callId, OutMessage& message,
            std::shared_ptr<void> keep = nullptr) {
    channel_.send(type, callId, message, std::move(keep));
  }
  void finishIfDrained();
  void close(const std::string& reason);
  /// Runs `handler` on the strand, keeping the session alive.
  template <typename Handler>
  void onStrand(Handler&& handler);

  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  std::shared_ptr<const SessionConfig> config_;
  const ClientLimits& limits_;
  /// The device this session serves (one of config_->devices, chosen at its Hello).
  const ServedDevice* served_;
  ServerCounters& counters_;
  const uint64_t id_;
  const bool admin_;
  /// The client's application: its quotas, and as which its work runs.
  const std::shared_ptr<Account> account_;
  const hal::ApplicationId application_;
  /// What this connection holds (the per-connection quotas of the ledger).
  std::shared_ptr<Usage> usage_ = std::make_shared<Usage>();
  Charge connectionCharge_;
  bool helloDone_ = false;
  bool closed_ = false;
  bool draining_ = false;
  std::function<void()> onClosed_;
  /// The socket: frames in, replies out, the pace rules.
  Channel channel_;

  /// Work on the driver's threads: at most limits_.maxRunning at once, the rest waiting in
  /// order; its tickets count the requests accepted whose reply is not sent yet.
  WorkQueue queue_;
  /// Set when the session closes: running executions stop before their next step.
  std::shared_ptr<std::atomic<bool>> cancelled_ = std::make_shared<std::atomic<bool>>(false);

  // Objects of this client.
  HandleTable<std::shared_ptr<TrackedModel>> models_;
  std::unordered_map<uint64_t, std::shared_ptr<TrackedPool>> pools_;
  /// A fenced execution over client files: its local copies, the fence the client waits for
  /// (signalled after the write-back), and the error of reading or writing its files.
  struct FileBridge {
    hal::FilePoolStaging staging;
    SyncFence clientFence;
    std::optional<Error> failure;
  };
  /// Runs a fenced execution whose fences signalled (in its turn in the queue): reads its
  /// files first when it has any, on the lane.
  void startFenced(WorkQueue::Running running, std::shared_ptr<FileBridge> bridge,
                   hal::FencedStart start);
  /// Fenced executions by handle: their callback and the fence the client got.
  struct Fenced {
    std::shared_ptr<FencedExecutionCallback> callback;
    SyncFence fence;
    Charge charge;                         ///< the fenced-executions quota
    std::shared_ptr<FileBridge> bridge{};  ///< over client files: the daemon's copies
  };
  HandleTable<Fenced> fenced_;
  /// Asynchronous waits for fences (GetFencedInfo, running fenced executions); cancelled on
  /// close.
  HandleTable<std::shared_ptr<boost::asio::posix::stream_descriptor>> fenceWaits_;
  /// Bursts by handle, and the getMemories calls of their listeners waiting for the client.
  HandleTable<std::shared_ptr<class BurstListener>> bursts_;
  HandleTable<std::shared_ptr<MemoryCall>> memoryCalls_;
  /// Driver-managed buffers by handle, and which handle each token belongs to: a request may
  /// name only the tokens of this connection's buffers.
  HandleTable<std::shared_ptr<TrackedBuffer>> buffers_;
  std::unordered_map<uint32_t, uint64_t> bufferTokens_;
  /// Calls `then` on the strand once `fence` signalled (at once when it is not active).
  void whenSignalled(const SyncFence& fence, std::function<void()> then);
};

}  // namespace nnhal::ipc
