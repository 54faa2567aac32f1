// Stress tests with client processes: early termination (clients killed with SIGKILL in the
// middle of compiling, executing on every path, and holding device buffers), multi-process
// inference and multi-process model load with random kills. Children are this program run
// again (`--child ROLE`), so nothing forks a multi-threaded process without exec.
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

#include "common/unique_fd.h"
#include "nnhal-stress/stress_tests.h"
#include "nnhal/buffer.h"
#include "nnhal/client.h"

extern char** environ;

namespace nnhal::stress {
namespace {

using Clock = std::chrono::steady_clock;

/// A child process running `role` until `deadline` (seconds of the steady clock are not
/// shared between processes, so it gets the time left instead).
pid_t spawnChild(const TestContext& context, const std::string& role, uint64_t salt,
                 std::chrono::milliseconds left) {
  const StressOptions& o = context.options();
  std::vector<std::string> args = {o.self.string(),
                                   "--child",
                                   role,
                                   "--connect",
                                   o.socket.string(),
                                   "--models",
                                   o.models.string(),
                                   "--seed",
                                   std::to_string(o.seed * 1000003 + salt),
                                   "--duration",
                                   std::to_string(std::max<int64_t>(left.count(), 1)) + "ms"};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

/// The cache files of one model in one model-load child: two memfds (regular files, as the
/// driver requires) and a token of this process's own.
struct MemoryCacheFiles {
  common::UniqueFd model, data;
  CacheFiles files;
  bool saved = false;  ///< a preparation wrote the model cache

  static std::optional<MemoryCacheFiles> create(size_t index) {
    MemoryCacheFiles cache;
    cache.model.reset(::memfd_create("nnhal-stress-model-cache", MFD_CLOEXEC));
    cache.data.reset(::memfd_create("nnhal-stress-data-cache", MFD_CLOEXEC));
    if (!cache.model.valid() || !cache.data.valid()) return std::nullopt;
    cache.files.modelCache = {{cache.model.get()}};
    cache.files.dataCache = {{cache.data.get()}};
    const auto pid = static_cast<uint64_t>(::getpid());
    for (size_t i = 0; i < 8; ++i) cache.files.token[i] = static_cast<uint8_t>(pid >> (8 * i));
    for (size_t i = 0; i < 8; ++i) {
      cache.files.token[8 + i] = static_cast<uint8_t>(static_cast<uint64_t>(index) >> (8 * i));
    }
    return cache;
  }
  bool written() const {
    struct stat st {};
    return ::fstat(model.get(), &st) == 0 && st.st_size > 0;
  }
};

/// "used", or "not used: " and the daemon's reason (it reports no cache files).
std::string cachingUse(const TestContext& context) {
  auto device = connectClient(context, "caching query");
  if (!device) return "unknown: " + device.error().message;
  const CompilationCaching caching = (*device)->getCompilationCaching();
  return caching.available ? "used" : "not used: " + caching.reason;
}

std::chrono::milliseconds timeLeft(const TestContext& context) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(context.deadline() - Clock::now());
}

/// A tiny execution on a fresh connection: the daemon still serves new clients.
Result<void> probe(const TestContext& context) {
  auto device = connectClient(context, "probe");
  if (!device) return std::unexpected(device.error());
  Model model;
  Operand tensor;
  tensor.type = OperandType::TENSOR_FLOAT32;
  tensor.dimensions = {4};
  tensor.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  tensor.numberOfConsumers = 1;
  model.main.operands = {tensor, tensor};
  Operand act;
  act.type = OperandType::INT32;
  act.lifetime = OperandLifeTime::CONSTANT_COPY;
  act.location = {0, 0, 4};
  act.numberOfConsumers = 1;
  model.operandValues.assign(4, 0);
  model.main.operands.push_back(act);
  tensor.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  tensor.numberOfConsumers = 0;
  model.main.operands.push_back(tensor);
  model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {3};
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<PreparedModel> prepared,
                         (*device)->prepareModel(std::move(model)));
  Memory pool = *Memory::create(48);
  auto* f = reinterpret_cast<float*>(pool.data());
  for (int i = 0; i < 8; ++i) f[i] = static_cast<float>(i);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  request.outputs = {{false, {0, 32, 16}, {}}};
  NNHAL_TRY(prepared->executeSynchronously(request));
  if (f[8] != 4.0f || f[11] != 10.0f) {
    return fail(ErrorStatus::GENERAL_FAILURE, "the probe's ADD computed a wrong sum");
  }
  return {};
}

/// Runs `processes` children of `role` and kills one with SIGKILL at random moments (every
/// `killEvery` on average), replacing it; children not killed must exit 0 at the end.
Outcome withRandomKills(TestContext& context, const std::string& role, unsigned processes,
                        std::chrono::milliseconds killEvery) {
  auto random = context.random(0xC0FFEE);
  std::vector<pid_t> children;
  uint64_t spawned = 0;
  uint64_t killed = 0;
  uint64_t probes = 0;
  std::string failure;
  auto spawn = [&] {
    const pid_t pid = spawnChild(context, role, spawned++, timeLeft(context));
    if (pid < 0) {
      failure = "cannot start a child process";
    } else {
      children.push_back(pid);
    }
  };
  auto reap = [&](pid_t pid, int status) {
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      if (failure.empty()) {
        failure = "a " + role + " client " +
                  (WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status))
                                       : "exited with " + std::to_string(WEXITSTATUS(status))) +
                  " (its stderr says why)";
      }
    }
    children.erase(std::remove(children.begin(), children.end(), pid), children.end());
  };
  for (unsigned p = 0; p < processes && failure.empty(); ++p) spawn();
  while (context.keepGoing() && failure.empty()) {
    const auto wait = std::chrono::milliseconds(
        random() % static_cast<uint64_t>(2 * std::max<int64_t>(killEvery.count(), 1)));
    const auto until = std::min(Clock::now() + wait, context.deadline());
    while (Clock::now() < until && !context.stopped()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      int status = 0;
      const pid_t done = ::waitpid(-1, &status, WNOHANG);
      if (done > 0) reap(done, status);
    }
    if (!context.keepGoing() || children.empty()) break;
    const pid_t victim = children[random() % children.size()];
    ::kill(victim, SIGKILL);
    ::waitpid(victim, nullptr, 0);
    children.erase(std::remove(children.begin(), children.end(), victim), children.end());
    ++killed;
    auto alive = probe(context);
    if (!alive) {
      if (context.stopped()) break;
      failure = "after killing a " + role +
                " client, a new client was not served: " + alive.error().message;
      break;
    }
    ++probes;
    context.progressed();
    if (timeLeft(context).count() > 50) spawn();
  }
  // The rest end by themselves at the deadline (or are stopped with the run).
  const auto grace = Clock::now() + std::chrono::seconds(30);
  while (!children.empty()) {
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done > 0) {
      reap(done, status);
      continue;
    }
    if (context.stopped() || Clock::now() > grace) {
      for (pid_t pid : children) ::kill(pid, SIGKILL);
      for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
      if (failure.empty() && !context.stopped()) failure = "clients did not finish in time";
      children.clear();
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  nlohmann::json metrics = {
      {"clients_started", spawned}, {"clients_killed", killed}, {"probes_served", probes}};
  if (!failure.empty()) return {Verdict::kFailure, failure, metrics};
  return {Verdict::kSuccess,
          std::to_string(killed) + " clients killed, the daemon served every probe", metrics};
}

}  // namespace

Outcome clientEarlyTermination(TestContext& context) {
  return withRandomKills(context, "early-termination", context.options().processes,
                         std::chrono::milliseconds(150));
}

Outcome multiProcessInference(TestContext& context) {
  return withRandomKills(context, "inference", context.options().processes,
                         std::chrono::milliseconds(500));
}

Outcome multiProcessModelLoad(TestContext& context) {
  const std::string caching = cachingUse(context);
  Outcome outcome = withRandomKills(context, "model-load", context.options().processes,
                                    std::chrono::milliseconds(500));
  outcome.metrics["compilation_caching"] = caching;
  if (outcome.verdict == Verdict::kSuccess) outcome.message += "; compilation caching " + caching;
  return outcome;
}

int runChild(const std::string& role, const StressOptions& options) {
  std::atomic<bool> stop{false};
  TestContext context(options, stop);
  auto device = connectClient(context, role);
  if (!device) {
    std::fprintf(stderr, "nnhal-stress child: %s\n", device.error().message.c_str());
    return 2;
  }
  auto workloads = loadWorkloads(options.models, options.seed);
  if (!workloads) return 2;
  // The models the driver prepares (the others import but cannot run yet).
  std::erase_if(*workloads, [&](const Workload& w) { return !(*device)->prepareModel(w.model); });
  if (workloads->empty()) return 2;
  auto random = context.random(1);
  auto report = [&](const std::string& what, const Error& error) {
    std::fprintf(stderr, "nnhal-stress child (%s): %s: %s (%s)\n", role.c_str(), what.c_str(),
                 error.message.c_str(), std::string(toString(error.status)).c_str());
    return 1;
  };
  if (role == "model-load") {
    // Compilation caching only where the daemon asks for cache files (IDevice.hal 1.2: (0, 0)
    // means none): each model is compiled and saved once, then prepared from its cache or
    // compiled again at random, so that kills land in saves and loads too.
    const bool useCache = (*device)->getCompilationCaching().available;
    std::vector<std::optional<MemoryCacheFiles>> caches(workloads->size());
    while (context.keepGoing()) {
      const size_t m = random() % workloads->size();
      const Workload& w = (*workloads)[m];
      std::optional<MemoryCacheFiles>& cache = caches[m];
      if (useCache && cache && cache->saved && random() % 2 == 0) {
        auto loaded = (*device)->prepareModelFromCache(cache->files);
        if (!loaded) return report("prepareModelFromCache " + w.name, loaded.error());
        continue;
      }
      PrepareOptions options;
      if (useCache && !cache) cache = MemoryCacheFiles::create(m);
      if (useCache && cache) options.cache = cache->files;
      auto prepared = (*device)->prepareModel(w.model, options);
      if (!prepared) return report("prepareModel " + w.name, prepared.error());
      if (cache) cache->saved = cache->written();
    }
    return 0;
  }
  std::vector<std::shared_ptr<PreparedModel>> prepared;
  for (const Workload& w : *workloads) {
    auto p = (*device)->prepareModel(w.model);
    if (!p) return report("prepareModel " + w.name, p.error());
    prepared.push_back(*p);
  }
  // Early termination adds compilations and device buffers to the mix, so that kills land in
  // the middle of each.
  std::vector<AllocatedBuffer> buffers;
  while (context.keepGoing()) {
    const size_t m = random() % workloads->size();
    const Workload& w = (*workloads)[m];
    const unsigned action = role == "early-termination" ? random() % 6 : random() % 4;
    if (action == 4) {
      auto p = (*device)->prepareModel(w.model);
      if (!p) return report("prepareModel " + w.name, p.error());
      continue;
    }
    if (action == 5) {
      auto buffer = (*device)->allocate({}, {prepared[m]}, {}, {{0, 0, 1.0f}});
      if (!buffer) return report("allocate", buffer.error());
      buffers.push_back(*buffer);
      SampleRequest r = makeRequest(w, 0);
      if (r.request.outputs.size() == 1) {
        r.request.pools.emplace_back(MemoryDomainToken{buffer->token});
        r.request.outputs[0].location = {1, 0, 0};
        auto ran = execute(*prepared[m], Path::kSync, r.request);
        if (!ran) return report("execution into a device buffer", ran.error());
      }
      if (buffers.size() > 8) buffers.erase(buffers.begin());
      continue;
    }
    const auto path = static_cast<Path>(action);
    const size_t s = random() % w.samples.size();
    SampleRequest r = makeRequest(w, s);
    auto ran = execute(*prepared[m], path, r.request);
    if (!ran) return report(std::string("execute ") + toString(path), ran.error());
  }
  return 0;
}

}  // namespace nnhal::stress
