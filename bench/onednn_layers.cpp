// onednn_layers — where the time goes: nnhal's per-operation times (ExecuteOptions::profile,
// as `nnhal run --profile`) beside oneDNN's per-primitive times for the same network
// (bench/onednn_baseline.h), operation by operation, medians over --runs executions.
//
//   onednn_layers [MODEL.tflite] [--float] [--threads N] [--runs N] [--input FILE]
//                 [--json FILE]
//
// The default model is ../shared/models/mobilenet_v2_1.0_224_quant.tflite with its
// grace_hopper input; --float runs the model dequantized to float32
// (tools/common/dequantize_model.h), as mobilenet_bench's float rows do. oneDNN's reorders
// count towards the operation they feed, its input and output conversions towards the first
// and the last operation. nnhal's times are aligned with the model's operations by order and
// type (its executor runs them in model order); where they do not align, the table says so.
// Output: one row per operation (index, type, output shape, nnhal µs, oneDNN µs, ratio,
// oneDNN's implementation) and the totals, on stdout; --json writes the same rows.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/onednn_baseline.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/dequantize_model.h"
#include "tools/common/tensor_io.h"

namespace {

using namespace nnhal;

struct Options {
  std::string model = std::string(NNHAL_SHARED_DIR) + "/models/mobilenet_v2_1.0_224_quant.tflite";
  std::string input;
  bool toFloat = false;
  unsigned threads = 1;
  unsigned runs = 50;
  std::string json;
};

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

/// The model's input bytes: --input, the grace_hopper input beside a shared model, or zeros.
Result<std::vector<uint8_t>> loadInput(const Options& options, const TensorDescription& desc) {
  std::string path = options.input;
  if (path.empty()) {
    const std::string stem = std::filesystem::path(options.model).stem().string();
    const auto folder = std::filesystem::path(options.model).parent_path();
    const auto candidate = folder / "inputs" / (stem + "__grace_hopper.input.bin");
    if (std::filesystem::exists(candidate)) path = candidate.string();
  }
  if (path.empty()) return std::vector<uint8_t>(tools::tensorBytes(desc), 0);
  return tools::readFile(path);
}

/// The model (dequantized with --float) and its input in the model's own type.
Result<std::pair<Model, std::vector<uint8_t>>> loadWorkload(const Options& options) {
  NNHAL_ASSIGN_OR_RETURN(ImportedModel imported, importTfliteFile(options.model));
  if (imported.inputs.size() != 1) return invalidArgument("the model must have one input");
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint8_t> input, loadInput(options, imported.inputs[0]));
  if (!options.toFloat) return std::pair{std::move(imported.model), std::move(input)};
  const TensorDescription& desc = imported.inputs[0];
  if (desc.type != OperandType::TENSOR_QUANT8_ASYMM) {
    return invalidArgument("--float needs a uint8 model");
  }
  NNHAL_ASSIGN_OR_RETURN(Model model, tools::dequantizeModel(imported.model));
  std::vector<uint8_t> floats(input.size() * sizeof(float));
  for (size_t i = 0; i < input.size(); ++i) {
    const float value = static_cast<float>(input[i] - desc.zeroPoint) * desc.scale;
    std::memcpy(floats.data() + i * sizeof(float), &value, sizeof(float));
  }
  return std::pair{std::move(model), std::move(floats)};
}

/// Per model operation: nnhal's median µs over the runs, or empty when the profile does not
/// align with the model's operations.
Result<std::vector<double>> nnhalTimes(const Model& model, const std::vector<uint8_t>& input,
                                       const Options& options) {
  DeviceOptions deviceOptions;
  deviceOptions.kernelThreads = options.threads;
  NNHAL_ASSIGN_OR_RETURN(auto device, createDevice(deviceOptions));
  NNHAL_ASSIGN_OR_RETURN(auto prepared, device->prepareModel(model));
  const Operand& output = model.main.operands[model.main.outputIndexes.at(0)];
  size_t outputBytes = output.type == OperandType::TENSOR_FLOAT32 ? sizeof(float) : 1;
  for (const uint32_t d : output.dimensions) outputBytes *= d;
  const size_t outputOffset = (input.size() + 63) / 64 * 64;
  NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(outputOffset + outputBytes));
  std::memcpy(pool.data(), input.data(), input.size());
  Request request;
  request.pools.push_back(pool);
  request.inputs.push_back({false, {0, 0, static_cast<uint32_t>(input.size())}, {}});
  request.outputs.push_back(
      {false, {0, static_cast<uint32_t>(outputOffset), static_cast<uint32_t>(outputBytes)}, {}});
  std::vector<std::vector<double>> samples(model.main.operations.size());
  for (unsigned run = 0; run <= options.runs; ++run) {
    ExecutionProfile profile;
    ExecuteOptions executeOptions;
    executeOptions.profile = &profile;
    NNHAL_TRY(prepared->executeSynchronously(request, executeOptions));
    if (profile.operations.size() != samples.size()) return std::vector<double>{};
    if (run == 0) continue;  // the first run warms caches and arenas
    for (size_t k = 0; k < samples.size(); ++k) {
      if (profile.operations[k].type != model.main.operations[k].type) return std::vector<double>{};
      samples[k].push_back(static_cast<double>(profile.operations[k].durationNs) / 1000.0);
    }
  }
  std::vector<double> medians;
  for (const auto& values : samples) medians.push_back(median(values));
  return medians;
}

struct OnednnTimes {
  std::vector<double> microseconds;  ///< per model operation (median of its steps' sums)
  std::vector<std::string> what;     ///< per model operation: its steps' implementations
};

Result<OnednnTimes> onednnTimes(const Model& model, const std::vector<uint8_t>& input,
                                const Options& options) {
  NNHAL_ASSIGN_OR_RETURN(auto baseline, bench::OnednnBaseline::create(model, options.threads));
  const std::span<uint8_t> target = baseline->input(0);
  std::memcpy(target.data(), input.data(), std::min(target.size(), input.size()));
  const size_t count = model.main.operations.size();
  std::vector<std::vector<double>> samples(count);
  OnednnTimes times{std::vector<double>(count, 0.0), std::vector<std::string>(count)};
  for (unsigned run = 0; run <= options.runs; ++run) {
    NNHAL_ASSIGN_OR_RETURN(const std::vector<bench::OnednnStepTime> steps, baseline->profile());
    if (run == 0) {
      for (const auto& step : steps) {
        std::string& what = times.what[step.operation];
        if (what.find(step.what) == std::string::npos)
          what += (what.empty() ? "" : "; ") + step.what;
      }
      continue;
    }
    std::vector<double> sums(count, 0.0);
    for (const auto& step : steps) sums[step.operation] += step.microseconds;
    for (size_t k = 0; k < count; ++k) samples[k].push_back(sums[k]);
  }
  for (size_t k = 0; k < count; ++k) times.microseconds[k] = median(samples[k]);
  return times;
}

std::string shapeOf(const Model& model, const Operation& operation) {
  if (operation.outputs.empty()) return "";
  std::string shape;
  for (const uint32_t d : model.main.operands[operation.outputs[0]].dimensions) {
    shape += (shape.empty() ? "" : "x") + std::to_string(d);
  }
  return shape;
}

/// Why an operation has no oneDNN step of its own.
const char* noStep(OperationType type) {
  return type == OperationType::ADD ? "(fused into a convolution as a sum post-op)"
                                    : "(no step: its output aliases its input)";
}

int report(const Model& model, const std::vector<double>& ours, const OnednnTimes& theirs,
           const Options& options) {
  nlohmann::json rows = nlohmann::json::array();
  double totalOurs = 0.0;
  double totalTheirs = 0.0;
  std::printf("%4s  %-18s %-14s %10s %10s %7s  %s\n", "op", "type", "output", "nnhal_us",
              "onednn_us", "ratio", "oneDNN implementation");
  for (size_t k = 0; k < model.main.operations.size(); ++k) {
    const Operation& operation = model.main.operations[k];
    const double mine = ours.empty() ? 0.0 : ours[k];
    const double other = theirs.microseconds[k];
    totalOurs += mine;
    totalTheirs += other;
    const std::string ratio = other > 0.0 && mine > 0.0 ? std::to_string(mine / other) : "-";
    std::printf("%4zu  %-18s %-14s %10.1f %10.1f %7.7s  %s\n", k,
                std::string(toString(operation.type)).c_str(), shapeOf(model, operation).c_str(),
                mine, other, ratio.c_str(),
                theirs.what[k].empty() ? noStep(operation.type) : theirs.what[k].c_str());
    rows.push_back({{"operation", k},
                    {"type", std::string(toString(operation.type))},
                    {"output", shapeOf(model, operation)},
                    {"nnhal_us", mine},
                    {"onednn_us", other},
                    {"onednn_impl", theirs.what[k]}});
  }
  if (ours.empty()) {
    std::printf("nnhal's profile does not align with the model's operations: its column is 0\n");
  }
  std::printf("total: nnhal %.1f us, oneDNN %.1f us (sums of per-operation medians, %u threads)\n",
              totalOurs, totalTheirs, options.threads);
  if (!options.json.empty()) {
    std::ofstream out(options.json);
    out << nlohmann::json{{"model", options.model},
                          {"float", options.toFloat},
                          {"threads", options.threads},
                          {"runs", options.runs},
                          {"operations", rows},
                          {"total_nnhal_us", totalOurs},
                          {"total_onednn_us", totalTheirs}}
               .dump(2)
        << "\n";
    if (!out) {
      std::fprintf(stderr, "onednn_layers: cannot write %s\n", options.json.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{
      "nnhal's per-operation times beside oneDNN's per-primitive times for one network "
      "(medians; oneDNN's reorders count towards the operation they feed)"};
  app.add_option("model", options.model, "a .tflite model (default: MobileNet v2 1.0 224 quant)");
  app.add_flag("--float", options.toFloat, "run the model dequantized to float32");
  app.add_option("--threads", options.threads, "kernel threads of both engines")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--runs", options.runs, "timed executions (after one warm-up)")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--input", options.input,
                 "the input tensor's bytes (default: the model's grace_hopper input, else zeros)");
  app.add_option("--json", options.json, "also write the rows as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  auto workload = loadWorkload(options);
  if (!workload) {
    std::fprintf(stderr, "onednn_layers: %s\n", workload.error().message.c_str());
    return 1;
  }
  const auto& [model, input] = *workload;
  auto theirs = onednnTimes(model, input, options);
  if (!theirs) {
    std::fprintf(stderr, "onednn_layers: oneDNN: %s\n", theirs.error().message.c_str());
    return 1;
  }
  auto ours = nnhalTimes(model, input, options);
  if (!ours) {
    std::fprintf(stderr, "onednn_layers: nnhal: %s\n", ours.error().message.c_str());
    return 1;
  }
  return report(model, *ours, *theirs, options);
}
