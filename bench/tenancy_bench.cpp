// nnhald as a multi-tenant service (docs/QOS.md), measured in one run against nnhald with its
// defaults (one driver slot per core, kernels on every core):
//  - BM_Throughput/clients:N — N client processes, each executing MobileNet v2 1.0 224 quant
//    synchronously in a loop for a few seconds. Reports executions_per_s, p50_ms and p99_ms of
//    all calls, scaling (executions/s over the one-client run of the same benchmark process,
//    where that client's executions use every core) and per_core_scaling (over one client of a
//    daemon with one kernel thread, measured in the same run: what N single-core streams would
//    give is N). A client whose execution runs s times faster on k cores than on one bounds
//    scaling by k / s: the two ratios tell intra-operation parallelism from throughput.
//  - BM_SingleClient/kernel_threads:K — one client alone, against a daemon with K kernel
//    threads (0 = all cores): median_ms, and speedup over K = 1 (the target on 16 cores: 4).
//  - BM_Fairness/attack:A — a victim application executing MobileNet v2 while an aggressor
//    application (another uid when run as root) keeps every slot busy: A = 0 none (the
//    baseline), 1 the aggressor at Priority::HIGH from 2 connections, 2 the aggressor spread
//    over 4 processes with 2 connections each. Reports the victim's median_ms, p99_ms and
//    ratio (median over the baseline; the target: at most 2 on 2 cores).
// Run with --benchmark_out=tenancy.json --benchmark_out_format=json.
#include <benchmark/benchmark.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <thread>
#include <vector>

#include "bench_daemon.h"
#include "bench_mobilenet.h"
#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"

namespace {

using namespace nnhal;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto kRunFor = std::chrono::seconds(4);
/// Time given to every client to prepare its model before the measured window.
constexpr auto kPrepareFor = std::chrono::seconds(3);
constexpr uid_t kAggressorUid = 65534;

unsigned cores() { return std::max(1u, std::thread::hardware_concurrency()); }

using bench::MobileNet;
using bench::mobileNet;
using bench::mobileNetRequest;

/// Call latencies in microseconds (what a child process sends back through its pipe).
using Latencies = std::vector<uint32_t>;

/// Prepares MobileNet v2 on `connections` connections (one thread each), then executes it
/// from `start` until `until`; returns every call's latency.
Latencies executeUntil(const std::string& socket, Clock::time_point start, Clock::time_point until,
                       Priority priority, int connections) {
  std::vector<Latencies> perThread(static_cast<size_t>(connections));
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      const MobileNet* net = mobileNet();
      auto device = connect(socket);
      if (net == nullptr || !device) return;
      PrepareOptions options;
      options.priority = priority;
      auto prepared = (*device)->prepareModel(net->model, options);
      if (!prepared) return;
      const Request request = mobileNetRequest(*net);
      std::this_thread::sleep_until(start);
      while (Clock::now() < until) {
        const auto start = Clock::now();
        if (!(*prepared)->executeSynchronously(request)) return;
        perThread[static_cast<size_t>(c)].push_back(static_cast<uint32_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start).count()));
      }
    });
  }
  for (std::thread& t : threads) t.join();
  Latencies all;
  for (const Latencies& l : perThread) all.insert(all.end(), l.begin(), l.end());
  return all;
}

/// A child process running executeUntil (as another application when `otherUid` and root),
/// sending its latencies back.
class Client {
 public:
  Client(const std::string& socket, Clock::time_point start, Clock::time_point until,
         Priority priority, int connections, bool otherUid) {
    int fds[2];
    if (::pipe(fds) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::close(fds[0]);
      if (otherUid && ::geteuid() == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(kAggressorUid) != 0 ||
            ::setuid(kAggressorUid) != 0) {
          ::_exit(2);
        }
      }
      const Latencies latencies = executeUntil(socket, start, until, priority, connections);
      const uint64_t count = latencies.size();
      (void)!::write(fds[1], &count, sizeof(count));
      size_t offset = 0;
      const auto* bytes = reinterpret_cast<const char*>(latencies.data());
      const size_t total = latencies.size() * sizeof(uint32_t);
      while (offset < total) {
        const ssize_t n = ::write(fds[1], bytes + offset, total - offset);
        if (n <= 0) break;
        offset += static_cast<size_t>(n);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    fd_ = fds[0];
  }
  /// Waits for the child; its latencies.
  Latencies finish() {
    Latencies latencies;
    uint64_t count = 0;
    if (fd_ >= 0 && ::read(fd_, &count, sizeof(count)) == sizeof(count)) {
      latencies.resize(count);
      size_t offset = 0;
      auto* bytes = reinterpret_cast<char*>(latencies.data());
      const size_t total = count * sizeof(uint32_t);
      while (offset < total) {
        const ssize_t n = ::read(fd_, bytes + offset, total - offset);
        if (n <= 0) break;
        offset += static_cast<size_t>(n);
      }
      latencies.resize(offset / sizeof(uint32_t));
    }
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (pid_ > 0) ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return latencies;
  }
  ~Client() { finish(); }

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
};

double quantileMs(Latencies latencies, double q) {
  if (latencies.empty()) return 0;
  std::sort(latencies.begin(), latencies.end());
  const size_t k = std::min(latencies.size() - 1, static_cast<size_t>(q * latencies.size()));
  return latencies[k] / 1000.0;
}

/// The daemon as shipped: defaults for slots and kernel threads; a socket every uid reaches.
nnhal::bench::Daemon& defaultDaemon() {
  static nnhal::bench::Daemon instance("tenancy", {"--socket-mode", "0666"});
  return instance;
}

/// Executions per second of one client of a daemon with one kernel thread (measured once).
double oneThreadRate() {
  static const double rate = [] {
    nnhal::bench::Daemon daemon("tenancy-k1-rate", {"--kernel-threads", "1"});
    const auto start = Clock::now() + kPrepareFor;
    Client client(daemon.socket(), start, start + kRunFor, Priority::MEDIUM, 1, false);
    return static_cast<double>(client.finish().size()) /
           std::chrono::duration<double>(kRunFor).count();
  }();
  return rate;
}

void BM_Throughput(benchmark::State& state) {
  static double oneClient = 0;
  if (mobileNet() == nullptr) {
    state.SkipWithError("MobileNet v2 quant not found in ../shared/models");
    return;
  }
  const int clients = static_cast<int>(state.range(0));
  for (auto _ : state) {
    // Every client prepares first; all execute in the same window.
    const auto start = Clock::now() + kPrepareFor;
    const auto until = start + kRunFor;
    std::vector<std::unique_ptr<Client>> children;
    for (int c = 0; c < clients; ++c) {
      children.push_back(std::make_unique<Client>(defaultDaemon().socket(), start, until,
                                                  Priority::MEDIUM, 1, false));
    }
    Latencies all;
    for (auto& child : children) {
      const Latencies l = child->finish();
      all.insert(all.end(), l.begin(), l.end());
    }
    const double seconds = std::chrono::duration<double>(kRunFor).count();
    const double rate = static_cast<double>(all.size()) / seconds;
    if (clients == 1) oneClient = rate;
    state.counters["executions_per_s"] = rate;
    state.counters["p50_ms"] = quantileMs(all, 0.5);
    state.counters["p99_ms"] = quantileMs(all, 0.99);
    state.counters["scaling"] = oneClient > 0 ? rate / oneClient : 0;
    const double perCore = oneThreadRate();
    state.counters["per_core_scaling"] = perCore > 0 ? rate / perCore : 0;
    state.counters["cores"] = cores();
  }
}

void throughputArgs(benchmark::internal::Benchmark* b) {
  for (unsigned n = 1; n < cores(); n *= 2) b->Arg(n);
  b->Arg(cores());
}
BENCHMARK(BM_Throughput)->ArgName("clients")->Apply(throughputArgs)->Iterations(1)->UseRealTime();

void BM_SingleClient(benchmark::State& state) {
  static double oneThread = 0;
  if (mobileNet() == nullptr) {
    state.SkipWithError("MobileNet v2 quant not found in ../shared/models");
    return;
  }
  const auto threads = static_cast<unsigned>(state.range(0));
  nnhal::bench::Daemon daemon("tenancy-k" + std::to_string(threads),
                              {"--kernel-threads", std::to_string(threads)});
  for (auto _ : state) {
    const auto start = Clock::now() + kPrepareFor;
    Client client(daemon.socket(), start, start + kRunFor, Priority::MEDIUM, 1, false);
    const double median = quantileMs(client.finish(), 0.5);
    if (threads == 1) oneThread = median;
    state.counters["median_ms"] = median;
    state.counters["speedup"] = median > 0 && oneThread > 0 ? oneThread / median : 0;
  }
}
BENCHMARK(BM_SingleClient)->ArgName("kernel_threads")->Arg(1)->Arg(0)->Iterations(1)->UseRealTime();

void BM_Fairness(benchmark::State& state) {
  static double alone = 0;
  if (mobileNet() == nullptr) {
    state.SkipWithError("MobileNet v2 quant not found in ../shared/models");
    return;
  }
  const int attack = static_cast<int>(state.range(0));
  for (auto _ : state) {
    // The aggressor runs from before the victim starts until after it ends.
    const auto start = Clock::now() + kPrepareFor;
    const auto until = start + kRunFor;
    std::vector<std::unique_ptr<Client>> aggressors;
    const int processes = attack == 1 ? 1 : attack == 2 ? 4 : 0;
    for (int p = 0; p < processes; ++p) {
      aggressors.push_back(std::make_unique<Client>(defaultDaemon().socket(), start - 500ms,
                                                    until + 500ms, Priority::HIGH, 2, true));
    }
    Client victim(defaultDaemon().socket(), start, until, Priority::MEDIUM, 1, false);
    const Latencies latencies = victim.finish();
    for (auto& aggressor : aggressors) aggressor->finish();
    const double median = quantileMs(latencies, 0.5);
    if (attack == 0) alone = median;
    state.counters["median_ms"] = median;
    state.counters["p99_ms"] = quantileMs(latencies, 0.99);
    state.counters["ratio"] = alone > 0 ? median / alone : 0;
    state.counters["other_uid"] = ::geteuid() == 0 ? 1 : 0;
  }
}
BENCHMARK(BM_Fairness)->ArgName("attack")->Arg(0)->Arg(1)->Arg(2)->Iterations(1)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
