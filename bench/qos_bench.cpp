// Quality of service (docs/QOS.md), measured in one run:
//  - BM_HighPriorityLatency/idle:1 — MobileNet v2 1.0 224 quant executeSynchronously through
//    nnhald, prepared with Priority::HIGH, on an otherwise idle daemon: the baseline;
//  - BM_HighPriorityLatency/idle:0 — the same while four other clients each keep two
//    executions of a Priority::LOW MobileNet v2 queued at all times. Reports ratio (median
//    over the idle baseline; the target is at most 1.3) besides median_us and p99_us;
//  - BM_DeadlineOvershoot — embedded executions given a deadline they cannot meet, on a model
//    that never finished (so the driver cannot refuse them up front as persistent): MobileNet
//    v2 with 1 ms, and a ~100 ms chain of 24 FULLY_CONNECTED layers with 1 ms. Reports the
//    time from the deadline to MISSED_DEADLINE (overshoot p50/p99/max, ms; target p99 < 5).
// Run with --benchmark_out=qos.json --benchmark_out_format=json.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>
#include <vector>

#include "../tests/common/fully_connected_chain.h"
#include "bench_daemon.h"
#include "bench_mobilenet.h"
#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"

namespace {

using namespace nnhal;
using Clock = std::chrono::steady_clock;

/// Two driver slots and all cores inside kernels, as a 2-core machine would run it.
bench::Daemon& daemon() {
  static bench::Daemon instance("qos", {"--threads", "2", "--driver-threads", "2",
                                        "--kernel-threads", "0", "--max-running", "2"});
  return instance;
}

using bench::MobileNet;
using bench::mobileNet;
using bench::mobileNetRequest;

/// Four clients, each with its own connection and LOW MobileNet, keeping two executions in
/// flight until destroyed.
class LowPriorityLoad {
 public:
  explicit LowPriorityLoad(const MobileNet& net) {
    PrepareOptions low;
    low.priority = Priority::LOW;
    for (int c = 0; c < 4; ++c) {
      auto device = connect(daemon().socket());
      if (!device) continue;
      auto prepared = (*device)->prepareModel(net.model, low);
      if (!prepared) continue;
      clients_.push_back({*device, *prepared});
    }
    for (Client& client : clients_) {
      for (int i = 0; i < 2; ++i) launch(client.model, mobileNetRequest(net));
    }
  }
  ~LowPriorityLoad() {
    std::unique_lock lock(mutex_);
    stopping_ = true;
    idle_.wait(lock, [&] { return inFlight_ == 0; });
  }
  bool ready() const { return clients_.size() == 4; }
  uint64_t completed() const { return completed_.load(); }

 private:
  struct Client {
    std::shared_ptr<Device> device;
    std::shared_ptr<PreparedModel> model;
  };
  void launch(std::shared_ptr<PreparedModel> model, Request request) {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      ++inFlight_;
    }
    const ErrorStatus launched =
        model->execute(request, {}, [this, model, request](Result<ExecutionResult>) mutable {
          ++completed_;
          {
            std::lock_guard lock(mutex_);
            --inFlight_;
          }
          idle_.notify_all();
          launch(std::move(model), std::move(request));  // keep the queue full
        });
    if (launched != ErrorStatus::NONE) return;  // the callback already ran
  }

  std::vector<Client> clients_;
  std::mutex mutex_;
  std::condition_variable idle_;
  int inFlight_ = 0;
  bool stopping_ = false;
  std::atomic<uint64_t> completed_{0};
};

double idleMedianUs = 0;

void BM_HighPriorityLatency(benchmark::State& state) {
  const bool idle = state.range(0) != 0;
  const MobileNet* net = mobileNet();
  if (net == nullptr) {
    state.SkipWithError("cannot import MobileNet v2");
    return;
  }
  auto device = connect(daemon().socket());
  if (!device) {
    state.SkipWithError(device.error().message.c_str());
    return;
  }
  PrepareOptions high;
  high.priority = Priority::HIGH;
  auto prepared = (*device)->prepareModel(net->model, high);
  if (!prepared) {
    state.SkipWithError(prepared.error().message.c_str());
    return;
  }
  const Request request = mobileNetRequest(*net);
  std::optional<LowPriorityLoad> load;
  if (!idle) {
    load.emplace(*net);
    if (!load->ready()) {
      state.SkipWithError("the low-priority clients could not start");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // queues full
  }
  const uint64_t lowBefore = load ? load->completed() : 0;
  std::vector<double> samples;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto result = (*prepared)->executeSynchronously(request);
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    if (!result) {
      state.SkipWithError(result.error().message.c_str());
      return;
    }
  }
  std::sort(samples.begin(), samples.end());
  const double median = samples[samples.size() / 2];
  state.counters["median_us"] = median;
  state.counters["p99_us"] = samples[std::min(samples.size() - 1, samples.size() * 99 / 100)];
  if (idle) {
    idleMedianUs = median;
    state.SetLabel("HIGH, idle daemon");
  } else {
    if (idleMedianUs > 0) state.counters["ratio"] = median / idleMedianUs;
    state.counters["low_completed"] = static_cast<double>(load->completed() - lowBefore);
    state.SetLabel("HIGH, 4 clients keeping LOW executions queued");
  }
}
BENCHMARK(BM_HighPriorityLatency)
    ->ArgName("idle")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(3.0)
    ->UseRealTime();

void BM_DeadlineOvershoot(benchmark::State& state) {
  const bool mobilenet = state.range(0) == 0;
  DeviceOptions options;
  auto device = createDevice(options);
  Model model;
  Request request;
  if (mobilenet) {
    const MobileNet* net = mobileNet();
    if (net == nullptr) {
      state.SkipWithError("cannot import MobileNet v2");
      return;
    }
    model = net->model;
    request = mobileNetRequest(*net);
  } else {
    constexpr uint32_t kLayers = 24;
    constexpr uint32_t kBatch = 64;
    constexpr uint32_t kN = 1024;
    model = nnhal::testing::fullyConnectedChain(kLayers, kBatch, kN);
    const uint32_t bytes = kBatch * kN * 4;
    Memory pool = *Memory::create(2 * size_t{bytes});
    request.pools = {pool};
    request.inputs = {{false, {0, 0, bytes}, {}}};
    request.outputs = {{false, {0, bytes, bytes}, {}}};
  }
  // Never run to the end: the driver has no fastest run to refuse the deadline with.
  auto prepared = (*device)->prepareModel(std::move(model));
  if (!prepared) {
    state.SkipWithError(prepared.error().message.c_str());
    return;
  }
  std::vector<double> overshoot;
  for (auto _ : state) {
    ExecuteOptions execute;
    execute.deadline = Clock::now() + std::chrono::milliseconds(1);
    auto result = (*prepared)->executeSynchronously(request, execute);
    const auto end = Clock::now();
    if (result || (result.error().status != ErrorStatus::MISSED_DEADLINE_TRANSIENT &&
                   result.error().status != ErrorStatus::MISSED_DEADLINE_PERSISTENT)) {
      state.SkipWithError("the execution did not miss its deadline");
      return;
    }
    overshoot.push_back(std::chrono::duration<double, std::milli>(end - *execute.deadline).count());
  }
  std::sort(overshoot.begin(), overshoot.end());
  state.counters["overshoot_p50_ms"] = overshoot[overshoot.size() / 2];
  state.counters["overshoot_p99_ms"] =
      overshoot[std::min(overshoot.size() - 1, overshoot.size() * 99 / 100)];
  state.counters["overshoot_max_ms"] = overshoot.back();
  state.SetLabel(mobilenet ? "MobileNet v2 quant, 1 ms deadline"
                           : "24 x FULLY_CONNECTED [64,1024]x[1024,1024], 1 ms deadline");
}
BENCHMARK(BM_DeadlineOvershoot)
    ->ArgName("fc_chain")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
