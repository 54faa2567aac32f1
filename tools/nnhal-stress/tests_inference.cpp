// Stress tests in this process: parallel inference, memory-mapped model load, performance
// degradation while compiling.
#include <algorithm>
#include <thread>

#include "nnhal-stress/stress_tests.h"
#include "nnhal/client.h"

namespace nnhal::stress {
namespace {

using Clock = std::chrono::steady_clock;

/// What the worker threads of one test found (first failure wins).
class Failures {
 public:
  void add(const std::string& what) {
    std::lock_guard lock(mutex_);
    if (first_.empty()) first_ = what;
    ++count_;
  }
  bool any() const {
    std::lock_guard lock(mutex_);
    return count_ > 0;
  }
  Outcome outcome(nlohmann::json metrics) const {
    std::lock_guard lock(mutex_);
    metrics["failures"] = count_;
    if (count_ == 0) return {Verdict::kSuccess, "", std::move(metrics)};
    return {Verdict::kFailure, first_, std::move(metrics)};
  }

 private:
  mutable std::mutex mutex_;
  std::string first_;
  uint64_t count_ = 0;
};

/// The models of --models that `device` prepares, with their reference outputs.
Result<std::vector<Workload>> referenceWorkloads(const TestContext& context, Device& device) {
  NNHAL_ASSIGN_OR_RETURN(std::vector<Workload> workloads,
                         loadWorkloads(context.options().models, context.options().seed));
  if (auto refs = computeReferences(device, workloads); !refs) {
    return fail(refs.error().status, "reference run: " + refs.error().message);
  }
  return workloads;
}

}  // namespace

Result<std::shared_ptr<Device>> connectClient(const TestContext& context, const std::string& name) {
  ClientOptions options;
  options.clientName = "nnhal-stress " + name;
  return connect(context.options().socket, options);
}

Outcome parallelInference(TestContext& context) {
  auto device = connectClient(context, "reference");
  if (!device) return {Verdict::kFailure, device.error().message, {}};
  auto workloads = referenceWorkloads(context, **device);
  if (!workloads) return {Verdict::kFailure, workloads.error().message, {}};
  Failures failures;
  std::atomic<uint64_t> byPath[4] = {};
  std::vector<std::jthread> threads;
  for (unsigned t = 0; t < context.options().threads; ++t) {
    threads.emplace_back([&, t] {
      auto random = context.random(t);
      auto client = connectClient(context, "inference " + std::to_string(t));
      if (!client) return failures.add("connect: " + client.error().message);
      std::vector<std::shared_ptr<PreparedModel>> prepared;
      for (const Workload& w : *workloads) {
        auto p = (*client)->prepareModel(w.model);
        if (!p) return failures.add(w.name + ": prepareModel: " + p.error().message);
        prepared.push_back(*p);
      }
      while (context.keepGoing()) {
        const size_t m = random() % workloads->size();
        const Workload& w = (*workloads)[m];
        const size_t s = random() % w.samples.size();
        const auto path = static_cast<Path>(random() % 4);
        SampleRequest r = makeRequest(w, s);
        auto ran = execute(*prepared[m], path, r.request);
        if (!ran) {
          if (context.stopped()) return;
          failures.add(w.name + " [" + toString(path) + "]: " + ran.error().message);
          continue;
        }
        if (r.outputs() != w.references[s]) {
          failures.add(w.name + " [" + toString(path) + "]: output differs from the reference");
        }
        ++byPath[static_cast<size_t>(path)];
        context.progressed();
      }
    });
  }
  threads.clear();
  nlohmann::json metrics = {{"threads", context.options().threads},
                            {"models", workloads->size()},
                            {"executions", context.operations()},
                            {"sync", byPath[0].load()},
                            {"async", byPath[1].load()},
                            {"fenced", byPath[2].load()},
                            {"burst", byPath[3].load()}};
  Outcome outcome = failures.outcome(std::move(metrics));
  if (outcome.verdict == Verdict::kSuccess) {
    outcome.message = std::to_string(context.operations()) + " executions on " +
                      std::to_string(context.options().threads) +
                      " threads, all equal to the reference";
  }
  return outcome;
}

Outcome memoryMappedModelLoad(TestContext& context) {
  auto device = connectClient(context, "mmap load");
  if (!device) return {Verdict::kFailure, device.error().message, {}};
  auto workloads = referenceWorkloads(context, **device);
  if (!workloads) return {Verdict::kFailure, workloads.error().message, {}};
  Failures failures;
  uint64_t loads = 0;
  auto random = context.random(0);
  while (context.keepGoing()) {
    const Workload& w = (*workloads)[random() % workloads->size()];
    auto mapped = withFileBackedPools(w.model, std::filesystem::temp_directory_path());
    if (!mapped) {
      failures.add(mapped.error().message);
      break;
    }
    auto prepared = (*device)->prepareModel(std::move(*mapped));
    if (!prepared) {
      if (context.stopped()) break;
      failures.add(w.name + ": prepareModel: " + prepared.error().message);
      continue;
    }
    ++loads;
    const size_t s = random() % w.samples.size();
    SampleRequest r = makeRequest(w, s);
    auto ran = execute(**prepared, Path::kSync, r.request);
    if (!ran) {
      if (context.stopped()) break;
      failures.add(w.name + ": " + ran.error().message);
    } else if (r.outputs() != w.references[s]) {
      failures.add(w.name + ": output of the memory-mapped model differs from the reference");
    }
    context.progressed();
  }
  Outcome outcome = failures.outcome({{"loads", loads}});
  if (outcome.verdict == Verdict::kSuccess) {
    outcome.message = std::to_string(loads) + " loads from file-backed pools, outputs exact";
  }
  return outcome;
}

Outcome performanceDegradation(TestContext& context) {
  auto device = connectClient(context, "latency");
  if (!device) return {Verdict::kFailure, device.error().message, {}};
  auto workloads = referenceWorkloads(context, **device);
  if (!workloads) return {Verdict::kFailure, workloads.error().message, {}};
  // The fastest model measures latency; the biggest one keeps the compilers busy.
  auto bySize = [](const Workload& w) {
    size_t bytes = w.model.operandValues.size();
    for (const Memory& pool : w.model.pools) bytes += pool.size();
    return bytes;
  };
  const auto [smallest, largest] = std::minmax_element(
      workloads->begin(), workloads->end(),
      [&](const Workload& a, const Workload& b) { return bySize(a) < bySize(b); });
  auto prepared = (*device)->prepareModel(smallest->model);
  if (!prepared) return {Verdict::kFailure, "prepareModel: " + prepared.error().message, {}};
  SampleRequest r = makeRequest(*smallest, 0);

  // Alone and with the compilers running, in alternating windows, so that the machine's
  // drift (frequency, neighbours) touches both sides alike. After each switch the latency
  // settles (a preparation in flight finishes) before samples count.
  constexpr auto kWindow = std::chrono::milliseconds(500);
  constexpr auto kSettle = std::chrono::milliseconds(100);
  std::atomic<bool> compiling{false};
  std::atomic<bool> stopCompiling{false};
  std::atomic<uint64_t> compilations{0};
  Failures failures;
  std::vector<double> alone;
  std::vector<double> loaded;
  auto sample = [&](Clock::time_point until, std::vector<double>* into) -> Result<void> {
    while (Clock::now() < until && !context.stopped()) {
      const auto start = Clock::now();
      NNHAL_TRY(execute(**prepared, Path::kSync, r.request));
      if (into != nullptr) {
        into->push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
      }
      context.progressed();
    }
    return {};
  };
  for (int i = 0; i < 5; ++i) (void)execute(**prepared, Path::kSync, r.request);  // warm up
  {
    std::vector<std::jthread> compilers;
    for (unsigned t = 0; t < context.options().compileThreads; ++t) {
      compilers.emplace_back([&, t] {
        auto client = connectClient(context, "compiler " + std::to_string(t));
        if (!client) return failures.add("connect: " + client.error().message);
        while (!stopCompiling.load()) {
          if (!compiling.load()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            continue;
          }
          auto compiled = (*client)->prepareModel(largest->model);
          if (!compiled && !stopCompiling.load()) {
            failures.add("prepareModel: " + compiled.error().message);
          }
          ++compilations;
          context.progressed();
        }
      });
    }
    Result<void> sampled;
    while (sampled && Clock::now() + 2 * kWindow < context.deadline() && !context.stopped()) {
      compiling = false;
      sampled = sample(Clock::now() + kSettle, nullptr);
      if (sampled) sampled = sample(Clock::now() + kWindow - kSettle, &alone);
      compiling = true;
      if (sampled) sampled = sample(Clock::now() + kSettle, nullptr);
      if (sampled) sampled = sample(Clock::now() + kWindow - kSettle, &loaded);
    }
    stopCompiling = true;
    if (!sampled) return {Verdict::kFailure, "execution: " + sampled.error().message, {}};
  }
  if (alone.empty() || loaded.empty()) {
    return {Verdict::kFailure, "too short to measure (give --duration of at least 2 s)", {}};
  }
  auto median = [](std::vector<double>& v) {
    std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  const double medianAlone = median(alone);
  const double medianLoaded = median(loaded);
  const double ratio = medianLoaded / medianAlone;
  nlohmann::json metrics = {{"model", smallest->name},
                            {"compiled_model", largest->name},
                            {"compile_threads", context.options().compileThreads},
                            {"median_alone_us", medianAlone},
                            {"median_while_compiling_us", medianLoaded},
                            {"samples_alone", alone.size()},
                            {"samples_while_compiling", loaded.size()},
                            {"ratio", ratio},
                            {"max_ratio", context.options().maxDegradation},
                            {"compilations", compilations.load()}};
  Outcome outcome = failures.outcome(metrics);
  if (outcome.verdict == Verdict::kSuccess && ratio > context.options().maxDegradation) {
    outcome = {Verdict::kFailure,
               "inference latency grew " + std::to_string(ratio) + "x while compiling (at most " +
                   std::to_string(context.options().maxDegradation) + "x)",
               metrics};
  } else if (outcome.verdict == Verdict::kSuccess) {
    outcome.message = "latency x" + std::to_string(ratio).substr(0, 4) + " while " +
                      std::to_string(context.options().compileThreads) + " threads compile";
  }
  return outcome;
}

}  // namespace nnhal::stress
