// Helpers of the IPC tests: a real nnhald process on a temporary socket, small models and
// requests, and temporary directories.
#pragma once

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/fully_connected_chain.h"
#include "ipc/client/remote_device.h"
#include "nnhal/client.h"
#include "nnhal/device.h"

namespace nnhal::ipc::testing {

namespace fs = std::filesystem;

/// A fresh directory under /tmp, removed with its contents on destruction.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = fs::path("/tmp") /
            ("nnhal-ipc-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// True in the AddressSanitizer and ThreadSanitizer builds, whose timings are several times
/// slower and noisier: latency bounds are looser there.
/// (GCC defines __SANITIZE_ADDRESS__; clang, which builds the ASan suites, answers
/// __has_feature.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderSanitizer = true;
#elif defined(__has_feature)
inline constexpr bool kUnderSanitizer =
    __has_feature(address_sanitizer) || __has_feature(thread_sanitizer);
#else
inline constexpr bool kUnderSanitizer = false;
#endif

/// True in the ThreadSanitizer build, several times slower again than the ASan build: a few
/// tests leave out what would take minutes there.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderThreadSanitizer = true;
#else
inline constexpr bool kUnderThreadSanitizer = false;
#endif

/// The uid (and gid) another application's processes run as in the tests.
inline constexpr uid_t kOtherApplicationUid = 65534;

/// In a child process (child_process.h): becomes uid kOtherApplicationUid, another application of
/// nnhald than the test process (hal/application.h). Needs root; false (and nothing changed)
/// otherwise. The daemon's socket must let that user connect (Daemon({"--socket-mode", "0666"})).
inline bool becomeAnotherApplication() {
  if (::geteuid() != 0) return false;
  return ::setgroups(0, nullptr) == 0 && ::setgid(kOtherApplicationUid) == 0 &&
         ::setuid(kOtherApplicationUid) == 0;
}

/// Whether something accepts connections on `path`.
/// The daemon's counts as `device` (a connection to nnhald) sees them; a failed query fails the
/// test and gives zeros.
inline Stats statsOf(const std::shared_ptr<Device>& device) {
  auto stats = dynamic_cast<RemoteDevice&>(*device).daemonStats();
  EXPECT_TRUE(stats) << stats.error().message;
  return stats ? *stats : Stats{};
}

inline bool socketAccepts(const fs::path& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

/// The nnhald binary, started on a temporary socket.
class Daemon {
 public:
  explicit Daemon(std::vector<std::string> extraArgs = {}) {
    socket_ = dir_.path() / "nnhald.sock";
    adminSocket_ = dir_.path() / "admin.sock";
    std::vector<std::string> args = {NNHALD_PATH,
                                     "--admin-socket",
                                     adminSocket_.string(),
                                     "--socket",
                                     socket_.string(),
                                     "--threads",
                                     "2",
                                     "--kernel-threads",
                                     "1",
                                     "--log-level",
                                     "error"};
    args.insert(args.end(), extraArgs.begin(), extraArgs.end());
    std::vector<char*> argv;  // built before the fork: the child only execs (child_process.h)
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      if (socketAccepts(socket_)) return;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool running() const { return pid_ > 0; }
  const fs::path& socket() const { return socket_; }
  /// The admin socket: its connections' GetStats report the whole daemon.
  const fs::path& adminSocket() const { return adminSocket_; }
  pid_t pid() const { return pid_; }

  /// Sends `signal` and waits for the exit; returns the exit status (or -signal).
  int stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1000;
    ::kill(pid_, signal);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return -WTERMSIG(status);
  }

 private:
  TempDir dir_;
  fs::path socket_;
  fs::path adminSocket_;
  pid_t pid_ = -1;
};

inline Operand tensor(std::vector<uint32_t> dims, OperandLifeTime lifetime, uint32_t consumers,
                      OperandType type = OperandType::TENSOR_FLOAT32) {
  Operand op;
  op.type = type;
  op.dimensions = std::move(dims);
  op.lifetime = lifetime;
  op.numberOfConsumers = consumers;
  return op;
}

inline Operand int32Constant(Model& model, int32_t value) {
  Operand op;
  op.type = OperandType::INT32;
  op.lifetime = OperandLifeTime::CONSTANT_COPY;
  op.numberOfConsumers = 1;
  const auto offset = static_cast<uint32_t>(model.operandValues.size());
  model.operandValues.resize(offset + 4);
  std::memcpy(model.operandValues.data() + offset, &value, 4);
  op.location = {0, offset, 4};
  return op;
}

/// out = a + b, float32 [4] each (`outDims` for the output, e.g. {0} for unknown).
inline Model addModel(std::vector<uint32_t> outDims = {4}) {
  Model model;
  auto& ops = model.main.operands;
  ops.push_back(tensor({4}, OperandLifeTime::SUBGRAPH_INPUT, 1));
  ops.push_back(tensor({4}, OperandLifeTime::SUBGRAPH_INPUT, 1));
  ops.push_back(int32Constant(model, 0));
  ops.push_back(tensor(std::move(outDims), OperandLifeTime::SUBGRAPH_OUTPUT, 0));
  model.main.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {3};
  return model;
}

/// A [1,3,3,1] x [1,2,2,1] CONV_2D (VALID, stride 1) with the filter in a model pool
/// (CONSTANT_REFERENCE, all ones) and bias 0.5 (CONSTANT_COPY): out [1,2,2,1].
inline Model convModel() {
  Model model;
  Memory weights = *Memory::create(64);
  auto* w = reinterpret_cast<float*>(weights.data());
  for (int i = 0; i < 4; ++i) w[i] = 1.0f;
  model.pools.push_back(weights);
  auto& ops = model.main.operands;
  ops.push_back(tensor({1, 3, 3, 1}, OperandLifeTime::SUBGRAPH_INPUT, 1));  // 0
  Operand filter = tensor({1, 2, 2, 1}, OperandLifeTime::CONSTANT_REFERENCE, 1);
  filter.location = {0, 0, 16};
  ops.push_back(filter);  // 1
  Operand bias = tensor({1}, OperandLifeTime::CONSTANT_COPY, 1);
  const float half = 0.5f;
  const auto at = static_cast<uint32_t>(model.operandValues.size());
  model.operandValues.resize(at + 4);
  std::memcpy(model.operandValues.data() + at, &half, 4);
  bias.location = {0, at, 4};
  ops.push_back(bias);                                                       // 2
  ops.push_back(int32Constant(model, 2));                                    // 3 padding VALID
  ops.push_back(int32Constant(model, 1));                                    // 4 stride w
  ops.push_back(int32Constant(model, 1));                                    // 5 stride h
  ops.push_back(int32Constant(model, 0));                                    // 6 activation
  ops.push_back(tensor({1, 2, 2, 1}, OperandLifeTime::SUBGRAPH_OUTPUT, 0));  // 7
  model.main.operations.push_back({OperationType::CONV_2D, {0, 1, 2, 3, 4, 5, 6}, {7}});
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {7};
  return model;
}

/// A slow model: `layers` FULLY_CONNECTED layers of [batch, n] x [n, n]^T, all sharing one
/// weight matrix in a model pool, float32. Input and output [batch, n].
inline Model slowModel(uint32_t layers = 16, uint32_t batch = 512, uint32_t n = 1024) {
  return nnhal::testing::fullyConnectedChain(layers, batch, n);
}

/// A request over one pool of `kind`: inputs a, b at 0 and 16, output at 32 (`outBytes`).
struct AddRequest {
  Memory pool;
  Request request;
  float* a() const { return reinterpret_cast<float*>(pool.data()); }
  float* b() const { return a() + 4; }
  float* out() const { return a() + 8; }
};

inline AddRequest addRequest(Memory pool, uint32_t outBytes = 16, float base = 0.0f) {
  AddRequest r;
  r.pool = std::move(pool);
  r.request.pools.push_back(r.pool);
  r.request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  r.request.outputs = {{false, {0, 32, outBytes}, {}}};
  for (int i = 0; i < 4; ++i) {
    r.a()[i] = base + static_cast<float>(i) + 0.5f;
    r.b()[i] = 10.0f * static_cast<float>(i);
  }
  return r;
}

inline AddRequest addRequest(uint32_t outBytes = 16, float base = 0.0f) {
  return addRequest(*Memory::create(64), outBytes, base);
}

}  // namespace nnhal::ipc::testing
