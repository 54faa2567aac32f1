#include "child_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <thread>

#include "ipc_test_util.h"

extern char** environ;

namespace nnhal::ipc::testing {
namespace {

std::map<std::string, ChildRole>& roles() {
  static std::map<std::string, ChildRole> registered;
  return registered;
}

constexpr const char* kRoleFlag = "--child-role";
constexpr const char* kAnotherApplicationFlag = "--as-another-application";

}  // namespace

bool registerChildRole(const char* name, ChildRole role) {
  return roles().emplace(name, role).second;
}

void runChildRoleIfAsked(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], kRoleFlag) != 0) return;
  const auto found = roles().find(argv[2]);
  if (found == roles().end()) {
    std::fprintf(stderr, "no child role named '%s'\n", argv[2]);
    std::exit(101);
  }
  int first = 3;
  if (first < argc && std::strcmp(argv[first], kAnotherApplicationFlag) == 0) {
    ++first;
    if (::geteuid() == 0 && !becomeAnotherApplication()) std::exit(kChildCouldNotChangeUser);
  }
  const std::vector<std::string> args(argv + first, argv + argc);
  const int code = found->second(args);
  std::fflush(nullptr);
  // Without running destructors: a role may leave the client library's threads running.
  ::_exit(code);
}

ChildProcess::ChildProcess(const char* role, const std::vector<std::string>& args,
                           bool asAnotherApplication) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  EXPECT_FALSE(ec) << "cannot find this test binary: " << ec.message();
  std::vector<std::string> all = {self, kRoleFlag, role};
  if (asAnotherApplication) all.emplace_back(kAnotherApplicationFlag);
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& arg : all) argv.push_back(arg.data());
  argv.push_back(nullptr);
  const int rc = ::posix_spawn(&pid_, self.c_str(), nullptr, nullptr, argv.data(), environ);
  EXPECT_EQ(rc, 0) << "posix_spawn: " << std::strerror(rc);
  if (rc != 0) pid_ = -1;
}

ChildProcess::~ChildProcess() { kill(); }

int ChildProcess::wait(std::chrono::seconds limit) {
  if (status_) return *status_;
  if (pid_ <= 0) return -4;
  const auto until = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() >= until) {
      kill();
      status_ = -3;
      return -3;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  pid_ = -1;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -2;
  return *status_;
}

void ChildProcess::kill() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  status_ = -2;
}

}  // namespace nnhal::ipc::testing
