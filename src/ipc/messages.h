// ipc/messages.h — the messages of the nnhald protocol and their payload encoding
// (docs/IPC_PROTOCOL.md has the full list and layouts).
//
// Each message is a plain struct with an encode function appending its payload to an
// OutMessage (bytes + the descriptors to send, borrowed) and a decode function reading it
// from a ByteReader. Descriptors inside a message are indexes into the frame's descriptor
// list; decoders check every index against `fdCount`. Decoders are bounds-checked and
// bounded (see hal/serialization.h): malformed input makes the reader fail with a reason
// (checked with decodeDone), never crash. Enum values of the HAL are carried as sent: the
// daemon's driver validates them as it validates an embedded caller's.
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hal/serialization.h"
#include "ipc/frame.h"
#include "nnhal/device.h"
#include "nnhal/prepared_model.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::ipc {

using hal::ByteReader;
using hal::ByteWriter;

/// Message types (the u16 of the frame header). "c>d": client to daemon.
enum class MessageType : uint16_t {
  kHello = 1,                     ///< c>d Hello; reply kHelloReply
  kHelloReply = 2,                ///< d>c HelloReply
  kSupportedOperations = 3,       ///< c>d ModelMessage; reply kSupportedOperationsReply
  kSupportedOperationsReply = 4,  ///< d>c SupportedOperationsReply
  kPrepareModel = 5,              ///< c>d PrepareModel; replies kLaunched then kPrepareReply
  kPrepareModelFromCache = 6,     ///< c>d PrepareFromCache; replies kLaunched then kPrepareReply
  kLaunched = 7,                  ///< d>c StatusReply: the status an asynchronous call returned
  kPrepareReply = 8,              ///< d>c PrepareReply: the preparation's callback
  kReleasePreparedModel = 9,      ///< c>d ReleasePreparedModel; no reply
  kExecuteSynchronously = 10,     ///< c>d Execute; reply kExecutionReply
  kExecute = 11,                  ///< c>d Execute; replies kLaunched then kExecutionReply
  kExecutionReply = 12,           ///< d>c ExecutionReply
  kReleasePools = 13,             ///< c>d ReleasePools; no reply
  kGetStats = 14,                 ///< c>d (empty); reply kStatsReply
  kStatsReply = 15,               ///< d>c StatsReply
  kExecuteFenced = 16,            ///< c>d ExecuteFenced; reply kFencedReply (+ the sync fence)
  kFencedReply = 17,              ///< d>c FencedReply
  kFencedInfoReply = 18,          ///< d>c FencedInfoReply
  kGetFencedInfo = 19,            ///< c>d FencedHandle; reply kFencedInfoReply once finished
  kReleaseFenced = 20,            ///< c>d FencedHandle; no reply
  kConfigureBurst = 21,           ///< c>d ConfigureBurst; reply kBurstConfigured (+ 2 queues)
  kBurstConfigured = 22,          ///< d>c BurstConfigured
  kReleaseBurst = 23,             ///< c>d BurstHandle; no reply
  kBurstFreeMemory = 24,          ///< c>d BurstSlot; reply kBurstReply once the slot is gone
  kBurstReply = 25,               ///< d>c WireStatus
  kBurstGetMemories = 26,         ///< d>c BurstGetMemories: the daemon asks (its own call id)
  kBurstMemories = 27,            ///< c>d BurstMemories: the answer, same call id
  kBurstLastError = 28,           ///< c>d BurstHandle; reply kBurstReply: the last error's text
  kAllocate = 29,                 ///< c>d Allocate; reply kAllocated
  kAllocated = 30,                ///< d>c Allocated
  kBufferCopyTo = 31,             ///< c>d BufferCopy (+ the pool); reply kBufferReply
  kBufferCopyFrom = 32,           ///< c>d BufferCopy (+ the pool); reply kBufferReply
  kReleaseBuffer = 33,            ///< c>d BufferHandle; no reply
  kBufferReply = 34,              ///< d>c WireStatus
};

/// Name of a message type for logs ("Hello", ...); "MessageType(<n>)" for unknown ones.
std::string toString(MessageType type);

/// Longest string (names, messages) a decoder accepts.
inline constexpr uint32_t kMaxWireString = 1 << 20;
/// Most list elements (pools, arguments, shapes, handles...) a decoder accepts.
inline constexpr uint32_t kMaxWireCount = 1 << 20;

/// A payload under construction and the descriptors (borrowed, not owned) to send with it.
struct OutMessage {
  ByteWriter payload;
  std::vector<int> fds;
  /// Appends `fd` to the descriptor list and returns its index.
  uint32_t addFd(int fd) {
    fds.push_back(fd);
    return static_cast<uint32_t>(fds.size() - 1);
  }
};

/// Status + message, the way every reply reports an error (NONE and "" for success).
struct WireStatus {
  ErrorStatus status = ErrorStatus::NONE;
  std::string message;
  bool operator==(const WireStatus&) const = default;
};

/// One shared-memory pool (Model.pools or Request.pools) on the wire.
struct WirePool {
  enum class Source : uint8_t {
    kFd = 0,      ///< the descriptor travels with this frame (fdIndex)
    kCached = 1,  ///< already sent on this connection: the daemon knows `id`
    kToken = 2,   ///< a MemoryDomainToken (Request pools only)
    kEmpty = 3,   ///< an empty Memory handle (the driver rejects it as it would locally)
  };
  Source source = Source::kFd;
  uint64_t id = 0;          ///< the client's Memory::id()
  int32_t kind = 0;         ///< MemoryKind as sent (unchecked)
  uint64_t size = 0;        ///< bytes of the region
  uint64_t offset = 0;      ///< offset of the region in the descriptor
  bool writable = true;     ///< map read-write
  HardwareBufferDesc desc;  ///< for hardware_buffer_blob
  uint32_t fdIndex = 0;     ///< kFd: index into the frame's descriptors
  uint32_t token = 0;       ///< kToken
  bool operator==(const WirePool& o) const {
    return source == o.source && id == o.id && kind == o.kind && size == o.size &&
           offset == o.offset && writable == o.writable && desc.width == o.desc.width &&
           desc.height == o.desc.height && desc.layers == o.desc.layers &&
           desc.usage == o.desc.usage && fdIndex == o.fdIndex && token == o.token;
  }
};

/// Describes `memory` as a kFd pool whose descriptor is added to `out` (kEmpty when
/// `memory` is not valid).
WirePool poolWithFd(const Memory& memory, OutMessage& out);

/// A Model whose pools are described by WirePools (Model::pools stays empty).
struct WireModel {
  Model model;
  std::vector<WirePool> pools;
};

struct Hello {
  uint32_t protocolVersion = kProtocolVersion;
  std::string clientName;
  /// The device to serve this connection, by name; "" = the daemon's first (protocol 6).
  std::string device{};
};

/// Everything the const queries of Device return; fixed for the daemon's lifetime, so the
/// client asks once, at the handshake.
struct DeviceInfo {
  std::string name;
  std::string version;
  DeviceType type = DeviceType::CPU;
  Capabilities capabilities;
  std::vector<Extension> extensions;
  NumberOfCacheFiles cacheFiles;
  /// Why compilation caching is off ("" when cacheFiles is not (0, 0)); protocol 5.
  std::string cachingOff;
};

struct HelloReply {
  /// DEVICE_UNAVAILABLE for a version the daemon does not speak or a device it does not serve
  WireStatus status;
  uint32_t protocolVersion = 0;
  DeviceInfo info;  ///< of the device serving the connection
  /// The names of every device the daemon serves, the default first (protocol 6).
  std::vector<std::string> devices{};
};

struct SupportedOperationsReply {
  WireStatus status;
  std::vector<std::string> reasons;  ///< per operation of model.main: "" = supported
};

/// Cache files of PrepareOptions / prepareModelFromCache; each handle lists fd indexes.
struct WireCacheFiles {
  std::vector<std::vector<uint32_t>> modelCache;
  std::vector<std::vector<uint32_t>> dataCache;
  CacheToken token{};
  bool operator==(const WireCacheFiles&) const = default;
};

/// Adds the descriptors of `files` to `out`.
WireCacheFiles cacheFilesWithFds(const CacheFiles& files, OutMessage& out);

struct PrepareModel {
  WireModel model;
  int32_t preference = 0;
  int32_t priority = 0;
  OptionalTimePoint deadline;
  std::optional<WireCacheFiles> cache;
};

struct PrepareFromCache {
  WireCacheFiles cache;
  OptionalTimePoint deadline;
};

struct PrepareReply {
  WireStatus status;
  uint64_t handle = 0;  ///< names the prepared model in later calls (when status is NONE)
};

struct ReleasePreparedModel {
  uint64_t handle = 0;
};

/// A Request whose pools are WirePools.
struct WireRequest {
  std::vector<RequestArgument> inputs;
  std::vector<RequestArgument> outputs;
  std::vector<WirePool> pools;
};

struct Execute {
  uint64_t handle = 0;
  WireRequest request;
  int32_t measure = 0;
  OptionalTimePoint deadline;
  int64_t loopTimeoutNs = 0;
};

struct ExecutionReply {
  WireStatus status;
  std::vector<OutputShape> outputShapes;  ///< on success and OUTPUT_INSUFFICIENT_SIZE
  Timing timing;
};

/// A waitFor fence of executeFenced: empty (already signalled) or a descriptor.
struct WireFence {
  bool valid = false;
  uint32_t fdIndex = 0;  ///< when valid
  bool operator==(const WireFence&) const = default;
};

struct ExecuteFenced {
  Execute execute;
  std::vector<WireFence> waitFor;
  std::optional<int64_t> timeoutAfterFenceNs;
};

/// The launch of a fenced execution: an error, or the sync fence (a descriptor of this
/// frame, or none = already signalled) and the handle of its callback.
struct FencedReply {
  WireStatus status;
  bool hasFence = false;
  uint32_t fenceFdIndex = 0;
  uint64_t handle = 0;
};

/// Names a fenced execution's callback (kGetFencedInfo, kReleaseFenced).
struct FencedHandle {
  uint64_t handle = 0;
};

/// getExecutionInfo: `status` is the query's own failure (e.g. an unknown handle); the
/// execution's outcome is `executionStatus`.
struct FencedInfoReply {
  WireStatus status;
  ErrorStatus executionStatus = ErrorStatus::NONE;
  Timing timingLaunched;
  Timing timingFenced;
};

struct ReleasePools {
  std::vector<uint64_t> ids;
};

/// configureExecutionBurst: the prepared model and the queue lengths the client wants
/// (0 = kDefaultFmqLength). The daemon creates both queues.
struct ConfigureBurst {
  uint64_t handle = 0;  ///< the prepared model
  uint32_t requestLength = 0;
  uint32_t resultLength = 0;
};

/// The burst, with its two queues (descriptors of this frame): requests (client writes,
/// daemon reads) and results (daemon writes, client reads); 24-byte elements.
struct BurstConfigured {
  WireStatus status;
  uint64_t burst = 0;
  uint32_t requestFdIndex = 0;
  uint32_t requestLength = 0;
  uint32_t resultFdIndex = 0;
  uint32_t resultLength = 0;
};

/// Names a burst (kReleaseBurst, kBurstLastError).
struct BurstHandle {
  uint64_t burst = 0;
};

/// IBurstContext::freeMemory.
struct BurstSlot {
  uint64_t burst = 0;
  int32_t slot = 0;
};

/// IBurstCallback::getMemories: the daemon met slots it does not know.
struct BurstGetMemories {
  uint64_t burst = 0;
  std::vector<int32_t> slots;
};

/// The client's answer: one pool per slot asked, in order, or an error (INVALID_ARGUMENT
/// for a slot the client does not know) and no pools.
struct BurstMemories {
  WireStatus status;
  std::vector<WirePool> pools;
};

/// IDevice::allocate: the prepared models by handle, and the roles.
struct Allocate {
  std::vector<uint32_t> dimensions;  ///< BufferDesc
  std::vector<uint64_t> models;      ///< prepared model handles of this connection
  std::vector<BufferRole> inputRoles;
  std::vector<BufferRole> outputRoles;
};

/// The buffer (a handle of this connection) and its token, valid on this connection only.
struct Allocated {
  WireStatus status;
  uint64_t buffer = 0;
  uint32_t token = 0;
};

/// IBuffer::copyTo / copyFrom: the buffer and the client's memory (always sent with its
/// descriptor); `dimensions` for copyFrom.
struct BufferCopy {
  uint64_t buffer = 0;
  WirePool pool;
  std::vector<uint32_t> dimensions;
};

/// Names a buffer (kReleaseBuffer).
struct BufferHandle {
  uint64_t buffer = 0;
};

/// Object counts (for tests and monitoring): of the asking connection only, or of the whole
/// daemon on its admin socket.
struct Stats {
  uint64_t sessions = 0;        ///< 1 for a connection's own
  uint64_t preparedModels = 0;  ///< prepared models alive (held by sessions or executions)
  uint64_t pools = 0;           ///< request pools mapped and cached by sessions
  uint64_t callsInFlight = 0;   ///< own: requests not answered; daemon: calls running
  uint64_t bursts = 0;          ///< bursts configured and not released
  uint64_t burstListeners = 0;  ///< BurstListener threads running
  uint64_t burstMemories = 0;   ///< memories mapped for burst slots
  uint64_t buffers = 0;         ///< driver-managed buffers (allocate) held
  bool operator==(const Stats&) const = default;
};

/// kStatsReply: the counts, and what they cover, with the memory behind them.
/// One application's usage (DaemonStats::Application); protocol 5.
struct ApplicationUsage {
  uint32_t uid = 0;
  uint32_t weight = 1;
  uint64_t connections = 0;
  uint64_t preparedModels = 0;
  uint64_t constantBytes = 0;
  uint64_t pools = 0;
  uint64_t requests = 0;
  uint64_t bursts = 0;
  uint64_t buffers = 0;
  uint64_t arenaBytes = 0;
  uint64_t driverTimeUs = 0;
  bool operator==(const ApplicationUsage&) const = default;
};

struct StatsReply {
  Stats counts;
  bool wholeDaemon = false;    ///< admin socket: every client's objects
  uint64_t poolBytes = 0;      ///< bytes of the request pools counted
  uint64_t residentBytes = 0;  ///< the daemon's resident memory; 0 outside the admin socket
  uint64_t uptimeMs = 0;       ///< since the daemon started; 0 outside the admin socket
  /// Every application (admin socket) or the caller's own.
  std::vector<ApplicationUsage> applications;
};

// Encoders append the payload; decoders read it (check with decodeDone).
void encode(const WireStatus& m, OutMessage& out);
void encode(const Hello& m, OutMessage& out);
void encode(const HelloReply& m, OutMessage& out);
void encode(const WireModel& m, OutMessage& out);
void encode(const SupportedOperationsReply& m, OutMessage& out);
void encode(const PrepareModel& m, OutMessage& out);
void encode(const PrepareFromCache& m, OutMessage& out);
void encode(const PrepareReply& m, OutMessage& out);
void encode(const ReleasePreparedModel& m, OutMessage& out);
void encode(const Execute& m, OutMessage& out);
void encode(const ExecutionReply& m, OutMessage& out);
void encode(const ReleasePools& m, OutMessage& out);
void encode(const StatsReply& m, OutMessage& out);
void encode(const ExecuteFenced& m, OutMessage& out);
void encode(const FencedReply& m, OutMessage& out);
void encode(const FencedHandle& m, OutMessage& out);
void encode(const FencedInfoReply& m, OutMessage& out);
void encode(const ConfigureBurst& m, OutMessage& out);
void encode(const BurstConfigured& m, OutMessage& out);
void encode(const BurstHandle& m, OutMessage& out);
void encode(const BurstSlot& m, OutMessage& out);
void encode(const BurstGetMemories& m, OutMessage& out);
void encode(const BurstMemories& m, OutMessage& out);
void encode(const Allocate& m, OutMessage& out);
void encode(const Allocated& m, OutMessage& out);
void encode(const BufferCopy& m, OutMessage& out);
void encode(const BufferHandle& m, OutMessage& out);

WireStatus decodeWireStatus(ByteReader& in);
Hello decodeHello(ByteReader& in);
HelloReply decodeHelloReply(ByteReader& in);
WireModel decodeWireModel(ByteReader& in, size_t fdCount);
SupportedOperationsReply decodeSupportedOperationsReply(ByteReader& in);
PrepareModel decodePrepareModel(ByteReader& in, size_t fdCount);
PrepareFromCache decodePrepareFromCache(ByteReader& in, size_t fdCount);
PrepareReply decodePrepareReply(ByteReader& in);
ReleasePreparedModel decodeReleasePreparedModel(ByteReader& in);
Execute decodeExecute(ByteReader& in, size_t fdCount);
ExecutionReply decodeExecutionReply(ByteReader& in);
ReleasePools decodeReleasePools(ByteReader& in);
StatsReply decodeStatsReply(ByteReader& in);
ExecuteFenced decodeExecuteFenced(ByteReader& in, size_t fdCount);
FencedReply decodeFencedReply(ByteReader& in, size_t fdCount);
FencedHandle decodeFencedHandle(ByteReader& in);
FencedInfoReply decodeFencedInfoReply(ByteReader& in);
ConfigureBurst decodeConfigureBurst(ByteReader& in);
BurstConfigured decodeBurstConfigured(ByteReader& in, size_t fdCount);
BurstHandle decodeBurstHandle(ByteReader& in);
BurstSlot decodeBurstSlot(ByteReader& in);
BurstGetMemories decodeBurstGetMemories(ByteReader& in);
BurstMemories decodeBurstMemories(ByteReader& in, size_t fdCount);
Allocate decodeAllocate(ByteReader& in);
Allocated decodeAllocated(ByteReader& in);
BufferCopy decodeBufferCopy(ByteReader& in, size_t fdCount);
BufferHandle decodeBufferHandle(ByteReader& in);

/// Checks that a decode consumed the whole payload without error; the error
/// (GENERAL_FAILURE) names the message and the reason.
Result<void> decodeDone(const ByteReader& in, MessageType type);

/// Decodes a whole payload: `decoder(reader)` then decodeDone.
template <typename Decoder>
auto decodePayload(std::span<const uint8_t> payload, MessageType type, Decoder&& decoder)
    -> Result<decltype(decoder(std::declval<ByteReader&>()))> {
  ByteReader in(payload);
  auto message = decoder(in);
  NNHAL_TRY(decodeDone(in, type));
  return message;
}

/// An Error from a reply's status (+ output shapes for OUTPUT_INSUFFICIENT_SIZE).
Error toError(WireStatus status, std::vector<OutputShape> shapes = {});
/// The status of an Error.
WireStatus toWireStatus(const Error& error);

}  // namespace nnhal::ipc
