// Compilation caching on MobileNet v2 (uint8): Device::prepareModel (compile) against
// Device::prepareModelFromCache (read + authenticate + parse + validate + compile with the
// restored packed weights), in the same run, plus the engine-level pair without the actor
// runtime. Every iteration is timed on its own; BM_CacheSpeedup reports medians (robust to
// the noise of a shared machine) and means, and their ratios (compile / from cache).
//
//   build/cache_bench --benchmark_format=json
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "cache/cache_format.h"
#include "cache/file_io.h"
#include "engine/compiler.h"
#include "hal/validation.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"

namespace {

using namespace nnhal;
using Clock = std::chrono::steady_clock;

const std::string kModel =
    std::string(NNHAL_SHARED_DIR) + "/models/mobilenet_v2_1.0_224_quant.tflite";

/// Wall times of every iteration of one benchmark, in milliseconds.
struct Samples {
  std::vector<double> ms;
  void add(Clock::duration d) {
    ms.push_back(std::chrono::duration<double, std::milli>(d).count());
  }
  double mean() const {
    double sum = 0;
    for (double v : ms) sum += v;
    return ms.empty() ? 0.0 : sum / static_cast<double>(ms.size());
  }
  double quantile(double q) const {
    if (ms.empty()) return 0.0;
    std::vector<double> sorted = ms;
    std::sort(sorted.begin(), sorted.end());
    return sorted[static_cast<size_t>(q * static_cast<double>(sorted.size() - 1))];
  }
};

/// Per-benchmark samples, for BM_CacheSpeedup.
struct AllSamples {
  Samples prepare, fromCache, compile, compileFromBuffers;
} gSamples;

void reportQuantiles(benchmark::State& state, const Samples& samples) {
  state.counters["median_ms"] = samples.quantile(0.5);
  state.counters["p10_ms"] = samples.quantile(0.1);
  state.counters["p90_ms"] = samples.quantile(0.9);
}

/// A state directory and the two cache files of one saved MobileNet compilation.
class SavedCache {
 public:
  SavedCache() {
    char pattern[] = "/tmp/nnhal_cache_bench_XXXXXX";
    dir_ = mkdtemp(pattern);
    DeviceOptions options;
    options.stateDirectory = dir_ / "state";
    device_ = *createDevice(options);
    model_ = ::open((dir_ / "model").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    data_ = ::open((dir_ / "data").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    files_.modelCache = {{model_}};
    files_.dataCache = {{data_}};
    files_.token[0] = 42;
    PrepareOptions prepare;
    prepare.cache = files_;
    auto saved = device_->prepareModel(importTfliteFile(kModel)->model, prepare);
    if (!saved) {
      std::fprintf(stderr, "cannot save the cache: %s\n", saved.error().message.c_str());
      std::abort();
    }
  }
  ~SavedCache() {
    device_.reset();
    ::close(model_);
    ::close(data_);
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  Device& device() { return *device_; }
  const CacheFiles& files() const { return files_; }
  size_t modelBytes() const { return std::filesystem::file_size(dir_ / "model"); }
  size_t dataBytes() const { return std::filesystem::file_size(dir_ / "data"); }

 private:
  std::filesystem::path dir_;
  std::shared_ptr<Device> device_;
  int model_ = -1, data_ = -1;
  CacheFiles files_;
};

/// Minor page faults of the whole process so far.
double minorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_minflt);
}

/// CPU time of the whole process (every thread), in milliseconds.
double processCpuMs() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(usage.ru_utime) + ms(usage.ru_stime);
}

void BM_PrepareModel(benchmark::State& state) {
  const ImportedModel imported = *importTfliteFile(kModel);
  auto device = *createDevice();
  Samples& samples = gSamples.prepare;
  const double cpuStart = processCpuMs();
  for (auto _ : state) {
    const auto start = Clock::now();
    auto prepared = device->prepareModel(imported.model);
    samples.add(Clock::now() - start);
    if (!prepared) state.SkipWithError(prepared.error().message.c_str());
    benchmark::DoNotOptimize(prepared);
  }
  reportQuantiles(state, samples);
  state.counters["process_cpu_ms"] =
      (processCpuMs() - cpuStart) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
}
BENCHMARK(BM_PrepareModel)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PrepareModelFromCache(benchmark::State& state) {
  SavedCache cache;
  Samples& samples = gSamples.fromCache;
  const double cpuStart = processCpuMs();
  const double faultsStart = minorFaults();
  for (auto _ : state) {
    const auto start = Clock::now();
    auto prepared = cache.device().prepareModelFromCache(cache.files());
    samples.add(Clock::now() - start);
    if (!prepared) state.SkipWithError(prepared.error().message.c_str());
    benchmark::DoNotOptimize(prepared);
  }
  reportQuantiles(state, samples);
  state.counters["process_cpu_ms"] =
      (processCpuMs() - cpuStart) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  // Page faults per load (all threads): a load that reuses warm memory takes few.
  state.counters["faults_per_load"] =
      (minorFaults() - faultsStart) / static_cast<double>(std::max<int64_t>(state.iterations(), 1));
  state.counters["model_cache_bytes"] = static_cast<double>(cache.modelBytes());
  state.counters["data_cache_bytes"] = static_cast<double>(cache.dataBytes());
}
BENCHMARK(BM_PrepareModelFromCache)->Unit(benchmark::kMillisecond)->UseRealTime();

// Engine level, on the calling thread: validate + compile, against parse + validate +
// compile with restored state from cache bytes already in memory.
void BM_ValidateAndCompile(benchmark::State& state) {
  const ImportedModel imported = *importTfliteFile(kModel);
  Samples& samples = gSamples.compile;
  for (auto _ : state) {
    const auto start = Clock::now();
    benchmark::DoNotOptimize(hal::validateModel(imported.model));
    auto plan = engine::compile(imported.model);
    samples.add(Clock::now() - start);
    benchmark::DoNotOptimize(plan);
  }
  reportQuantiles(state, samples);
}
BENCHMARK(BM_ValidateAndCompile)->Unit(benchmark::kMillisecond);

void BM_CompileFromCacheBytes(benchmark::State& state) {
  const ImportedModel imported = *importTfliteFile(kModel);
  engine::PreparedStateStore saved(engine::PreparedStateStore::Mode::kSave);
  auto plan = engine::compile(imported.model, {&saved});
  const cache::EncodedCache encoded = *cache::encodeCache(imported.model, saved, "bench");
  cache::AlignedBuffer data = *cache::AlignedBuffer::allocate(encoded.data.size());
  std::memcpy(data.data(), encoded.data.data(), encoded.data.size());
  Samples& samples = gSamples.compileFromBuffers;
  for (auto _ : state) {
    const auto start = Clock::now();
    auto loaded = cache::compileFromCache(encoded.model, encoded.modelDigest, data, "bench");
    samples.add(Clock::now() - start);
    if (!loaded) state.SkipWithError(loaded.error().message.c_str());
    benchmark::DoNotOptimize(loaded);
  }
  reportQuantiles(state, samples);
}
BENCHMARK(BM_CompileFromCacheBytes)->Unit(benchmark::kMillisecond);

// The file side of a load alone: read both files whole and hash the model cache.
void BM_ReadCacheFiles(benchmark::State& state) {
  SavedCache cache;
  for (auto _ : state) {
    auto model = cache::readWhole(cache.files().modelCache[0][0], cache::kMaxModelCacheBytes);
    auto data = cache::readWhole(cache.files().dataCache[0][0], cache::kMaxDataCacheBytes);
    benchmark::DoNotOptimize(cache::sha256(model->bytes()));
    benchmark::DoNotOptimize(data);
  }
}
BENCHMARK(BM_ReadCacheFiles)->Unit(benchmark::kMillisecond);

double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

void BM_CacheSpeedup(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(gSamples);
  const AllSamples& s = gSamples;
  state.counters["prepare_median_ms"] = s.prepare.quantile(0.5);
  state.counters["from_cache_median_ms"] = s.fromCache.quantile(0.5);
  state.counters["device_speedup"] = ratio(s.prepare.quantile(0.5), s.fromCache.quantile(0.5));
  state.counters["device_speedup_of_means"] = ratio(s.prepare.mean(), s.fromCache.mean());
  state.counters["engine_compile_median_ms"] = s.compile.quantile(0.5);
  state.counters["engine_from_cache_median_ms"] = s.compileFromBuffers.quantile(0.5);
  state.counters["engine_speedup"] =
      ratio(s.compile.quantile(0.5), s.compileFromBuffers.quantile(0.5));
}
BENCHMARK(BM_CacheSpeedup)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
