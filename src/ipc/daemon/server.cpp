#include "ipc/daemon/server.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <sys/resource.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>

#include "common/vlog.h"
#include "hal/driver_control.h"

namespace nnhal::ipc {
namespace {

/// The process and user at the other end of a Unix socket ({-1, -1, -1} when unknown).
ucred peerCredentials(int socket) {
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  if (::getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
    return {-1, static_cast<uid_t>(-1), static_cast<gid_t>(-1)};
  }
  return credentials;
}

constexpr auto kAcceptPause = std::chrono::milliseconds(100);

Limits limitsOf(const SharedLimits& s) {
  return {s.connections, s.preparedModels, s.constantBytes,    s.pools,     s.requests,
          s.bursts,      s.buffers,        s.fencedExecutions, s.replyBytes};
}

/// The quotas of the three holders. A connection's requests are bounded by its own queue
/// (maxRunning + maxQueued), its burst memories by maxBurstMemories per burst and its unread
/// replies by maxUnreadReplyBytes, so none is charged per connection.
std::shared_ptr<Ledger> makeLedger(const ClientLimits& limits) {
  const Limits perConnection{
      0, limits.maxPreparedModels, limits.maxConstantBytes, limits.maxPools,
      0, limits.maxBursts,         limits.maxBuffers,       limits.maxFencedExecutions,
      0};
  SharedLimits daemon = limits.daemon;
  if (daemon.connections == 0) daemon.connections = limits.maxConnections;
  if (daemon.pools == 0) {
    // Each pool keeps a descriptor: what the descriptor limit leaves beside the connections,
    // the bursts' two queues each, and a reserve for cache files and the daemon's own.
    rlimit files{};
    const uint64_t soft = ::getrlimit(RLIMIT_NOFILE, &files) == 0 ? files.rlim_cur : 1024;
    const uint64_t reserved = uint64_t{limits.maxConnections} + 2 * uint64_t{daemon.bursts} + 256;
    daemon.pools = static_cast<uint32_t>(
        std::min<uint64_t>(UINT32_MAX, soft > reserved + 256 ? soft - reserved : 256));
  }
  return std::make_shared<Ledger>(perConnection, limitsOf(limits.perApplication), limitsOf(daemon));
}

}  // namespace

bool someoneListens(const std::filesystem::path& path) {
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  return ::connect(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
}

Server::Server(boost::asio::io_context& io, hal::EmbeddedDriver driver, ServerOptions options)
    : Server(io, std::vector<hal::EmbeddedDriver>{std::move(driver)}, std::move(options)) {}

Server::Server(boost::asio::io_context& io, std::vector<hal::EmbeddedDriver> drivers,
               ServerOptions options)
    : io_(io),
      acceptor_(io),
      adminAcceptor_(io),
      acceptPause_(io),
      adminAcceptPause_(io),
      options_(std::move(options)),
      config_(std::make_shared<SessionConfig>()) {
  for (hal::EmbeddedDriver& driver : drivers) {
    ServedDevice served{std::move(driver.device), std::move(driver.control), nullptr};
    if (!options_.clientCacheRoot.empty() && options_.clientCacheEntries > 0 &&
        served.device->getCompilationCaching().available) {
      const std::filesystem::path root =
          config_->devices.empty()
              ? options_.clientCacheRoot
              : options_.clientCacheRoot / "devices" / served.device->getName();
      served.clientCache = std::make_shared<const ClientCache>(
          root, served.device->getNumberOfCacheFilesNeeded(), options_.clientCacheEntries);
    }
    config_->devices.push_back(std::move(served));
  }
  config_->counters = std::make_shared<ServerCounters>();
  config_->limits = options_.limits;
  config_->maxPayloadBytes = options_.maxPayloadBytes;
  config_->trace = options_.trace;
  config_->onModelReceived = options_.onModelReceived;
  config_->ledger = makeLedger(options_.limits);
  config_->runIntake = [lanes = &lanes_](hal::ApplicationId application,
                                         std::move_only_function<void()> job) {
    lanes->post(application, std::move(job));
  };
  for (const auto& [uid, weight] : options_.applicationWeights) {
    for (const ServedDevice& served : config_->devices) {
      served.driver->setApplicationWeight(uid, weight);
    }
  }
}

Server::~Server() {
  boost::system::error_code ec;
  acceptor_.close(ec);
  adminAcceptor_.close(ec);
}

Result<void> Server::listenOn(Acceptor& acceptor, const std::filesystem::path& path, mode_t mode,
                              std::optional<gid_t> group) {
  if (path.native().size() >= sizeof(sockaddr_un{}.sun_path)) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "socket path '" + path.string() + "' is longer than " +
                    std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "'" + path.string() + "' exists and is not a socket");
    }
    if (someoneListens(path)) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "another daemon is listening on '" + path.string() + "'");
    }
    ::unlink(path.c_str());
  }
  boost::system::error_code ec;
  const boost::asio::local::stream_protocol::endpoint endpoint(path.string());
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (ec) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot listen on '" + path.string() + "': " + ec.message());
  }
  // Bound but not listening: nobody can connect until the permissions are right.
  if (group && ::chown(path.c_str(), static_cast<uid_t>(-1), *group) != 0) {
    const int error = errno;
    acceptor.close(ec);
    ::unlink(path.c_str());
    return fail(ErrorStatus::GENERAL_FAILURE, "cannot give '" + path.string() + "' to group " +
                                                  std::to_string(*group) + ": " +
                                                  std::strerror(error));
  }
  if (::chmod(path.c_str(), mode) != 0) {
    const int error = errno;
    acceptor.close(ec);
    ::unlink(path.c_str());
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot set the mode of '" + path.string() + "': " + std::strerror(error));
  }
  acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor.close(ec);
    ::unlink(path.c_str());
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot listen on '" + path.string() + "': " + ec.message());
  }
  return {};
}

Result<void> Server::adopt(Acceptor& acceptor, int fd) {
  int listening = 0;
  socklen_t length = sizeof(listening);
  sockaddr_un address{};
  socklen_t addressLength = sizeof(address);
  if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &length) != 0 || listening == 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &addressLength) != 0 ||
      address.sun_family != AF_UNIX) {
    ::close(fd);  // ours now, even when refused
    return fail(ErrorStatus::GENERAL_FAILURE,
                "descriptor " + std::to_string(fd) + " is not a listening Unix domain socket");
  }
  boost::system::error_code ec;
  acceptor.assign(boost::asio::local::stream_protocol(), fd, ec);
  if (ec) {
    ::close(fd);
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot accept on descriptor " + std::to_string(fd) + ": " + ec.message());
  }
  return {};
}

Result<void> Server::listen() {
  // The admin socket first: once clients can connect, so can their observers.
  Result<void> admin;
  if (options_.adminListenFd >= 0) {
    admin = adopt(adminAcceptor_, options_.adminListenFd);
  } else if (!options_.adminSocketPath.empty()) {
    admin = listenOn(adminAcceptor_, options_.adminSocketPath, options_.adminSocketMode, {});
  }
  if (!admin) {
    if (options_.listenFd >= 0) ::close(options_.listenFd);  // owned, never to be adopted
    return admin;
  }
  if (options_.listenFd >= 0) {
    NNHAL_TRY(adopt(acceptor_, options_.listenFd));
  } else {
    NNHAL_TRY(listenOn(acceptor_, options_.socketPath, options_.socketMode, options_.socketGroup));
  }
  if (adminAcceptor_.is_open()) accept(adminAcceptor_, true);
  accept(acceptor_, false);
  return {};
}

void Server::logRefusal(const std::string& why) {
  const auto now = std::chrono::steady_clock::now();
  if (now - lastRefusalLog_ < std::chrono::seconds(1)) {
    ++refusalsNotLogged_;
    return;
  }
  if (refusalsNotLogged_ > 0) {
    spdlog::warn("{} ({} more refusals in the last second)", why, refusalsNotLogged_);
  } else {
    spdlog::warn("{}", why);
  }
  lastRefusalLog_ = now;
  refusalsNotLogged_ = 0;
}

void Server::admit(Socket socket, bool admin) {
  const ucred credentials = peerCredentials(socket.native_handle());
  const pid_t peer = credentials.pid;
  const ClientLimits& limits = options_.limits;
  // The application is the peer's uid (hal/application.h): its processes and connections
  // share one fair share of the driver and one set of quotas.
  std::shared_ptr<Account> account =
      config_->ledger->account(static_cast<hal::ApplicationId>(credentials.uid));
  Charge connection;
  {
    std::lock_guard<std::mutex> lock(connections_->mutex);
    std::string refusal;
    if (!admin && connections_->byProcess[peer] >= limits.maxConnectionsPerProcess) {
      refusal = "connection refused: process " + std::to_string(peer) + " has " +
                std::to_string(connections_->byProcess[peer]) +
                " connections open, the most allowed";
    }
    if (refusal.empty()) {
      // Per application and in all (the admin socket's connections count in all only).
      auto charged = config_->ledger->charge(nullptr, admin ? std::shared_ptr<Account>() : account,
                                             Resource::kConnections);
      if (charged) {
        connection = std::move(*charged);
      } else {
        refusal = "connection of uid " + std::to_string(credentials.uid) +
                  " refused: " + charged.error().message;
      }
    }
    if (!refusal.empty()) {
      if (connections_->byProcess[peer] == 0) connections_->byProcess.erase(peer);
      logRefusal(refusal);
      boost::system::error_code ec;
      socket.close(ec);
      return;
    }
    ++connections_->total;
    ++connections_->byProcess[peer];
  }
  const uint64_t id = nextSessionId_++;
  auto session = std::make_shared<Session>(std::move(socket), config_, id, admin,
                                           std::move(account), std::move(connection));
  std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
  sessions_.push_back(session);
  spdlog::debug("session {}: connected (process {}, uid {})", id, peer, credentials.uid);
  NNHAL_VLOG(Ipc, "session {}: connected (process {}, uid {}{})", id, peer, credentials.uid,
             admin ? ", admin socket" : "");
  session->onClosed([connections = connections_, peer] {
    std::lock_guard<std::mutex> lock(connections->mutex);
    --connections->total;
    auto found = connections->byProcess.find(peer);
    if (found != connections->byProcess.end() && --found->second == 0) {
      connections->byProcess.erase(found);
    }
  });
  session->start();
}

void Server::accept(Acceptor& acceptor, bool admin) {
  acceptor.async_accept([this, &acceptor, admin](boost::system::error_code ec, Socket socket) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_ || !acceptor.is_open()) return;
    if (ec) {
      if (ec == boost::asio::error::operation_aborted) return;
      // Typically EMFILE/ENFILE: the pending connection stays in the backlog. Pause instead
      // of retrying at once, which would spin and flood the log.
      logRefusal("accept failed: " + ec.message() + "; pausing for 100 ms");
      auto& pause = admin ? adminAcceptPause_ : acceptPause_;
      pause.expires_after(kAcceptPause);
      pause.async_wait([this, &acceptor, admin](boost::system::error_code waited) {
        if (waited) return;
        accept(acceptor, admin);
      });
      return;
    }
    admit(std::move(socket), admin);
    accept(acceptor, admin);
  });
}

void Server::stop() {
  boost::asio::post(io_, [this] {
    std::vector<std::shared_ptr<Session>> live;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
      for (const auto& weak : sessions_) {
        if (auto session = weak.lock()) live.push_back(std::move(session));
      }
      sessions_.clear();
    }
    boost::system::error_code ec;
    acceptor_.close(ec);
    adminAcceptor_.close(ec);
    acceptPause_.cancel();
    adminAcceptPause_.cancel();
    // Inherited sockets' files belong to the service manager.
    if (options_.listenFd < 0) ::unlink(options_.socketPath.c_str());
    if (options_.adminListenFd < 0 && !options_.adminSocketPath.empty()) {
      ::unlink(options_.adminSocketPath.c_str());
    }
    spdlog::info("shutting down: {} sessions finish their work", live.size());
    for (const auto& session : live) session->drain();
  });
}

}  // namespace nnhal::ipc
