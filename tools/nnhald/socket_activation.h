// nnhald/socket_activation.h — systemd's side of nnhald: the listening sockets a service
// manager passes (socket activation, sd_listen_fds(3)) and the readiness notifications it
// waits for (Type=notify, sd_notify(3)). Both use libsystemd and need no systemd at all: a
// test passes sockets with LISTEN_FDS / LISTEN_PID and reads NOTIFY_SOCKET itself.
#pragma once

#include <string>

#include "nnhal/status.h"

namespace nnhal::daemon {

/// The listening sockets passed to this process (descriptors from 3 on, LISTEN_FDS of them,
/// when LISTEN_PID is this process). Each must be a listening Unix stream socket. The one
/// named "admin" (FileDescriptorName=admin in the socket unit) is the admin socket; exactly
/// one other is the client socket. -1: not passed.
struct InheritedSockets {
  int client = -1;
  int admin = -1;
  std::string clientPath;  ///< the client socket's file (getsockname), for logs
  std::string adminPath;
  bool any() const { return client >= 0 || admin >= 0; }
};

/// Takes the passed sockets and clears LISTEN_FDS / LISTEN_PID / LISTEN_FDNAMES (so that no
/// child inherits them). Nothing passed: an empty InheritedSockets. Errors: GENERAL_FAILURE
/// when a passed descriptor is not a listening Unix stream socket, when there is no client
/// socket or more than one, or when LISTEN_FDS cannot be read; every passed descriptor is
/// closed then.
Result<InheritedSockets> takeInheritedSockets();

/// Whether sockets are passed, without taking them (nnhald --check-config).
bool socketsArePassed();

/// Tells the service manager nnhald is ready, with a one-line status; nothing happens when
/// no manager asked (NOTIFY_SOCKET unset).
void notifyReady(const std::string& status);
/// Tells the service manager nnhald is stopping.
void notifyStopping();

}  // namespace nnhal::daemon
