#include "ipc/frame.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nnhal::ipc {
namespace {

constexpr size_t kReadChunk = 64 * 1024;

template <typename T>
void store(uint8_t* at, T value) {
  std::memcpy(at, &value, sizeof(T));
}

template <typename T>
T load(const uint8_t* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

void encodeHeader(const FrameHeader& header, std::span<uint8_t, kFrameHeaderBytes> out) {
  uint8_t* p = out.data();
  store(p + 0, header.magic);
  store(p + 4, header.version);
  store(p + 6, header.type);
  store(p + 8, header.callId);
  store(p + 16, header.payloadBytes);
  store(p + 20, header.fdCount);
}

FrameHeader decodeHeader(std::span<const uint8_t, kFrameHeaderBytes> in) {
  const uint8_t* p = in.data();
  FrameHeader header;
  header.magic = load<uint32_t>(p + 0);
  header.version = load<uint16_t>(p + 4);
  header.type = load<uint16_t>(p + 6);
  header.callId = load<uint64_t>(p + 8);
  header.payloadBytes = load<uint32_t>(p + 16);
  header.fdCount = load<uint32_t>(p + 20);
  return header;
}

void FrameParser::append(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return;
  std::span<uint8_t> space = writableSpace(bytes.size());
  std::memcpy(space.data(), bytes.data(), bytes.size());
  commit(bytes.size());
}

void FrameParser::appendFds(std::vector<UniqueFd> fds) {
  for (UniqueFd& fd : fds) fds_.push_back(std::move(fd));
}

std::span<uint8_t> FrameParser::writableSpace(size_t bytes) {
  if (begin_ == end_) begin_ = end_ = 0;
  if (buffer_.size() - end_ < bytes) {
    // Move the unconsumed bytes to the front, then grow if still short.
    if (begin_ > 0) {
      std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (buffer_.size() - end_ < bytes) buffer_.resize(end_ + bytes);
  }
  return {buffer_.data() + end_, buffer_.size() - end_};
}

bool FrameParser::hasCompleteFrame() const {
  if (end_ - begin_ < kFrameHeaderBytes) return false;
  const FrameHeader header = decodeHeader(
      std::span<const uint8_t, kFrameHeaderBytes>(buffer_.data() + begin_, kFrameHeaderBytes));
  return end_ - begin_ - kFrameHeaderBytes >= header.payloadBytes;
}

Result<std::optional<Frame>> FrameParser::next() {
  auto broken = [this](std::string why) -> Result<std::optional<Frame>> {
    failed_ = true;
    return fail(ErrorStatus::GENERAL_FAILURE, std::move(why));
  };
  if (failed_) return broken("the stream already failed");
  if (fds_.size() > kMaxFdsPerFrame) {
    return broken(std::to_string(fds_.size()) + " descriptors received ahead of their frames");
  }
  const size_t available = end_ - begin_;
  if (available < kFrameHeaderBytes) {
    // No frame has started, so no descriptor may be waiting for one.
    if (available == 0 && !fds_.empty()) {
      return broken(std::to_string(fds_.size()) + " descriptors received without a frame");
    }
    return std::optional<Frame>();
  }
  const FrameHeader header = decodeHeader(
      std::span<const uint8_t, kFrameHeaderBytes>(buffer_.data() + begin_, kFrameHeaderBytes));
  if (header.magic != kFrameMagic) {
    return broken("bad frame magic 0x" + [&] {
      char text[16];
      std::snprintf(text, sizeof(text), "%08x", header.magic);
      return std::string(text);
    }());
  }
  if (header.payloadBytes > maxPayloadBytes_) {
    return broken("frame payload of " + std::to_string(header.payloadBytes) +
                  " bytes exceeds the limit of " + std::to_string(maxPayloadBytes_));
  }
  if (header.fdCount > kMaxFdsPerFrame) {
    return broken("frame carries " + std::to_string(header.fdCount) + " descriptors, at most " +
                  std::to_string(kMaxFdsPerFrame) + " allowed");
  }
  // The descriptors come with the header's first byte: they must all be here now.
  if (fds_.size() < header.fdCount) {
    return broken("frame header announces " + std::to_string(header.fdCount) + " descriptors, " +
                  std::to_string(fds_.size()) + " arrived");
  }
  if (available - kFrameHeaderBytes < header.payloadBytes) return std::optional<Frame>();
  Frame frame;
  frame.header = header;
  const uint8_t* payload = buffer_.data() + begin_ + kFrameHeaderBytes;
  frame.payload.assign(payload, payload + header.payloadBytes);
  frame.fds.reserve(header.fdCount);
  for (uint32_t i = 0; i < header.fdCount; ++i) {
    frame.fds.push_back(std::move(fds_.front()));
    fds_.pop_front();
  }
  begin_ += kFrameHeaderBytes + header.payloadBytes;
  if (begin_ == end_ && !fds_.empty()) {
    return broken(std::to_string(fds_.size()) + " descriptors more than the frame announced");
  }
  return std::optional<Frame>(std::move(frame));
}

namespace {

/// A sendmsg message of up to two byte ranges, with descriptors attached as SCM_RIGHTS.
/// Not movable: `msg` points into the object itself.
struct OutgoingMessage {
  iovec iov[2]{};
  msghdr msg{};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerFrame)];

  OutgoingMessage() = default;
  OutgoingMessage(const OutgoingMessage&) = delete;
  OutgoingMessage& operator=(const OutgoingMessage&) = delete;

  /// Errors: INVALID_ARGUMENT for more than kMaxFdsPerFrame descriptors.
  Result<void> fill(std::span<const uint8_t> first, std::span<const uint8_t> second,
                    std::span<const int> fds) {
    if (fds.size() > kMaxFdsPerFrame) {
      return invalidArgument("a frame carries at most " + std::to_string(kMaxFdsPerFrame) +
                             " descriptors, not " + std::to_string(fds.size()));
    }
    iov[0].iov_base = const_cast<uint8_t*>(first.data());
    iov[0].iov_len = first.size();
    iov[1].iov_base = const_cast<uint8_t*>(second.data());
    iov[1].iov_len = second.size();
    msg.msg_iov = iov;
    msg.msg_iovlen = second.empty() ? 1 : 2;
    if (fds.empty()) return {};
    const size_t bytes = sizeof(int) * fds.size();
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(bytes);
    cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(bytes);
    std::memcpy(CMSG_DATA(cmsg), fds.data(), bytes);
    return {};
  }
};

}  // namespace

Result<size_t> sendSome(int socket, std::span<const uint8_t> first, std::span<const uint8_t> second,
                        std::span<const int> fds) {
  OutgoingMessage out;
  NNHAL_TRY(out.fill(first, second, fds));
  msghdr& msg = out.msg;
  while (true) {
    const ssize_t sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent >= 0) return static_cast<size_t>(sent);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return size_t{0};
    return fail(ErrorStatus::DEVICE_UNAVAILABLE, errnoText("sendmsg"));
  }
}

Result<void> sendFrame(int socket, const FrameHeader& header, std::span<const uint8_t> payload,
                       std::span<const int> fds) {
  uint8_t head[kFrameHeaderBytes];
  encodeHeader(header, std::span<uint8_t, kFrameHeaderBytes>(head));
  OutgoingMessage out;
  NNHAL_TRY(out.fill(head, payload, fds));
  msghdr& msg = out.msg;
  size_t total = sizeof(head) + payload.size();
  while (total > 0) {
    const ssize_t sent = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorStatus::DEVICE_UNAVAILABLE, errnoText("sendmsg"));
    }
    total -= static_cast<size_t>(sent);
    // Descriptors went with the first bytes; skip what was sent and go on without them.
    msg.msg_control = nullptr;
    msg.msg_controllen = 0;
    size_t skip = static_cast<size_t>(sent);
    while (skip > 0 && msg.msg_iovlen > 0) {
      if (skip >= msg.msg_iov->iov_len) {
        skip -= msg.msg_iov->iov_len;
        ++msg.msg_iov;
        --msg.msg_iovlen;
      } else {
        msg.msg_iov->iov_base = static_cast<uint8_t*>(msg.msg_iov->iov_base) + skip;
        msg.msg_iov->iov_len -= skip;
        skip = 0;
      }
    }
  }
  return {};
}

Result<ReceiveStatus> receiveSome(int socket, FrameParser& parser, bool dontWait) {
  std::span<uint8_t> space = parser.writableSpace(kReadChunk);
  iovec iov{space.data(), space.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFdsPerFrame)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  int flags = MSG_CMSG_CLOEXEC;
  if (dontWait) flags |= MSG_DONTWAIT;
  ssize_t got;
  do {
    got = ::recvmsg(socket, &msg, flags);
  } while (got < 0 && errno == EINTR);
  if (got < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReceiveStatus::kWouldBlock;
    if (errno == ECONNRESET) return ReceiveStatus::kClosed;
    return fail(ErrorStatus::GENERAL_FAILURE, errnoText("recvmsg"));
  }
  // Take ownership of every descriptor first, so that none leaks on an error below.
  std::vector<UniqueFd> fds;
  for (cmsghdr* cmsg = CMSG_FIRSTHDR(&msg); cmsg != nullptr; cmsg = CMSG_NXTHDR(&msg, cmsg)) {
    if (cmsg->cmsg_level == SOL_SOCKET && cmsg->cmsg_type == SCM_RIGHTS) {
      const size_t count = (cmsg->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
        fds.emplace_back(fd);
      }
    }
  }
  if ((msg.msg_flags & MSG_CTRUNC) != 0) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "recvmsg: ancillary data truncated (too many "
                "descriptors)");
  }
  if (got == 0) return ReceiveStatus::kClosed;
  parser.commit(static_cast<size_t>(got));
  if (!fds.empty()) parser.appendFds(std::move(fds));
  return ReceiveStatus::kData;
}

}  // namespace nnhal::ipc
