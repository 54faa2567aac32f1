#include "nnhal-stress/daemon_under_test.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <thread>

namespace nnhal::stress {
namespace {

/// A connected Unix socket to `path`, or -1.
int connectTo(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

}  // namespace

bool socketAccepts(const std::filesystem::path& socket) {
  const int fd = connectTo(socket);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

Result<std::unique_ptr<DaemonUnderTest>> DaemonUnderTest::start(
    const std::filesystem::path& binary, const std::vector<std::string>& args,
    const std::vector<std::string>& environment) {
  std::unique_ptr<DaemonUnderTest> daemon(new DaemonUnderTest());
  char pattern[] = "/tmp/nnhal-stress-XXXXXX";
  if (::mkdtemp(pattern) == nullptr) {
    return fail(ErrorStatus::GENERAL_FAILURE, "cannot create a temporary directory");
  }
  daemon->directory_ = pattern;
  daemon->socket_ = daemon->directory_ / "nnhald.sock";
  daemon->owned_ = true;
  // A compilation cache of its own (removed with the directory), so that the tests that
  // prepare models exercise caching too; `args` may name another one.
  std::vector<std::string> argv = {binary.string(), "--socket", daemon->socket_.string(),
                                   "--log-level", "error"};
  const bool namesCacheDir = std::ranges::any_of(args, [](const std::string& arg) {
    return arg == "--cache-dir" || arg.starts_with("--cache-dir=");
  });
  if (!namesCacheDir) {
    argv.insert(argv.end(), {"--cache-dir", (daemon->directory_ / "cache").string()});
  }
  argv.insert(argv.end(), args.begin(), args.end());
  // Both lists are made before fork: the child of a multithreaded process must not allocate.
  std::vector<char*> raw;
  for (std::string& arg : argv) raw.push_back(arg.data());
  raw.push_back(nullptr);
  std::vector<std::string> variables = environment;  // they replace inherited ones
  std::vector<char*> env;
  for (std::string& variable : variables) env.push_back(variable.data());
  for (char** inherited = environ; *inherited != nullptr; ++inherited) {
    const std::string_view entry(*inherited);
    const std::string_view name = entry.substr(0, entry.find('='));
    const bool replaced = std::ranges::any_of(variables, [&](const std::string& v) {
      return std::string_view(v).substr(0, v.find('=')) == name;
    });
    if (!replaced) env.push_back(*inherited);
  }
  env.push_back(nullptr);
  daemon->pid_ = ::fork();
  if (daemon->pid_ < 0) return fail(ErrorStatus::GENERAL_FAILURE, "fork failed");
  if (daemon->pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // a stress run that is killed takes its daemon along
    ::execve(raw[0], raw.data(), env.data());
    ::_exit(127);
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < until) {
    if (socketAccepts(daemon->socket_)) return daemon;
    int status = 0;
    if (::waitpid(daemon->pid_, &status, WNOHANG) == daemon->pid_) {
      daemon->exited_ = true;
      daemon->exit_ = describeStatus(status);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fail(ErrorStatus::GENERAL_FAILURE,
              "nnhald (" + binary.string() + ") did not start" +
                  (daemon->exit_.empty() ? std::string() : ": " + daemon->exit_));
}

Result<std::unique_ptr<DaemonUnderTest>> DaemonUnderTest::attach(
    const std::filesystem::path& socket) {
  const int fd = connectTo(socket);
  if (fd < 0) {
    return fail(ErrorStatus::DEVICE_UNAVAILABLE,
                "nothing accepts connections on " + socket.string());
  }
  ucred credentials{};
  socklen_t length = sizeof(credentials);
  const bool known = ::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0;
  ::close(fd);
  std::unique_ptr<DaemonUnderTest> daemon(new DaemonUnderTest());
  daemon->socket_ = socket;
  daemon->pid_ = known ? credentials.pid : -1;
  return daemon;
}

DaemonUnderTest::~DaemonUnderTest() {
  if (owned_ && !exited_ && pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (!directory_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
}

bool DaemonUnderTest::alive() {
  if (exited_) return false;
  if (owned_) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      exited_ = true;
      exit_ = describeStatus(status);
      return false;
    }
  } else if (pid_ > 0 && ::kill(pid_, 0) != 0 && errno == ESRCH) {
    exited_ = true;
    exit_ = "the process is gone";
    return false;
  }
  return socketAccepts(socket_);
}

}  // namespace nnhal::stress
