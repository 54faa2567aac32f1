// tests/tools/cli_test_util.h — running the real `nnhal` binary from a test, as a user does.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <string>

namespace nnhal::tools::cli_test {

struct CommandResult {
  int exitCode = -1;
  std::string output;  ///< what the command wrote on stdout (and stderr, when redirected there)
};

/// Runs `command` in a shell and collects its stdout.
inline CommandResult runShell(const std::string& command) {
  CommandResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    result.output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// Runs `nnhal ARGS`; `redirect` says where stderr goes ("2>&1": into the output).
inline CommandResult runNnhal(const std::string& args, const std::string& redirect = "2>&1") {
  return runShell(std::string(NNHAL_CLI_PATH) + " " + args + " " + redirect);
}

/// A fresh folder under the system's temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("nnhal-test-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

}  // namespace nnhal::tools::cli_test
