// nnhal/client.h — the remote driver: a Device served by the nnhald daemon.
//
// connect() opens a connection to a running nnhald (tools/nnhald) over its Unix domain
// socket, checks the protocol version, and returns a Device whose methods and PreparedModels
// behave like the embedded driver's (nnhal/device.h): the daemon runs the embedded driver,
// and its statuses and messages come back unchanged. Shared-memory pools travel as file
// descriptors: model pools with each preparation, request pools the first time a given
// Memory is used on this connection (the daemon keeps its mapping until the client's last
// copy of that Memory is gone). Protocol: docs/IPC_PROTOCOL.md.
//
// Failures of the connection itself: every call pending when the daemon dies or the
// connection drops ends with DEVICE_UNAVAILABLE, and so does every later call; nothing
// hangs. getName() and the other constant queries keep answering from what the handshake
// returned.
//
// Thread safety: as nnhal/device.h — every method from any thread, concurrently; calls from
// several threads share the one connection and may all be in flight at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nnhal/device.h"
#include "nnhal/status.h"

namespace nnhal {

struct ClientOptions {
  /// Longest wait for the daemon's handshake reply.
  std::chrono::milliseconds handshakeTimeout{5000};
  /// Largest reply payload accepted from the daemon (a bigger one drops the connection).
  uint32_t maxPayloadBytes = uint32_t{1} << 30;
  /// Name the daemon logs for this client.
  std::string clientName = "nnhal-client";
  /// The device of the daemon to use, by name (Device::getName; daemonDevices lists them);
  /// empty = the daemon's first device.
  std::string device{};
  /// When set, every call to the daemon is recorded here as an "ipc" span from the request
  /// to its first reply (nnhal/trace.h); null = no tracing.
  std::shared_ptr<TraceRecorder> trace{};
};

/// Connects to the nnhald listening on `socket`; the Device returned is its
/// `options.device`. Errors: DEVICE_UNAVAILABLE when the daemon cannot be reached, the
/// handshake fails or times out, it speaks another protocol version, or it serves no device
/// of that name (the message says which, and which devices it serves).
Result<std::shared_ptr<Device>> connect(const std::filesystem::path& socket,
                                        const ClientOptions& options = {});

/// The names of every device the nnhald behind `device` (a Device from connect()) serves,
/// its default first, as its handshake reported them. Errors: INVALID_ARGUMENT for an
/// embedded Device.
Result<std::vector<std::string>> daemonDevices(const Device& device);

/// The counters of the nnhald behind a connection (`nnhal stats`). Through the daemon's admin
/// socket (nnhald --admin-socket) they cover every client; through its client socket, only
/// the asking connection's own objects: nothing of other clients is visible there.
struct DaemonStats {
  /// True through the admin socket: the counts are the whole daemon's.
  bool wholeDaemon = false;
  /// Connections open (1 for a connection's own view).
  uint64_t clients = 0;
  /// Prepared models alive, whether held by clients or by executions still running.
  uint64_t preparedModels = 0;
  /// Request memory pools the daemon keeps mapped for its clients, and their size in bytes.
  uint64_t mappedPools = 0;
  uint64_t mappedPoolBytes = 0;
  /// Whole daemon: preparations and executions running or queued. Own view: requests of this
  /// connection not yet answered.
  uint64_t callsInFlight = 0;
  /// Bursts configured and not released; their listener threads (whole daemon only) and the
  /// memories mapped for their slots (whole daemon only).
  uint64_t bursts = 0;
  uint64_t burstListeners = 0;
  uint64_t burstMemories = 0;
  /// Driver-managed buffers (memory domains, IDevice::allocate) held.
  uint64_t buffers = 0;
  /// The daemon's resident memory (VmRSS), bytes; 0 outside the admin socket.
  uint64_t residentBytes = 0;
  /// Time since the daemon started; 0 outside the admin socket.
  std::chrono::milliseconds uptime{0};

  /// What one application (the clients of one uid, all their processes and connections)
  /// holds and has used. The admin socket lists every application known to the daemon; a
  /// client socket only the caller's own.
  struct Application {
    uint32_t uid = 0;
    uint32_t weight = 1;  ///< its share of the driver relative to the others
    uint64_t connections = 0;
    uint64_t preparedModels = 0;
    uint64_t constantBytes = 0;
    uint64_t pools = 0;     ///< request pools and burst memory slots
    uint64_t requests = 0;  ///< running or waiting
    uint64_t bursts = 0;
    uint64_t buffers = 0;
    uint64_t arenaBytes = 0;  ///< execution arenas of its prepared models and bursts
    /// Time its preparations and executions held driver slots since the daemon started.
    std::chrono::microseconds driverTime{0};
  };
  std::vector<Application> applications;
};

/// Asks the daemon behind `device` (a Device from connect()) for its counters. Errors:
/// INVALID_ARGUMENT when `device` is not a connection to nnhald (an embedded driver);
/// DEVICE_UNAVAILABLE when the connection is gone.
Result<DaemonStats> getDaemonStats(const Device& device);

/// What a Device from connect() answers beyond the HAL (Device::daemonConnection): the
/// daemon's devices and counters. getDaemonStats and daemonDevices read it.
class DaemonConnection {
 public:
  /// As daemonDevices.
  virtual std::vector<std::string> devices() const = 0;
  /// As getDaemonStats.
  virtual Result<DaemonStats> stats() const = 0;

 protected:
  ~DaemonConnection() = default;
};

}  // namespace nnhal
