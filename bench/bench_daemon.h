// bench/bench_daemon.h — nnhald for a benchmark: started on a temporary socket, stopped with
// SIGTERM at the end of the run.
#pragma once

#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace nnhal::bench {

/// The nnhald built with the benchmarks, or the binary named by $NNHALD (to compare two
/// builds of the daemon on the same machine), with `args` after --socket and
/// --log-level warn. With `cpu` >= 0, the daemon and all its threads run on that core only.
class Daemon {
 public:
  Daemon(const std::string& name, std::vector<std::string> args, int cpu = -1) {
    socket_ = "/tmp/nnhal-" + name + "-bench-" + std::to_string(::getpid()) +
              (cpu >= 0 ? "-cpu" + std::to_string(cpu) : std::string()) + ".sock";
    const char* override = std::getenv("NNHALD");
    std::string binary = override != nullptr ? override : NNHALD_PATH;
    std::vector<std::string> argv = {binary, "--socket", socket_, "--log-level", "warn"};
    argv.insert(argv.end(), args.begin(), args.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        ::sched_setaffinity(0, sizeof(set), &set);
      }
      std::vector<char*> raw;
      for (std::string& arg : argv) raw.push_back(arg.data());
      raw.push_back(nullptr);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    for (int i = 0; i < 1000 && !accepts(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~Daemon() {
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
  }
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  const std::string& socket() const { return socket_; }

 private:
  bool accepts() const {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::strncpy(address.sun_path, socket_.c_str(), sizeof(address.sun_path) - 1);
    const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    ::close(fd);
    return ok;
  }
  std::string socket_;
  pid_t pid_ = -1;
};

}  // namespace nnhal::bench
