// nnhal — command-line front end of the driver.
//
//   nnhal run --model M.tflite [--image I.bmp] [--input [NAME=]raw.bin]... [--labels L.txt]
//             [--top 5] [--num_runs N] [--warmup_runs N] [--threads T] [--output [NAME=]out.bin]...
//             [--mask M.png]
//             [--json] [--cache-dir DIR] [--connect SOCKET [--device NAME]] [--profile]
//             [--trace FILE]
//   nnhal info [--connect SOCKET | --state-dir DIR] [--device NAME] [--json]
//   nnhal calibrate --state-dir DIR [--device NAME] [--models DIR] [--runs N] [--if-stale]
//   nnhal cts PATH... [--mode all|sync|async|dynamic|burst|device-buffers|fenced] [--filter S]
//             [--quiet] [--connect SOCKET [--device NAME]] [--json] [--junit FILE]
//   nnhal dump-graph MODEL.tflite [--output FILE.dot] [--connect SOCKET]
//   nnhal stats --connect SOCKET [--json]
#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
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

#include "nnhal/device.h"
#include "nnhal/version.h"
#include "tools/nnhal/calibrate_command.h"
#include "tools/nnhal/cts_command.h"
#include "tools/nnhal/dump_graph_command.h"
#include "tools/nnhal/info_command.h"
#include "tools/nnhal/run_command.h"
#include "tools/nnhal/stats_command.h"

namespace {

using namespace nnhal;

int reportError(const Error& error) {
  std::fprintf(stderr, "nnhal: error: %s (%s)\n", error.message.c_str(),
               std::string(toString(error.status)).c_str());
  return 1;
}

}  // namespace

namespace {

/// `nnhal run`: run a TFLite model and say what its outputs mean.
CLI::App* addRunCommand(CLI::App& app, cli::RunArgs& args) {
  CLI::App* run = app.add_subcommand(
      "run",
      "Prepare a TFLite model through the driver, execute it, and print what its outputs "
      "mean: top classes, detected boxes, segmentation classes, keypoints, or a summary of "
      "each output tensor");
  run->add_option("model,--model", args.model,
                  "TFLite model (.tflite); also accepted as the first positional argument")
      ->required()
      ->check(CLI::ExistingFile);
  run->add_option("--image", args.image,
                  "Image (BMP/PNG/JPEG) for the model's first [1, H, W, 3] input, resized to it "
                  "with bilinear (triangle filter) sampling");
  run->add_option(
         "--input", args.inputs,
         "NAME=FILE: raw bytes of the input tensor NAME (repeat for several inputs; "
         "FILE alone for a model with one input). Without any --input or --image, every input "
         "gets seeded random values (--seed); otherwise inputs not given are zero")
      ->take_all();
  run->add_option("--output", args.outputs,
                  "NAME=FILE: write the raw bytes of output NAME (repeat; FILE alone for "
                  "output 0). INT64 outputs are written as int64")
      ->take_all();
  run->add_option("--labels", args.labels, "Label file: line i names class i");
  run->add_option("--mask", args.mask,
                  "Segmentation models: write the class of every pixel as a colour PNG");
  run->add_flag("--json", args.json, "Print the results as JSON");
  run->add_option("--top", args.top, "How many classes to print")->capture_default_str();
  run->add_option("--num_runs,--repeat", args.numRuns,
                  "Timed executions: min / mean / median / p90 / p99 / max are printed")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  run->add_option("--warmup_runs", args.warmupRuns,
                  "Executions before the timed ones (the very first is reported apart)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 10000u));
  run->add_option("--threads", args.threads, "Kernel threads (0 = all cores)")
      ->capture_default_str();
  run->add_flag("--compare-tflite", args.compareTflite,
                "Also run the model with TFLite's own runtime (LiteRT under Node.js, installed by "
                "scripts/setup.sh) on the same inputs, and print each output's difference");
  run->add_option("--seed", args.seed,
                  "Seed of the random values fed to every input when no --input or --image is "
                  "given (floats in [-1, 1), 8-bit values over their range, int32 in [0, 100))")
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
                "--num_runs runs; embedded driver)");
  run->add_option("--trace", args.trace,
                  "Write a Chrome trace JSON of the driver's work to this file (opens in "
                  "Perfetto or chrome://tracing): spans of the preparation, compilation, cache "
                  "I/O, each execution and each of its operations, and, with --connect, each "
                  "call to nnhald");
  run->add_option("--connect", args.connect,
                  "Run through the nnhald daemon listening on this socket instead of the "
                  "embedded driver (--threads then belongs to the daemon; with --cache-dir the "
                  "daemon needs its own --cache-dir)");
  run->add_option("--device", args.device,
                  "The device: embedded, nnhal-cpu (default) or nnhal-vulkan (the GPU device; "
                  "NNHAL_VULKAN_DEVICE picks the GPU); with --connect, the daemon's device of this "
                  "name (nnhal info --connect lists them)");
  return run;
}

/// `nnhal info`: the device's identity and capabilities.
CLI::App* addInfoCommand(CLI::App& app, cli::InfoArgs& infoArgs) {
  CLI::App* info =
      app.add_subcommand("info", "Print the device's name, version, type and capabilities");
  info->add_option("--connect", infoArgs.connect,
                   "Ask the nnhald daemon listening on this socket (every device it serves)");
  info->add_option("--device", infoArgs.device,
                   "Only the device of this name (embedded: nnhal-cpu or nnhal-vulkan)");
  info->add_flag("--json", infoArgs.json,
                 "Print the same facts as one JSON object (names as in the NN HAL: versionString, "
                 "capabilities.operandPerformance, numberOfCacheFilesNeeded, ...)");
  info->add_option("--state-dir", infoArgs.stateDir,
                   "The embedded driver's state directory (where `nnhal calibrate` stored its "
                   "measured capabilities)");
  return info;
}

/// `nnhal calibrate`: measure and store the capabilities.
CLI::App* addCalibrateCommand(CLI::App& app, cli::CalibrateArgs& calibrateArgs) {
  CLI::App* calibrate = app.add_subcommand(
      "calibrate",
      "Measure the embedded driver's capabilities: PerformanceInfo relative to the reference CPU "
      "path (XNNPACK's operators, the kernels of TFLite's CPU path) on the NNAPI benchmark's "
      "MobileNet workloads, each timed on both in turn. Stores them in the state directory, "
      "where getCapabilities reports them (docs/CAPABILITIES.md)");
  calibrate
      ->add_option("--state-dir", calibrateArgs.stateDir,
                   "The driver's state directory (created if missing)")
      ->required();
  calibrate
      ->add_option("--models", calibrateArgs.models,
                   "Time the published models in this folder (mobilenet_v1_0.25_128_quant.tflite, "
                   "mobilenet_v2_1.0_224_quant.tflite) instead of the built-in workloads of the "
                   "same shapes")
      ->check(CLI::ExistingDirectory);
  calibrate->add_option("--runs", calibrateArgs.runs, "Timed executions per measurement")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  calibrate->add_option("--device", calibrateArgs.device,
                        "nnhal-cpu (default) or nnhal-vulkan, the GPU device (the same workloads; "
                        "NNHAL_VULKAN_DEVICE picks the GPU)");
  calibrate->add_flag("--if-stale", calibrateArgs.ifStale,
                      "Measure only when the state directory holds no calibration of this "
                      "driver build and kernel level (what nnhald.service runs at start)");
  return calibrate;
}

/// `nnhal cts`: run CTS test models.
CLI::App* addCtsCommand(CLI::App& app, cli::CtsArgs& ctsArgs) {
  CLI::App* cts = app.add_subcommand(
      "cts",
      "Run NNAPI CTS test models (JSON, shared/cts schema) through the driver: one line per "
      "model and mode, a summary per operation type and HAL version; exit 1 on any failure");
  cts->add_option("paths", ctsArgs.paths, "CTS JSON files or folders")
      ->required()
      ->check(CLI::ExistingPath);
  cts->add_option("--mode", ctsArgs.mode,
                  "all: sync, async, dynamic output shapes, burst, device buffers "
                  "(every input and output in a driver-managed buffer) and fenced "
                  "(executeFenced); or one of sync|async|dynamic|burst|device-buffers|fenced")
      ->capture_default_str()
      ->check(
          CLI::IsMember({"all", "sync", "async", "dynamic", "burst", "device-buffers", "fenced"}));
  cts->add_option(
      "--device", ctsArgs.device,
      "The device judged: embedded, nnhal-cpu (default) or nnhal-vulkan, whose "
      "unsupported models are skipped; with --connect, the daemon's device of this name");
  cts->add_option("--connect", ctsArgs.connect,
                  "Run through the nnhald daemon listening on this socket instead of the "
                  "embedded driver");
  cts->add_option("--filter", ctsArgs.filter, "Only test models whose name contains this");
  cts->add_flag("--quiet", ctsArgs.quiet, "Print only failures and the summary");
  cts->add_flag("--json", ctsArgs.json,
                "Print one JSON object instead of the lines and tables: totals (passed, failed, "
                "skipped, durationMs) and an entry per model with its outcome in each mode");
  cts->add_option("--junit", ctsArgs.junit,
                  "Also write a JUnit XML report to this file (a testcase per model; failures "
                  "with their message, unsupported models as skipped); checked before the run");
  cts->add_option("--threads", ctsArgs.threads, "Kernel threads (0 = all cores)");
  cts->add_option("--pool", ctsArgs.pool,
                  "Kind of the request's shared-memory pool: ashmem (memfd), mmap_fd (a region "
                  "of a regular file) or hardware_buffer_blob")
      ->capture_default_str()
      ->check(CLI::IsMember({"ashmem", "mmap_fd", "hardware_buffer_blob"}));
  return cts;
}

/// `nnhal dump-graph`: a model as the driver sees it, as Graphviz.
CLI::App* addDumpGraphCommand(CLI::App& app, cli::DumpGraphArgs& dumpArgs) {
  CLI::App* dump = app.add_subcommand(
      "dump-graph",
      "Write a TFLite model, as the driver sees it after import, as a Graphviz graph: a node per "
      "operand (type, shape, lifetime) and per operation, IF/WHILE subgraphs as clusters. Render "
      "with `dot -Tsvg FILE.dot -o FILE.svg`");
  dump->add_option("model", dumpArgs.model, "TFLite model (.tflite)")
      ->required()
      ->check(CLI::ExistingFile);
  dump->add_option("--output,-o", dumpArgs.output, "Write the .dot here instead of to stdout");
  dump->add_option("--connect", dumpArgs.connect,
                   "Import with the vendor extensions of the nnhald at this socket (default: "
                   "those of the embedded driver, as `nnhal run` does)");
  return dump;
}

/// `nnhal stats`: a running nnhald's counters.
CLI::App* addStatsCommand(CLI::App& app, cli::StatsArgs& statsArgs) {
  CLI::App* stats = app.add_subcommand(
      "stats",
      "Print the counters of a running nnhald: clients, prepared models, mapped pools and their "
      "bytes, calls in flight, bursts, buffers; through its --admin-socket also its resident "
      "memory and uptime");
  stats
      ->add_option("--connect", statsArgs.connect,
                   "The daemon's socket: its --admin-socket for the whole daemon, its --socket "
                   "for this connection's own objects")
      ->required();
  stats->add_flag("--json", statsArgs.json, "Print one JSON object");
  return stats;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("nnhal"));  // results alone on stdout
  spdlog::set_level(spdlog::level::warn);
  spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL=debug for more

  CLI::App app{"nnhal: a Neural Networks HAL driver runtime (embedded CPU driver)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "nnhal " + std::string(nnhal::kVersion),
                       "Print the version (nnhal/version.h) and exit");

  cli::RunArgs args;
  CLI::App* run = addRunCommand(app, args);

  cli::InfoArgs infoArgs;
  addInfoCommand(app, infoArgs);  // the subcommand left when no other was given

  cli::CalibrateArgs calibrateArgs;
  CLI::App* calibrate = addCalibrateCommand(app, calibrateArgs);

  cli::CtsArgs ctsArgs;
  CLI::App* cts = addCtsCommand(app, ctsArgs);

  cli::DumpGraphArgs dumpArgs;
  CLI::App* dump = addDumpGraphCommand(app, dumpArgs);

  cli::StatsArgs statsArgs;
  CLI::App* stats = addStatsCommand(app, statsArgs);

  // Exit codes: 0 success (also --help), 1 the work failed (the message says why, with its
  // ErrorStatus), 2 the command line is wrong. `nnhal cts` exits 1 when a model fails.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int printed = app.exit(e);
    return printed == 0 ? 0 : 2;
  }

  if (*cts) return cli::runCts(ctsArgs);
  if (*calibrate) return cli::runCalibrate(calibrateArgs);

  Result<void> outcome;
  if (*dump) {
    outcome = cli::runDumpGraph(dumpArgs);
  } else if (*stats) {
    outcome = cli::runStats(statsArgs);
  } else if (*run) {
    outcome = cli::runModel(args);
  } else {
    outcome = cli::runInfo(infoArgs);
  }
  if (!outcome) return reportError(outcome.error());
  return 0;
}
