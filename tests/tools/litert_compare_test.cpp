// nnhal against TFLite itself: every model in shared/models runs through `nnhal run
// --compare-tflite` (the embedded driver, seeded random inputs) and through LiteRT (TFLite's
// runtime, XNNPACK on WebAssembly, tools/common/litert_reference.h) on the same inputs.
// Outputs must agree within the rules of docs/TESTING.md ("Against TFLite"): exactly, or
// within the tolerance measured and stated for that model (XNNPACK requantizes with one
// rounding where TFLite's reference kernels use two; a softmax or an argmax decoding
// amplifies a step). Models LiteRT.js itself cannot run are listed with LiteRT's reason; the
// suite skips, saying why, where Node.js or LiteRT is not installed.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/cli_test_util.h"
#include "tools/common/litert_reference.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;
const fs::path kModels = fs::path(NNHAL_SHARED_DIR) / "models";

/// What a model's outputs may differ by, measured with seeded random inputs (--seed 1).
struct Tolerance {
  int64_t maxSteps = 0;       ///< quantized outputs: raw steps
  double maxRelative = 1e-4;  ///< float outputs: of the output's largest magnitude
  bool sameArgmax = true;     ///< for outputs of 2 or more elements
};

/// The models whose outputs differ from XNNPACK's (all others must match exactly for
/// quantized outputs and within 1e-4 relative for float ones).
const std::map<std::string, Tolerance> kMeasured = {
    // Softmax outputs of 1/256 steps: one rounding step in the logits moves a few classes.
    {"mobilenet_v1_0.25_128_quant.tflite", {.maxSteps = 8}},
    {"mobilenet_v2_1.0_224_quant.tflite", {.maxSteps = 2}},
    {"mlperftiny_kws_ref_model.tflite", {.maxSteps = 8}},
    // Hybrid: XNNPACK quantizes the activations per batch (TFLite's hybrid kernels); nnhal
    // runs the float operation on dequantized weights, as the NNAPI delegate maps it.
    {"mlperftiny_model_ToyCar_quant.tflite", {.maxRelative = 0.02}},
    // The keypoints are decoded by an argmax over heatmaps whose near-ties one rounding step
    // flips: the decoded coordinates and scores differ, not the heatmaps' arithmetic.
    {"movenet_single_pose_lightning_ptq.tflite",
     {.maxSteps = 0, .maxRelative = 0.3, .sameArgmax = false}},
};

TEST(AgainstTflite, EveryModelAgreesWithLitertWithinItsTolerance) {
  auto litert = findLitert();
  if (!litert) GTEST_SKIP() << "not compared with TFLite: " << litert.error().message;
  int compared = 0;
  cli_test::TempDir temp;
  for (const auto& entry : fs::directory_iterator(kModels)) {
    if (entry.path().extension() != ".tflite") continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    const fs::path errors = temp.path() / "stderr.txt";
    const cli_test::CommandResult run = cli_test::runNnhal(
        "run " + entry.path().string() + " --compare-tflite --json --num_runs 1 --warmup_runs 0",
        "2>" + errors.string());
    std::ifstream errorFile(errors);
    const std::string stderrText((std::istreambuf_iterator<char>(errorFile)),
                                 std::istreambuf_iterator<char>());
    if (run.exitCode != 0 &&
        stderrText.find("LiteRT could not run the model") != std::string::npos) {
      // LiteRT.js's own limits (its loader refuses the file): reported, not compared.
      const size_t at = stderrText.find("LiteRT could not run the model");
      std::printf("[ litert   ] %s: %s\n", name.c_str(),
                  stderrText.substr(at, stderrText.find('\n', at) - at).c_str());
      continue;
    }
    ASSERT_EQ(run.exitCode, 0) << run.output << stderrText;
    const auto j = nlohmann::json::parse(run.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << run.output;
    ASSERT_TRUE(j.contains("tflite")) << run.output;
    const auto found = kMeasured.find(name);
    const Tolerance tolerance = found != kMeasured.end() ? found->second : Tolerance{};
    for (const auto& output : j["tflite"]) {
      const std::string outputName = output["name"].get<std::string>();
      if (output.contains("not_compared")) {
        std::printf("[ litert   ] %s '%s': %s\n", name.c_str(), outputName.c_str(),
                    output["not_compared"].get<std::string>().c_str());
        continue;
      }
      ++compared;
      const int64_t steps = output["max_steps"].get<int64_t>();
      const double relative = output["max_relative"].get<double>();
      std::printf("[ litert   ] %s '%s': %zu of %zu differ, %lld steps, %.3g relative\n",
                  name.c_str(), outputName.c_str(), output["differing"].get<size_t>(),
                  output["elements"].get<size_t>(), static_cast<long long>(steps), relative);
      EXPECT_LE(steps, tolerance.maxSteps) << outputName;
      if (steps == 0 && tolerance.maxSteps == 0) {
        EXPECT_LE(relative, tolerance.maxRelative) << outputName;
      }
      if (tolerance.sameArgmax && output.contains("argmax_nnhal")) {
        EXPECT_EQ(output["argmax_nnhal"], output["argmax_tflite"]) << outputName;
      }
    }
  }
  EXPECT_GE(compared, 8) << "fewer outputs compared than the models in shared/models give";
}

// A missing LiteRT is reported, never ignored: --compare-tflite fails with how to install it.
TEST(AgainstTflite, AMissingLitertIsNamed) {
  const cli_test::CommandResult run = cli_test::runShell(
      std::string("NNHAL_LITERT_DIR=/nonexistent PATH=/usr/bin:/bin ") + NNHAL_CLI_PATH + " run " +
      (kModels / "mobilenet_v1_0.25_128_quant.tflite").string() +
      " --compare-tflite --num_runs 1 --warmup_runs 0 2>&1");
  EXPECT_NE(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("scripts/setup.sh"), std::string::npos) << run.output;
}

}  // namespace
}  // namespace nnhal::tools
