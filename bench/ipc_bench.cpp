// The cost of the process boundary: executeSynchronously through the embedded driver vs.
// through nnhald (started by this program on a temporary socket, reached with
// nnhal::connect), for a tiny model (one ADD of two 4-element float tensors) and for
// MobileNet v2 1.0 224 quant end to end. Each benchmark times every execution and reports
// the median (median_us); the remote ones also report remote/embedded (ratio) and the
// difference (overhead_us). Run with --benchmark_out=ipc.json --benchmark_out_format=json.
#include <benchmark/benchmark.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"

namespace {

using namespace nnhal;
using Clock = std::chrono::steady_clock;

const std::string kModels = std::string(NNHAL_SHARED_DIR) + "/models/";

/// nnhald on a temporary socket for the whole run: the one built with this benchmark, or
/// the binary named by $NNHALD (to compare two builds of the daemon on the same machine).
class Daemon {
 public:
  Daemon() {
    socket_ = "/tmp/nnhal-ipc-bench-" + std::to_string(::getpid()) + ".sock";
    const char* override = std::getenv("NNHALD");
    const std::string binary = override != nullptr ? override : NNHALD_PATH;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl(binary.c_str(), binary.c_str(), "--socket", socket_.c_str(), "--threads", "2",
              "--kernel-threads", "1", "--log-level", "warn", static_cast<char*>(nullptr));
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

Daemon& daemon() {
  static Daemon instance;
  return instance;
}

Result<std::shared_ptr<Device>> device(bool remote) {
  if (remote) return connect(daemon().socket());
  DeviceOptions options;
  options.kernelThreads = 1;
  return createDevice(options);
}

/// Median latencies of the embedded runs, by benchmark name, for the remote ratios.
std::map<std::string, double>& embeddedMedians() {
  static std::map<std::string, double> medians;
  return medians;
}

/// Times every execution; reports median_us (and ratio, overhead_us for remote runs).
template <typename Execute>
void timeExecutions(benchmark::State& state, const std::string& name, bool remote,
                    Execute&& execute) {
  std::vector<double> samples;
  samples.reserve(100000);
  for (auto _ : state) {
    const auto start = Clock::now();
    if (!execute()) return;
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  if (samples.empty()) return;
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  const double median = samples[samples.size() / 2];
  state.counters["median_us"] = median;
  if (!remote) {
    embeddedMedians()[name] = median;
  } else if (auto found = embeddedMedians().find(name); found != embeddedMedians().end()) {
    state.counters["ratio"] = median / found->second;
    state.counters["overhead_us"] = median - found->second;
  }
}

Model addModel() {
  Model model;
  Operand tensor;
  tensor.type = OperandType::TENSOR_FLOAT32;
  tensor.dimensions = {4};
  tensor.numberOfConsumers = 1;
  tensor.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  Operand activation;
  activation.type = OperandType::INT32;
  activation.lifetime = OperandLifeTime::CONSTANT_COPY;
  activation.location = {0, 0, 4};
  activation.numberOfConsumers = 1;
  Operand out = tensor;
  out.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  out.numberOfConsumers = 0;
  model.main.operands = {tensor, tensor, activation, out};
  model.operandValues.resize(4, 0);
  model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {3};
  return model;
}

void BM_TinyAddExecuteSynchronously(benchmark::State& state) {
  const bool remote = state.range(0) == 1;
  auto dev = device(remote);
  if (!dev) {
    state.SkipWithError(dev.error().message.c_str());
    return;
  }
  auto prepared = (*dev)->prepareModel(addModel());
  if (!prepared) {
    state.SkipWithError(prepared.error().message.c_str());
    return;
  }
  Memory pool = *Memory::create(48);
  auto* values = reinterpret_cast<float*>(pool.data());
  for (int i = 0; i < 8; ++i) values[i] = static_cast<float>(i);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  request.outputs = {{false, {0, 32, 16}, {}}};
  timeExecutions(state, "tiny_add", remote, [&] {
    auto result = (*prepared)->executeSynchronously(request);
    if (!result) state.SkipWithError(result.error().message.c_str());
    return result.has_value();
  });
  state.SetLabel(remote ? "nnhald" : "embedded");
}
BENCHMARK(BM_TinyAddExecuteSynchronously)
    ->ArgName("remote")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0)
    ->UseRealTime();

void BM_MobileNetV2QuantEndToEnd(benchmark::State& state) {
  const bool remote = state.range(0) == 1;
  auto imported = importTfliteFile(kModels + "mobilenet_v2_1.0_224_quant.tflite");
  if (!imported) {
    state.SkipWithError(imported.error().message.c_str());
    return;
  }
  auto dev = device(remote);
  if (!dev) {
    state.SkipWithError(dev.error().message.c_str());
    return;
  }
  auto prepared = (*dev)->prepareModel(std::move(imported->model));
  if (!prepared) {
    state.SkipWithError(prepared.error().message.c_str());
    return;
  }
  std::ifstream in(kModels + "inputs/mobilenet_v2_1.0_224_quant__grace_hopper.input.bin",
                   std::ios::binary);
  std::vector<char> input((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Memory pool = *Memory::create(input.size() + 1001);
  std::memcpy(pool.data(), input.data(), input.size());
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, static_cast<uint32_t>(input.size())}, {}}};
  request.outputs = {{false, {0, static_cast<uint32_t>(input.size()), 1001}, {}}};
  timeExecutions(state, "mobilenet", remote, [&] {
    auto result = (*prepared)->executeSynchronously(request);
    if (!result) state.SkipWithError(result.error().message.c_str());
    return result.has_value();
  });
  state.SetLabel(remote ? "nnhald" : "embedded");
}
BENCHMARK(BM_MobileNetV2QuantEndToEnd)
    ->ArgName("remote")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
