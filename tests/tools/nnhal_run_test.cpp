// End-to-end checks of `nnhal run`, as a user runs it: the real binary, real models.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/cli_test_util.h"
#include "tools/common/tensor_io.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;
const fs::path kModels = fs::path(NNHAL_SHARED_DIR) / "models";

using cli_test::CommandResult;
using cli_test::TempDir;

CommandResult runCli(const std::string& args) { return cli_test::runNnhal(args); }

nlohmann::json loadReference() {
  std::ifstream in(kModels / "reference.json");
  return nlohmann::json::parse(in);
}

// For every (model, input) pair of reference.json: the top-1 class is acceptable, every
// element is within 16 quantization steps of the reference, at most 25 elements are more
// than one step away (the reference computes quantized layers in float).
TEST(NnhalRun, ReferencePairsMatch) {
  const nlohmann::json reference = loadReference();
  ASSERT_EQ(reference["pairs"].size(), 10u);
  TempDir tmp;
  for (const auto& pair : reference["pairs"]) {
    const std::string model = pair["model_path"];
    const std::string input = pair["input"];
    SCOPED_TRACE(model + " / " + std::string(pair["image"]));
    const fs::path out = tmp.path() / "out.bin";
    const CommandResult run =
        runCli("run --num_runs 1 --model " + (kModels / model).string() + " --input " +
               (kModels / input).string() + " --output " + out.string());
    ASSERT_EQ(run.exitCode, 0) << run.output;
    auto actual = readFile(out);
    auto expected = readFile(kModels / std::string(pair["output"]));
    ASSERT_TRUE(actual && expected);
    ASSERT_EQ(actual->size(), expected->size());
    int maxDiff = 0;
    int moreThanOne = 0;
    size_t top1 = 0;
    for (size_t i = 0; i < actual->size(); ++i) {
      const int diff = std::abs(int{(*actual)[i]} - int{(*expected)[i]});
      maxDiff = std::max(maxDiff, diff);
      moreThanOne += diff > 1;
      if ((*actual)[i] > (*actual)[top1]) top1 = i;
    }
    EXPECT_LE(maxDiff, 16);
    EXPECT_LE(moreThanOne, 25);
    bool acceptable = false;
    for (const auto& index : pair["acceptable_top1"]) acceptable |= index.get<size_t>() == top1;
    EXPECT_TRUE(acceptable) << "top-1 " << top1;
  }
}

TEST(NnhalRun, ClassifiesGraceHopperImage) {
  const CommandResult run =
      runCli("run --model " + (kModels / "mobilenet_v2_1.0_224_quant.tflite").string() +
             " --image " + (kModels / "grace_hopper.bmp").string() + " --labels " +
             (kModels / "imagenet_labels.txt").string() + " --top 5");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const size_t first = run.output.find("military uniform");
  ASSERT_NE(first, std::string::npos) << run.output;
  // It is the first class listed.
  const size_t header = run.output.find("top 5 classes:");
  ASSERT_NE(header, std::string::npos);
  const size_t firstLineEnd = run.output.find('\n', run.output.find('\n', header) + 1);
  EXPECT_LT(first, firstLineEnd) << run.output;
}

TEST(NnhalRun, TruncatedModelIsAClearError) {
  TempDir tmp;
  auto bytes = readFile(kModels / "mobilenet_v1_0.25_128_quant.tflite");
  ASSERT_TRUE(bytes);
  // The flatbuffer ends at byte 503,776; a zip of labels follows it (see tflite tests).
  for (size_t keep : {size_t{0}, size_t{7}, size_t{1000}, size_t{250000}, size_t{503000}}) {
    std::vector<uint8_t> cut(bytes->begin(), bytes->begin() + static_cast<std::ptrdiff_t>(keep));
    const fs::path model = tmp.path() / "cut.tflite";
    ASSERT_TRUE(writeFile(model, cut));
    const CommandResult run =
        runCli("run --model " + model.string() + " --input " +
               (kModels / "inputs/mobilenet_v1_0.25_128_quant__cat.input.bin").string());
    EXPECT_EQ(run.exitCode, 1) << "kept " << keep << " bytes: " << run.output;
    EXPECT_NE(run.output.find("error"), std::string::npos) << run.output;
  }
}

TEST(NnhalRun, CorruptModelIsAClearError) {
  TempDir tmp;
  auto bytes = readFile(kModels / "mobilenet_v1_0.25_128_quant.tflite");
  ASSERT_TRUE(bytes);
  // Overwrite the root table offset and a stretch of the vtables with garbage.
  for (size_t i = 0; i < 64; ++i) (*bytes)[i] = static_cast<uint8_t>(0xA5 ^ i);
  const fs::path model = tmp.path() / "corrupt.tflite";
  ASSERT_TRUE(writeFile(model, *bytes));
  const CommandResult run =
      runCli("run --model " + model.string() + " --input " +
             (kModels / "inputs/mobilenet_v1_0.25_128_quant__cat.input.bin").string());
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_NE(run.output.find("INVALID_ARGUMENT"), std::string::npos) << run.output;
}

TEST(NnhalRun, WronglySizedInputIsAClearError) {
  const CommandResult run = runCli(
      "run --model " + (kModels / "mobilenet_v2_1.0_224_quant.tflite").string() + " --input " +
      (kModels / "inputs/mobilenet_v1_0.25_128_quant__cat.input.bin").string());
  EXPECT_EQ(run.exitCode, 1) << run.output;
  EXPECT_NE(run.output.find("49152 bytes"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("150528 bytes"), std::string::npos) << run.output;
}

TEST(NnhalRun, MissingModelFileIsRejected) {
  const CommandResult run = runCli("run --model /nonexistent.tflite --input /dev/null");
  EXPECT_NE(run.exitCode, 0);
  EXPECT_NE(run.output.find("/nonexistent.tflite"), std::string::npos) << run.output;
}

TEST(NnhalInfo, PrintsDeviceVersion) {
  const CommandResult run = runCli("info");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("version: nnhal-"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("TENSOR_QUANT8_ASYMM"), std::string::npos) << run.output;
}

// --profile and --trace are refused through nnhald (it reports no per-operation times)
// before anything runs, and a trace that cannot be written is an error, not a silent loss.
TEST(NnhalRunProfileTest, RefusesWhatItCannotDeliver) {
  TempDir dir;
  const std::string common = "run --model " +
                             (kModels / "mobilenet_v1_0.25_128_quant.tflite").string() +
                             " --image " + (kModels / "resized_cat.bmp").string();
  const CommandResult remote =
      runCli(common + " --profile --connect " + (dir.path() / "no-daemon.sock").string());
  EXPECT_EQ(remote.exitCode, 1);
  EXPECT_NE(remote.output.find("needs the embedded driver"), std::string::npos) << remote.output;
  const CommandResult trace =
      runCli(common + " --trace " + (dir.path() / "missing" / "trace.json").string());
  EXPECT_EQ(trace.exitCode, 1);
  EXPECT_NE(trace.output.find("cannot write the trace"), std::string::npos) << trace.output;
  const CommandResult profiled =
      runCli(common + " --repeat 3 --profile --trace " + (dir.path() / "trace.json").string());
  ASSERT_EQ(profiled.exitCode, 0) << profiled.output;
  EXPECT_NE(profiled.output.find("by operation type:"), std::string::npos) << profiled.output;
  // The trace has the driver's phases, each execution and each operation of it.
  auto bytes = readFile(dir.path() / "trace.json");
  ASSERT_TRUE(bytes.has_value());
  const nlohmann::json json = nlohmann::json::parse(bytes->begin(), bytes->end(), nullptr, false);
  ASSERT_FALSE(json.is_discarded());
  std::map<std::string, int> spans;
  for (const auto& event : json["traceEvents"]) {
    if (event["ph"] == "X") ++spans[std::string(event["cat"]) + "/" + std::string(event["name"])];
  }
  EXPECT_EQ(spans["preparation/prepareModel"], 1);
  EXPECT_EQ(spans["compilation/compile"], 1);
  EXPECT_EQ(spans["execution/execute"], 1 + 3);   // the warm-up run and the 3 timed ones
  EXPECT_EQ(spans["execution/CONV_2D"], 4 * 15);  // MobileNet v1 has 15 convolutions
}

// Arguments that would spoil the results are refused before anything runs: a label file
// that would shift every class, a directory as labels, an output file that cannot be
// written. A wrong command line exits 2, a failed run 1.
TEST(NnhalRunArgumentsTest, AreCheckedBeforeRunning) {
  TempDir dir;
  const std::string common = "run --model " +
                             (kModels / "mobilenet_v1_0.25_128_quant.tflite").string() +
                             " --image " + (kModels / "cat.bmp").string();
  CommandResult run = runCli(common + " --labels " + (kModels / "coco_labels.txt").string());
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("has 90 lines but the model classifies 1001 classes: labels would "
                            "be off by -911"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("execution:"), std::string::npos) << run.output;
  run = runCli(common + " --labels " + kModels.string());
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("is not a regular file"), std::string::npos) << run.output;
  run = runCli(common + " --output " + (dir.path() / "missing" / "out.bin").string());
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("cannot write"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("execution:"), std::string::npos) << run.output;
  run = runCli(common + " --no-such-option");
  EXPECT_EQ(run.exitCode, 2) << run.output;
  run = runCli("run --image " + (kModels / "cat.bmp").string());  // --model is required
  EXPECT_EQ(run.exitCode, 2) << run.output;
}

// Like TFLite's benchmark_model, a model runs without any input argument: every input gets
// seeded random values, said on stderr; the same seed gives the same outputs, another seed
// others.
TEST(NnhalRunArgumentsTest, WithoutInputsRunsOnSeededRandomValues) {
  TempDir dir;
  const std::string common =
      "run --num_runs 1 --model " + (kModels / "mobilenet_v1_0.25_128_quant.tflite").string();
  auto runWith = [&](const std::string& seed, const std::string& out) {
    return runCli(common + seed + " --output " + (dir.path() / out).string());
  };
  const CommandResult first = runWith("", "a.bin");
  ASSERT_EQ(first.exitCode, 0) << first.output;
  EXPECT_NE(first.output.find("seeded random values (--seed 1)"), std::string::npos)
      << first.output;
  const CommandResult again = runWith(" --seed 1", "b.bin");
  ASSERT_EQ(again.exitCode, 0) << again.output;
  const CommandResult other = runWith(" --seed 7", "c.bin");
  ASSERT_EQ(other.exitCode, 0) << other.output;
  EXPECT_NE(other.output.find("(--seed 7)"), std::string::npos) << other.output;
  const auto a = readFile(dir.path() / "a.bin");
  const auto b = readFile(dir.path() / "b.bin");
  const auto c = readFile(dir.path() / "c.bin");
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
}

// Timing as TFLite's benchmark_model: the first run apart, then statistics of the timed runs.
TEST(NnhalRunArgumentsTest, ReportsBenchmarkStyleTimes) {
  const CommandResult run =
      runCli("run --model " + (kModels / "mobilenet_v1_0.25_128_quant.tflite").string() +
             " --image " + (kModels / "cat.bmp").string() + " --warmup_runs 2 --num_runs 5");
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("execution: first "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("5 runs after 2 warm-up: min "), std::string::npos) << run.output;
  for (const char* field : {" mean ", " median ", " p90 ", " p99 ", " max "}) {
    EXPECT_NE(run.output.find(field), std::string::npos) << field << run.output;
  }
}

// `nnhal calibrate` times its built-in workloads on the driver and on the reference CPU path
// (XNNPACK) and stores ratios that `nnhal info --state-dir` then reports, the same on every
// run; `--if-stale` leaves a current calibration as it is.
TEST(NnhalCalibrateTest, StoresMeasuredCapabilitiesThatInfoReportsIdentically) {
  TempDir dir;
  const std::string state = (dir.path() / "state").string();
  const CommandResult calibrated = runCli("calibrate --runs 1 --state-dir " + state);
  ASSERT_EQ(calibrated.exitCode, 0) << calibrated.output;
  for (const char* text : {"mobilenet_v1_0.25_128_quant", "mobilenet_v2_1.0_224_quant",
                           "mobilenet_v2_1.0_224_float", "xnnpack", "quantized:  execTime"}) {
    EXPECT_NE(calibrated.output.find(text), std::string::npos) << text << calibrated.output;
  }
  const fs::path file = dir.path() / "state" / "capabilities.json";
  ASSERT_TRUE(fs::exists(file));
  const auto readFile = [&] {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string stored = readFile();
  EXPECT_NE(stored.find(R"("reference": "xnnpack")"), std::string::npos) << stored;

  const CommandResult again = runCli("calibrate --if-stale --state-dir " + state);
  ASSERT_EQ(again.exitCode, 0) << again.output;
  EXPECT_NE(again.output.find("is current"), std::string::npos) << again.output;
  EXPECT_EQ(readFile(), stored);

  const CommandResult first = runCli("info --state-dir " + state);
  const CommandResult second = runCli("info --state-dir " + state);
  ASSERT_EQ(first.exitCode, 0) << first.output;
  EXPECT_NE(first.output.find("capabilities: measured"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("against xnnpack"), std::string::npos) << first.output;
  auto table = [](const std::string& out) { return out.substr(out.find("operand performance")); };
  EXPECT_EQ(table(first.output), table(second.output));
  // Without the state directory: the documented defaults, and info says so.
  const CommandResult defaults = runCli("info");
  EXPECT_NE(defaults.output.find("capabilities: documented defaults"), std::string::npos)
      << defaults.output;
}

// A calibration another build left (here: the old format) is stale: --if-stale measures again.
TEST(NnhalCalibrateTest, IfStaleMeasuresOverAnOldCalibration) {
  TempDir dir;
  std::ofstream(dir.path() / "capabilities.json")
      << R"({"format": 1, "driverVersion": "old", "isa": "avx2", "measuredAt": "t"})";
  const CommandResult run =
      runCli("calibrate --if-stale --runs 1 --state-dir " + dir.path().string());
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("measuring, because"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("written to"), std::string::npos) << run.output;
  EXPECT_EQ(runCli("info --state-dir " + dir.path().string()).output.find("documented defaults"),
            std::string::npos);
}

TEST(NnhalCalibrateTest, NeedsAStateDirectoryAndTheModelsItIsPointedAt) {
  TempDir dir;
  const CommandResult noState = runCli("calibrate --runs 1");
  EXPECT_EQ(noState.exitCode, 2);
  EXPECT_NE(noState.output.find("--state-dir"), std::string::npos) << noState.output;
  const CommandResult missing =
      runCli("calibrate --models " + dir.path().string() + " --state-dir " + dir.path().string());
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_NE(missing.output.find("mobilenet_v1_0.25_128_quant.tflite"), std::string::npos)
      << missing.output;
  EXPECT_FALSE(fs::exists(dir.path() / "capabilities.json"));
}

}  // namespace
}  // namespace nnhal::tools
