// ipc/daemon/channel.h — the byte side of one client connection of nnhald: its socket,
// framing, write queue, frame timer and back-pressure (docs/IPC_PROTOCOL.md).
//
// A Channel reads what the client sends, cuts it into frames (ipc/frame.h) and hands each
// whole frame to its owner (the Session that interprets it); it queues the owner's replies
// and writes them as the socket takes them, without ever blocking. It enforces the pace
// rules of the protocol for its connection (ClientLimits):
//  - a frame must arrive whole within frameTimeout once it started; else the channel closes;
//  - replies the client does not read are bounded: past maxUnreadReplyBytes / 4 queued, no
//    more requests are read until the client reads (back-pressure); past
//    maxUnreadReplyBytes, or past what its application and the daemon allow for unread
//    replies all together (Resource::kReplyBytes), the channel closes;
//  - a malformed stream (ipc/frame.h: bad magic, oversized frame, descriptors that do not
//    match the header) closes the channel.
// A channel that closes on its own (these rules, the client leaving, a socket error) tells
// its owner once, with the reason (ChannelOwner::onChannelClosed).
//
// Threading: everything runs on the connection's strand, the owner's calls included. The
// channel's pending waits keep its owner alive (they hold it strongly); the channel itself
// holds its owner weakly, so an owner that is a member of nothing else goes away when its
// last wait ends.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "ipc/daemon/client_limits.h"
#include "ipc/daemon/quota.h"
#include "ipc/frame.h"
#include "ipc/messages.h"

namespace nnhal::ipc {

/// What a Channel tells its owner; called on the strand.
class ChannelOwner {
 public:
  virtual ~ChannelOwner() = default;
  /// One whole frame; `moreWaiting` when more whole frames are buffered behind it. Returns
  /// false to stop handling the frames buffered after it (the owner closed or stopped
  /// reading).
  virtual bool onFrame(Frame frame, bool moreWaiting) = 0;
  /// The channel closed on its own (see the file comment); called at most once, and not
  /// after the owner's own close().
  virtual void onChannelClosed(const std::string& reason) = 0;
  /// The channel wrote out its queue or stopped reading: an owner that is draining may be
  /// done.
  virtual void onChannelQuiet() = 0;
};

class Channel {
 public:
  using Socket = boost::asio::local::stream_protocol::socket;
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  /// `account` is charged the unread reply bytes (Resource::kReplyBytes) in `ledger`.
  Channel(Socket socket, Strand strand, const ClientLimits& limits, uint32_t maxPayloadBytes,
          std::shared_ptr<Ledger> ledger, std::shared_ptr<Account> account);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  /// Makes the socket non-blocking and starts reading; frames go to `owner`. Errors:
  /// GENERAL_FAILURE when the socket cannot be made non-blocking (nothing is read then).
  Result<void> start(std::weak_ptr<ChannelOwner> owner);
  /// Reads no more requests (a draining owner); what is queued is still written.
  void stopReading();
  /// Queues one frame (header + `message`'s payload and descriptors; `keep` is held until
  /// the frame is written, e.g. the objects whose descriptors it sends) and writes what
  /// the socket takes. May close the channel (unread replies), telling the owner.
  void send(MessageType type, uint64_t callId, OutMessage& message,
            std::shared_ptr<void> keep = nullptr);
  /// Closes the socket and drops what is queued, without telling the owner. Idempotent.
  void close();

  bool closed() const { return closed_; }
  /// Whether replies wait to be written.
  bool writing() const { return !writeQueue_.empty(); }
  /// The executor of the socket (for other waits of the connection).
  Socket::executor_type executor() { return socket_.get_executor(); }

 private:
  struct OutFrame {
    std::vector<uint8_t> bytes;  // header + payload
    size_t sent = 0;
    std::vector<int> fds;  // sent with the first byte; borrowed from `keep`
    std::shared_ptr<void> keep;
  };

  void waitReadable();
  void onReadable();
  /// Hands the frames already buffered to the owner, unless reading is paused.
  void handleBuffered();
  void armFrameTimer();
  bool readPausedByReplies() const;
  bool reading() const { return !closed_ && !stopped_; }
  void flush();
  void waitWritable();
  /// Closes and tells the owner why.
  void closeWith(const std::string& reason);
  std::shared_ptr<ChannelOwner> lockOwner() const { return owner_.lock(); }

  Socket socket_;
  Strand strand_;
  const ClientLimits& limits_;
  FrameParser parser_;
  const std::shared_ptr<Ledger> ledger_;
  const std::shared_ptr<Account> account_;
  std::weak_ptr<ChannelOwner> owner_;
  bool closed_ = false;
  bool stopped_ = false;
  bool readWaiting_ = false;
  bool writeWaiting_ = false;

  std::deque<OutFrame> writeQueue_;
  size_t queuedBytes_ = 0;
  /// queuedBytes_ charged to the application and the daemon (Resource::kReplyBytes).
  Charge replyCharge_;

  // Frame pace: the timer closes the channel when the frame started before it was armed is
  // still incomplete when it fires.
  boost::asio::steady_timer frameTimer_;
  bool frameTimerArmed_ = false;
  uint64_t framesHandled_ = 0;
};

}  // namespace nnhal::ipc
