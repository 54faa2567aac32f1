// ipc/client/connection.h — the client's connection to nnhald.
//
// One Unix socket per connection. Calls are frames with a fresh call id; their replies are
// dispatched by call id, on the connection's reader thread, to the call's Handler (which
// wakes a waiting caller or runs an asynchronous callback). Writes are serialized by a
// mutex, and so is the table of request pools this connection has sent: a pool's descriptor
// goes to the daemon only the first time (keyed by Memory::id()), later requests name it,
// and pools whose last Memory copy is gone are released with a ReleasePools frame sent
// before the next call.
//
// When the connection drops (daemon died, malformed reply, close()), every pending handler
// receives DEVICE_UNAVAILABLE at once, and every later call fails with it.
//
// Thread safety: every method may be called from any thread. Handlers run on the reader
// thread, one at a time, and must not block; user callbacks (the outcomes of asynchronous
// calls) go through postCallback to the connection's callback thread, where they may make
// any call, synchronous ones included (the reader stays free to deliver the replies), but
// must not wait for another callback of the same connection.
#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "ipc/frame.h"
#include "ipc/messages.h"
#include "nnhal/client.h"

namespace nnhal::ipc {

/// Answers the daemon's getMemories for one burst (ipc/client/remote_burst.h). Runs on the
/// reader thread; must not block.
class BurstMemoryProvider {
 public:
  virtual ~BurstMemoryProvider() = default;
  /// One pool per slot (descriptors added to `out`; the Memory objects that own them are
  /// added to `keep` so they stay open until sent), or an error status and no pools.
  virtual BurstMemories provideMemories(const std::vector<int32_t>& slots, OutMessage& out,
                                        std::vector<Memory>& keep) = 0;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  /// Receives the frames of one call, or (as an Error, DEVICE_UNAVAILABLE) the loss of the
  /// connection. Returns true when the call expects no more frames.
  using Handler = std::move_only_function<bool(Result<Frame>)>;
  /// Appends a call's payload and descriptors; runs with the write lock held, so it may
  /// call describeRequestPool.
  using Builder = std::function<void(OutMessage&)>;

  /// Connects, sends Hello (for options.device) and waits (at most options.handshakeTimeout)
  /// for the reply, which it stores in `helloReply`. Errors: DEVICE_UNAVAILABLE.
  static Result<std::shared_ptr<Connection>> open(const std::filesystem::path& socket,
                                                  const ClientOptions& options,
                                                  HelloReply* helloReply);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Sends one call and returns its call id. `handler` may be empty for messages without
  /// reply. Errors: DEVICE_UNAVAILABLE when the connection is gone (the handler is then not
  /// called).
  Result<uint64_t> call(MessageType type, const Builder& build, Handler handler);
  /// Drops the handler of call `callId` if it is still pending (it will not be called).
  void forget(uint64_t callId);
  /// Sends a call and waits for its single reply frame. Errors: DEVICE_UNAVAILABLE.
  Result<Frame> roundTrip(MessageType type, const Builder& build);

  /// Describes a request pool for a frame being built (write lock held, inside a Builder).
  WirePool describeRequestPool(const RequestMemoryPool& pool, OutMessage& out);

  /// Shuts the socket down: the reader fails every pending call and stops. Unless called
  /// on the reader thread itself, also waits for the reader to finish, so that no thread of
  /// this connection outlives its last user (a process may exit right after).
  void close();
  /// True once the connection is gone (cheap: an atomic load, for polling waiters).
  bool lost() const { return lost_.load(std::memory_order_acquire); }

  /// Routes the daemon's getMemories calls for `burst` to `provider` until unregistered.
  void registerBurst(uint64_t burst, std::weak_ptr<BurstMemoryProvider> provider);
  void unregisterBurst(uint64_t burst);

  /// Runs `callback` on the connection's callback thread (started on first use), in order.
  void postCallback(std::move_only_function<void()> callback);

 private:
  explicit Connection(UniqueFd socket);
  static void readLoop(std::shared_ptr<Connection> self, FrameParser parser);
  void dispatch(Frame frame);
  /// Answers a kBurstGetMemories call of the daemon.
  void answerGetMemories(const Frame& frame);
  void failAll(const std::string& reason);
  Error lostError() const;

  class CallbackQueue;

  UniqueFd socket_;
  std::shared_ptr<TraceRecorder> trace_;  ///< ClientOptions::trace
  std::mutex closeMutex_;                 // guards joining reader_
  std::thread reader_;
  std::shared_ptr<CallbackQueue> callbacks_;

  std::mutex writeMutex_;  // guards sending and sentPools_
  std::unordered_map<uint64_t, std::weak_ptr<const void>> sentPools_;

  mutable std::mutex pendingMutex_;  // guards pending_, nextCallId_, dead_, deadReason_
  std::unordered_map<uint64_t, Handler> pending_;
  std::unordered_set<uint64_t> forgotten_;  // forget() while the reader ran the handler
  uint64_t nextCallId_ = 1;
  bool dead_ = false;
  std::string deadReason_;
  std::atomic<bool> lost_{false};

  std::mutex burstsMutex_;
  std::unordered_map<uint64_t, std::weak_ptr<BurstMemoryProvider>> bursts_;
};

/// The GENERAL_FAILURE of a reply of another type than `expected`.
Error unexpectedReply(const Frame& frame, MessageType expected);

}  // namespace nnhal::ipc
