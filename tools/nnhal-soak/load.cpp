#include "nnhal-soak/load.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "common/unique_fd.h"
#include "nnhal/client.h"

namespace nnhal::soak {
namespace {

using Clock = std::chrono::steady_clock;

const char* const kPathNames[] = {"sync", "async", "fenced", "burst"};

/// The two cache files of one model of one client, created on first use.
struct ModelCache {
  common::UniqueFd model, data;
  CacheFiles files;
  bool saved = false;
};

Result<ModelCache> openCache(const std::filesystem::path& directory, size_t index,
                             const std::string& client) {
  ModelCache cache;
  const std::filesystem::path base = directory / (client + "-model" + std::to_string(index));
  cache.model.reset(::open((base.string() + ".model").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  cache.data.reset(::open((base.string() + ".data").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!cache.model.valid() || !cache.data.valid()) {
    return fail(ErrorStatus::GENERAL_FAILURE, "cannot create cache files " + base.string());
  }
  cache.files.modelCache = {{cache.model.get()}};
  cache.files.dataCache = {{cache.data.get()}};
  // One token per pair of files: the driver keeps one saved compilation per token.
  const std::string token = client + "-model" + std::to_string(index);
  cache.files.token.fill(0);
  std::copy_n(token.begin(), std::min(token.size(), cache.files.token.size()),
              cache.files.token.begin());
  return cache;
}

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

Load::Load(LoadOptions options, std::vector<stress::Workload> workloads, Recorder& recorder)
    : options_(std::move(options)),
      workloads_(std::move(workloads)),
      recorder_(recorder),
      slots_(options_.clients + 1) {}

Load::~Load() {
  stopping_ = true;
  for (std::thread& t : threads_) t.join();
}

template <typename Fn>
auto Load::timed(Slot& slot, const char* what, size_t model, Fn&& call) {
  slot.what = what;
  slot.model = model;
  slot.callStart = Clock::now().time_since_epoch().count();
  auto result = call();
  slot.callStart = 0;
  return result;
}

void Load::start() {
  for (unsigned i = 0; i < options_.clients; ++i)
    threads_.emplace_back([this, i] { runClient(i); });
  threads_.emplace_back([this] { runCompiler(); });
}

bool Load::stop() {
  stopping_ = true;
  if (stuckCall(std::chrono::seconds(0)).has_value()) {
    // Give running calls a moment to end; one still running then is stuck.
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < until && stuckCall(std::chrono::seconds(0)).has_value()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (stuckCall(std::chrono::seconds(0)).has_value()) return false;
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  return true;
}

std::optional<std::string> Load::stuckCall(std::chrono::milliseconds limit) const {
  const int64_t now = Clock::now().time_since_epoch().count();
  for (size_t i = 0; i < slots_.size(); ++i) {
    const int64_t start = slots_[i].callStart.load();
    if (start == 0) continue;
    const double seconds = static_cast<double>(now - start) / 1e9;
    if (seconds * 1000 >= static_cast<double>(limit.count())) {
      const std::string who =
          i < options_.clients ? "client " + std::to_string(i) : std::string("compiler");
      char text[256];
      const std::string what = slots_[i].what.load();
      const std::string target =
          what == "connect" ? "" : " of " + workloads_[slots_[i].model.load()].name;
      std::snprintf(text, sizeof text, "%s: %s%s running for %.1f s", who.c_str(), what.c_str(),
                    target.c_str(), seconds);
      return std::string(text);
    }
  }
  return std::nullopt;
}

void Load::runClient(unsigned index) {
  Slot& slot = slots_[index];
  std::mt19937_64 random(options_.seed * 7919 + index);
  const std::string name = "client" + std::to_string(index);
  std::vector<std::optional<ModelCache>> caches(workloads_.size());
  while (!stopping_) {
    // Join.
    ClientOptions clientOptions;
    clientOptions.clientName = "nnhal-soak " + name;
    auto device =
        timed(slot, "connect", 0, [&] { return connect(options_.socket, clientOptions); });
    if (!device) {
      recorder_.failure(std::string(toString(device.error().status)), device.error().message);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      continue;
    }
    std::vector<std::shared_ptr<PreparedModel>> prepared(workloads_.size());
    std::vector<std::shared_ptr<Burst>> bursts(workloads_.size());
    for (size_t m = 0; m < workloads_.size() && !stopping_; ++m) {
      if (!caches[m] && options_.useCache) {
        auto opened = openCache(options_.cacheDirectory, m, name);
        if (opened) caches[m] = std::move(*opened);
      }
      const auto start = Clock::now();
      Result<std::shared_ptr<PreparedModel>> p = fail(ErrorStatus::GENERAL_FAILURE, "");
      bool fromCache = false;
      if (caches[m] && caches[m]->saved) {
        p = timed(slot, "preparation from cache", m,
                  [&] { return (*device)->prepareModelFromCache(caches[m]->files); });
        fromCache = p.has_value();
      }
      if (!fromCache) {
        PrepareOptions options;
        if (caches[m]) options.cache = caches[m]->files;
        p = timed(slot, "preparation", m,
                  [&] { return (*device)->prepareModel(workloads_[m].model, options); });
        if (p && caches[m]) caches[m]->saved = true;
      }
      if (!p) {
        recorder_.failure(std::string(toString(p.error().status)),
                          workloads_[m].name + " preparation: " + p.error().message);
        continue;
      }
      recorder_.success(workloads_[m].name + (fromCache ? " from cache" : " compile"),
                        msSince(start), true);
      prepared[m] = *p;
    }
    // Run a session of executions.
    const uint64_t executions = 100 + random() % 400;
    for (uint64_t e = 0; e < executions && !stopping_; ++e) {
      const size_t m = random() % workloads_.size();
      if (!prepared[m]) continue;
      const stress::Workload& w = workloads_[m];
      const size_t s = random() % w.samples.size();
      const auto path = static_cast<stress::Path>(random() % 4);
      if (path == stress::Path::kBurst && !bursts[m]) {
        auto burst = timed(slot, "burst configuration", m,
                           [&] { return prepared[m]->configureExecutionBurst(); });
        if (!burst) {
          recorder_.failure(std::string(toString(burst.error().status)),
                            w.name + " burst: " + burst.error().message);
          continue;
        }
        bursts[m] = *burst;
      }
      stress::SampleRequest r = stress::makeRequest(w, s);
      const char* what = kPathNames[static_cast<int>(path)];
      const auto start = Clock::now();
      auto ran = timed(slot, what, m, [&] {
        return stress::execute(*prepared[m], path, r.request, bursts[m].get());
      });
      const double ms = msSince(start);
      if (!ran) {
        recorder_.failure(std::string(toString(ran.error().status)),
                          w.name + " " + what + ": " + ran.error().message);
      } else if (r.outputs() != w.references[s]) {
        recorder_.failure("WRONG_OUTPUT",
                          w.name + " " + what + ": output differs from the reference");
      } else {
        recorder_.success(w.name + " " + what, ms, false);
      }
    }
    // Leave: everything the client held goes with its connection.
  }
}

void Load::runCompiler() {
  Slot& slot = slots_[options_.clients];
  std::mt19937_64 random(options_.seed * 7919 + 1000);
  ClientOptions clientOptions;
  clientOptions.clientName = "nnhal-soak compiler";
  std::shared_ptr<Device> device;
  std::vector<std::optional<ModelCache>> caches(workloads_.size());
  bool withCache = false;
  while (!stopping_) {
    for (int i = 0; i < 20 && !stopping_; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (stopping_) break;
    if (!device) {
      auto connected = connect(options_.socket, clientOptions);
      if (!connected) {
        recorder_.failure(std::string(toString(connected.error().status)),
                          "compiler connect: " + connected.error().message);
        continue;
      }
      device = *connected;
    }
    const size_t m = random() % workloads_.size();
    withCache = !withCache && options_.useCache;
    if (withCache && !caches[m]) {
      auto opened = openCache(options_.cacheDirectory, m, "compiler");
      if (opened) caches[m] = std::move(*opened);
    }
    const auto start = Clock::now();
    Result<std::shared_ptr<PreparedModel>> p = fail(ErrorStatus::GENERAL_FAILURE, "");
    std::string series = workloads_[m].name + " compile";
    if (withCache && caches[m] && caches[m]->saved) {
      p = timed(slot, "preparation from cache", m,
                [&] { return device->prepareModelFromCache(caches[m]->files); });
      series = workloads_[m].name + " from cache";
    } else {
      PrepareOptions options;
      if (withCache && caches[m]) options.cache = caches[m]->files;
      p = timed(slot, "preparation", m,
                [&] { return device->prepareModel(workloads_[m].model, options); });
      if (p && withCache && caches[m]) caches[m]->saved = true;
    }
    if (!p) {
      recorder_.failure(std::string(toString(p.error().status)),
                        workloads_[m].name + " compiler: " + p.error().message);
      continue;
    }
    recorder_.success(series, msSince(start), true);
  }
}

}  // namespace nnhal::soak
