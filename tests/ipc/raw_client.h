// A raw socket to nnhald for the IPC tests: frames no client library would send, with any
// descriptors, and the daemon's answers read back.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <vector>

#include "ipc/frame.h"
#include "ipc/messages.h"

namespace nnhal::ipc::testing {

using namespace std::chrono_literals;

/// A raw socket to the daemon, for traffic no client library would send.
class RawClient {
 public:
  explicit RawClient(const std::filesystem::path& path) {
    fd_.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
    connected_ = ::connect(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  bool connected() const { return connected_; }
  void sendBytes(std::span<const uint8_t> bytes) {
    (void)::send(fd_.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  void sendFrame(uint16_t type, std::span<const uint8_t> payload,
                 uint16_t version = kProtocolVersion, uint32_t fdCount = 0, uint64_t callId = 1) {
    FrameHeader header;
    header.version = version;
    header.type = type;
    header.callId = callId;
    header.payloadBytes = static_cast<uint32_t>(payload.size());
    header.fdCount = fdCount;
    std::vector<uint8_t> bytes(kFrameHeaderBytes);
    encodeHeader(header, std::span<uint8_t, kFrameHeaderBytes>(bytes.data(), kFrameHeaderBytes));
    bytes.insert(bytes.end(), payload.begin(), payload.end());
    sendBytes(bytes);
  }
  /// Sends `out` (payload and descriptors) as one frame of `type`; false when it failed.
  bool send(MessageType type, OutMessage& out, uint64_t callId = 1) {
    FrameHeader header;
    header.type = static_cast<uint16_t>(type);
    header.callId = callId;
    header.payloadBytes = static_cast<uint32_t>(out.payload.size());
    header.fdCount = static_cast<uint32_t>(out.fds.size());
    return ipc::sendFrame(fd_.get(), header, out.payload.buffer(), out.fds).has_value();
  }
  /// The next frame with `callId` (others are skipped), or nullopt.
  std::optional<Frame> readReply(uint64_t callId, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      auto frame = readFrame(std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now()));
      if (!frame) return std::nullopt;
      if (frame->header.callId == callId) return frame;
    }
    return std::nullopt;
  }
  int fd() const { return fd_.get(); }
  void hello() {
    OutMessage out;
    encode(Hello{kProtocolVersion, "raw"}, out);
    sendFrame(static_cast<uint16_t>(MessageType::kHello), out.payload.buffer());
    (void)readFrame(2s);
  }
  /// The next frame, or nullopt when the daemon closed the connection or nothing came.
  std::optional<Frame> readFrame(std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (true) {
      auto next = parser_.next();
      if (!next || next->has_value()) return next ? std::move(*next) : std::nullopt;
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return std::nullopt;
      pollfd pfd{fd_.get(), POLLIN, 0};
      if (::poll(&pfd, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      auto got = receiveSome(fd_.get(), parser_, true);
      if (!got || *got == ReceiveStatus::kClosed) return std::nullopt;
    }
  }
  /// Whether the daemon closed the connection within `timeout`.
  bool closedByPeer(std::chrono::milliseconds timeout) {
    pollfd pfd{fd_.get(), POLLIN, 0};
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
      if (::poll(&pfd, 1, 50) > 0) {
        char buffer[4096];
        const ssize_t got = ::recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
        if (got == 0 || (got < 0 && errno == ECONNRESET)) return true;
      }
    }
    return false;
  }

 private:
  UniqueFd fd_;
  bool connected_ = false;
  FrameParser parser_;
};

}  // namespace nnhal::ipc::testing
