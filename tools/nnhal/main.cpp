// nnhal — command-line front end of the driver.
//
//   nnhal run --model M.tflite (--image I.bmp | --input raw.bin) [--labels L.txt] [--top 5]
//             [--repeat N] [--threads T] [--output out.bin] [--cache-dir DIR]
//             [--connect SOCKET] [--profile] [--trace FILE]
//   nnhal info [--connect SOCKET | --state-dir DIR]
//   nnhal calibrate --models DIR --state-dir DIR [--runs N]
//   nnhal cts PATH... [--mode all|sync|async|dynamic|burst] [--filter S] [--quiet]
//             [--connect SOCKET]
#include <spdlog/cfg/env.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cache/digest.h"
#include "cache/file_io.h"
#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/profile_report.h"
#include "tools/common/tensor_io.h"
#include "tools/nnhal/calibrate_command.h"
#include "tools/nnhal/cts_command.h"

namespace {

using namespace nnhal;
using Clock = std::chrono::steady_clock;

struct RunArgs {
  std::string model;
  std::string image;
  std::string input;
  std::string output;
  std::string labels;
  size_t top = 5;
  unsigned repeat = 1;
  unsigned threads = 0;
  float mean = 127.5f;
  float stddev = 127.5f;
  std::string cacheDir;
  std::string connect;   ///< nnhald socket; empty = the embedded driver
  bool profile = false;  ///< print the time of each operation
  std::string trace;     ///< write the operations' times as Chrome trace JSON here
};

/// The embedded driver, or the daemon's when `socket` is not empty.
Result<std::shared_ptr<Device>> openDevice(const std::string& socket,
                                           const DeviceOptions& options) {
  if (socket.empty()) return createDevice(options);
  ClientOptions client;
  client.clientName = "nnhal-cli";
  return connect(socket, client);
}

int reportError(const Error& error) {
  std::fprintf(stderr, "nnhal: error: %s (%s)\n", error.message.c_str(),
               std::string(toString(error.status)).c_str());
  return 1;
}

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

/// The compilation cache files of one model in `--cache-dir`.
struct CacheFileSet {
  cache::UniqueFd model, data;
  CacheFiles files;
  bool saved = false;  ///< the model cache file is not empty
};

/// Opens (creating) DIR/<token>.model and DIR/<token>.data in `args.cacheDir` (also the
/// driver's state directory), token = SHA-256 of the model file's bytes and the execution
/// preference.
Result<CacheFileSet> openCacheFiles(const RunArgs& args) {
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint8_t> modelBytes, tools::readFile(args.model));
  const auto preference = static_cast<uint8_t>(ExecutionPreference::FAST_SINGLE_ANSWER);
  cache::Sha256 hash;
  hash.update(modelBytes);
  hash.update({&preference, 1});
  const cache::Digest digest = hash.finish();

  CacheFileSet set;
  std::copy(digest.begin(), digest.end(), set.files.token.begin());
  std::error_code created;  // the embedded driver creates it too; a daemon has its own
  std::filesystem::create_directories(args.cacheDir, created);
  const std::filesystem::path base = std::filesystem::path(args.cacheDir) / cache::toHex(digest);
  std::filesystem::path modelPath = base, dataPath = base;
  modelPath += ".model";
  dataPath += ".data";
  set.model.reset(::open(modelPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  set.data.reset(::open(dataPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!set.model.valid() || !set.data.valid()) {
    return fail(ErrorStatus::GENERAL_FAILURE, "cannot open the cache files " + base.string() +
                                                  ".{model,data}: " + std::strerror(errno));
  }
  set.files.modelCache = {{set.model.get()}};
  set.files.dataCache = {{set.data.get()}};
  std::error_code ec;
  set.saved = std::filesystem::file_size(modelPath, ec) > 0;
  return set;
}

/// Prepares from the cache files when they hold a usable cache, otherwise compiles and saves.
/// `hit` tells which happened.
Result<std::shared_ptr<PreparedModel>> prepareWithCache(Device& device, const CacheFileSet& set,
                                                        Model model, bool* hit) {
  *hit = false;
  if (set.saved) {
    auto loaded = device.prepareModelFromCache(set.files);
    if (loaded) {
      *hit = true;
      return loaded;
    }
    spdlog::info("cache: not usable ({}), compiling", loaded.error().message);
  }
  PrepareOptions options;
  options.preference = ExecutionPreference::FAST_SINGLE_ANSWER;
  options.cache = set.files;
  return device.prepareModel(std::move(model), options);
}

Result<void> runModel(const RunArgs& args) {
  if ((args.profile || !args.trace.empty()) && !args.connect.empty()) {
    return invalidArgument(
        "--profile and --trace need the embedded driver: nnhald does not "
        "report per-operation times");
  }
  NNHAL_ASSIGN_OR_RETURN(ImportedModel imported, importTfliteFile(args.model));
  if (imported.inputs.size() != 1 || imported.outputs.empty()) {
    return invalidArgument("'" + args.model + "' has " + std::to_string(imported.inputs.size()) +
                           " inputs; `nnhal run` feeds models with exactly one input");
  }
  const TensorDescription& inDesc = imported.inputs[0];
  const TensorDescription& outDesc = imported.outputs[0];

  // Input tensor: exact bytes from --input, or an image converted to the input's shape.
  std::vector<uint8_t> inputBytes;
  if (!args.input.empty()) {
    NNHAL_ASSIGN_OR_RETURN(inputBytes, tools::readFile(args.input));
    if (inputBytes.size() != tools::tensorBytes(inDesc)) {
      return invalidArgument("'" + args.input + "' holds " + std::to_string(inputBytes.size()) +
                             " bytes but input '" + inDesc.name + "' needs " +
                             std::to_string(tools::tensorBytes(inDesc)) + " bytes");
    }
  } else {
    NNHAL_ASSIGN_OR_RETURN(tools::RgbImage image, tools::loadImage(args.image));
    NNHAL_ASSIGN_OR_RETURN(inputBytes,
                           tools::imageToTensor(image, inDesc, {args.mean, args.stddev}));
  }

  DeviceOptions deviceOptions;
  deviceOptions.kernelThreads = args.threads;
  deviceOptions.stateDirectory = args.cacheDir;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, openDevice(args.connect, deviceOptions));
  CacheFileSet cacheFiles;
  if (!args.cacheDir.empty()) {
    NNHAL_ASSIGN_OR_RETURN(cacheFiles, openCacheFiles(args));
  }
  const auto prepareStart = Clock::now();
  bool cacheHit = false;
  std::shared_ptr<PreparedModel> prepared;
  if (args.cacheDir.empty()) {
    NNHAL_ASSIGN_OR_RETURN(prepared, device->prepareModel(std::move(imported.model)));
  } else {
    NNHAL_ASSIGN_OR_RETURN(
        prepared, prepareWithCache(*device, cacheFiles, std::move(imported.model), &cacheHit));
  }
  const double prepareMs = millisecondsSince(prepareStart);

  // Request: the input and every output live in shared-memory pools.
  NNHAL_ASSIGN_OR_RETURN(Memory inputPool, Memory::create(inputBytes.size()));
  std::memcpy(inputPool.data(), inputBytes.data(), inputBytes.size());
  Request request;
  request.pools.push_back(inputPool);
  request.inputs.push_back({false, {0, 0, static_cast<uint32_t>(inputBytes.size())}, {}});
  std::vector<Memory> outputPools;
  for (const TensorDescription& desc : imported.outputs) {
    const size_t bytes = std::max<size_t>(tools::tensorBytes(desc), 1);
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(bytes));
    request.outputs.push_back(
        {false,
         {static_cast<uint32_t>(request.pools.size()), 0, static_cast<uint32_t>(bytes)},
         {}});
    request.pools.push_back(pool);
    outputPools.push_back(pool);
  }

  const bool profiling = args.profile || !args.trace.empty();
  std::vector<double> times;
  std::vector<ExecutionProfile> profiles;
  std::vector<double> runStartUs;
  const auto firstRun = Clock::now();
  for (unsigned i = 0; i < std::max(1u, args.repeat); ++i) {
    ExecuteOptions options;
    if (profiling) options.profile = &profiles.emplace_back();
    const auto start = Clock::now();
    runStartUs.push_back(std::chrono::duration<double, std::micro>(start - firstRun).count());
    NNHAL_TRY(prepared->executeSynchronously(request, options));
    times.push_back(millisecondsSince(start));
  }
  std::sort(times.begin(), times.end());
  const double medianMs = times[times.size() / 2];
  if (profiling && profiles.front().operations.empty()) {
    spdlog::warn(
        "no per-operation times: this model has dynamic shapes or control flow, "
        "which the profile does not cover");
  }
  if (!args.trace.empty()) {
    std::ofstream trace(args.trace);
    trace << tools::chromeTrace(profiles, runStartUs, args.model).dump() << "\n";
    if (!trace) return invalidArgument("cannot write the trace to '" + args.trace + "'");
  }

  const Memory& outPool = outputPools[0];
  std::vector<uint8_t> outputBytes(outPool.data(), outPool.data() + tools::tensorBytes(outDesc));
  if (!args.output.empty()) NNHAL_TRY(tools::writeFile(args.output, outputBytes));

  std::vector<std::string> labels;
  if (!args.labels.empty()) {
    NNHAL_ASSIGN_OR_RETURN(labels, tools::readLabels(args.labels));
  }
  auto best = tools::topK(outputBytes, outDesc, args.top);
  if (best) {
    const size_t offset =
        labels.size() > outputBytes.size() ? labels.size() - outputBytes.size() : 0;
    std::printf("top %zu classes:\n", best->size());
    for (const tools::ClassScore& c : *best) {
      const size_t line = c.index + offset;
      const std::string label = line < labels.size() ? labels[line] : "";
      std::printf("  %5u  %-32s %.4f\n", c.index, label.c_str(), c.score);
    }
  } else if (args.output.empty()) {
    std::printf("output '%s': %zu bytes (use --output to save them)\n", outDesc.name.c_str(),
                outputBytes.size());
  }
  if (!args.cacheDir.empty()) {
    std::printf(cacheHit ? "cache: hit (prepared from cache in %.2f ms)\n"
                         : "cache: miss (compiled and saved in %.2f ms)\n",
                prepareMs);
  }
  if (args.profile) {
    std::fputs(tools::formatProfile(tools::summarizeProfiles(profiles)).c_str(), stdout);
  }
  std::printf("preparation: %.2f ms\n", prepareMs);
  std::printf("execution: %.3f ms (median of %zu)\n", medianMs, times.size());
  return {};
}

Result<void> printInfo(const std::string& socket, const std::string& stateDir) {
  DeviceOptions options;
  options.stateDirectory = stateDir;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, openDevice(socket, options));
  const Capabilities caps = device->getCapabilities();
  const NumberOfCacheFiles cacheFiles = device->getNumberOfCacheFilesNeeded();
  std::printf("name: %s\nversion: %s\ntype: %s\n", device->getName().c_str(),
              device->getVersionString().c_str(), std::string(toString(device->getType())).c_str());
  if (socket.empty()) {
    const KernelIsa isa = kernelIsa();
    std::printf("kernels: %s (this CPU supports %s%s%s)\n", isa.active.c_str(),
                isa.supported.c_str(), isa.note.empty() ? "" : "; ", isa.note.c_str());
  }
  std::printf("cache files needed: %u model, %u data\n", cacheFiles.modelCache,
              cacheFiles.dataCache);
  std::printf("extensions: %zu\n", device->getSupportedExtensions().size());
  std::printf("relaxed float32->float16 performance: scalar %.3f, tensor %.3f\n",
              caps.relaxedFloat32toFloat16PerformanceScalar.execTime,
              caps.relaxedFloat32toFloat16PerformanceTensor.execTime);
  std::printf("IF performance: %.3f, WHILE performance: %.3f\n", caps.ifPerformance.execTime,
              caps.whilePerformance.execTime);
  if (socket.empty()) {
    const CapabilitiesSource source = capabilitiesSource(options);
    std::printf("capabilities: %s (%s)\n", source.measured ? "measured" : "documented defaults",
                source.detail.c_str());
  }
  std::printf("operand performance (execTime, powerUsage; 1.0 = CPU reference):\n");
  for (const OperandPerformance& p : caps.operandPerformance) {
    std::printf("  %-32s %.3f %.3f\n", std::string(toString(p.type)).c_str(), p.info.execTime,
                p.info.powerUsage);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::warn);
  spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL=debug for more

  CLI::App app{"nnhal: a Neural Networks HAL driver runtime (embedded CPU driver)"};
  app.require_subcommand(1);

  RunArgs args;
  CLI::App* run = app.add_subcommand(
      "run", "Prepare a TFLite model through the driver, execute it, and print the top classes");
  run->add_option("--model", args.model, "TFLite model (.tflite)")
      ->required()
      ->check(CLI::ExistingFile);
  auto* image = run->add_option("--image", args.image,
                                "Image to classify (BMP/PNG/JPEG); resized to the model's "
                                "input with bilinear (triangle filter) sampling");
  auto* input = run->add_option("--input", args.input,
                                "Raw input tensor bytes, fed as they are (instead of --image)");
  image->excludes(input);
  run->add_option("--output", args.output, "Write the raw bytes of output 0 to this file");
  run->add_option("--labels", args.labels, "Label file: line i names output class i");
  run->add_option("--top", args.top, "How many classes to print")->capture_default_str();
  run->add_option("--repeat", args.repeat, "Executions to time; the median is printed")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  run->add_option("--threads", args.threads, "Kernel threads (0 = all cores)")
      ->capture_default_str();
  run->add_option("--mean", args.mean, "Float inputs: pixel mean subtracted")
      ->capture_default_str();
  run->add_option("--std", args.stddev, "Float inputs: divisor after the mean")
      ->capture_default_str();
  run->add_option("--cache-dir", args.cacheDir,
                  "Compilation cache directory (created if missing; also the driver's state "
                  "directory): the first run compiles and saves, later runs of the same model "
                  "prepare from the cache");
  run->add_flag("--profile", args.profile,
                "Print the time of each operation and of each operation type (median over "
                "--repeat runs; embedded driver)");
  run->add_option("--trace", args.trace,
                  "Write every run's operation times to this file as Chrome trace JSON (opens "
                  "in Perfetto or chrome://tracing)");
  run->add_option("--connect", args.connect,
                  "Run through the nnhald daemon listening on this socket instead of the "
                  "embedded driver (--threads then belongs to the daemon; with --cache-dir the "
                  "daemon needs its own --cache-dir)");

  std::string infoConnect;
  CLI::App* info =
      app.add_subcommand("info", "Print the device's name, version, type and capabilities");
  std::string infoStateDir;
  info->add_option("--connect", infoConnect, "Ask the nnhald daemon listening on this socket");
  info->add_option("--state-dir", infoStateDir,
                   "The embedded driver's state directory (where `nnhal calibrate` stored its "
                   "measured capabilities)");

  cli::CalibrateArgs calibrateArgs;
  CLI::App* calibrate = app.add_subcommand(
      "calibrate",
      "Measure the embedded driver's capabilities (PerformanceInfo relative to its portable "
      "reference kernels) on the NNAPI benchmark's MobileNet workloads and store them in the "
      "state directory, where getCapabilities reports them");
  calibrate
      ->add_option("--models", calibrateArgs.models,
                   "Folder with mobilenet_v1_0.25_128_quant.tflite and "
                   "mobilenet_v2_1.0_224_quant.tflite")
      ->required()
      ->check(CLI::ExistingDirectory);
  calibrate->add_option("--state-dir", calibrateArgs.stateDir,
                        "The driver's state directory (created if missing)");
  calibrate->add_option("--runs", calibrateArgs.runs, "Timed executions per measurement")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  calibrate->add_flag("--reference-only", calibrateArgs.referenceOnly)->group("");

  cli::CtsArgs ctsArgs;
  CLI::App* cts = app.add_subcommand(
      "cts",
      "Run NNAPI CTS test models (JSON, shared/cts schema) through the driver: one line per "
      "model and mode, a summary per operation type and HAL version; exit 1 on any failure");
  cts->add_option("paths", ctsArgs.paths, "CTS JSON files or folders")
      ->required()
      ->check(CLI::ExistingPath);
  cts->add_option("--mode", ctsArgs.mode,
                  "all: sync, async, dynamic output shapes, burst and device buffers "
                  "(every input and output in a driver-managed buffer); or one of "
                  "sync|async|dynamic|burst|device-buffers")
      ->capture_default_str()
      ->check(CLI::IsMember({"all", "sync", "async", "dynamic", "burst", "device-buffers"}));
  cts->add_option("--connect", ctsArgs.connect,
                  "Run through the nnhald daemon listening on this socket instead of the "
                  "embedded driver");
  cts->add_option("--filter", ctsArgs.filter, "Only test models whose name contains this");
  cts->add_flag("--quiet", ctsArgs.quiet, "Print only failures and the summary");
  cts->add_option("--threads", ctsArgs.threads, "Kernel threads (0 = all cores)");

  CLI11_PARSE(app, argc, argv);

  if (*cts) return cli::runCts(ctsArgs);
  if (*calibrate) return cli::runCalibrate(calibrateArgs);

  Result<void> outcome;
  if (*run) {
    if (args.image.empty() && args.input.empty()) {
      std::fprintf(stderr, "nnhal: error: run needs --image or --input\n");
      return 2;
    }
    outcome = runModel(args);
  } else {
    outcome = printInfo(infoConnect, infoStateDir);
  }
  if (!outcome) return reportError(outcome.error());
  return 0;
}
