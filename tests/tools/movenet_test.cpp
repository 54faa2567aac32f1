// MoveNet single-pose end to end through `nnhal run`: the import maps FLOOR_DIV, GATHER_ND and
// the int32 RESHAPE / CONCATENATION to the org.nnhal.tflite_compat extension the device
// reports, and the keypoints of grace_hopper.bmp (a portrait filling most of the frame, resized
// to 192x192) fall on the person.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/cli_test_util.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;
const fs::path kModels = fs::path(NNHAL_SHARED_DIR) / "models";

/// stdout of the CLI (stderr dropped) and its exit code.
std::pair<int, std::string> runCli(const std::string& args) {
  cli_test::CommandResult run = cli_test::runNnhal(args, "2>/dev/null");
  return {run.exitCode, std::move(run.output)};
}

TEST(MoveNet, KeypointsFallOnThePersonInGraceHopper) {
  const auto [code, out] =
      runCli("run --num_runs 1 --warmup_runs 0 --model " +
             (kModels / "movenet_single_pose_lightning_ptq.tflite").string() + " --image " +
             (kModels / "grace_hopper.bmp").string() + " --json");
  ASSERT_EQ(code, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  ASSERT_EQ(j["kind"], "pose");
  const nlohmann::json& keypoints = j["keypoints"];
  ASSERT_EQ(keypoints.size(), 17u);
  // 0 nose, 1-2 eyes, 3-4 ears: confident, in the upper half, in the central 60% across.
  for (size_t k = 0; k < 5; ++k) {
    const nlohmann::json& p = keypoints[k];
    SCOPED_TRACE(p.dump());
    EXPECT_GT(p["score"].get<double>(), 0.3);
    EXPECT_LT(p["y"].get<double>(), 0.5);
    EXPECT_GT(p["x"].get<double>(), 0.2);
    EXPECT_LT(p["x"].get<double>(), 0.8);
  }
  EXPECT_EQ(keypoints[0]["name"], "nose");
  // The eyes either side of the nose; the shoulders (5, 6) below the eyes and further apart.
  const double noseX = keypoints[0]["x"].get<double>();
  const double leftEyeX = keypoints[1]["x"].get<double>();
  const double rightEyeX = keypoints[2]["x"].get<double>();
  EXPECT_LT(std::min(leftEyeX, rightEyeX), noseX);
  EXPECT_GT(std::max(leftEyeX, rightEyeX), noseX);
  const double eyesY = std::max(keypoints[1]["y"].get<double>(), keypoints[2]["y"].get<double>());
  for (size_t k : {5, 6}) {
    SCOPED_TRACE(keypoints[k].dump());
    EXPECT_GT(keypoints[k]["y"].get<double>(), eyesY + 0.1);
  }
  const double shoulders =
      std::abs(keypoints[5]["x"].get<double>() - keypoints[6]["x"].get<double>());
  EXPECT_GT(shoulders, std::abs(leftEyeX - rightEyeX));
}

// --profile names the extension operations by extension and name, as the trace does.
TEST(MoveNet, ProfileNamesTheExtensionOperations) {
  const auto [code, out] = runCli("run --num_runs 1 --warmup_runs 0 --profile --model " +
                                  (kModels / "movenet_single_pose_lightning_ptq.tflite").string() +
                                  " --image " + (kModels / "grace_hopper.bmp").string());
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("org.nnhal.tflite_compat:GATHER_ND"), std::string::npos) << out;
  EXPECT_NE(out.find("org.nnhal.tflite_compat:FLOOR_DIV"), std::string::npos) << out;
  EXPECT_EQ(out.find("OperationType("), std::string::npos) << out;
}

}  // namespace
}  // namespace nnhal::tools
