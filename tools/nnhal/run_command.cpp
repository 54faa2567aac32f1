#include "tools/nnhal/run_command.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nnhal/cache_directory.h"
#include "nnhal/client.h"
#include "nnhal/gpu_device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/litert_reference.h"
#include "tools/common/output_report.h"
#include "tools/common/profile_report.h"
#include "tools/common/run_times.h"
#include "tools/common/tensor_io.h"

namespace nnhal::cli {

using Clock = std::chrono::steady_clock;

Result<std::shared_ptr<Device>> openDevice(const std::string& socket, const DeviceOptions& options,
                                           const std::string& device) {
  if (socket.empty()) {
    if (device == "nnhal-vulkan")
      return createVulkanDevice(options, vulkanOptionsFromEnvironment());
    NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> embedded, createDevice(options));
    if (!device.empty() && device != embedded->getName()) {
      return invalidArgument("--device: the embedded devices are '" + embedded->getName() +
                             "' and 'nnhal-vulkan' (other devices are nnhald's: --connect)");
    }
    return embedded;
  }
  ClientOptions client;
  client.clientName = "nnhal-cli";
  client.trace = options.trace;
  client.device = device;
  return connect(socket, client);
}

namespace {

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// Position of the tensor called `name` among `tensors`; nullopt when none is.
std::optional<size_t> findTensor(const std::vector<TensorDescription>& tensors,
                                 const std::string& name) {
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (tensors[k].name == name) return k;
  }
  return std::nullopt;
}

/// Splits "NAME=FILE" when NAME is one of `tensors`' names; otherwise the whole argument is
/// a file for tensor 0.
struct TensorFile {
  size_t index = 0;
  std::string path;
};
Result<TensorFile> tensorFile(const std::vector<TensorDescription>& tensors,
                              const std::string& argument, std::string_view what) {
  const size_t equals = argument.find('=');
  if (equals != std::string::npos) {
    const std::string name = argument.substr(0, equals);
    if (const auto k = findTensor(tensors, name))
      return TensorFile{*k, argument.substr(equals + 1)};
    if (!std::filesystem::exists(argument)) {
      std::string names;
      for (const TensorDescription& t : tensors)
        names += (names.empty() ? "'" : ", '") + t.name + "'";
      return invalidArgument("the model has no " + std::string(what) + " named '" + name +
                             "' (it has " + names + ")");
    }
  }
  if (tensors.size() != 1) {
    return invalidArgument("the model has " + std::to_string(tensors.size()) + " " +
                           std::string(what) + "s: name the one '" + argument +
                           "' is for as NAME=FILE");
  }
  return TensorFile{0, argument};
}

/// Whether an image can feed `desc` ([1, H, W, 3] of uint8, int8 or float32).
bool takesImage(const TensorDescription& desc) {
  const auto& d = desc.dimensions;
  return d.size() == 4 && d[0] == 1 && d[3] == 3 &&
         (desc.type == OperandType::TENSOR_QUANT8_ASYMM ||
          desc.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED ||
          desc.type == OperandType::TENSOR_FLOAT32);
}

/// A tensor holding the real value 0 everywhere.
std::vector<uint8_t> zeroTensor(const TensorDescription& desc) {
  std::vector<uint8_t> bytes(tools::tensorBytes(desc), 0);
  if (desc.type == OperandType::TENSOR_QUANT8_ASYMM ||
      desc.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    std::fill(bytes.begin(), bytes.end(), static_cast<uint8_t>(desc.zeroPoint));
  }
  return bytes;
}

/// Seeded random values for an input no argument gives, as TFLite's benchmark_model feeds
/// them: floats uniform in [-1, 1), 8-bit values over their whole range, int32 in [0, 100),
/// booleans 0 or 1; other types zero.
std::vector<uint8_t> randomTensor(const TensorDescription& desc, std::mt19937& random) {
  std::vector<uint8_t> bytes = zeroTensor(desc);
  const size_t count = bytes.size() / 4;  // of 4-byte elements (float32, int32)
  switch (desc.type) {
    case OperandType::TENSOR_FLOAT32: {
      std::uniform_real_distribution<float> value(-1.0f, 1.0f);
      for (size_t i = 0; i < count; ++i) {
        const float v = value(random);
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      }
      break;
    }
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM: {
      std::uniform_int_distribution<int> value(0, 255);
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(value(random));
      break;
    }
    case OperandType::TENSOR_INT32: {
      std::uniform_int_distribution<int32_t> value(0, 99);
      for (size_t i = 0; i < count; ++i) {
        const int32_t v = value(random);
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      }
      break;
    }
    case OperandType::TENSOR_BOOL8: {
      std::uniform_int_distribution<int> value(0, 1);
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(value(random));
      break;
    }
    default:
      break;
  }
  return bytes;
}

/// The bytes of every model input, from --input, --image, zeros and (when no input is given
/// at all) seeded random values.
Result<std::vector<std::vector<uint8_t>>> inputTensors(const RunArgs& args,
                                                       const std::vector<TensorDescription>& in) {
  std::vector<std::optional<std::vector<uint8_t>>> given(in.size());
  for (const std::string& argument : args.inputs) {
    NNHAL_ASSIGN_OR_RETURN(const TensorFile file, tensorFile(in, argument, "input"));
    const TensorDescription& desc = in[file.index];
    if (given[file.index]) return invalidArgument("input '" + desc.name + "' is given twice");
    NNHAL_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, tools::readFile(file.path));
    if (desc.int64) {  // the file holds int64 values; the model computes int32
      NNHAL_ASSIGN_OR_RETURN(bytes, narrowInt64ToInt32(bytes));
    }
    if (bytes.size() != tools::tensorBytes(desc)) {
      return invalidArgument("'" + file.path + "' holds " + std::to_string(bytes.size()) +
                             " bytes but input '" + desc.name + "' needs " +
                             std::to_string(tools::tensorBytes(desc) * (desc.int64 ? 2 : 1)) +
                             " bytes");
    }
    given[file.index] = std::move(bytes);
  }
  if (!args.image.empty()) {
    size_t k = 0;
    while (k < in.size() && (given[k] || !takesImage(in[k]))) ++k;
    if (k == in.size()) {
      return invalidArgument("--image: the model has no image input [1, H, W, 3] left to feed");
    }
    NNHAL_ASSIGN_OR_RETURN(tools::RgbImage image, tools::loadImage(args.image));
    NNHAL_ASSIGN_OR_RETURN(given[k], tools::imageToTensor(image, in[k], {args.mean, args.stddev}));
  }
  std::vector<std::vector<uint8_t>> result;
  const bool noneGiven = args.image.empty() && args.inputs.empty();
  std::mt19937 random(args.seed);
  for (size_t k = 0; k < in.size(); ++k) {
    if (given[k]) {
      result.push_back(std::move(*given[k]));
      continue;
    }
    if (noneGiven) {
      // As TFLite's benchmark_model does: a model runs without any input argument.
      spdlog::warn("input '{}' is not given (--input, --image): seeded random values (--seed {})",
                   in[k].name, args.seed);
      result.push_back(randomTensor(in[k], random));
      continue;
    }
    spdlog::warn("input '{}' is not given (--input NAME=FILE): it is zero", in[k].name);
    result.push_back(zeroTensor(in[k]));
  }
  return result;
}

/// Every file the run will write besides the trace.
std::vector<std::string> outputPaths(const std::vector<TensorFile>& files,
                                     const std::string& mask) {
  std::vector<std::string> paths;
  for (const TensorFile& file : files) paths.push_back(file.path);
  if (!mask.empty()) paths.push_back(mask);
  return paths;
}

/// Fails before anything runs when `path` cannot be written (a missing folder, a directory,
/// no permission), instead of after the work is done.
Result<void> checkWritable(const std::string& path) {
  if (std::filesystem::is_directory(path)) {
    return invalidArgument("cannot write '" + path + "': it is a directory");
  }
  std::ofstream probe(path, std::ios::app);
  if (!probe) {
    return invalidArgument("cannot write '" + path + "': " + std::strerror(errno));
  }
  return {};
}

/// A classifier's label file has one line per class, or one more (a leading background
/// line that the report skips); any other count would shift every label.
Result<void> checkLabels(const std::vector<std::string>& labels, const std::string& path,
                         const std::vector<TensorDescription>& outputs) {
  if (outputs.size() != 1) return {};
  const std::vector<uint32_t>& dims = outputs[0].dimensions;
  const bool classifier =
      (dims.size() == 2 && dims[0] == 1 && dims[1] > 1) || (dims.size() == 1 && dims[0] > 1);
  if (!classifier || outputs[0].int64) return {};
  const size_t classes = dims.back();
  if (labels.size() == classes || labels.size() == classes + 1) return {};
  return invalidArgument(
      "--labels '" + path + "' has " + std::to_string(labels.size()) +
      " lines but the model classifies " + std::to_string(classes) +
      " classes: labels would be off by " +
      std::to_string(static_cast<long>(labels.size()) - static_cast<long>(classes)) +
      " (expected " + std::to_string(classes) + " lines, or " + std::to_string(classes + 1) +
      " with a leading background line)");
}

}  // namespace

namespace {

/// LiteRT's outputs for the same inputs, and how each of nnhal's differs. Outputs are matched
/// by name when LiteRT's names are the model's tensor names, else by position.
Result<std::vector<tools::OutputDifference>> compareWithTflite(
    const std::string& model, const std::vector<TensorDescription>& inputDescs,
    const std::vector<std::vector<uint8_t>>& inputs,
    const std::vector<tools::OutputTensor>& outputs) {
  NNHAL_ASSIGN_OR_RETURN(const std::vector<tools::ReferenceTensor> reference,
                         tools::runLitert(model, inputDescs, inputs));
  if (reference.size() != outputs.size()) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "LiteRT computed " + std::to_string(reference.size()) + " outputs, nnhal " +
                    std::to_string(outputs.size()));
  }
  const bool byName = std::ranges::all_of(outputs, [&](const tools::OutputTensor& o) {
    return std::ranges::any_of(
        reference, [&](const tools::ReferenceTensor& r) { return r.name == o.desc.name; });
  });
  std::vector<tools::OutputDifference> differences;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const tools::ReferenceTensor* match = &reference[k];
    if (byName) {
      match = &*std::ranges::find_if(reference, [&](const tools::ReferenceTensor& r) {
        return r.name == outputs[k].desc.name;
      });
    }
    auto d = tools::compareOutput(outputs[k], *match);
    if (!d) {
      tools::OutputDifference skipped;
      skipped.name = outputs[k].desc.name;
      skipped.notCompared = d.error().message;
      differences.push_back(std::move(skipped));
      continue;
    }
    differences.push_back(std::move(*d));
  }
  return differences;
}

nlohmann::json differencesJson(const std::vector<tools::OutputDifference>& differences) {
  nlohmann::json list = nlohmann::json::array();
  for (const tools::OutputDifference& d : differences) {
    if (!d.notCompared.empty()) {
      list.push_back({{"name", d.name}, {"not_compared", d.notCompared}});
      continue;
    }
    nlohmann::json j{
        {"name", d.name},      {"elements", d.elements},        {"differing", d.differing},
        {"max_abs", d.maxAbs}, {"max_relative", d.maxRelative}, {"max_steps", d.maxSteps}};
    if (d.argmaxNnhal >= 0) {
      j["argmax_nnhal"] = d.argmaxNnhal;
      j["argmax_tflite"] = d.argmaxTflite;
    }
    list.push_back(std::move(j));
  }
  return list;
}

std::string formatDifferences(const std::vector<tools::OutputDifference>& differences) {
  std::string text = "compared with TFLite (LiteRT, XNNPACK) on the same inputs:\n";
  for (const tools::OutputDifference& d : differences) {
    if (!d.notCompared.empty()) {
      text += fmt::format("  '{}': not compared: {}\n", d.name, d.notCompared);
      continue;
    }
    text += fmt::format(
        "  '{}': {} of {} elements differ, max |diff| {:.6g} ({:.3g} of the "
        "largest value)",
        d.name, d.differing, d.elements, d.maxAbs, d.maxRelative);
    if (d.maxSteps > 0) text += fmt::format(", {} quantization steps", d.maxSteps);
    if (d.argmaxNnhal >= 0) {
      text += d.argmaxNnhal == d.argmaxTflite
                  ? fmt::format("; same argmax {}", d.argmaxNnhal)
                  : fmt::format("; argmax {} vs TFLite's {}", d.argmaxNnhal, d.argmaxTflite);
    }
    text += "\n";
  }
  return text;
}

}  // namespace

/// A prepared model, what the cache did ("hit", "saved": a miss whose files the driver wrote,
/// "not saved", "off": the device does not cache, no files were passed; empty without
/// --cache-dir) and how long the preparation took.
struct Preparation {
  std::shared_ptr<PreparedModel> model;
  std::string cacheState;
  double milliseconds = 0;
};

/// Prepares `model` for FAST_SINGLE_ANSWER. With --cache-dir: the model's cache files in that
/// folder (nnhal/cache_directory.h), loaded when usable, else compiled and saved; a device that
/// reports no cache files is given none (IDevice.hal 1.2).
Result<Preparation> prepare(const std::shared_ptr<Device>& device, Model model,
                            const RunArgs& args) {
  PrepareOptions prepareOptions;
  prepareOptions.preference = ExecutionPreference::FAST_SINGLE_ANSWER;
  const auto start = Clock::now();
  Preparation done;
  if (args.cacheDir.empty()) {
    NNHAL_ASSIGN_OR_RETURN(done.model, device->prepareModel(std::move(model), prepareOptions));
  } else {
    NNHAL_ASSIGN_OR_RETURN(const CacheDirectory cache, CacheDirectory::open(args.cacheDir, device));
    NNHAL_ASSIGN_OR_RETURN(const std::vector<uint8_t> modelBytes, tools::readFile(args.model));
    NNHAL_ASSIGN_OR_RETURN(CachedPreparation cached,
                           cache.prepare(std::move(model), modelBytes, prepareOptions));
    done.model = std::move(cached.preparedModel);
    if (!cached.why.empty()) spdlog::info("cache: {}", cached.why);
    switch (cached.outcome) {
      case CacheOutcome::kLoaded:
        done.cacheState = "hit";
        break;
      case CacheOutcome::kCompiledAndSaved:
        done.cacheState = "saved";
        break;
      case CacheOutcome::kCompiled:
        done.cacheState = "not saved";
        break;
      case CacheOutcome::kCachingOff:
        done.cacheState = "off";
        break;
    }
  }
  done.milliseconds = millisecondsSince(start);
  return done;
}

/// A request whose every input and output has its own shared-memory pool; the output pools
/// apart, to read the results from.
struct PooledRequest {
  Request request;
  std::vector<Memory> outputPools;
};

Result<PooledRequest> pooledRequest(const std::vector<std::vector<uint8_t>>& inputs,
                                    const std::vector<TensorDescription>& outputs) {
  PooledRequest r;
  Request& request = r.request;
  for (const std::vector<uint8_t>& bytes : inputs) {
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(std::max<size_t>(bytes.size(), 1)));
    std::memcpy(pool.data(), bytes.data(), bytes.size());
    request.inputs.push_back(
        {false,
         {static_cast<uint32_t>(request.pools.size()), 0, static_cast<uint32_t>(bytes.size())},
         {}});
    request.pools.push_back(pool);
  }
  for (const TensorDescription& desc : outputs) {
    const size_t bytes = std::max<size_t>(tools::tensorBytes(desc), 1);
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(bytes));
    request.outputs.push_back(
        {false,
         {static_cast<uint32_t>(request.pools.size()), 0, static_cast<uint32_t>(bytes)},
         {}});
    request.pools.push_back(pool);
    r.outputPools.push_back(pool);
  }
  return r;
}

/// The times of the runs, and with --profile each timed run's per-operation profile.
struct TimedRuns {
  tools::RunTimes times;
  std::vector<ExecutionProfile> profiles;
};

/// As TFLite's benchmark_model: warm-up runs (the first reported apart), then timed runs.
Result<TimedRuns> timeRuns(PreparedModel& prepared, const Request& request, const RunArgs& args) {
  TimedRuns runs;
  std::vector<double> times;
  double firstMs = 0;
  const unsigned total = args.warmupRuns + std::max(1u, args.numRuns);
  for (unsigned i = 0; i < total; ++i) {
    const bool timed = i >= args.warmupRuns;
    ExecuteOptions options;
    if (args.profile && timed) options.profile = &runs.profiles.emplace_back();
    const auto start = Clock::now();
    NNHAL_TRY(prepared.executeSynchronously(request, options));
    const double ms = millisecondsSince(start);
    if (i == 0) firstMs = ms;
    if (timed) times.push_back(ms);
  }
  runs.times = tools::summarizeTimes(times, firstMs, args.warmupRuns);
  return runs;
}

/// The --cache-dir line of the text report.
void printCacheOutcome(const std::string& cacheState, double prepareMs,
                       const CompilationCaching& caching) {
  if (cacheState == "hit") {
    std::printf("cache: hit (prepared from cache in %.2f ms)\n", prepareMs);
  } else if (cacheState == "saved") {
    std::printf("cache: miss (compiled and saved in %.2f ms)\n", prepareMs);
  } else if (cacheState == "off") {
    std::printf("cache: off (compiled in %.2f ms; the device does not cache compilations: %s)\n",
                prepareMs, caching.reason.c_str());
  } else {
    std::printf("cache: miss (compiled in %.2f ms; the driver saved nothing)\n", prepareMs);
  }
}

Result<void> runModel(const RunArgs& args) {
  if (args.profile && !args.connect.empty()) {
    return invalidArgument(
        "--profile needs the embedded driver: nnhald does not report per-operation times");
  }
  // The trace file is opened before anything runs, so a bad path fails at once.
  std::ofstream traceFile;
  std::shared_ptr<TraceRecorder> recorder;
  if (!args.trace.empty()) {
    traceFile.open(args.trace);
    if (!traceFile) return invalidArgument("cannot write the trace to '" + args.trace + "'");
    recorder = std::make_shared<TraceRecorder>();
  }
  // The device first: the import uses the vendor extensions it reports (FLOOR_DIV and
  // GATHER_ND import as org.nnhal.tflite_compat operations only then).
  DeviceOptions deviceOptions;
  deviceOptions.kernelThreads = args.threads;
  deviceOptions.stateDirectory = args.cacheDir;
  deviceOptions.trace = recorder;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> device,
                         openDevice(args.connect, deviceOptions, args.device));
  NNHAL_ASSIGN_OR_RETURN(
      ImportedModel imported,
      importTfliteFile(args.model, {.extensions = device->getSupportedExtensions()}));
  if (imported.outputs.empty()) return invalidArgument("'" + args.model + "' has no outputs");
  NNHAL_ASSIGN_OR_RETURN(const std::vector<std::vector<uint8_t>> inputs,
                         inputTensors(args, imported.inputs));
  std::vector<TensorFile> outputFiles;
  for (const std::string& argument : args.outputs) {
    NNHAL_ASSIGN_OR_RETURN(TensorFile file, tensorFile(imported.outputs, argument, "output"));
    outputFiles.push_back(std::move(file));
  }
  std::vector<std::string> labels;
  if (!args.labels.empty()) {
    NNHAL_ASSIGN_OR_RETURN(labels, tools::readLabels(args.labels));
    NNHAL_TRY(checkLabels(labels, args.labels, imported.outputs));
  }
  const std::vector<TensorDescription> outputDescs = imported.outputs;
  const std::vector<TensorDescription> inputDescs = imported.inputs;
  // Names the extension operations of the profile (the model is moved into the driver).
  const std::vector<ExtensionNameAndPrefix> extensions = imported.model.extensionNameToPrefix;

  // With --cache-dir: the model's cache files in that folder (nnhal/cache_directory.h), loaded
  // when usable, else compiled and saved; a device that reports no cache files is given none
  // (IDevice.hal 1.2).
  const CompilationCaching caching = device->getCompilationCaching();
  NNHAL_ASSIGN_OR_RETURN(const Preparation preparation,
                         prepare(device, std::move(imported.model), args));
  const std::shared_ptr<PreparedModel>& prepared = preparation.model;
  const std::string& cacheState = preparation.cacheState;
  const double prepareMs = preparation.milliseconds;

  NNHAL_ASSIGN_OR_RETURN(const PooledRequest pooled, pooledRequest(inputs, outputDescs));
  const Request& request = pooled.request;
  const std::vector<Memory>& outputPools = pooled.outputPools;

  // Every output file is checked before the runs (after the preparation, which may create
  // the folder: --cache-dir).
  for (const std::string& path : outputPaths(outputFiles, args.mask)) {
    NNHAL_TRY(checkWritable(path));
  }
  NNHAL_ASSIGN_OR_RETURN(const TimedRuns runs, timeRuns(*prepared, request, args));
  const tools::RunTimes& stats = runs.times;
  const std::vector<ExecutionProfile>& profiles = runs.profiles;
  if (args.profile && profiles.front().operations.empty()) {
    spdlog::warn(
        "no per-operation times: this model has dynamic shapes or control flow, "
        "which the profile does not cover");
  }
  if (recorder != nullptr) {
    traceFile << chromeTraceJson(recorder->spans(), "nnhal run " + args.model) << "\n";
    traceFile.close();
    if (!traceFile) return invalidArgument("cannot write the trace to '" + args.trace + "'");
  }

  std::vector<tools::OutputTensor> outputs;
  for (size_t k = 0; k < outputDescs.size(); ++k) {
    const uint8_t* data = outputPools[k].data();
    outputs.push_back(
        {outputDescs[k], std::vector<uint8_t>(data, data + tools::tensorBytes(outputDescs[k]))});
  }
  for (const TensorFile& file : outputFiles) {
    const tools::OutputTensor& output = outputs[file.index];
    NNHAL_TRY(tools::writeFile(file.path,
                               output.desc.int64 ? widenInt32ToInt64(output.bytes) : output.bytes));
  }
  NNHAL_ASSIGN_OR_RETURN(const tools::OutputReport report,
                         tools::interpretOutputs(outputs, labels, args.top));
  std::vector<tools::OutputDifference> differences;
  if (args.compareTflite) {
    NNHAL_ASSIGN_OR_RETURN(differences, compareWithTflite(args.model, inputDescs, inputs, outputs));
  }
  if (!args.mask.empty()) {
    if (!report.segmentation) {
      return invalidArgument("--mask: the model's first output is not a segmentation map");
    }
    NNHAL_TRY(tools::writeSegmentationMask(*report.segmentation, args.mask));
  }

  if (args.json) {
    nlohmann::json j = tools::reportJson(report);
    j["preparation_ms"] = prepareMs;
    j["execution_ms"] = tools::runTimesJson(stats);
    if (!args.cacheDir.empty()) j["cache"] = cacheState;
    if (args.compareTflite) j["tflite"] = differencesJson(differences);
    std::printf("%s\n", j.dump(2).c_str());
    return {};
  }
  std::fputs(tools::formatReport(report).c_str(), stdout);
  if (!args.cacheDir.empty()) printCacheOutcome(cacheState, prepareMs, caching);
  if (args.profile) {
    std::fputs(tools::formatProfile(tools::summarizeProfiles(profiles), extensions).c_str(),
               stdout);
  }
  if (args.compareTflite) std::fputs(formatDifferences(differences).c_str(), stdout);
  std::printf("preparation: %.2f ms\n", prepareMs);
  std::printf("%s\n", tools::formatRunTimes(stats).c_str());
  return {};
}

}  // namespace nnhal::cli
