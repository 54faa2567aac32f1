// MoveNet single-pose through nnhald: the client imports the model with the extensions the
// daemon reports (org.nnhal.tflite_compat), prepares and runs it remotely, and gets the same
// keypoints as the embedded driver.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

#include "ipc_test_util.h"
#include "nnhal/client.h"
#include "nnhal/tflite_import.h"
#include "tools/common/image.h"
#include "tools/common/tensor_io.h"

namespace nnhal::ipc {
namespace {

const std::filesystem::path kModels = std::filesystem::path(NNHAL_SHARED_DIR) / "models";

/// MoveNet's [1, 1, 17, 3] float output for grace_hopper.bmp, run on `device`.
Result<std::vector<float>> runMoveNet(Device& device) {
  NNHAL_ASSIGN_OR_RETURN(ImportedModel imported,
                         importTfliteFile(kModels / "movenet_single_pose_lightning_ptq.tflite",
                                          {.extensions = device.getSupportedExtensions()}));
  NNHAL_ASSIGN_OR_RETURN(tools::RgbImage image, tools::loadImage(kModels / "grace_hopper.bmp"));
  NNHAL_ASSIGN_OR_RETURN(std::vector<uint8_t> input,
                         tools::imageToTensor(image, imported.inputs[0], {}));
  NNHAL_ASSIGN_OR_RETURN(auto prepared, device.prepareModel(std::move(imported.model)));
  const size_t outBytes = 17 * 3 * sizeof(float);
  NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(input.size() + outBytes));
  std::memcpy(pool.data(), input.data(), input.size());
  Request request;
  request.pools.push_back(pool);
  const auto inBytes = static_cast<uint32_t>(input.size());
  request.inputs = {{false, {0, 0, inBytes}, {}}};
  request.outputs = {{false, {0, inBytes, static_cast<uint32_t>(outBytes)}, {}}};
  NNHAL_TRY(prepared->executeSynchronously(request));
  std::vector<float> out(17 * 3);
  std::memcpy(out.data(), pool.data() + inBytes, outBytes);
  return out;
}

TEST(RemoteMoveNet, RunsThroughTheDaemonAsEmbedded) {
  testing::Daemon daemon;
  ASSERT_TRUE(daemon.running()) << "nnhald did not start";
  auto remote = connect(daemon.socket());
  ASSERT_TRUE(remote) << remote.error().message;
  auto remoteOut = runMoveNet(**remote);
  ASSERT_TRUE(remoteOut) << remoteOut.error().message;

  DeviceOptions options;
  options.kernelThreads = 1;
  auto embedded = createDevice(options);
  ASSERT_TRUE(embedded) << embedded.error().message;
  auto embeddedOut = runMoveNet(**embedded);
  ASSERT_TRUE(embeddedOut) << embeddedOut.error().message;
  EXPECT_EQ(*remoteOut, *embeddedOut);
  // The nose (keypoint 0: y, x, score) on the face: confident, upper half, central.
  EXPECT_GT((*remoteOut)[2], 0.3f);
  EXPECT_LT((*remoteOut)[0], 0.5f);
  EXPECT_GT((*remoteOut)[1], 0.2f);
  EXPECT_LT((*remoteOut)[1], 0.8f);
}

}  // namespace
}  // namespace nnhal::ipc
