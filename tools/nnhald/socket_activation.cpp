#include "nnhald/socket_activation.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace nnhal::daemon {
namespace {

/// The file a Unix socket is bound to, or "(unnamed)".
std::string socketFile(int fd) {
  sockaddr_un address{};
  socklen_t length = sizeof(address);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 ||
      length <= offsetof(sockaddr_un, sun_path) || address.sun_path[0] == '\0') {
    return "(unnamed)";
  }
  return std::string(address.sun_path,
                     ::strnlen(address.sun_path, length - offsetof(sockaddr_un, sun_path)));
}

}  // namespace

Result<InheritedSockets> takeInheritedSockets() {
  char** names = nullptr;
  const int count = sd_listen_fds_with_names(/*unset_environment=*/1, &names);
  if (count < 0) {
    return fail(
        ErrorStatus::GENERAL_FAILURE,
        std::string("cannot read the sockets passed by the service manager (LISTEN_FDS): ") +
            std::strerror(-count));
  }
  std::vector<std::string> fdNames;
  for (int i = 0; i < count; ++i) {
    fdNames.emplace_back(names != nullptr && names[i] != nullptr ? names[i] : "");
  }
  if (names != nullptr) {
    for (int i = 0; i < count; ++i) std::free(names[i]);
    std::free(names);
  }
  InheritedSockets sockets;
  std::string problem;
  for (int i = 0; i < count && problem.empty(); ++i) {
    const int fd = SD_LISTEN_FDS_START + i;
    if (sd_is_socket_unix(fd, SOCK_STREAM, /*listening=*/1, nullptr, 0) <= 0) {
      problem = "descriptor " + std::to_string(fd) + " ('" + fdNames[i] +
                "') passed by the service manager is not a listening Unix stream socket";
    } else if (fdNames[i] == "admin") {
      if (sockets.admin >= 0) problem = "two sockets named 'admin' were passed";
      sockets.admin = fd;
      sockets.adminPath = socketFile(fd);
    } else {
      if (sockets.client >= 0) {
        problem = "more than one client socket was passed (descriptors " +
                  std::to_string(sockets.client) + " and " + std::to_string(fd) +
                  "); name the admin socket FileDescriptorName=admin";
      }
      sockets.client = fd;
      sockets.clientPath = socketFile(fd);
    }
  }
  if (problem.empty() && count > 0 && sockets.client < 0) {
    problem = "the service manager passed no client socket (only 'admin')";
  }
  if (!problem.empty()) {
    for (int i = 0; i < count; ++i) ::close(SD_LISTEN_FDS_START + i);
    return fail(ErrorStatus::GENERAL_FAILURE, problem);
  }
  return sockets;
}

bool socketsArePassed() { return sd_listen_fds(/*unset_environment=*/0) > 0; }

void notifyReady(const std::string& status) {
  sd_notify(/*unset_environment=*/0, ("READY=1\nSTATUS=" + status).c_str());
}

void notifyStopping() { sd_notify(/*unset_environment=*/0, "STOPPING=1\nSTATUS=stopping"); }

}  // namespace nnhal::daemon
