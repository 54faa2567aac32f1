#include "ipc/client/connection.h"

#include "common/thread_reaper.h"
#include "common/vlog.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

namespace nnhal::ipc {
namespace {

using Clock = std::chrono::steady_clock;

std::unexpected<Error> unavailable(std::string message) {
  return fail(ErrorStatus::DEVICE_UNAVAILABLE, std::move(message));
}

/// A caller waiting for one reply: spins briefly (a small execution's reply comes back in
/// microseconds), then sleeps on the condition variable.
struct Waiter {
  std::atomic<bool> ready{false};
  std::mutex mutex;
  std::condition_variable cv;
  std::optional<Result<Frame>> result;

  void set(Result<Frame> frame) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      result = std::move(frame);
      ready.store(true, std::memory_order_release);
    }
    cv.notify_one();
  }
  Result<Frame> wait() {
    const auto spinUntil = Clock::now() + std::chrono::microseconds(30);
    while (!ready.load(std::memory_order_acquire) && Clock::now() < spinUntil) {
    }
    std::unique_lock<std::mutex> lock(mutex);
    cv.wait(lock, [this] { return ready.load(std::memory_order_acquire); });
    return std::move(*result);
  }
};

}  // namespace

/// One thread running posted callbacks in order; started on the first post. The worker
/// keeps the queue alive (shared_ptr) until it has run everything posted before stop().
class Connection::CallbackQueue : public std::enable_shared_from_this<CallbackQueue> {
 public:
  ~CallbackQueue() {
    // Only when the worker itself dropped the last reference: it cannot join itself.
    common::adoptThread(std::move(worker_));
  }
  void post(std::move_only_function<void()> callback) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(callback));
    if (!worker_.joinable()) {
      worker_ = std::thread([self = shared_from_this()] { self->run(); });
    }
    cv_.notify_one();
  }
  /// Lets the worker finish what is queued, then joins it (unless called on the worker).
  void stop() {
    std::thread worker;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
      cv_.notify_one();
      if (!worker_.joinable() || worker_.get_id() == std::this_thread::get_id()) return;
      worker = std::move(worker_);
    }
    worker.join();
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      cv_.wait(lock, [this] { return stopped_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto callback = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      callback();
      callback = nullptr;  // its captures may release the connection: not under the lock
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::move_only_function<void()>> queue_;
  bool stopped_ = false;
  std::thread worker_;
};

Connection::Connection(UniqueFd socket)
    : socket_(std::move(socket)), callbacks_(std::make_shared<CallbackQueue>()) {}

Connection::~Connection() {
  if (reader_.joinable()) {
    if (reader_.get_id() == std::this_thread::get_id()) {
      // The reader is releasing the last reference on its way out: it cannot join itself.
      ::shutdown(socket_.get(), SHUT_RDWR);
      common::adoptThread(std::move(reader_));
    } else {
      ::shutdown(socket_.get(), SHUT_RDWR);
      reader_.join();
    }
  }
  callbacks_->stop();
}

void Connection::postCallback(std::move_only_function<void()> callback) {
  callbacks_->post(std::move(callback));
}

Result<std::shared_ptr<Connection>> Connection::open(const std::filesystem::path& path,
                                                     const ClientOptions& options,
                                                     HelloReply* helloReply) {
  sockaddr_un address{};
  if (path.native().size() >= sizeof(address.sun_path)) {
    return unavailable("nnhald socket path '" + path.string() + "' is too long");
  }
  UniqueFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return unavailable(std::string("socket: ") + std::strerror(errno));
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  int rc;
  do {
    rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    NNHAL_VLOG(Ipc, "cannot connect to '{}': {}", path.string(), std::strerror(errno));
    return unavailable("cannot reach nnhald at '" + path.string() + "': " + std::strerror(errno));
  }

  // Handshake on this thread, before the reader starts.
  OutMessage hello;
  encode(Hello{kProtocolVersion, options.clientName, options.device}, hello);
  FrameHeader header;
  header.type = static_cast<uint16_t>(MessageType::kHello);
  header.callId = 0;
  header.payloadBytes = static_cast<uint32_t>(hello.payload.size());
  if (auto sent = sendFrame(fd.get(), header, hello.payload.buffer(), {}); !sent) {
    return unavailable("nnhald handshake: " + sent.error().message);
  }
  FrameParser parser(options.maxPayloadBytes);
  const auto deadline = Clock::now() + options.handshakeTimeout;
  std::optional<Frame> reply;
  while (!reply) {
    auto next = parser.next();
    if (!next) return unavailable("nnhald handshake: " + next.error().message);
    if (next->has_value()) {
      reply = std::move(**next);
      break;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return unavailable("nnhald handshake: no reply in time");
    pollfd pfd{fd.get(), POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) {
      return unavailable(std::string("nnhald handshake: poll: ") + std::strerror(errno));
    }
    if (ready <= 0) continue;
    auto got = receiveSome(fd.get(), parser, true);
    if (!got) return unavailable("nnhald handshake: " + got.error().message);
    if (*got == ReceiveStatus::kClosed) {
      return unavailable("nnhald closed the connection during the handshake");
    }
  }
  if (reply->header.version != kProtocolVersion ||
      reply->header.type != static_cast<uint16_t>(MessageType::kHelloReply)) {
    return unavailable("nnhald handshake: unexpected reply (protocol version " +
                       std::to_string(reply->header.version) + ", type " +
                       std::to_string(reply->header.type) + ")");
  }
  auto decoded = decodePayload(reply->payload, MessageType::kHelloReply, decodeHelloReply);
  if (!decoded) return unavailable("nnhald handshake: " + decoded.error().message);
  if (decoded->status.status != ErrorStatus::NONE) {
    return unavailable("nnhald handshake: " + decoded->status.message);
  }
  if (decoded->protocolVersion != kProtocolVersion) {
    return unavailable("nnhald speaks protocol version " +
                       std::to_string(decoded->protocolVersion) + ", this client " +
                       std::to_string(kProtocolVersion));
  }
  if (helloReply != nullptr) *helloReply = std::move(*decoded);
  NNHAL_VLOG(Ipc, "connected to nnhald at '{}' as '{}' (protocol version {})", path.string(),
             options.clientName, kProtocolVersion);

  std::shared_ptr<Connection> connection(new Connection(std::move(fd)));
  connection->trace_ = options.trace;
  connection->reader_ = std::thread(readLoop, connection, std::move(parser));
  return connection;
}

Error Connection::lostError() const {
  return Error{ErrorStatus::DEVICE_UNAVAILABLE, "connection to nnhald lost: " + deadReason_, {}};
}

Result<uint64_t> Connection::call(MessageType type, const Builder& build, Handler handler) {
  if (trace_ != nullptr && handler) {
    handler = [trace = trace_, name = toString(type), start = std::chrono::steady_clock::now(),
               inner = std::move(handler), first = true](Result<Frame> frame) mutable {
      if (first) trace->record("ipc", name, start);
      first = false;
      return inner(std::move(frame));
    };
  }
  const bool hasHandler = static_cast<bool>(handler);
  uint64_t id;
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    if (dead_) return std::unexpected(lostError());
    id = nextCallId_++;
    if (handler) pending_.emplace(id, std::move(handler));
  }
  Result<void> sent;
  {
    std::lock_guard<std::mutex> lock(writeMutex_);
    // Pools whose last Memory copy is gone: the daemon may unmap them.
    ReleasePools released;
    for (auto it = sentPools_.begin(); it != sentPools_.end();) {
      if (it->second.expired()) {
        released.ids.push_back(it->first);
        it = sentPools_.erase(it);
      } else {
        ++it;
      }
    }
    if (!released.ids.empty()) {
      OutMessage out;
      encode(released, out);
      FrameHeader header;
      header.type = static_cast<uint16_t>(MessageType::kReleasePools);
      header.payloadBytes = static_cast<uint32_t>(out.payload.size());
      sent = sendFrame(socket_.get(), header, out.payload.buffer(), {});
    }
    if (sent) {
      OutMessage out;
      build(out);
      FrameHeader header;
      header.type = static_cast<uint16_t>(type);
      header.callId = id;
      header.payloadBytes = static_cast<uint32_t>(out.payload.size());
      header.fdCount = static_cast<uint32_t>(out.fds.size());
      sent = sendFrame(socket_.get(), header, out.payload.buffer(), out.fds);
    }
  }
  if (sent) {
    NNHAL_VLOG(Ipc, "sent {} (call {})", toString(type), id);
    return id;
  }
  NNHAL_VLOG(Ipc, "cannot send {} (call {}): {}", toString(type), id, sent.error().message);
  // A frame may be half-written: the stream is unusable.
  ::shutdown(socket_.get(), SHUT_RDWR);
  std::lock_guard<std::mutex> lock(pendingMutex_);
  if (hasHandler && pending_.erase(id) == 0) {
    // The reader already gave this call's handler the loss: it reports it.
    return id;
  }
  return unavailable("cannot send to nnhald: " + sent.error().message);
}

Result<Frame> Connection::roundTrip(MessageType type, const Builder& build) {
  auto waiter = std::make_shared<Waiter>();
  NNHAL_TRY(call(type, build, [waiter](Result<Frame> frame) {
    waiter->set(std::move(frame));
    return true;
  }));
  return waiter->wait();
}

WirePool Connection::describeRequestPool(const RequestMemoryPool& pool, OutMessage& out) {
  WirePool wire;
  if (const auto* token = std::get_if<MemoryDomainToken>(&pool)) {
    wire.source = WirePool::Source::kToken;
    wire.token = token->value;
    return wire;
  }
  const Memory& memory = std::get<Memory>(pool);
  if (!memory.valid()) {
    wire.source = WirePool::Source::kEmpty;
    return wire;
  }
  auto found = sentPools_.find(memory.id());
  if (found != sentPools_.end() && !found->second.expired()) {
    wire.source = WirePool::Source::kCached;
    wire.id = memory.id();
    return wire;
  }
  sentPools_[memory.id()] = memory.lifetimeToken();
  return poolWithFd(memory, out);
}

void Connection::close() {
  ::shutdown(socket_.get(), SHUT_RDWR);
  std::lock_guard<std::mutex> lock(closeMutex_);
  if (reader_.joinable() && reader_.get_id() != std::this_thread::get_id()) reader_.join();
}

void Connection::forget(uint64_t callId) {
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    auto found = pending_.find(callId);
    if (found == pending_.end()) {
      // Being run by the reader right now: keep dispatch from putting it back.
      if (!dead_) forgotten_.insert(callId);
      return;
    }
    handler = std::move(found->second);
    pending_.erase(found);
  }
  // Destroyed outside the lock: its captures may release objects that call back in.
}

void Connection::readLoop(std::shared_ptr<Connection> self, FrameParser parser) {
  std::string reason = "the daemon closed the connection";
  bool done = false;
  while (!done) {
    auto got = receiveSome(self->socket_.get(), parser, false);
    if (!got) {
      reason = got.error().message;
      break;
    }
    if (*got == ReceiveStatus::kClosed) break;
    while (true) {
      auto next = parser.next();
      if (!next) {
        reason = "malformed reply: " + next.error().message;
        done = true;
        break;
      }
      if (!next->has_value()) break;
      if ((*next)->header.version != kProtocolVersion) {
        reason = "reply of protocol version " + std::to_string((*next)->header.version);
        done = true;
        break;
      }
      self->dispatch(std::move(**next));
    }
  }
  ::shutdown(self->socket_.get(), SHUT_RDWR);
  self->failAll(reason);
}

void Connection::registerBurst(uint64_t burst, std::weak_ptr<BurstMemoryProvider> provider) {
  std::lock_guard<std::mutex> lock(burstsMutex_);
  bursts_[burst] = std::move(provider);
}

void Connection::unregisterBurst(uint64_t burst) {
  std::lock_guard<std::mutex> lock(burstsMutex_);
  bursts_.erase(burst);
}

void Connection::answerGetMemories(const Frame& frame) {
  auto asked = decodePayload(frame.payload, MessageType::kBurstGetMemories, decodeBurstGetMemories);
  std::shared_ptr<BurstMemoryProvider> provider;
  if (asked) {
    std::lock_guard<std::mutex> lock(burstsMutex_);
    auto found = bursts_.find(asked->burst);
    if (found != bursts_.end()) provider = found->second.lock();
  }
  std::vector<Memory> keep;  // declared before the lock: closed after the send
  std::lock_guard<std::mutex> lock(writeMutex_);
  OutMessage out;
  if (!asked) {
    encode(BurstMemories{toWireStatus(asked.error()), {}}, out);
  } else if (provider == nullptr) {
    encode(BurstMemories{{ErrorStatus::INVALID_ARGUMENT,
                          "burst " + std::to_string(asked->burst) + " is unknown to the client"},
                         {}},
           out);
  } else {
    encode(provider->provideMemories(asked->slots, out, keep), out);
  }
  FrameHeader header;
  header.type = static_cast<uint16_t>(MessageType::kBurstMemories);
  header.callId = frame.header.callId;
  header.payloadBytes = static_cast<uint32_t>(out.payload.size());
  header.fdCount = static_cast<uint32_t>(out.fds.size());
  if (!sendFrame(socket_.get(), header, out.payload.buffer(), out.fds)) {
    ::shutdown(socket_.get(), SHUT_RDWR);
  }
}

void Connection::dispatch(Frame frame) {
  if (frame.header.type == static_cast<uint16_t>(MessageType::kBurstGetMemories)) {
    answerGetMemories(frame);
    return;
  }
  const uint64_t id = frame.header.callId;
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    auto found = pending_.find(id);
    if (found == pending_.end()) return;  // a reply nobody waits for
    handler = std::move(found->second);
    pending_.erase(found);
  }
  if (!handler(std::move(frame))) {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    if (!dead_ && forgotten_.erase(id) == 0) {
      pending_.emplace(id, std::move(handler));
      return;
    }
  }
}

void Connection::failAll(const std::string& reason) {
  std::unordered_map<uint64_t, Handler> pending;
  {
    std::lock_guard<std::mutex> lock(pendingMutex_);
    dead_ = true;
    deadReason_ = reason;
    lost_.store(true, std::memory_order_release);
    pending.swap(pending_);
  }
  for (auto& [id, handler] : pending) handler(std::unexpected(lostError()));
}

Error unexpectedReply(const Frame& frame, MessageType expected) {
  return Error{ErrorStatus::GENERAL_FAILURE,
               "nnhald sent " + toString(static_cast<MessageType>(frame.header.type)) + " where " +
                   toString(expected) + " was expected",
               {}};
}

}  // namespace nnhal::ipc
