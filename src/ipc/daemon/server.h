// ipc/daemon/server.h — the nnhald service: accepts clients on a Unix domain socket and gives each
// its own Session over the daemon's embedded Device (docs/IPC_PROTOCOL.md).
//
// Each connection belongs to the application of its peer's uid (SO_PEERCRED,
// hal/application.h): its work runs as that application on the device's scheduler (fair
// share between applications), and its quotas are charged to it (ipc/daemon/quota.h).
// Connections are bounded (ClientLimits::maxConnections in all, perApplication.connections
// per uid, maxConnectionsPerProcess from one peer process): a connection beyond a limit is
// closed at once, with the reason logged (at most once a second). When accept() fails
// (e.g. the process ran out of descriptors), accepting pauses for 100 ms instead of spinning.
//
// An optional admin socket serves the same protocol; its sessions' GetStats report the whole
// daemon (every client's objects), where a client's socket reports only that client's own.
//
// Thread safety: listen() and stop() may be called from any thread; the io_context may be
// run by any number of threads.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "hal/driver_control.h"
#include "hal/lanes.h"
#include "ipc/daemon/client_limits.h"
#include "ipc/daemon/quota.h"
#include "ipc/daemon/session.h"
#include "nnhal/device.h"

namespace nnhal::ipc {

/// Whether some process accepts connections on the Unix socket file at `path` (a socket
/// file nobody listens on is stale: listen() replaces it).
bool someoneListens(const std::filesystem::path& path);

struct ServerOptions {
  std::filesystem::path socketPath;
  /// When not empty, a second socket whose clients see the daemon-wide statistics.
  std::filesystem::path adminSocketPath;
  /// Who may connect to the sockets the server creates. Connecting to a Unix socket needs
  /// write permission on its file: the mode and group are set after bind() and before
  /// listen(), so no client ever connects under other permissions. The admin socket keeps
  /// the daemon's own group.
  mode_t socketMode = 0660;
  std::optional<gid_t> socketGroup{};  ///< unset: the daemon's group
  mode_t adminSocketMode = 0600;
  /// Listening sockets handed over by a service manager (systemd socket activation): the
  /// server takes ownership of the descriptors and accepts on them as they are. Their files,
  /// modes and groups belong to the manager: never created, changed or removed here. -1:
  /// create the socket at socketPath / adminSocketPath.
  int listenFd = -1;
  int adminListenFd = -1;
  /// Largest frame payload accepted from a client; bigger frames close its session.
  uint32_t maxPayloadBytes = kDefaultMaxPayloadBytes;
  ClientLimits limits;
  /// Weights of applications (uid -> weight, 1 by default) in the driver's fair share; only
  /// for a device created by createDevice() (the scheduler's, actors/scheduler.h).
  std::map<uint32_t, uint32_t> applicationWeights;
  /// Records the handling of every frame clients send ("ipc" spans, nnhal/trace.h).
  std::shared_ptr<TraceRecorder> trace{};
  /// nnhald's compilation cache for clients that pass no cache files (ipc/daemon/client_cache.h):
  /// a folder per application under this root (the first device's; a further device's under
  /// root/devices/<its name>); empty, or a driver that cannot cache: none.
  std::filesystem::path clientCacheRoot;
  /// Models kept per application in it (its least recently used go first).
  uint32_t clientCacheEntries = 64;
  /// Sees each model a client asks to prepare once it is copied in and structurally valid
  /// (hal::validateModel), before the driver's own checks, so that models the driver refuses
  /// are seen too (nnhald --dump-models). Called on the client application's lane (its time
  /// counts against that client only), from several lanes at once; must not throw.
  ModelObserver onModelReceived{};
};

class Server {
 public:
  /// Serves `driver` (hal::createEmbeddedDriver): its Device, and its control for the
  /// driver's own checks and cancellation.
  Server(boost::asio::io_context& io, hal::EmbeddedDriver driver, ServerOptions options);
  /// Serves every driver of `drivers` (at least one; distinct device names): a client picks
  /// one by name at its handshake (ClientOptions::device), the first by default.
  Server(boost::asio::io_context& io, std::vector<hal::EmbeddedDriver> drivers,
         ServerOptions options);
  ~Server();

  /// Binds and listens on the socket path(s) (replacing a stale socket file nobody listens
  /// on), or adopts the inherited listening sockets, and starts accepting. Errors:
  /// GENERAL_FAILURE naming the path (or descriptor) and the reason.
  Result<void> listen();

  /// Graceful shutdown: stops accepting, lets every session finish its in-flight work and
  /// write the replies, then closes them. The io_context runs out of work afterwards.
  void stop();

  /// Daemon-wide object counts.
  Stats stats() const { return config_->counters->snapshot(); }
  /// The quotas and what each application holds.
  const Ledger& ledger() const { return *config_->ledger; }

 private:
  using Acceptor = boost::asio::local::stream_protocol::acceptor;
  using Socket = boost::asio::local::stream_protocol::socket;

  Result<void> listenOn(Acceptor& acceptor, const std::filesystem::path& path, mode_t mode,
                        std::optional<gid_t> group);
  Result<void> adopt(Acceptor& acceptor, int fd);
  void accept(Acceptor& acceptor, bool admin);
  /// Starts a session for `socket`, or closes it when a connection limit is reached.
  void admit(Socket socket, bool admin);
  /// Logs a refusal at most once a second (a flood must not flood the log).
  void logRefusal(const std::string& why);

  boost::asio::io_context& io_;
  /// Model intake off the io threads, one lane per application (SessionConfig::runIntake);
  /// joined last.
  hal::Lanes lanes_;
  Acceptor acceptor_;
  Acceptor adminAcceptor_;
  boost::asio::steady_timer acceptPause_;
  boost::asio::steady_timer adminAcceptPause_;
  ServerOptions options_;
  std::shared_ptr<SessionConfig> config_;
  /// Open connections, shared with the sessions' close callbacks (which may outlive us).
  struct Connections {
    std::mutex mutex;
    uint32_t total = 0;
    std::map<pid_t, uint32_t> byProcess;
  };
  std::shared_ptr<Connections> connections_ = std::make_shared<Connections>();
  std::mutex mutex_;
  std::vector<std::weak_ptr<Session>> sessions_;
  uint64_t nextSessionId_ = 1;
  bool stopped_ = false;
  std::chrono::steady_clock::time_point lastRefusalLog_{};
  uint64_t refusalsNotLogged_ = 0;
};

}  // namespace nnhal::ipc
