// ipc/frame.h — the frame layer of the nnhald protocol (docs/IPC_PROTOCOL.md).
//
// Every message travels as one frame: a fixed 24-byte little-endian header
//   u32 magic (kFrameMagic) | u16 protocol version | u16 message type | u64 call id |
//   u32 payload bytes | u32 number of file descriptors
// followed by the payload. The descriptors travel as SCM_RIGHTS ancillary data attached to
// the sendmsg that carries the header's first byte, so a receiver always has them by the time
// it has read the whole header.
//
// FrameParser turns a byte stream plus the descriptors received along it into frames and
// rejects, with a reason, a bad magic, a payload above the limit, more than kMaxFdsPerFrame
// descriptors, and descriptors that do not match the headers. The version is not checked
// here: the receiver decides (the daemon answers a Hello of another version before closing).
// sendFrame / receiveSome are the socket I/O around it.
//
// Thread safety: FrameParser is a plain object (one thread at a time); the free functions
// are thread-safe per descriptor as far as the kernel's sendmsg/recvmsg are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "nnhal/status.h"

namespace nnhal::ipc {

using common::UniqueFd;

/// "NNHD" read as a little-endian u32.
inline constexpr uint32_t kFrameMagic = 0x44484E4E;
/// Version of the protocol this build speaks; both ends must agree (Hello checks it).
inline constexpr uint16_t kProtocolVersion = 6;
/// Bytes of the fixed header.
inline constexpr size_t kFrameHeaderBytes = 24;
/// Most descriptors one frame may carry (Linux SCM_MAX_FD).
inline constexpr uint32_t kMaxFdsPerFrame = 253;
/// Default largest payload (1 GiB).
inline constexpr uint32_t kDefaultMaxPayloadBytes = uint32_t{1} << 30;

struct FrameHeader {
  uint32_t magic = kFrameMagic;
  uint16_t version = kProtocolVersion;
  uint16_t type = 0;
  uint64_t callId = 0;
  uint32_t payloadBytes = 0;
  uint32_t fdCount = 0;
};

/// Writes the header's 24 bytes to `out`.
void encodeHeader(const FrameHeader& header, std::span<uint8_t, kFrameHeaderBytes> out);
/// Reads a header (no checks).
FrameHeader decodeHeader(std::span<const uint8_t, kFrameHeaderBytes> in);

/// One received frame: header, payload and the descriptors it carried (owned).
struct Frame {
  FrameHeader header;
  std::vector<uint8_t> payload;
  std::vector<UniqueFd> fds;
};

class FrameParser {
 public:
  explicit FrameParser(uint32_t maxPayloadBytes = kDefaultMaxPayloadBytes)
      : maxPayloadBytes_(maxPayloadBytes) {}

  /// Adds bytes read from the stream and the descriptors that arrived with them.
  void append(std::span<const uint8_t> bytes);
  void appendFds(std::vector<UniqueFd> fds);

  /// The next complete frame, std::nullopt when more bytes are needed, or an error
  /// (GENERAL_FAILURE with the reason) when the stream is malformed; after an error the
  /// stream is unusable and the connection must be closed.
  Result<std::optional<Frame>> next();

  /// Whether bytes of an incomplete frame are buffered.
  bool hasPartialFrame() const { return end_ > begin_; }
  /// Whether another whole frame (header and payload) is already buffered.
  bool hasCompleteFrame() const;

  /// Read buffer of at least `bytes` free bytes for receiveSome; commit(n) after writing n.
  std::span<uint8_t> writableSpace(size_t bytes);
  void commit(size_t bytes) { end_ += bytes; }

 private:
  uint32_t maxPayloadBytes_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0;  // first unconsumed byte
  size_t end_ = 0;    // one past the last received byte
  std::deque<UniqueFd> fds_;
  bool failed_ = false;
};

/// Sends header + payload + descriptors, retrying partial writes and EINTR until all is
/// sent. For blocking sockets. Errors: DEVICE_UNAVAILABLE when the peer is gone
/// (EPIPE, ECONNRESET) or any other send failure.
Result<void> sendFrame(int socket, const FrameHeader& header, std::span<const uint8_t> payload,
                       std::span<const int> fds);

/// One non-blocking sendmsg of `first` then `second` (descriptors attached when not empty).
/// Returns the bytes sent (0 when the socket would block). Errors: DEVICE_UNAVAILABLE.
Result<size_t> sendSome(int socket, std::span<const uint8_t> first, std::span<const uint8_t> second,
                        std::span<const int> fds);

/// What one recvmsg gave.
enum class ReceiveStatus { kData, kWouldBlock, kClosed };

/// One recvmsg into `parser` (descriptors too; MSG_CMSG_CLOEXEC). `dontWait` makes it
/// non-blocking. Errors: GENERAL_FAILURE for truncated ancillary data or a socket error.
Result<ReceiveStatus> receiveSome(int socket, FrameParser& parser, bool dontWait);

}  // namespace nnhal::ipc
