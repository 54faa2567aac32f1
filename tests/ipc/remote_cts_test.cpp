// Conformance through nnhald: every NNAPI CTS model of shared/cts/V1_0 ... V1_3 (V1_0 and
// V1_1 only with NNHAL_IPC_SHORT_CTS set), in every mode of tools/common/cts_runner.h on a
// remote Device (fenced included), with MeasureTiming YES, request pools of every kind, a
// fenced execution waiting for a fence and an output one element short too, judged
// by the same rules as the embedded CTS suite (tests/cts).
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
                                  tools::CtsMode::kDeviceBuffers, tools::CtsMode::kFenced}) {
        const tools::CtsOutcome outcome = tools::runCtsModel(**device, cts, mode);
        if (mode == tools::CtsMode::kFenced && outcome.skipped) continue;
        EXPECT_TRUE(outcome.passed)
            << cts.name << " [" << tools::toString(mode) << "]: " << outcome.message;
      }
      // The timing rules with MeasureTiming::YES, and an output one element short.
      tools::CtsRunOptions measured;
      measured.measure = MeasureTiming::YES;
      for (tools::CtsMode mode : {tools::CtsMode::kSynchronous, tools::CtsMode::kFenced}) {
        const tools::CtsOutcome outcome = tools::runCtsModel(**device, cts, mode, measured);
        if (mode == tools::CtsMode::kFenced && outcome.skipped) continue;
        EXPECT_TRUE(outcome.passed)
            << cts.name << " [" << tools::toString(mode) << ", measure YES]: " << outcome.message;
      }
      // Request pools of the other kinds (the daemon stages file pools itself), and a fenced
      // execution that waits for a fence signalled after the call.
      for (const auto& [kind, mode] :
           {std::pair{MemoryKind::HARDWARE_BUFFER_BLOB, tools::CtsMode::kSynchronous},
            std::pair{MemoryKind::HARDWARE_BUFFER_BLOB, tools::CtsMode::kFenced},
            std::pair{MemoryKind::MMAP_FD, tools::CtsMode::kSynchronous},
            std::pair{MemoryKind::MMAP_FD, tools::CtsMode::kAsync}}) {
        tools::CtsRunOptions pool;
        pool.poolKind = kind;
        const tools::CtsOutcome outcome = tools::runCtsModel(**device, cts, mode, pool);
        if (mode == tools::CtsMode::kFenced && outcome.skipped) continue;
        EXPECT_TRUE(outcome.passed) << cts.name << " [" << tools::toString(mode) << ", "
                                    << toString(kind) << " pool]: " << outcome.message;
      }
      tools::CtsRunOptions fence;
      fence.waitForFence = true;
      const tools::CtsOutcome fenced =
          tools::runCtsModel(**device, cts, tools::CtsMode::kFenced, fence);
      EXPECT_TRUE(fenced.passed || fenced.skipped)
          << cts.name << " [fenced, waiting for a fence]: " << fenced.message;
      tools::CtsRunOptions shortOutput;
      shortOutput.outputOneElementShort = true;
      const tools::CtsOutcome insufficient =
          tools::runCtsModel(**device, cts, tools::CtsMode::kDynamicOutputShape, shortOutput);
      EXPECT_TRUE(insufficient.passed)
          << cts.name << " [output 0 one element short]: " << insufficient.message;
    }
  }
  EXPECT_GT(models, 100u);
}

TEST(RemoteCts, V1_0) { runFolder("V1_0"); }
TEST(RemoteCts, V1_1) { runFolder("V1_1"); }
// Under the sanitizers (scripts/asan.sh, scripts/tsan.sh) V1_0 and V1_1 only: the bigger
// folders take about 2 minutes there in the release build, several times that instrumented.
bool shortCts() { return std::getenv("NNHAL_IPC_SHORT_CTS") != nullptr; }
TEST(RemoteCts, V1_2) {
  if (shortCts()) GTEST_SKIP() << "NNHAL_IPC_SHORT_CTS is set";
  runFolder("V1_2");
}
TEST(RemoteCts, V1_3) {
  if (shortCts()) GTEST_SKIP() << "NNHAL_IPC_SHORT_CTS is set";
  runFolder("V1_3");
}

}  // namespace
}  // namespace nnhal::ipc
