// MobileNet end-to-end execution latency through the embedded driver, measured in the same
// process and on the same input against two engines running the same graph with the same
// weights: XNNPACK's operators (tools/cpu_reference/xnnpack_baseline.h) and oneDNN's primitives in
// oneDNN's own int8 scheme (bench/onednn_baseline.h), on the grace_hopper input:
//   MobileNet v2 1.0 224 uint8        BM_XnnpackV2Quant, BM_OnednnV2Quant,
//   BM_MobileNetV2QuantExecute the same network in float32       BM_XnnpackV2Float,
//   BM_OnednnV2Float, BM_MobileNetV2FloatExecute
//     (dequantized by tools/common/dequantize_model.h, the input dequantized likewise)
//   MobileNet v1 0.25 128 uint8       BM_XnnpackV1Quant, BM_OnednnV1Quant,
//   BM_MobileNetV1QuantExecute
// each with 1 and 2 threads (nnhal: DeviceOptions::kernelThreads; XNNPACK: the pthreadpool's
// size, the caller's thread included; oneDNN: OpenMP threads, the caller's included).
//
// Counters: median_us and p99_us over every timed execution; on nnhal's rows vs_xnnpack and
// vs_onednn = nnhal median / that engine's median at the same thread count (below 1: nnhal
// is faster); on 2-thread rows speedup_2t = 1-thread median / 2-thread median of the same
// engine (the reference medians are the median over their 3 repetitions); on the baselines'
// rows max_diff_vs_nnhal = largest absolute difference from nnhal's output (uint8 steps, or
// float probabilities). Before timing, a baseline's benchmark fails unless its top-1 class
// equals nnhal's. Run with --benchmark_out=mobilenet.json --benchmark_out_format=json.
// Built without a baseline (-DNNHAL_XNNPACK_BASELINE=OFF, -DNNHAL_ONEDNN_BASELINE=OFF), its
// rows and ratios are left out. bench/onednn_layers.cpp shows where the time goes, operation
// by operation.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "nnhal/device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/dequantize_model.h"
#include "tools/common/tensor_io.h"
#ifdef NNHAL_HAVE_XNNPACK
#include "tools/cpu_reference/xnnpack_baseline.h"
#endif
#ifdef NNHAL_HAVE_ONEDNN
#include "bench/onednn_baseline.h"
#endif

namespace {

using namespace nnhal;
using Clock = std::chrono::steady_clock;

const std::string kModels = std::string(NNHAL_SHARED_DIR) + "/models/";

enum class Net { kV2Quant, kV2Float, kV1Quant };
enum class Engine { kNnhal, kXnnpack, kOnednn };

/// A network ready to run: the Model both engines run, its input tensor and what its
/// output is (a [1, 1001] score vector).
struct Workload {
  Model model;
  std::vector<uint8_t> input;
  TensorDescription output;
};

/// Imports (and for kV2Float dequantizes) the network and its grace_hopper input.
Result<Workload> loadWorkload(Net net) {
  const std::string name =
      net == Net::kV1Quant ? "mobilenet_v1_0.25_128_quant" : "mobilenet_v2_1.0_224_quant";
  NNHAL_ASSIGN_OR_RETURN(ImportedModel imported, importTfliteFile(kModels + name + ".tflite"));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint8_t> input,
                         tools::readFile(kModels + "inputs/" + name + "__grace_hopper.input.bin"));
  Workload workload{std::move(imported.model), std::move(input), imported.outputs.at(0)};
  if (net != Net::kV2Float) return workload;
  NNHAL_ASSIGN_OR_RETURN(workload.model, tools::dequantizeModel(workload.model));
  const TensorDescription& quantInput = imported.inputs.at(0);
  std::vector<uint8_t> floats(workload.input.size() * sizeof(float));
  for (size_t i = 0; i < workload.input.size(); ++i) {
    const float value =
        static_cast<float>(workload.input[i] - quantInput.zeroPoint) * quantInput.scale;
    std::memcpy(floats.data() + i * sizeof(float), &value, sizeof(float));
  }
  workload.input = std::move(floats);
  workload.output.type = OperandType::TENSOR_FLOAT32;
  workload.output.scale = 0.0f;
  workload.output.zeroPoint = 0;
  return workload;
}

/// The network imported once per process; later calls share its pools.
Result<Workload> cachedWorkload(Net net) {
  static std::map<Net, Workload> loaded;
  if (auto found = loaded.find(net); found != loaded.end()) return found->second;
  NNHAL_ASSIGN_OR_RETURN(Workload workload, loadWorkload(net));
  return loaded.emplace(net, std::move(workload)).first->second;
}

/// A prepared model with its request: the input at offset 0 of one pool, the output after it.
class NnhalRunner {
 public:
  static Result<NnhalRunner> create(const Workload& workload, unsigned threads) {
    DeviceOptions options;
    options.kernelThreads = threads;
    NNHAL_ASSIGN_OR_RETURN(auto device, createDevice(options));
    NNHAL_ASSIGN_OR_RETURN(auto prepared, device->prepareModel(workload.model));
    const size_t inputBytes = workload.input.size();
    const size_t outputOffset = (inputBytes + 63) / 64 * 64;
    const size_t outputBytes = tools::tensorBytes(workload.output);
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(outputOffset + outputBytes));
    std::memcpy(pool.data(), workload.input.data(), inputBytes);
    Request request;
    request.pools.push_back(pool);
    request.inputs.push_back({false, {0, 0, static_cast<uint32_t>(inputBytes)}, {}});
    request.outputs.push_back(
        {false, {0, static_cast<uint32_t>(outputOffset), static_cast<uint32_t>(outputBytes)}, {}});
    return NnhalRunner(std::move(device), std::move(prepared), std::move(pool), std::move(request),
                       outputOffset, outputBytes);
  }

  Result<void> run() {
    auto result = prepared_->executeSynchronously(request_);
    if (!result) return std::unexpected(result.error());
    return {};
  }

  std::vector<uint8_t> output() const {
    return {pool_.data() + outputOffset_, pool_.data() + outputOffset_ + outputBytes_};
  }

 private:
  NnhalRunner(std::shared_ptr<Device> device, std::shared_ptr<PreparedModel> prepared, Memory pool,
              Request request, size_t outputOffset, size_t outputBytes)
      : device_(std::move(device)),
        prepared_(std::move(prepared)),
        pool_(std::move(pool)),
        request_(std::move(request)),
        outputOffset_(outputOffset),
        outputBytes_(outputBytes) {}

  std::shared_ptr<Device> device_;
  std::shared_ptr<PreparedModel> prepared_;
  Memory pool_;
  Request request_;
  size_t outputOffset_;
  size_t outputBytes_;
};

/// Each repetition runs at least this long (Google Benchmark's MinTime).
constexpr double kMinTimeSeconds = 1.0;

/// The median (µs) of every repetition so far, by network, engine and thread count.
std::map<std::tuple<Net, Engine, int64_t>, std::vector<double>>& medians() {
  static std::map<std::tuple<Net, Engine, int64_t>, std::vector<double>> values;
  return values;
}

/// The median of the repetitions' medians recorded under `key`, or 0 when none ran.
double medianOfRepetitions(const std::tuple<Net, Engine, int64_t>& key) {
  const auto found = medians().find(key);
  if (found == medians().end() || found->second.empty()) return 0.0;
  std::vector<double> values = found->second;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// Times every execution of `run` (which returns false after reporting a failure); reports
/// median_us, p99_us, speedup_2t against this engine's 1-thread median and, for nnhal,
/// vs_xnnpack and vs_onednn against those engines' medians at the same thread count. The references
/// are the median over their repetitions, so one disturbed repetition does not skew every ratio;
/// the shorter runs Google Benchmark makes to choose an iteration count are not recorded.
template <typename Run>
void timeExecutions(benchmark::State& state, Net net, Engine engine, Run&& run) {
  const int64_t threads = state.range(0);
  std::vector<double> samples;
  samples.reserve(100000);
  const auto loopStart = Clock::now();
  for (auto _ : state) {
    const auto start = Clock::now();
    if (!run()) return;
    samples.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  const bool fullRun =
      std::chrono::duration<double>(Clock::now() - loopStart).count() >= 0.99 * kMinTimeSeconds;
  if (samples.empty()) return;
  std::sort(samples.begin(), samples.end());
  const double median = samples[samples.size() / 2];
  state.counters["threads"] = static_cast<double>(threads);
  state.counters["median_us"] = median;
  state.counters["p99_us"] = samples[std::min(samples.size() - 1, samples.size() * 99 / 100)];
  if (fullRun) medians()[{net, engine, threads}].push_back(median);
  if (const double one = medianOfRepetitions({net, engine, 1}); threads == 2 && one > 0.0) {
    state.counters["speedup_2t"] = one / median;
  }
  if (engine != Engine::kNnhal) return;
  if (const double xnn = medianOfRepetitions({net, Engine::kXnnpack, threads}); xnn > 0.0) {
    state.counters["vs_xnnpack"] = median / xnn;
  }
  if (const double dnnl = medianOfRepetitions({net, Engine::kOnednn, threads}); dnnl > 0.0) {
    state.counters["vs_onednn"] = median / dnnl;
  }
}

void benchNnhal(benchmark::State& state, Net net) {
  auto workload = cachedWorkload(net);
  if (!workload) {
    state.SkipWithError(workload.error().message.c_str());
    return;
  }
  auto runner = NnhalRunner::create(*workload, static_cast<unsigned>(state.range(0)));
  if (!runner) {
    state.SkipWithError(runner.error().message.c_str());
    return;
  }
  timeExecutions(state, net, Engine::kNnhal, [&] {
    auto result = runner->run();
    if (!result) state.SkipWithError(result.error().message.c_str());
    return result.has_value();
  });
}

void BM_MobileNetV2QuantExecute(benchmark::State& state) { benchNnhal(state, Net::kV2Quant); }
void BM_MobileNetV2FloatExecute(benchmark::State& state) { benchNnhal(state, Net::kV2Float); }
void BM_MobileNetV1QuantExecute(benchmark::State& state) { benchNnhal(state, Net::kV1Quant); }

#if defined(NNHAL_HAVE_XNNPACK) || defined(NNHAL_HAVE_ONEDNN)

/// nnhal's output for `net` (one thread), computed once: what XNNPACK's output is checked
/// against.
Result<std::vector<uint8_t>> nnhalReference(Net net) {
  static std::map<Net, std::vector<uint8_t>> outputs;
  if (auto found = outputs.find(net); found != outputs.end()) return found->second;
  NNHAL_ASSIGN_OR_RETURN(Workload workload, cachedWorkload(net));
  NNHAL_ASSIGN_OR_RETURN(NnhalRunner runner, NnhalRunner::create(workload, 1));
  NNHAL_TRY(runner.run());
  return outputs.emplace(net, runner.output()).first->second;
}

/// Largest |a - b| over the elements of two outputs of type `desc.type` (uint8 steps or
/// float values).
double maxDifference(std::span<const uint8_t> a, std::span<const uint8_t> b,
                     const TensorDescription& desc) {
  double largest = 0.0;
  if (desc.type != OperandType::TENSOR_FLOAT32) {
    for (size_t i = 0; i < a.size(); ++i) {
      largest = std::max(largest, std::abs(static_cast<double>(a[i]) - b[i]));
    }
    return largest;
  }
  for (size_t i = 0; i + sizeof(float) <= a.size(); i += sizeof(float)) {
    float x = 0.0f;
    float y = 0.0f;
    std::memcpy(&x, a.data() + i, sizeof(float));
    std::memcpy(&y, b.data() + i, sizeof(float));
    largest = std::max(largest, static_cast<double>(std::abs(x - y)));
  }
  return largest;
}

/// Runs the baseline `engine` once and compares it with nnhal: the top-1 classes must agree.
template <typename Baseline>
Result<double> checkAgainstNnhal(Baseline& baseline, const char* engine, const Workload& workload,
                                 Net net) {
  NNHAL_ASSIGN_OR_RETURN(const std::vector<uint8_t> expected, nnhalReference(net));
  NNHAL_TRY(baseline.run());
  const std::span<const uint8_t> actual = baseline.output(0);
  if (actual.size() != expected.size()) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string(engine) + "'s output has " + std::to_string(actual.size()) +
                    " bytes, nnhal's " + std::to_string(expected.size()));
  }
  NNHAL_ASSIGN_OR_RETURN(const auto ours,
                         tools::topK({actual.begin(), actual.end()}, workload.output, 1));
  NNHAL_ASSIGN_OR_RETURN(const auto theirs, tools::topK(expected, workload.output, 1));
  if (ours.at(0).index != theirs.at(0).index) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string(engine) + "'s top-1 class " + std::to_string(ours[0].index) +
                    " differs from nnhal's " + std::to_string(theirs[0].index));
  }
  return maxDifference(actual, expected, workload.output);
}

/// Times `Baseline` (created for the row's thread count) after checking it against nnhal.
template <typename Baseline>
void benchBaseline(benchmark::State& state, Net net, Engine engine, const char* name) {
  auto workload = cachedWorkload(net);
  if (!workload) {
    state.SkipWithError(workload.error().message.c_str());
    return;
  }
  auto baseline = Baseline::create(workload->model, static_cast<unsigned>(state.range(0)));
  if (!baseline) {
    state.SkipWithError(baseline.error().message.c_str());
    return;
  }
  const std::span<uint8_t> input = (*baseline)->input(0);
  std::memcpy(input.data(), workload->input.data(), std::min(input.size(), workload->input.size()));
  auto difference = checkAgainstNnhal(**baseline, name, *workload, net);
  if (!difference) {
    state.SkipWithError(difference.error().message.c_str());
    return;
  }
  timeExecutions(state, net, engine, [&] {
    auto result = (*baseline)->run();
    if (!result) state.SkipWithError(result.error().message.c_str());
    return result.has_value();
  });
  state.counters["max_diff_vs_nnhal"] = *difference;
}

#endif

#ifdef NNHAL_HAVE_XNNPACK

void benchXnnpack(benchmark::State& state, Net net) {
  benchBaseline<cpu_reference::XnnpackBaseline>(state, net, Engine::kXnnpack, "XNNPACK");
}

void BM_XnnpackV2Quant(benchmark::State& state) { benchXnnpack(state, Net::kV2Quant); }
void BM_XnnpackV2Float(benchmark::State& state) { benchXnnpack(state, Net::kV2Float); }
void BM_XnnpackV1Quant(benchmark::State& state) { benchXnnpack(state, Net::kV1Quant); }

#endif  // NNHAL_HAVE_XNNPACK

#ifdef NNHAL_HAVE_ONEDNN

void benchOnednn(benchmark::State& state, Net net) {
  benchBaseline<bench::OnednnBaseline>(state, net, Engine::kOnednn, "oneDNN");
}

void BM_OnednnV2Quant(benchmark::State& state) { benchOnednn(state, Net::kV2Quant); }
void BM_OnednnV2Float(benchmark::State& state) { benchOnednn(state, Net::kV2Float); }
void BM_OnednnV1Quant(benchmark::State& state) { benchOnednn(state, Net::kV1Quant); }

#endif  // NNHAL_HAVE_ONEDNN

/// 1 and 2 threads, 3 repetitions of at least 1 s each; the baselines' rows are registered
/// before nnhal's so that vs_xnnpack and vs_onednn find their medians.
void configure(benchmark::internal::Benchmark* b) {
  b->Arg(1)
      ->Arg(2)
      ->Unit(benchmark::kMillisecond)
      ->MinTime(kMinTimeSeconds)
      ->UseRealTime()
      ->Repetitions(3)
      ->ReportAggregatesOnly(true);
}

#ifdef NNHAL_HAVE_XNNPACK
BENCHMARK(BM_XnnpackV2Quant)->Apply(configure);
#endif
#ifdef NNHAL_HAVE_ONEDNN
BENCHMARK(BM_OnednnV2Quant)->Apply(configure);
#endif
BENCHMARK(BM_MobileNetV2QuantExecute)->Apply(configure);
#ifdef NNHAL_HAVE_XNNPACK
BENCHMARK(BM_XnnpackV2Float)->Apply(configure);
#endif
#ifdef NNHAL_HAVE_ONEDNN
BENCHMARK(BM_OnednnV2Float)->Apply(configure);
#endif
BENCHMARK(BM_MobileNetV2FloatExecute)->Apply(configure);
#ifdef NNHAL_HAVE_XNNPACK
BENCHMARK(BM_XnnpackV1Quant)->Apply(configure);
#endif
#ifdef NNHAL_HAVE_ONEDNN
BENCHMARK(BM_OnednnV1Quant)->Apply(configure);
#endif
BENCHMARK(BM_MobileNetV1QuantExecute)->Apply(configure);

}  // namespace

BENCHMARK_MAIN();
