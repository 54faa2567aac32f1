#include "ipc/server.h"

#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>

namespace nnhal::ipc {
namespace {

/// Whether some process accepts connections on the socket at `path`.
bool someoneListens(const std::filesystem::path& path) {
  UniqueFd probe(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  return ::connect(probe.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
}

}  // namespace

Server::Server(boost::asio::io_context& io, std::shared_ptr<Device> device, ServerOptions options)
    : io_(io), acceptor_(io), device_(std::move(device)), options_(std::move(options)) {}

Server::~Server() {
  boost::system::error_code ec;
  acceptor_.close(ec);
}

Result<void> Server::listen() {
  const std::filesystem::path& path = options_.socketPath;
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
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot listen on '" + path.string() + "': " + ec.message());
  }
  accept();
  return {};
}

void Server::accept() {
  acceptor_.async_accept(
      [this](boost::system::error_code ec, boost::asio::local::stream_protocol::socket socket) {
        if (ec) {
          if (ec != boost::asio::error::operation_aborted) {
            spdlog::warn("accept failed: {}", ec.message());
          }
          std::lock_guard<std::mutex> lock(mutex_);
          if (stopped_ || !acceptor_.is_open()) return;
        } else {
          std::lock_guard<std::mutex> lock(mutex_);
          if (stopped_) return;
          const uint64_t id = nextSessionId_++;
          auto session = std::make_shared<Session>(std::move(socket), device_, counters_,
                                                   options_.maxPayloadBytes, id);
          std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
          sessions_.push_back(session);
          spdlog::debug("session {}: connected", id);
          session->start();
        }
        accept();
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
    ::unlink(options_.socketPath.c_str());
    spdlog::info("shutting down: {} sessions finish their work", live.size());
    for (const auto& session : live) session->drain();
  });
}

}  // namespace nnhal::ipc
