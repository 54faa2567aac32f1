// The byte side of one nnhald connection (ipc/daemon/channel.h), over a socketpair with a
// recording owner: whole frames reach the owner in order, replies reach the peer, and the
// pace rules hold (a frame that never finishes, replies the client does not read, a
// malformed stream, the client leaving) with the reason given to the owner once.
#include "ipc/daemon/channel.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace nnhal::ipc {
namespace {

using namespace std::chrono_literals;

struct RecordingOwner : ChannelOwner {
  bool onFrame(Frame frame, bool moreWaiting) override {
    callIds.push_back(frame.header.callId);
    moreWaitingSeen.push_back(moreWaiting);
    if (replyBytes > 0 && channel != nullptr) {
      OutMessage out;
      const std::vector<uint8_t> bytes(replyBytes, 0x5a);
      out.payload.putBytes(bytes);
      channel->send(MessageType::kStatsReply, frame.header.callId, out);
    }
    return true;
  }
  void onChannelClosed(const std::string& reason) override { closedReasons.push_back(reason); }
  void onChannelQuiet() override { ++quiet; }

  Channel* channel = nullptr;
  size_t replyBytes = 0;  ///< each frame is answered with a reply this long (0: none)
  std::vector<uint64_t> callIds;
  std::vector<bool> moreWaitingSeen;
  std::vector<std::string> closedReasons;
  int quiet = 0;
};

class ChannelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    peer_ = UniqueFd(fds[1]);
    daemonEnd_ = fds[0];
    limits_.frameTimeout = 50ms;
    ledger_ = std::make_shared<Ledger>(Limits{}, Limits{}, Limits{});
  }

  void start() {
    channel_.emplace(Channel::Socket(io_, boost::asio::local::stream_protocol(), daemonEnd_),
                     strand_, limits_, 1u << 24, ledger_, ledger_->account(1000));
    owner_->channel = &*channel_;
    boost::asio::post(strand_, [this] { ASSERT_TRUE(channel_->start(owner_).has_value()); });
    runFor(20ms);
  }

  void runFor(std::chrono::milliseconds time) {
    io_.restart();
    io_.run_for(time);
  }

  /// Runs the io_context until `done()` (at most 10 s: sanitizer builds are slow).
  template <typename Done>
  bool runUntil(Done done) {
    for (int i = 0; i < 2000 && !done(); ++i) runFor(5ms);
    return done();
  }

  void sendFromPeer(uint64_t callId, size_t payloadBytes = 8) {
    FrameHeader header;
    header.type = static_cast<uint16_t>(MessageType::kGetStats);
    header.callId = callId;
    header.payloadBytes = static_cast<uint32_t>(payloadBytes);
    const std::vector<uint8_t> payload(payloadBytes, 1);
    ASSERT_TRUE(sendFrame(peer_.get(), header, payload, {}).has_value());
  }

  /// Reads whole frames from the peer's end until none is left; returns their call ids.
  std::vector<uint64_t> readAtPeer() {
    std::vector<uint64_t> ids;
    for (;;) {
      auto got = receiveSome(peer_.get(), peerParser_, true);
      if (!got || *got != ReceiveStatus::kData) break;
    }
    for (;;) {
      auto next = peerParser_.next();
      if (!next || !next->has_value()) break;
      ids.push_back((*next)->header.callId);
    }
    return ids;
  }

  boost::asio::io_context io_;
  Channel::Strand strand_ = boost::asio::make_strand(io_);
  ClientLimits limits_;
  std::shared_ptr<Ledger> ledger_;
  std::shared_ptr<RecordingOwner> owner_ = std::make_shared<RecordingOwner>();
  std::optional<Channel> channel_;
  UniqueFd peer_;
  int daemonEnd_ = -1;
  FrameParser peerParser_{1u << 30};
};

TEST_F(ChannelTest, WholeFramesReachTheOwnerInOrder) {
  sendFromPeer(1);
  sendFromPeer(2);
  start();
  ASSERT_TRUE(runUntil([&] { return owner_->callIds.size() == 2; }));
  EXPECT_EQ(owner_->callIds, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(owner_->moreWaitingSeen, (std::vector<bool>{true, false}));
  EXPECT_TRUE(owner_->closedReasons.empty());
}

TEST_F(ChannelTest, RepliesReachThePeer) {
  owner_->replyBytes = 100;
  start();
  sendFromPeer(7);
  std::vector<uint64_t> replies;
  ASSERT_TRUE(runUntil([&] {
    for (uint64_t id : readAtPeer()) replies.push_back(id);
    return !replies.empty();
  }));
  EXPECT_EQ(replies, (std::vector<uint64_t>{7}));
  EXPECT_FALSE(channel_->writing());
}

TEST_F(ChannelTest, AFrameThatNeverFinishesClosesTheChannel) {
  start();
  const uint8_t half[10] = {};
  ASSERT_EQ(::write(peer_.get(), half, sizeof half), 10);
  ASSERT_TRUE(runUntil([&] { return !owner_->closedReasons.empty(); }));
  ASSERT_EQ(owner_->closedReasons.size(), 1u);
  EXPECT_EQ(owner_->closedReasons[0], "a frame did not arrive whole within 50 ms");
  EXPECT_TRUE(channel_->closed());
}

TEST_F(ChannelTest, UnreadRepliesStopTheReadingUntilThePeerReads) {
  limits_.maxUnreadReplyBytes = 4u << 20;
  owner_->replyBytes = 2u << 20;  // more than a quarter of the limit: reading pauses
  start();
  sendFromPeer(1);
  sendFromPeer(2);
  ASSERT_TRUE(runUntil([&] { return !owner_->callIds.empty(); }));
  runFor(50ms);
  EXPECT_EQ(owner_->callIds, (std::vector<uint64_t>{1})) << "request 2 was read past the pause";
  EXPECT_TRUE(channel_->writing());
  // The peer reads its reply: request 2 is read and answered.
  std::vector<uint64_t> replies;
  ASSERT_TRUE(runUntil([&] {
    for (uint64_t id : readAtPeer()) replies.push_back(id);
    return replies.size() >= 2;
  }));
  EXPECT_EQ(replies, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(owner_->callIds, (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(owner_->closedReasons.empty());
}

TEST_F(ChannelTest, RepliesPastTheLimitCloseTheChannel) {
  limits_.maxUnreadReplyBytes = 1u << 20;
  owner_->replyBytes = 2u << 20;
  start();
  sendFromPeer(1);
  ASSERT_TRUE(runUntil([&] { return !owner_->closedReasons.empty(); }));
  ASSERT_EQ(owner_->closedReasons.size(), 1u);
  EXPECT_NE(owner_->closedReasons[0].find("the client does not read its replies"),
            std::string::npos)
      << owner_->closedReasons[0];
}

TEST_F(ChannelTest, AMalformedStreamClosesTheChannel) {
  start();
  uint8_t header[kFrameHeaderBytes] = {};
  FrameHeader bad;
  bad.magic = 0x12345678;
  encodeHeader(bad, std::span<uint8_t, kFrameHeaderBytes>(header, kFrameHeaderBytes));
  ASSERT_EQ(::write(peer_.get(), header, sizeof header), static_cast<ssize_t>(sizeof header));
  ASSERT_TRUE(runUntil([&] { return !owner_->closedReasons.empty(); }));
  ASSERT_EQ(owner_->closedReasons.size(), 1u);
  EXPECT_EQ(owner_->closedReasons[0].rfind("malformed stream: ", 0), 0u)
      << owner_->closedReasons[0];
  EXPECT_TRUE(owner_->callIds.empty());
}

TEST_F(ChannelTest, ThePeerLeavingClosesTheChannelWithItsReason) {
  start();
  const uint8_t half[5] = {};
  ASSERT_EQ(::write(peer_.get(), half, sizeof half), 5);
  peer_ = UniqueFd();
  ASSERT_TRUE(runUntil([&] { return !owner_->closedReasons.empty(); }));
  ASSERT_EQ(owner_->closedReasons.size(), 1u);
  EXPECT_EQ(owner_->closedReasons[0], "client disconnected in the middle of a frame");
}

TEST_F(ChannelTest, TheOwnersOwnCloseIsNotReportedBack) {
  owner_->replyBytes = 10;
  start();
  boost::asio::post(strand_, [this] {
    channel_->close();
    OutMessage out;
    channel_->send(MessageType::kStatsReply, 1, out);  // dropped: the channel is closed
  });
  runFor(20ms);
  EXPECT_TRUE(owner_->closedReasons.empty());
  EXPECT_TRUE(channel_->closed());
  EXPECT_FALSE(channel_->writing());
  EXPECT_TRUE(readAtPeer().empty());
}

TEST_F(ChannelTest, AStoppedChannelReadsNoMoreButStillWrites) {
  owner_->replyBytes = 10;
  start();
  sendFromPeer(1);
  ASSERT_TRUE(runUntil([&] { return !owner_->callIds.empty(); }));
  boost::asio::post(strand_, [this] { channel_->stopReading(); });
  runFor(20ms);
  sendFromPeer(2);
  runFor(50ms);
  EXPECT_EQ(owner_->callIds, (std::vector<uint64_t>{1}));
  std::vector<uint64_t> replies;
  ASSERT_TRUE(runUntil([&] {
    for (uint64_t id : readAtPeer()) replies.push_back(id);
    return !replies.empty();
  }));
  EXPECT_EQ(replies, (std::vector<uint64_t>{1}));
  EXPECT_TRUE(owner_->closedReasons.empty());
}

}  // namespace
}  // namespace nnhal::ipc
