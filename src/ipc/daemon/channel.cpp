// Channel: reading frames, writing replies, the pace rules of one connection
// (ipc/daemon/channel.h).
#include "ipc/daemon/channel.h"

#include <algorithm>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>

namespace nnhal::ipc {

Channel::Channel(Socket socket, Strand strand, const ClientLimits& limits, uint32_t maxPayloadBytes,
                 std::shared_ptr<Ledger> ledger, std::shared_ptr<Account> account)
    : socket_(std::move(socket)),
      strand_(std::move(strand)),
      limits_(limits),
      parser_(maxPayloadBytes),
      ledger_(std::move(ledger)),
      account_(std::move(account)),
      frameTimer_(strand_) {}

Channel::~Channel() { close(); }

Result<void> Channel::start(std::weak_ptr<ChannelOwner> owner) {
  owner_ = std::move(owner);
  boost::system::error_code ec;
  socket_.non_blocking(true, ec);
  if (ec) {
    close();
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot make the socket non-blocking: " + ec.message());
  }
  waitReadable();
  return {};
}

void Channel::stopReading() { stopped_ = true; }

void Channel::waitReadable() {
  if (readWaiting_ || !reading()) return;
  auto owner = lockOwner();
  if (owner == nullptr) return;
  readWaiting_ = true;
  socket_.async_wait(Socket::wait_read,
                     boost::asio::bind_executor(
                         strand_, [this, owner = std::move(owner)](boost::system::error_code ec) {
                           readWaiting_ = false;
                           if (ec || !reading()) return;
                           onReadable();
                         }));
}

bool Channel::readPausedByReplies() const { return queuedBytes_ > limits_.maxUnreadReplyBytes / 4; }

void Channel::onReadable() {
  bool peerClosed = false;
  // A few reads per wake-up, so that a client flooding small requests takes turns with the
  // other clients of this io thread.
  for (int reads = 0; reads < 4; ++reads) {
    auto got = receiveSome(socket_.native_handle(), parser_, true);
    if (!got) {
      closeWith(got.error().message);
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
    closeWith(parser_.hasPartialFrame() ? "client disconnected in the middle of a frame"
                                        : "client disconnected");
    return;
  }
  if (stopped_) {
    if (auto owner = lockOwner()) owner->onChannelQuiet();
    return;
  }
  if (!readPausedByReplies()) waitReadable();
}

void Channel::handleBuffered() {
  auto owner = lockOwner();
  if (owner == nullptr) return;
  while (reading() && !readPausedByReplies()) {
    auto next = parser_.next();
    if (!next) {
      closeWith("malformed stream: " + next.error().message);
      return;
    }
    if (!next->has_value()) break;
    ++framesHandled_;
    const bool moreWaiting = parser_.hasCompleteFrame();
    if (!owner->onFrame(std::move(**next), moreWaiting)) break;
  }
  if (!closed_ && parser_.hasPartialFrame()) armFrameTimer();
}

void Channel::armFrameTimer() {
  if (frameTimerArmed_) return;
  auto owner = lockOwner();
  if (owner == nullptr) return;
  frameTimerArmed_ = true;
  const uint64_t handled = framesHandled_;
  frameTimer_.expires_after(limits_.frameTimeout);
  frameTimer_.async_wait([this, owner = std::move(owner), handled](boost::system::error_code ec) {
    frameTimerArmed_ = false;
    if (ec || closed_) return;
    const bool stuck = framesHandled_ == handled && parser_.hasPartialFrame() &&
                       !parser_.hasCompleteFrame() && !readPausedByReplies();
    if (stuck) {
      closeWith("a frame did not arrive whole within " +
                std::to_string(limits_.frameTimeout.count()) + " ms");
      return;
    }
    if (parser_.hasPartialFrame()) armFrameTimer();
  });
}

void Channel::send(MessageType type, uint64_t callId, OutMessage& message,
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
    closeWith("the client does not read its replies (" + std::to_string(queuedBytes_) +
              " bytes queued)");
    return;
  }
  // Its application's and the daemon's unread replies: all its connections together.
  if (auto charged = ledger_->extend(replyCharge_, nullptr, account_, Resource::kReplyBytes, bytes);
      !charged) {
    closeWith("the client does not read its replies: " + charged.error().message);
    return;
  }
  if (!writeWaiting_) flush();
}

void Channel::flush() {
  const bool wasPaused = readPausedByReplies();
  while (!writeQueue_.empty() && !closed_) {
    OutFrame& front = writeQueue_.front();
    const std::span<const uint8_t> rest(front.bytes.data() + front.sent,
                                        front.bytes.size() - front.sent);
    auto sent =
        sendSome(socket_.native_handle(), rest, {},
                 front.sent == 0 ? std::span<const int>(front.fds) : std::span<const int>());
    if (!sent) {
      closeWith("cannot write to the client: " + sent.error().message);
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
  if (wasPaused && !readPausedByReplies() && reading()) {
    // The client read its replies: its requests are read again.
    if (auto owner = lockOwner()) {
      boost::asio::post(strand_, [this, owner = std::move(owner)] {
        handleBuffered();
        if (reading() && !readPausedByReplies()) waitReadable();
      });
    }
  }
}

void Channel::waitWritable() {
  auto owner = lockOwner();
  if (owner == nullptr) return;
  writeWaiting_ = true;
  socket_.async_wait(Socket::wait_write,
                     boost::asio::bind_executor(
                         strand_, [this, owner = std::move(owner)](boost::system::error_code) {
                           writeWaiting_ = false;
                           if (closed_) return;
                           flush();
                           owner->onChannelQuiet();
                         }));
}

void Channel::close() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ec;
  socket_.shutdown(Socket::shutdown_both, ec);
  socket_.close(ec);
  frameTimer_.cancel();
  writeQueue_.clear();
  queuedBytes_ = 0;
  replyCharge_.reset();
}

void Channel::closeWith(const std::string& reason) {
  if (closed_) return;
  close();
  if (auto owner = lockOwner()) owner->onChannelClosed(reason);
}

}  // namespace nnhal::ipc
