// ipc/session.h — one client connection of the daemon.
//
// A Session reads frames from its socket, decodes them, calls the daemon's embedded Device
// and writes the replies (docs/IPC_PROTOCOL.md). It owns the client's objects: a table
// {handle -> prepared model} and a table {pool id -> mapped Memory}; handles and pool ids
// are per session, so a client can only ever name its own objects (an unknown handle is
// INVALID_ARGUMENT). Everything a session holds is released when it closes.
//
// Threading: every handler runs on the session's strand. A small synchronous execution runs
// right on the strand (no thread hop; the fast path); when more frames are already waiting,
// it is handed to the driver's pool instead so that the session keeps reading. Replies of
// asynchronous work (preparations, executions) are posted back to the strand to be written.
// Writes are non-blocking: what the socket does not take at once is queued and flushed when
// it becomes writable.
//
// Fenced executions: the waitFor fences arrive as descriptors; the driver's returned fence
// goes back as a descriptor; GetFencedInfo is answered once that fence signalled, waiting for
// it asynchronously (never blocking the strand).
//
// A malformed or oversized frame, a bad magic or version, descriptors that do not match the
// header, or an unknown message type close this session only, with the reason logged.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>

#include "ipc/frame.h"
#include "ipc/messages.h"
#include "nnhal/device.h"
#include "nnhal/sync_fence.h"

namespace nnhal::ipc {

/// Object counts shared by the server and its sessions (Stats).
struct ServerCounters {
  std::atomic<uint64_t> sessions{0};
  std::atomic<uint64_t> preparedModels{0};
  std::atomic<uint64_t> pools{0};
  std::atomic<uint64_t> callsInFlight{0};
  Stats snapshot() const {
    return {sessions.load(), preparedModels.load(), pools.load(), callsInFlight.load()};
  }
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;

  Session(Socket socket, std::shared_ptr<Device> device, std::shared_ptr<ServerCounters> counters,
          uint32_t maxPayloadBytes, uint64_t id);
  ~Session();

  /// Starts reading (posts to the strand).
  void start();
  /// Graceful stop: read no more requests, let in-flight work reply, then close.
  void drain();

 private:
  struct TrackedModel;
  struct TrackedPool;
  struct OutFrame {
    std::vector<uint8_t> bytes;  // header + payload
    size_t sent = 0;
    std::vector<int> fds;  // sent with the first byte; borrowed from `keep`
    std::shared_ptr<void> keep;
  };

  void waitReadable();
  void onReadable();
  /// Handles one decoded frame; `moreWaiting` when further complete frames are buffered.
  /// Returns false when the session must close (the reason is logged).
  bool handleFrame(Frame frame, bool moreWaiting);
  bool handleHello(const Frame& frame);
  bool handleSupportedOperations(const Frame& frame);
  bool handlePrepareModel(Frame frame);
  /// Calls `start` (a Device preparation given its callback) and replies Launched with the
  /// status it returned, then PrepareReply with the outcome. `fds` stay open until then.
  void launchPreparation(uint64_t callId, std::shared_ptr<std::vector<UniqueFd>> fds,
                         const std::function<ErrorStatus(PrepareCallback)>& start);
  /// Registers a prepared model under a new handle (or carries the error) and replies.
  void replyPrepared(uint64_t callId, Result<std::shared_ptr<PreparedModel>> result);
  void sendLaunched(uint64_t callId, const WireStatus& status);
  bool handlePrepareFromCache(Frame frame);
  bool handleExecute(Frame frame, bool async, bool moreWaiting);
  bool handleExecuteFenced(Frame frame);
  bool handleGetFencedInfo(const Frame& frame);

  /// Gives `model` its pools (kFd only), replaced by private copies of the constants they
  /// hold (hal::copyModelPoolsPrivately). Returns the model's constant bytes (operandValues
  /// and the copies). Errors: GENERAL_FAILURE for an unknown kind or a pool that cannot be
  /// used safely or read (hal/pool_io.h).
  Result<uint64_t> attachModelPools(Model& model, const std::vector<WirePool>& pools,
                                    const std::vector<UniqueFd>& fds);
  /// Builds a Request, mapping new pools into the session's table.
  Result<Request> requestFrom(WireRequest wire, const std::vector<UniqueFd>& fds);

  void send(MessageType type, uint64_t callId, OutMessage& message,
            std::shared_ptr<void> keep = nullptr);
  void flush();
  void waitWritable();
  void finishIfDrained();
  void close(const std::string& reason);
  /// Runs `handler` on the strand, keeping the session alive.
  template <typename Handler>
  void onStrand(Handler&& handler);

  Socket socket_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  std::shared_ptr<Device> device_;
  std::shared_ptr<ServerCounters> counters_;
  FrameParser parser_;
  const uint64_t id_;
  bool helloDone_ = false;
  bool closed_ = false;
  bool draining_ = false;
  bool writeWaiting_ = false;
  size_t inFlight_ = 0;  // asynchronous operations whose reply is not sent yet
  size_t queuedBytes_ = 0;
  std::deque<OutFrame> writeQueue_;
  uint64_t nextHandle_ = 1;
  std::unordered_map<uint64_t, std::shared_ptr<TrackedModel>> models_;
  std::unordered_map<uint64_t, std::shared_ptr<TrackedPool>> pools_;
  /// Fenced executions by handle: their callback and the fence the driver returned.
  struct Fenced {
    std::shared_ptr<FencedExecutionCallback> callback;
    SyncFence fence;
  };
  uint64_t nextFenced_ = 1;
  std::unordered_map<uint64_t, Fenced> fenced_;
  /// GetFencedInfo calls waiting (asynchronously) for a fence; cancelled on close.
  uint64_t nextFenceWait_ = 1;
  std::unordered_map<uint64_t, std::shared_ptr<boost::asio::posix::stream_descriptor>> fenceWaits_;
};

}  // namespace nnhal::ipc
