// The cost of the process boundary: executeSynchronously through the embedded driver vs.
// through nnhald (started by this program on a temporary socket, reached with
// nnhal::connect) vs. a burst through nnhald (nnhal/burst.h), for a tiny model (one ADD of
// two 4-element float tensors) and for MobileNet v2 1.0 224 quant end to end; then the tiny
// model's burst with this program and the daemon pinned to one core; then the two message
// queues that could carry a burst, ping-ponging one 24-byte element between two threads:
// nnhal's FMQ and Boost.Interprocess's message_queue.
//
// Each benchmark times every execution and reports the median and 99th percentile
// (median_us, p99_us); the others also report their median over the embedded one (ratio)
// and the difference (overhead_us), and a burst its speed-up over nnhald's synchronous path
// (speedup_vs_sync). Run with --benchmark_out=ipc.json --benchmark_out_format=json.
#include <benchmark/benchmark.h>
#include <sched.h>
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

#include <boost/interprocess/ipc/message_queue.hpp>

#include "bench_daemon.h"
#include "ipc/fmq.h"
#include "nnhal/burst.h"
#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"

namespace {

using namespace nnhal;
using nnhal::bench::Daemon;
using Clock = std::chrono::steady_clock;

const std::string kModels = std::string(NNHAL_SHARED_DIR) + "/models/";

Daemon& daemon() {
  static Daemon instance("ipc", {"--threads", "2", "--kernel-threads", "1"});
  return instance;
}

Daemon& pinnedDaemon() {
  static Daemon instance("ipc", {"--threads", "2", "--kernel-threads", "1"}, 0);
  return instance;
}

/// How a benchmark executes.
enum Mode : int64_t { kEmbedded = 0, kRemoteSync = 1, kRemoteBurst = 2 };

const char* label(int64_t mode) {
  return mode == kEmbedded ? "embedded" : mode == kRemoteSync ? "nnhald sync" : "nnhald burst";
}

Result<std::shared_ptr<Device>> device(bool remote) {
  if (remote) return connect(daemon().socket());
  DeviceOptions options;
  options.kernelThreads = 1;
  return createDevice(options);
}

/// Median latencies by benchmark name and mode, for the ratios.
std::map<std::pair<std::string, int64_t>, double>& medians() {
  static std::map<std::pair<std::string, int64_t>, double> values;
  return values;
}

/// Times every execution; reports median_us, p99_us, and against the embedded run of the
/// same name ratio and overhead_us; a burst also speedup_vs_sync against nnhald sync.
template <typename Execute>
void timeExecutions(benchmark::State& state, const std::string& name, int64_t mode,
                    Execute&& execute) {
  std::vector<double> samples;
  samples.reserve(100000);
  for (auto _ : state) {
    const auto start = Clock::now();
    if (!execute()) return;
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  if (samples.empty()) return;
  std::sort(samples.begin(), samples.end());
  const double median = samples[samples.size() / 2];
  state.counters["median_us"] = median;
  state.counters["p99_us"] = samples[std::min(samples.size() - 1, samples.size() * 99 / 100)];
  medians()[{name, mode}] = median;
  if (mode == kEmbedded) return;
  if (auto found = medians().find({name, kEmbedded}); found != medians().end()) {
    state.counters["ratio"] = median / found->second;
    state.counters["overhead_us"] = median - found->second;
  }
  if (mode != kRemoteBurst) return;
  if (auto found = medians().find({name, kRemoteSync}); found != medians().end()) {
    state.counters["speedup_vs_sync"] = found->second / median;
  }
}

/// Runs `request` on `prepared` as `mode` says; false (and the error reported) on failure.
class Runner {
 public:
  Runner(benchmark::State& state, std::shared_ptr<PreparedModel> prepared, int64_t mode)
      : state_(state), prepared_(std::move(prepared)) {
    if (mode != kRemoteBurst) return;
    auto burst = prepared_->configureExecutionBurst();
    if (!burst) {
      state_.SkipWithError(burst.error().message.c_str());
      failed_ = true;
      return;
    }
    burst_ = *burst;
  }
  bool failed() const { return failed_; }
  bool operator()(const Request& request) {
    auto result = burst_ ? burst_->execute(request, MeasureTiming::NO)
                         : prepared_->executeSynchronously(request);
    if (!result) state_.SkipWithError(result.error().message.c_str());
    return result.has_value();
  }

 private:
  benchmark::State& state_;
  std::shared_ptr<PreparedModel> prepared_;
  std::shared_ptr<Burst> burst_;
  bool failed_ = false;
};

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

Request tinyAddRequest(const Memory& pool) {
  auto* values = reinterpret_cast<float*>(pool.data());
  for (int i = 0; i < 8; ++i) values[i] = static_cast<float>(i);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  request.outputs = {{false, {0, 32, 16}, {}}};
  return request;
}

/// The tiny ADD prepared on `dev`, or null (the benchmark then reports why and is skipped).
std::shared_ptr<PreparedModel> prepareTinyAdd(benchmark::State& state,
                                              const Result<std::shared_ptr<Device>>& dev) {
  if (!dev) {
    state.SkipWithError(dev.error().message.c_str());
    return nullptr;
  }
  auto prepared = (*dev)->prepareModel(addModel());
  if (!prepared) {
    state.SkipWithError(prepared.error().message.c_str());
    return nullptr;
  }
  return *prepared;
}

void BM_TinyAdd(benchmark::State& state) {
  const int64_t mode = state.range(0);
  const auto dev = device(mode != kEmbedded);
  const auto prepared = prepareTinyAdd(state, dev);
  if (prepared == nullptr) return;
  Memory pool = *Memory::create(48);
  const Request request = tinyAddRequest(pool);
  Runner run(state, prepared, mode);
  if (run.failed()) return;
  timeExecutions(state, "tiny_add", mode, [&] { return run(request); });
  state.SetLabel(label(mode));
}
BENCHMARK(BM_TinyAdd)
    ->ArgName("mode")
    ->Arg(kEmbedded)
    ->Arg(kRemoteSync)
    ->Arg(kRemoteBurst)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0)
    ->UseRealTime();

void BM_MobileNetV2QuantEndToEnd(benchmark::State& state) {
  const int64_t mode = state.range(0);
  const bool remote = mode != kEmbedded;
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
  Runner run(state, *prepared, mode);
  if (run.failed()) return;
  timeExecutions(state, "mobilenet", mode, [&] { return run(request); });
  state.SetLabel(label(mode));
}
BENCHMARK(BM_MobileNetV2QuantEndToEnd)
    ->ArgName("mode")
    ->Arg(kEmbedded)
    ->Arg(kRemoteSync)
    ->Arg(kRemoteBurst)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0)
    ->UseRealTime();

/// Pins the calling thread to one core for its lifetime, then restores its mask.
class PinnedThread {
 public:
  explicit PinnedThread(int cpu) {
    ::sched_getaffinity(0, sizeof(saved_), &saved_);
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::sched_setaffinity(0, sizeof(set), &set);
  }
  ~PinnedThread() { ::sched_setaffinity(0, sizeof(saved_), &saved_); }

 private:
  cpu_set_t saved_;
};

// Client and daemon share one core: each must yield to the other instead of spinning.
void BM_TinyAddBurstOneCore(benchmark::State& state) {
  const auto dev = connect(pinnedDaemon().socket());
  const auto prepared = prepareTinyAdd(state, dev);
  if (prepared == nullptr) return;
  Memory pool = *Memory::create(48);
  const Request request = tinyAddRequest(pool);
  Runner run(state, prepared, kRemoteBurst);
  if (run.failed()) return;
  PinnedThread pinned(0);
  timeExecutions(state, "tiny_add_one_core", kRemoteBurst, [&] { return run(request); });
  state.SetLabel("nnhald burst, both on cpu 0");
}
BENCHMARK(BM_TinyAddBurstOneCore)->Unit(benchmark::kMicrosecond)->MinTime(2.0)->UseRealTime();

// --- the queues alone ---------------------------------------------------------------------

struct Element {
  uint8_t bytes[24];
};

// One element there and back between two threads through two nnhal FMQs.
void BM_QueueRoundTripFmq(benchmark::State& state) {
  auto ping = nnhal::ipc::Fmq::create({sizeof(Element), 1024});
  auto pong = nnhal::ipc::Fmq::create({sizeof(Element), 1024});
  if (!ping || !pong) {
    state.SkipWithError("cannot create the queues");
    return;
  }
  std::atomic<bool> stop{false};
  nnhal::ipc::FmqWaitPolicy policy;
  policy.keepWaiting = [&stop] { return !stop.load(std::memory_order_relaxed); };
  std::thread echo([&] {
    std::vector<std::byte> in;
    while (ping->readAvailableBlocking(in, policy) == nnhal::ipc::Fmq::Status::kOk) {
      pong->write(in);
    }
  });
  Element element{};
  std::vector<std::byte> back;
  timeExecutions(state, "queue_round_trip_fmq", kEmbedded, [&] {
    ping->write(std::as_bytes(std::span(&element, 1)));
    return pong->readAvailableBlocking(back, policy) == nnhal::ipc::Fmq::Status::kOk;
  });
  stop = true;
  ping->wake();
  echo.join();
}
BENCHMARK(BM_QueueRoundTripFmq)->Unit(benchmark::kMicrosecond)->MinTime(1.0)->UseRealTime();

// The same through Boost.Interprocess message queues (a mutex and condition variables in
// shared memory).
void BM_QueueRoundTripBoostMessageQueue(benchmark::State& state) {
  namespace bip = boost::interprocess;
  const std::string prefix = "nnhal-bench-" + std::to_string(::getpid());
  const std::string pingName = prefix + "-ping";
  const std::string pongName = prefix + "-pong";
  bip::message_queue::remove(pingName.c_str());
  bip::message_queue::remove(pongName.c_str());
  bip::message_queue ping(bip::create_only, pingName.c_str(), 1024, sizeof(Element));
  bip::message_queue pong(bip::create_only, pongName.c_str(), 1024, sizeof(Element));
  std::thread echo([&] {
    Element in{};
    bip::message_queue::size_type got = 0;
    unsigned int priority = 0;
    for (;;) {
      ping.receive(&in, sizeof(in), got, priority);
      if (in.bytes[0] == 1) break;  // stop
      pong.send(&in, sizeof(in), 0);
    }
  });
  Element element{};
  Element back{};
  timeExecutions(state, "queue_round_trip_boost", kEmbedded, [&] {
    bip::message_queue::size_type got = 0;
    unsigned int priority = 0;
    ping.send(&element, sizeof(element), 0);
    pong.receive(&back, sizeof(back), got, priority);
    return true;
  });
  Element stop{};
  stop.bytes[0] = 1;
  ping.send(&stop, sizeof(stop), 0);
  echo.join();
  bip::message_queue::remove(pingName.c_str());
  bip::message_queue::remove(pongName.c_str());
  if (auto fmq = medians().find({"queue_round_trip_fmq", kEmbedded}); fmq != medians().end()) {
    state.counters["vs_fmq"] = medians()[{"queue_round_trip_boost", kEmbedded}] / fmq->second;
  }
}
BENCHMARK(BM_QueueRoundTripBoostMessageQueue)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(1.0)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
