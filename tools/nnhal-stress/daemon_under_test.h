// nnhal-stress/daemon_under_test.h — the nnhald a stress run hammers: one it started itself
// (on a temporary socket, killed at the end) or one already running (--connect), found by its
// socket's peer credentials. Either way the run can tell at any moment whether it still lives.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "nnhal/status.h"

namespace nnhal::stress {

class DaemonUnderTest {
 public:
  /// Starts `binary` with `args` (and `environment`, "NAME=VALUE" entries added to this
  /// process's) on a fresh socket and a cache directory under a temporary directory and waits
  /// (10 s at most) until it accepts. Errors: GENERAL_FAILURE when it does not come up.
  static Result<std::unique_ptr<DaemonUnderTest>> start(
      const std::filesystem::path& binary, const std::vector<std::string>& args,
      const std::vector<std::string>& environment = {});
  /// The daemon listening on `socket`; its pid comes from SO_PEERCRED. Errors:
  /// DEVICE_UNAVAILABLE when nothing accepts there.
  static Result<std::unique_ptr<DaemonUnderTest>> attach(const std::filesystem::path& socket);
  ~DaemonUnderTest();

  const std::filesystem::path& socket() const { return socket_; }
  pid_t pid() const { return pid_; }
  /// True while the process exists (and, for one we started, has not exited) and its socket
  /// accepts connections.
  bool alive();
  /// How it ended, for a daemon we started that died ("killed by signal 11", "exited with
  /// 1"); empty otherwise.
  const std::string& exitDescription() const { return exit_; }

 private:
  DaemonUnderTest() = default;
  std::filesystem::path directory_;  ///< ours to remove (started daemons)
  std::filesystem::path socket_;
  pid_t pid_ = -1;
  bool owned_ = false;
  bool exited_ = false;
  std::string exit_;
};

/// True when a connection to `socket` is accepted.
bool socketAccepts(const std::filesystem::path& socket);

}  // namespace nnhal::stress
