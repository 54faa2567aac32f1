// A conformance subset through nnhald: every NNAPI CTS model of shared/cts/V1_0 and
// V1_1 (V1_2 and V1_3 on request), executed synchronously, asynchronously, in a burst and with
// unspecified output dimensions on a remote Device, judged by the same rules as the embedded CTS
// suite (tests/cts).
#include <gtest/gtest.h>

#include <cstdlib>

#include "ipc_test_util.h"
#include "tools/common/cts_model.h"
#include "tools/common/cts_runner.h"

namespace nnhal::ipc {
namespace {

using namespace testing;

void runFolder(const char* folder) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  size_t models = 0;
  for (const fs::path& file : tools::ctsFiles(fs::path(NNHAL_SHARED_DIR) / "cts" / folder)) {
    auto loaded = tools::loadCtsFile(file);
    ASSERT_TRUE(loaded) << loaded.error().message;
    for (const tools::CtsModel& cts : *loaded) {
      ++models;
      for (tools::CtsMode mode : {tools::CtsMode::kSynchronous, tools::CtsMode::kAsync,
                                  tools::CtsMode::kDynamicOutputShape, tools::CtsMode::kBurst,
                                  tools::CtsMode::kDeviceBuffers}) {
        const tools::CtsOutcome outcome = tools::runCtsModel(**device, cts, mode);
        EXPECT_TRUE(outcome.passed)
            << cts.name << " [" << tools::toString(mode) << "]: " << outcome.message;
      }
    }
  }
  EXPECT_GT(models, 100u);
}

TEST(RemoteCts, V1_0) { runFolder("V1_0"); }
TEST(RemoteCts, V1_1) { runFolder("V1_1"); }
// The bigger folders take ~10 s more (longer under sanitizers): run with
// NNHAL_IPC_FULL_CTS=1.
bool fullCts() { return std::getenv("NNHAL_IPC_FULL_CTS") != nullptr; }
TEST(RemoteCts, V1_2) {
  if (!fullCts()) GTEST_SKIP() << "set NNHAL_IPC_FULL_CTS=1";
  runFolder("V1_2");
}
TEST(RemoteCts, V1_3) {
  if (!fullCts()) GTEST_SKIP() << "set NNHAL_IPC_FULL_CTS=1";
  runFolder("V1_3");
}

}  // namespace
}  // namespace nnhal::ipc
