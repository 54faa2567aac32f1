// Client code that a test runs in another process, "a child": another application of nnhald
// (another uid), a client killed in the middle of its calls, a flood from a second process.
//
// A child is this test binary started anew (posix_spawn of /proc/self/exe) running one named
// role, never a plain fork() of the test process. The test process is threaded (the client
// library's readers, watchdogs), and a forked child inherits every lock another thread held
// at the fork. glibc's malloc takes its own locks around fork(), but the AddressSanitizer
// runtime of clang 16 does not (LLVM 18 added it: llvm-project#75290), so a forked child
// could wait forever on its first allocation; a new program inherits no lock.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace nnhal::ipc::testing {

/// A role: the client code of one kind of child. Gets the strings the test passed and
/// returns the child's exit code (0: it did its part; each test documents its others).
using ChildRole = int (*)(const std::vector<std::string>& args);

/// Registers `role` under `name`; call it at static initialization, once per name:
/// `[[maybe_unused]] const bool registered = registerChildRole("name", &role);`.
bool registerChildRole(const char* name, ChildRole role);

/// When the command line asks for a role (`--child-role NAME [--as-another-application]
/// ARGS...`), runs it and ends the process with its exit code; a name nobody registered
/// gives 101. Otherwise returns, and the tests run.
void runChildRoleIfAsked(int argc, char** argv);

/// Exit code of a child asked to run as another application that could not become one.
inline constexpr int kChildCouldNotChangeUser = 100;

/// One child process running a role. Descriptors the test process has open without
/// O_CLOEXEC (such as both ends of a ::pipe()) are the child's too, under the same numbers:
/// pass a number as an argument. Killed (SIGKILL) and reaped on destruction.
class ChildProcess {
 public:
  /// Starts `role` with `args`. With `asAnotherApplication`, a test process running as root
  /// starts a child that runs as uid kOtherApplicationUid (ipc_test_util.h); without root
  /// the child runs as the test's own user.
  ChildProcess(const char* role, const std::vector<std::string>& args,
               bool asAnotherApplication = false);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  bool started() const { return pid_ > 0 || status_.has_value(); }
  pid_t pid() const { return pid_; }

  /// Waits up to `limit` for the child to exit: its exit code; -2 when a signal ended it,
  /// -3 when it was still running at `limit` (it is then killed: a hung child fails its own
  /// test instead of the suite's timeout ending every test after it), -4 when it never
  /// started.
  int wait(std::chrono::seconds limit = std::chrono::seconds(120));

  /// Kills the child (SIGKILL) and reaps it; nothing when it already exited.
  void kill();

 private:
  pid_t pid_ = -1;
  std::optional<int> status_;  // once reaped
};

}  // namespace nnhal::ipc::testing
