// End-to-end runs of the models beyond classifiers in shared/models, through `nnhal run` as a
// user runs it: segmentation (int64 ARG_MAX output), the int8 Keras LSTM, and the LSTM-SSD
// detector (three inputs, TFLite_Detection_PostProcess). Each asserts a plausible result.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/cli_test_util.h"
#include "tools/common/image.h"
#include "tools/common/tensor_io.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;
const fs::path kModels = fs::path(NNHAL_SHARED_DIR) / "models";

using cli_test::CommandResult;
using cli_test::TempDir;

/// Runs the CLI; stderr goes to `stderrFile` when given, else it is dropped, so the output is
/// stdout alone (logs go to stderr).
CommandResult runCli(const std::string& args, const std::string& stderrFile = "/dev/null") {
  return cli_test::runNnhal(args, "2>" + stderrFile);
}

std::string model(const std::string& name) { return (kModels / name).string(); }

nlohmann::json runJson(const std::string& args) {
  // One execution: these check results, not times (CI runs them at the scalar level too).
  const CommandResult run = runCli(args + " --json --num_runs 1 --warmup_runs 0");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  return nlohmann::json::parse(run.output, nullptr, false);
}

// Every model in shared/models runs as a user first tries it: `nnhal run MODEL`, no inputs
// (seeded random values), one execution; each output is reported. The hybrid anomaly
// detector (float activations, int8 weights) among them.
TEST(RealModels, EveryModelRunsOnRandomInputs) {
  int models = 0;
  for (const auto& entry : fs::directory_iterator(kModels)) {
    if (entry.path().extension() != ".tflite") continue;
    ++models;
    SCOPED_TRACE(entry.path().filename().string());
    const CommandResult run =
        runCli("run " + entry.path().string() + " --json --num_runs 1 --warmup_runs 0");
    ASSERT_EQ(run.exitCode, 0) << run.output;
    const auto j = nlohmann::json::parse(run.output, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << run.output;
    ASSERT_TRUE(j.contains("outputs")) << run.output;
    EXPECT_FALSE(j["outputs"].empty()) << run.output;
  }
  EXPECT_GE(models, 12);
}

TEST(RealModels, DeepLabLabelsTheDog) {
  TempDir tmp;
  const fs::path mask = tmp / "mask.png";
  const fs::path argmax = tmp / "argmax.bin";
  const nlohmann::json j = runJson(
      "run --model " + model("deeplabv3_mnv2_dm05_pascal_quant.tflite") + " --image " +
      model("dog_segmentation.bmp") + " --labels " + model("pascal_voc_segmentation_labels.txt") +
      " --mask " + mask.string() + " --output ArgMax=" + argmax.string());
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["kind"], "segmentation");
  EXPECT_EQ(j["segmentation"]["width"], 513);
  // The largest class that is not the background is the dog, and it covers a good part.
  std::string foreground;
  double share = 0;
  for (const auto& c : j["segmentation"]["classes"]) {
    if (c["class"] == 0) continue;
    foreground = c["label"];
    share = c["share"];
    break;
  }
  EXPECT_EQ(foreground, "dog");
  EXPECT_GT(share, 0.2);
  // --mask wrote a PNG of the output's size.
  auto png = loadImage(mask);
  ASSERT_TRUE(png.has_value()) << png.error().message;
  EXPECT_EQ(png->width, 513u);
  EXPECT_EQ(png->height, 513u);
  // The INT64 output is written as int64, as TFLite lays it out.
  auto bytes = readFile(argmax);
  ASSERT_TRUE(bytes.has_value());
  ASSERT_EQ(bytes->size(), size_t{513} * 513 * 8);
  int64_t maxClass = 0;
  for (size_t i = 0; i < bytes->size(); i += 8) {
    int64_t v = 0;
    std::memcpy(&v, bytes->data() + i, 8);
    ASSERT_GE(v, 0);
    maxClass = std::max(maxClass, v);
  }
  EXPECT_LT(maxClass, 21);
  EXPECT_GT(maxClass, 0);
}

/// A 28x28 digit drawn as MNIST draws them: white strokes on black, one byte per pixel.
std::vector<uint8_t> drawDigit(int digit) {
  std::vector<uint8_t> image(28 * 28, 0);
  auto set = [&](int x, int y) {
    if (x >= 0 && x < 28 && y >= 0 && y < 28) image[static_cast<size_t>(y * 28 + x)] = 255;
  };
  if (digit == 1) {
    for (int y = 4; y < 24; ++y)
      for (int x = 13; x < 16; ++x) set(x, y);
  } else if (digit == 0) {
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        const double r = std::pow((x - 13.5) / 6.0, 2) + std::pow((y - 13.5) / 9.0, 2);
        if (r > 0.7 && r < 1.3) set(x, y);
      }
    }
  } else {  // 7: a bar and a slanted stroke
    for (int x = 7; x < 21; ++x)
      for (int y = 5; y < 8; ++y) set(x, y);
    for (int t = 0; t < 18; ++t) {
      for (int dx = -1; dx <= 1; ++dx) set(static_cast<int>(20 - t * 0.5) + dx, 7 + t);
    }
  }
  return image;
}

TEST(RealModels, KerasLstmClassifiesDrawnDigits) {
  TempDir tmp;
  for (const int digit : {0, 1, 7}) {
    SCOPED_TRACE(digit);
    const fs::path input = tmp / ("digit" + std::to_string(digit) + ".bin");
    ASSERT_TRUE(writeFile(input, drawDigit(digit)).has_value());
    const nlohmann::json j = runJson("run --model " + model("keras_lstm_mnist_ptq.tflite") +
                                     " --input " + input.string() + " --top 1");
    ASSERT_FALSE(j.is_discarded());
    ASSERT_EQ(j["kind"], "classifier");
    EXPECT_EQ(j["top"][0]["index"], digit);
    EXPECT_GT(j["top"][0]["score"].get<double>(), 0.5);
  }
}

TEST(RealModels, TrafficDetectorPrintsBoxes) {
  TempDir tmp;
  // The recurrent state inputs given explicitly (zeros: the first frame) and by default.
  const fs::path zeros = tmp / "state.bin";
  ASSERT_TRUE(writeFile(zeros, std::vector<uint8_t>(8 * 8 * 320, 0)).has_value());
  const std::string base = "run --model " + model("traffic_model.tflite") + " --image " +
                           model("grace_hopper.bmp") + " --labels " + model("coco_labels.txt");
  for (const std::string& extra :
       {std::string(), " --input raw_inputs/init_lstm_c=" + zeros.string() +
                           " --input raw_inputs/init_lstm_h=" + zeros.string()}) {
    const nlohmann::json j = runJson(base + extra);
    ASSERT_FALSE(j.is_discarded());
    ASSERT_EQ(j["kind"], "detection");
    ASSERT_FALSE(j["detections"].empty());
    for (const auto& d : j["detections"]) {
      const double score = d["score"];
      EXPECT_GT(score, 0.0);
      EXPECT_LE(score, 1.0);
      EXPECT_LT(d["class"].get<int>(), 3);
      const auto& box = d["box"];
      EXPECT_LT(box[0].get<double>(), box[2].get<double>());
      EXPECT_LT(box[1].get<double>(), box[3].get<double>());
      for (const auto& v : box) {
        EXPECT_GT(v.get<double>(), -0.2);
        EXPECT_LT(v.get<double>(), 1.2);
      }
    }
    // The next recurrent state comes out as outputs 4 and 5.
    ASSERT_EQ(j["outputs"].size(), 6u);
    EXPECT_EQ(j["outputs"][4]["name"], "raw_outputs/lstm_c");
  }
}

TEST(RealModels, NamedInputsAndOutputsAreChecked) {
  TempDir tmp;
  const fs::path zeros = tmp / "z.bin";
  ASSERT_TRUE(writeFile(zeros, std::vector<uint8_t>(10, 0)).has_value());
  const fs::path err = tmp / "err.txt";
  const std::string traffic = "run --model " + model("traffic_model.tflite");
  CommandResult run = runCli(traffic + " --input nosuch=" + zeros.string(), err.string());
  EXPECT_EQ(run.exitCode, 1);
  auto text = readFile(err);
  ASSERT_TRUE(text.has_value());
  std::string message(text->begin(), text->end());
  EXPECT_NE(message.find("no input named 'nosuch'"), std::string::npos) << message;

  run = runCli(traffic + " --input raw_inputs/init_lstm_c=" + zeros.string(), err.string());
  EXPECT_EQ(run.exitCode, 1);
  text = readFile(err);
  message.assign(text->begin(), text->end());
  EXPECT_NE(message.find("holds 10 bytes but input 'raw_inputs/init_lstm_c' needs 20480"),
            std::string::npos)
      << message;

  // A raw file without a name is ambiguous for a model with three inputs.
  run = runCli(traffic + " --input " + zeros.string(), err.string());
  EXPECT_EQ(run.exitCode, 1);
  text = readFile(err);
  message.assign(text->begin(), text->end());
  EXPECT_NE(message.find("the model has 3 inputs: name the one"), std::string::npos) << message;

  // --mask needs a segmentation output.
  run = runCli("run --model " + model("mobilenet_v1_0.25_128_quant.tflite") + " --image " +
                   model("cat.bmp") + " --mask " + (tmp / "m.png").string(),
               err.string());
  EXPECT_EQ(run.exitCode, 1);
  text = readFile(err);
  message.assign(text->begin(), text->end());
  EXPECT_NE(message.find("not a segmentation map"), std::string::npos) << message;
}

TEST(RealModels, ClassifierJsonHasTheTopClass) {
  const nlohmann::json j =
      runJson("run --model " + model("mobilenet_v2_1.0_224_quant.tflite") + " --image " +
              model("grace_hopper.bmp") + " --labels " + model("imagenet_labels.txt"));
  ASSERT_FALSE(j.is_discarded());
  ASSERT_EQ(j["kind"], "classifier");
  EXPECT_EQ(j["top"][0]["index"], 653);
  EXPECT_EQ(j["top"][0]["label"], "military uniform");
  EXPECT_GT(j["execution_ms"]["median"].get<double>(), 0.0);
}

}  // namespace
}  // namespace nnhal::tools
