// nnhald as a service (docs/DEPLOYMENT.md): socket permissions and group, socket activation
// and readiness notification the way systemd does them (LISTEN_FDS / LISTEN_PID /
// NOTIFY_SOCKET, without systemd), --check-config, and `nnhal stats`.
#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ipc/ipc_test_util.h"
#include "nnhal/client.h"
#include "tools/cli_test_util.h"

namespace nnhal::ipc {
namespace {

using namespace testing;
using tools::cli_test::runNnhal;
using tools::cli_test::runShell;

constexpr gid_t kSocketGroup = 4242;  // need not exist in /etc/group
constexpr uid_t kNobody = 65534;

sockaddr_un unixAddress(const fs::path& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  return address;
}

/// A listening Unix stream socket at `path`, as a service manager creates it.
int listeningSocket(const fs::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  const sockaddr_un address = unixAddress(path);
  EXPECT_EQ(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
  EXPECT_EQ(::listen(fd, 16), 0);
  return fd;
}

/// In a child process running as `uid` with `groups` only: connect() to `path`; the child's
/// exit code is 0 when it connected, else errno.
int connectAs(const fs::path& path, uid_t uid, std::vector<gid_t> groups) {
  const sockaddr_un address = unixAddress(path);
  const pid_t child = ::fork();
  if (child == 0) {
    // Only async-signal-safe calls from here on.
    if (::setgroups(groups.size(), groups.data()) != 0 || ::setgid(uid) != 0 ||
        ::setuid(uid) != 0) {
      ::_exit(120);
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof(address));
    ::_exit(rc == 0 ? 0 : errno);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(DaemonService, SocketGetsTheModeAndGroupAskedFor) {
  Daemon daemon({"--socket-mode", "0660", "--socket-group", std::to_string(kSocketGroup)});
  ASSERT_TRUE(daemon.running());
  struct stat st {};
  ASSERT_EQ(::stat(daemon.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  EXPECT_EQ(st.st_gid, kSocketGroup);
  ASSERT_EQ(::stat(daemon.adminSocket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u) << "the admin socket stays the daemon user's";
}

TEST(DaemonService, AMemberOfTheSocketGroupConnectsAndOthersDoNot) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run clients as another user";
  Daemon daemon({"--socket-mode", "0660", "--socket-group", std::to_string(kSocketGroup)});
  ASSERT_TRUE(daemon.running());
  // The test's folder must be searchable by the other user; the socket's mode decides.
  ASSERT_EQ(::chmod(daemon.socket().parent_path().c_str(), 0711), 0);
  EXPECT_EQ(connectAs(daemon.socket(), kNobody, {kSocketGroup}), 0);
  EXPECT_EQ(connectAs(daemon.socket(), kNobody, {}), EACCES);
  EXPECT_EQ(connectAs(daemon.adminSocket(), kNobody, {kSocketGroup}), EACCES);
}

TEST(DaemonService, BadModesAndUnknownGroupsStopTheStart) {
  TempDir dir;
  const std::string nnhald = NNHALD_PATH;
  const std::string socket = (dir.path() / "s.sock").string();
  auto mode = runShell(nnhald + " --socket " + socket + " --socket-mode 0999 2>&1");
  EXPECT_EQ(mode.exitCode, 1) << mode.output;
  EXPECT_NE(mode.output.find("'0999' is not a socket mode"), std::string::npos) << mode.output;
  auto group =
      runShell(nnhald + " --socket " + socket + " --socket-group no-such-group-nnhal 2>&1");
  EXPECT_EQ(group.exitCode, 1) << group.output;
  EXPECT_NE(group.output.find("no group named 'no-such-group-nnhal'"), std::string::npos)
      << group.output;
  EXPECT_FALSE(fs::exists(socket)) << "nothing is created when the options are wrong";
}

TEST(DaemonService, CheckConfigReportsEveryProblemWithoutStarting) {
  TempDir dir;
  const std::string nnhald = NNHALD_PATH;
  const fs::path socket = dir.path() / "s.sock";
  auto good = runShell(nnhald + " --check-config --socket " + socket.string() + " --socket-group " +
                       std::to_string(kSocketGroup) + " --cache-dir " +
                       (dir.path() / "cache").string() + " 2>&1");
  EXPECT_EQ(good.exitCode, 0) << good.output;
  EXPECT_NE(good.output.find("configuration OK"), std::string::npos) << good.output;
  EXPECT_NE(good.output.find("mode 0660, group 4242"), std::string::npos) << good.output;
  EXPECT_FALSE(fs::exists(socket)) << "--check-config must not listen";
  EXPECT_FALSE(fs::exists(dir.path() / "cache")) << "--check-config must not create folders";

  auto bad = runShell(nnhald + " --check-config --socket " + (dir.path() / "no/s.sock").string() +
                      " --socket-mode 1x --socket-group no-such-group-nnhal --trace " +
                      dir.path().string() + " 2>&1");
  EXPECT_EQ(bad.exitCode, 1) << bad.output;
  for (const char* expected :
       {"folder '", "does not exist", "'1x' is not a socket mode", "no group named", "--trace '"}) {
    EXPECT_NE(bad.output.find(expected), std::string::npos) << expected << "\n" << bad.output;
  }
  EXPECT_EQ(bad.output.find("configuration OK"), std::string::npos);

  auto missing = runShell(nnhald + " --check-config 2>&1");
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.output.find("--socket is required"), std::string::npos) << missing.output;

  Daemon running;
  ASSERT_TRUE(running.running());
  auto taken = runShell(nnhald + " --check-config --socket " + running.socket().string() + " 2>&1");
  EXPECT_EQ(taken.exitCode, 1);
  EXPECT_NE(taken.output.find("another daemon is listening"), std::string::npos) << taken.output;
}

TEST(DaemonService, CheckConfigFindsAGroupTheDaemonCannotGiveItsSocket) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run nnhald as another user";
  const std::string asNobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (runShell(asNobody + "test -x " + std::string(NNHALD_PATH) + " 2>/dev/null").exitCode != 0) {
    GTEST_SKIP() << "setpriv missing, or nnhald not reachable by another user from here";
  }
  TempDir dir;
  ASSERT_EQ(::chmod(dir.path().c_str(), 0777), 0);
  auto check = runShell(asNobody + NNHALD_PATH + " --check-config --socket " +
                        (dir.path() / "s.sock").string() + " --socket-group " +
                        std::to_string(kSocketGroup) + " 2>&1");
  EXPECT_EQ(check.exitCode, 1) << check.output;
  EXPECT_NE(check.output.find("not root and not a member of that group"), std::string::npos)
      << check.output;
}

/// nnhald started the way systemd starts a socket-activated Type=notify service: the
/// listening sockets as descriptors 3.. with LISTEN_FDS / LISTEN_PID / LISTEN_FDNAMES, and
/// NOTIFY_SOCKET naming a datagram socket that receives READY=1 and STOPPING=1.
class ActivatedDaemon {
 public:
  ActivatedDaemon(std::vector<int> fds, const std::string& names,
                  std::vector<std::string> extraArgs = {}) {
    notifyPath_ = dir_.path() / "notify";
    notify_ = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    const sockaddr_un address = unixAddress(notifyPath_);
    EXPECT_EQ(::bind(notify_, reinterpret_cast<const sockaddr*>(&address), sizeof(address)), 0);
    timeval wait{10, 0};
    ::setsockopt(notify_, SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof(wait));

    std::vector<std::string> args = {NNHALD_PATH, "--log-level", "error", "--kernel-threads", "1"};
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    std::vector<std::string> env = {
        "LISTEN_FDS=" + std::to_string(fds.size()), "LISTEN_FDNAMES=" + names,
        "NOTIFY_SOCKET=" + notifyPath_.string(), "LISTEN_PID=" + std::string(20, ' ')};
    std::vector<char*> argv, envp;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    for (std::string& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    char* pidText = env.back().data() + std::strlen("LISTEN_PID=");
    pid_ = ::fork();
    if (pid_ == 0) {
      // Async-signal-safe only: descriptors to 3.., the pid written by hand, exec.
      // Out of the way first, so that no source is overwritten before it is moved.
      for (size_t i = 0; i < fds.size(); ++i) {
        if (::dup2(fds[i], 200 + static_cast<int>(i)) < 0) ::_exit(121);
      }
      for (size_t i = 0; i < fds.size(); ++i) {
        if (::dup2(200 + static_cast<int>(i), 3 + static_cast<int>(i)) < 0) ::_exit(121);
      }
      char digits[20];
      int n = 0;
      for (pid_t p = ::getpid(); p > 0; p /= 10) digits[n++] = static_cast<char>('0' + p % 10);
      for (int i = 0; i < n; ++i) pidText[i] = digits[n - 1 - i];
      pidText[n] = '\0';
      ::execve(argv[0], argv.data(), envp.data());
      ::_exit(127);
    }
  }
  ~ActivatedDaemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(notify_);
  }
  /// The next notification (e.g. "READY=1\nSTATUS=..."), or "" after 10 s.
  std::string nextNotification() {
    char buffer[1024];
    const ssize_t n = ::recv(notify_, buffer, sizeof(buffer), 0);
    return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
  }
  /// Exit status after SIGTERM (or the exit it already made).
  int stop(int signal = SIGTERM) {
    if (signal != 0) ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

 private:
  TempDir dir_;
  fs::path notifyPath_;
  int notify_ = -1;
  pid_t pid_ = -1;
};

TEST(DaemonService, SocketActivationServesThePassedSocketsAndNotifiesReadiness) {
  TempDir dir;
  const fs::path clientPath = dir.path() / "nnhald.sock";
  const fs::path adminPath = dir.path() / "admin.sock";
  const int client = listeningSocket(clientPath);
  const int admin = listeningSocket(adminPath);
  ActivatedDaemon daemon({client, admin}, "nnhald:admin");
  ::close(client);
  ::close(admin);
  const std::string ready = daemon.nextNotification();
  EXPECT_NE(ready.find("READY=1"), std::string::npos) << ready;
  EXPECT_NE(ready.find("listening on " + clientPath.string()), std::string::npos) << ready;

  auto device = connect(clientPath);
  ASSERT_TRUE(device) << device.error().message;
  auto prepared = (*device)->prepareModel(addModel());
  ASSERT_TRUE(prepared) << prepared.error().message;
  AddRequest r = addRequest();
  ASSERT_TRUE((*prepared)->executeSynchronously(r.request));
  EXPECT_EQ(r.out()[3], 3.5f + 30.0f);

  auto observer = connect(adminPath);
  ASSERT_TRUE(observer) << observer.error().message;
  auto stats = getDaemonStats(**observer);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_TRUE(stats->wholeDaemon) << "the descriptor named 'admin' is the admin socket";
  EXPECT_EQ(stats->clients, 2u);
  EXPECT_EQ(stats->preparedModels, 1u);

  observer->reset();
  prepared->reset();
  device->reset();
  EXPECT_EQ(daemon.stop(SIGTERM), 0);
  EXPECT_NE(daemon.nextNotification().find("STOPPING=1"), std::string::npos);
  EXPECT_TRUE(fs::exists(clientPath)) << "the passed sockets' files belong to the manager";
}

TEST(DaemonService, APassedDescriptorThatIsNotAListeningSocketIsRefused) {
  TempDir dir;
  const int notListening = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ActivatedDaemon daemon({notListening}, "nnhald");
  ::close(notListening);
  EXPECT_EQ(daemon.stop(0), 1);

  // --socket naming the passed socket by another path is fine; naming another file is a
  // configuration mistake.
  {
    const int same = listeningSocket(dir.path() / "same.sock");
    ActivatedDaemon relative({same}, "nnhald",
                             {"--socket", (dir.path() / "." / "same.sock").string()});
    ::close(same);
    EXPECT_NE(relative.nextNotification().find("READY=1"), std::string::npos);
    EXPECT_EQ(relative.stop(SIGTERM), 0);
  }
  const int client = listeningSocket(dir.path() / "a.sock");
  ActivatedDaemon other({client}, "nnhald", {"--socket", (dir.path() / "b.sock").string()});
  ::close(client);
  EXPECT_EQ(other.stop(0), 1);
}

TEST(DaemonService, StatsPrintsTheDaemonsCounters) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device);
  auto prepared = (*device)->prepareModel(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = addRequest();
  ASSERT_TRUE((*prepared)->executeSynchronously(r.request));

  auto whole = runNnhal("stats --json --connect " + daemon.adminSocket().string(), "2>/dev/null");
  ASSERT_EQ(whole.exitCode, 0) << whole.output;
  const auto json = nlohmann::json::parse(whole.output);
  EXPECT_EQ(json["scope"], "daemon");
  EXPECT_EQ(json["clients"], 2);  // the test's connection and nnhal stats's own
  EXPECT_EQ(json["preparedModels"], 1);
  EXPECT_EQ(json["mappedPools"], 1);
  EXPECT_EQ(json["mappedPoolBytes"], r.pool.size());
  EXPECT_GT(json["residentBytes"].get<uint64_t>(), 1u << 20);
  // Per application (uid): the test's connection, its model, the time its work held a slot.
  ASSERT_EQ(json["applications"].size(), 1u) << whole.output;
  const auto& mine = json["applications"][0];
  EXPECT_EQ(mine["uid"], ::getuid());
  EXPECT_EQ(mine["connections"], 1);  // the admin socket's connection counts for no application
  EXPECT_EQ(mine["preparedModels"], 1);
  EXPECT_EQ(mine["weight"], 1);
  EXPECT_GT(mine["driverTimeUs"].get<uint64_t>(), 0u);

  auto own = runNnhal("stats --connect " + daemon.socket().string(), "2>/dev/null");
  ASSERT_EQ(own.exitCode, 0) << own.output;
  EXPECT_NE(own.output.find("scope: this connection only"), std::string::npos) << own.output;
  EXPECT_NE(own.output.find("prepared models: 0"), std::string::npos)
      << "nothing of other clients shows through the client socket\n"
      << own.output;

  auto gone = runNnhal("stats --connect " + (daemon.socket().parent_path() / "none").string());
  EXPECT_EQ(gone.exitCode, 1);
  EXPECT_NE(gone.output.find("DEVICE_UNAVAILABLE"), std::string::npos) << gone.output;
}

TEST(DaemonService, StatsOfAnEmbeddedDriverAreRefused) {
  auto embedded = createDevice();
  ASSERT_TRUE(embedded);
  auto stats = getDaemonStats(**embedded);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(stats.error().message.find("not a connection to nnhald"), std::string::npos);
}

}  // namespace
}  // namespace nnhal::ipc
