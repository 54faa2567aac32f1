// libFuzzer target: bytes (frames and messages, with descriptors) -> a daemon session. An
// in-process nnhald Server listens on a private socket; each input is one client connection
// that writes its chunks, each with the descriptors its first byte asks for, then closes its
// sending side and reads replies until the daemon closes the connection. Any outcome but a
// crash, a sanitizer report or a hang is fine.
//
// Input (fuzz/fuzz_input.h): up to 8 parts, each [u8 descriptors][stream bytes]; the low two
// bits of the first byte give how many descriptors (fresh 4 KiB shared-memory regions, or for
// bit 2 the read end of a pipe nobody writes) travel with that chunk.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fuzz/fuzz_input.h"
#include "ipc/daemon/server.h"
#include "nnhal/device.h"
#include "nnhal/memory.h"

namespace {

using namespace nnhal;

char socketFile[108];

/// The daemon under test, alive for the whole fuzzing process and never torn down: at exit
/// the libraries' own statics (spdlog's registry) may already be gone, and a graceful stop
/// would log through them.
class FuzzDaemon {
 public:
  FuzzDaemon()
      : path_("/tmp/nnhal-fuzz-session-" + std::to_string(::getpid()) + ".sock"),
        work_(boost::asio::make_work_guard(io_)) {
    // Refusals are expected by the thousand here.
    spdlog::set_level(spdlog::level::critical);
    DeviceOptions deviceOptions;
    deviceOptions.runtimeThreads = 2;
    deviceOptions.kernelThreads = 1;
    deviceOptions.maxExecutionBytes = 64 << 20;
    ipc::ServerOptions options;
    options.socketPath = path_;
    options.limits.frameTimeout = std::chrono::milliseconds(200);
    server_ =
        std::make_unique<ipc::Server>(io_, *hal::createEmbeddedDriver(deviceOptions), options);
    if (!server_->listen()) std::abort();
    // The socket file goes at exit (plain memory, nothing that could already be destroyed).
    std::snprintf(socketFile, sizeof(socketFile), "%s", path_.c_str());
    std::atexit([] { ::unlink(socketFile); });
    for (auto& thread : threads_) thread = std::thread([this] { io_.run(); });
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  std::unique_ptr<ipc::Server> server_;
  std::thread threads_[2];
};

int connectTo(const std::string& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

/// Sends `bytes` with `fds` attached to the first byte; false when the daemon closed.
bool sendChunk(int socket, std::span<const uint8_t> bytes, const std::vector<int>& fds) {
  if (bytes.empty()) return true;
  iovec iov{const_cast<uint8_t*>(bytes.data()), bytes.size()};
  msghdr message{};
  message.msg_iov = &iov;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 8)];
  if (!fds.empty()) {
    message.msg_control = control;
    message.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* header = CMSG_FIRSTHDR(&message);
    header->cmsg_level = SOL_SOCKET;
    header->cmsg_type = SCM_RIGHTS;
    header->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(header), fds.data(), sizeof(int) * fds.size());
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::sendmsg(socket, &message, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
    iov.iov_base = const_cast<uint8_t*>(bytes.data()) + sent;
    iov.iov_len = bytes.size() - sent;
    message.msg_control = nullptr;  // descriptors go with the first byte only
    message.msg_controllen = 0;
  }
  return true;
}

/// Reads until the daemon closes the connection or `limit` passes.
void drain(int socket, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  char buffer[65536];
  while (std::chrono::steady_clock::now() < until) {
    pollfd p{socket, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = ::recv(socket, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n == 0) return;
    if (n < 0 && errno != EAGAIN && errno != EINTR) return;
    // Descriptors the daemon sends back (sync fences) are closed with the socket's queue.
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static FuzzDaemon* const daemon = new FuzzDaemon;
  const int socket = connectTo(daemon->path());
  if (socket < 0) return 0;
  for (std::span<const uint8_t> part : fuzz::splitParts({data, size}, 8)) {
    if (part.empty()) continue;
    const uint8_t control = part[0];
    std::vector<int> fds;
    std::vector<Memory> regions;
    int pipeFds[2] = {-1, -1};
    for (int i = 0; i < (control & 3); ++i) {
      auto memory = Memory::create(4096);
      if (!memory) continue;
      fds.push_back(memory->fd());
      regions.push_back(std::move(*memory));
    }
    if ((control & 4) != 0 && ::pipe2(pipeFds, O_CLOEXEC) == 0) fds.push_back(pipeFds[0]);
    const bool open = sendChunk(socket, part.subspan(1), fds);
    for (int fd : pipeFds) {
      if (fd >= 0) ::close(fd);
    }
    if (!open) break;
  }
  ::shutdown(socket, SHUT_WR);
  drain(socket, std::chrono::milliseconds(2000));
  ::close(socket);
  return 0;
}
