// ipc/server.h — the nnhald service: accepts clients on a Unix domain socket and gives each
// its own Session over the daemon's embedded Device (docs/IPC_PROTOCOL.md).
//
// Thread safety: listen() and stop() may be called from any thread; the io_context may be
// run by any number of threads.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <boost/asio/io_context.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <filesystem>
#include <memory>
#include <mutex>
#include <vector>

#include "ipc/session.h"
#include "nnhal/device.h"

namespace nnhal::ipc {

struct ServerOptions {
  std::filesystem::path socketPath;
  /// Largest frame payload accepted from a client; bigger frames close its session.
  uint32_t maxPayloadBytes = kDefaultMaxPayloadBytes;
};

class Server {
 public:
  Server(boost::asio::io_context& io, std::shared_ptr<Device> device, ServerOptions options);
  ~Server();

  /// Binds and listens on the socket path (replacing a stale socket file nobody listens on)
  /// and starts accepting. Errors: GENERAL_FAILURE naming the path and the reason.
  Result<void> listen();

  /// Graceful shutdown: stops accepting, lets every session finish its in-flight work and
  /// write the replies, then closes them. The io_context runs out of work afterwards.
  void stop();

  Stats stats() const { return counters_->snapshot(); }

 private:
  void accept();

  boost::asio::io_context& io_;
  boost::asio::local::stream_protocol::acceptor acceptor_;
  std::shared_ptr<Device> device_;
  ServerOptions options_;
  std::shared_ptr<ServerCounters> counters_ = std::make_shared<ServerCounters>();
  std::mutex mutex_;
  std::vector<std::weak_ptr<Session>> sessions_;
  uint64_t nextSessionId_ = 1;
  bool stopped_ = false;
};

}  // namespace nnhal::ipc
