// ipc/daemon/client_limits.h — what one client of nnhald may hold and do at once
// (docs/IPC_PROTOCOL.md, "Quotas").
//
// A client is one connection of one application (all connections of one uid:
// hal/application.h). Most quotas hold three times (ipc/daemon/quota.h): per connection (the
// fields below), per application (`perApplication`) and for the whole daemon (`daemon`), so
// that more connections or processes give an application nothing more and no application can
// take what the daemon keeps for all. Beyond a quota, a request gets
// RESOURCE_EXHAUSTED_TRANSIENT (the client may retry once it released something or its work
// finished) with a message naming the quota it reached; traffic that breaks the protocol's
// pace (a frame that never finishes, replies never read) closes the connection with a logged
// reason. nnhald sets each from a command-line option (nnhald --help).
#pragma once

#include <chrono>
#include <cstdint>

namespace nnhal::ipc {

/// The quotas counted per application and for the whole daemon (0 = no limit).
struct SharedLimits {
  uint32_t connections = 0;
  uint32_t preparedModels = 0;
  uint64_t constantBytes = 0;
  /// Client memories kept mapped: request pools and burst memory slots (each holds a
  /// descriptor in the daemon).
  uint32_t pools = 0;
  /// Requests running or waiting: preparations, executions of every path (bursts included),
  /// buffer copies.
  uint32_t requests = 0;
  uint32_t bursts = 0;
  uint32_t buffers = 0;
  uint32_t fencedExecutions = 0;
  /// Bytes of replies queued for connections that do not read them; past it, the
  /// connection whose reply does not fit is closed.
  uint64_t replyBytes = 0;
};

struct ClientLimits {
  /// Connections open at once, all clients together; more are closed at once.
  uint32_t maxConnections = 256;
  /// Connections open at once from one process (by the peer's pid, SO_PEERCRED).
  uint32_t maxConnectionsPerProcess = 32;
  /// Prepared models a connection holds, counting preparations not finished yet.
  uint32_t maxPreparedModels = 64;
  /// Bytes of constants (CONSTANT_COPY values and the CONSTANT_REFERENCE bytes copied from
  /// its pools) of the models a connection holds or is preparing.
  uint64_t maxConstantBytes = uint64_t{1} << 30;
  /// Request pools a connection keeps mapped (each holds a descriptor in the daemon).
  uint32_t maxPools = 256;
  /// Preparations and executions of a connection that run at once on the driver's threads;
  /// the rest wait in the connection's queue, in order. With the driver's 8 threads by
  /// default (nnhald --driver-threads), one connection never occupies them all.
  uint32_t maxRunning = 2;
  /// Requests (preparations and executions) waiting in a connection's queue.
  uint32_t maxQueued = 64;
  /// Fenced executions a connection has started and not released. They are not queued (a
  /// queue could deadlock a chain of fences the client signals later), so this also bounds
  /// how many of them run at once.
  uint32_t maxFencedExecutions = 16;
  /// Bursts a connection holds at once. Each has a listener thread and two queues of at
  /// most kMaxFmqLength 24-byte elements.
  uint32_t maxBursts = 16;
  /// Memories one burst keeps mapped (its slots).
  uint32_t maxBurstMemories = 256;
  /// Driver-managed buffers (allocate) a client holds at once.
  uint32_t maxBuffers = 256;
  /// Bytes of one request's arguments that lie in client files (mmap_fd pools) and are read
  /// into the daemon before it runs (hal/file_pool_staging.h); more: RESOURCE_EXHAUSTED_TRANSIENT.
  uint64_t maxStagedBytes = uint64_t{1} << 30;
  /// How long an idle burst listener polls its request queue before sleeping on the futex
  /// (bursts of models prepared for LOW_POWER never poll).
  std::chrono::microseconds burstPollWindow{50};
  /// How long a burst listener waits for the client's answer to getMemories.
  std::chrono::milliseconds getMemoriesTimeout{2'000};
  /// Bytes of replies queued for a client that does not read them. Above a quarter of it the
  /// daemon stops reading that client's requests until the replies drain; above it, the
  /// connection is closed.
  uint64_t maxUnreadReplyBytes = uint64_t{64} << 20;
  /// Time a started frame may take to arrive whole; then the connection is closed.
  std::chrono::milliseconds frameTimeout{10'000};
  /// Longest WHILE loop timeout granted to a client's execution (a larger
  /// loopTimeoutDuration is lowered to it); by default the HAL's maximum, 15 s.
  std::chrono::nanoseconds maxLoopTimeout{15'000'000'000};

  /// One application's quotas, all its connections together (nnhald --application-limit).
  SharedLimits perApplication{.connections = 64,
                              .preparedModels = 256,
                              .constantBytes = uint64_t{4} << 30,
                              .pools = 1024,
                              .requests = 512,
                              .bursts = 64,
                              .buffers = 1024,
                              .fencedExecutions = 64,
                              .replyBytes = uint64_t{256} << 20};
  /// The daemon's, all applications together (nnhald --daemon-limit). Connections 0 =
  /// maxConnections; pools 0 = from the daemon's descriptor limit (what is left beside the
  /// connections and the bursts' queues).
  SharedLimits daemon{.connections = 0,
                      .preparedModels = 4096,
                      .constantBytes = uint64_t{16} << 30,
                      .pools = 0,
                      .requests = 8192,
                      .bursts = 512,
                      .buffers = 4096,
                      .fencedExecutions = 1024,
                      .replyBytes = uint64_t{1} << 30};
};

}  // namespace nnhal::ipc
