// The NNAPI CTS test models of shared/cts, one GoogleTest case per test model, each run
// through the embedded driver in every mode of tools/common/cts_runner.h, as the VTS
// GeneratedTests vary them. Instantiated once per folder (V1_0 ...), so
// `--gtest_filter='V1_2/*'` runs one HAL version.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "cts/cts_folder.h"
#include "nnhal/device.h"
#include "tools/common/cts_model.h"
#include "tools/common/cts_runner.h"

namespace nnhal::tools {
namespace {

class Cts : public CtsDeviceTest<> {};

// The VTS GeneratedTests' variations: every mode with MeasureTiming NO and YES (the timing
// rules checked), request pools of the three kinds, a fenced execution waiting for a fence,
// output 0 one element short with unspecified output shapes
// (OUTPUT_INSUFFICIENT_SIZE), and for single-operation models with TENSOR_QUANT8_ASYMM
// operands the signed-quantization twin, which must pass, or be skipped, exactly as the
// original is.
TEST_P(Cts, Passes) {
  const CtsModel& cts = *GetParam().model;
  if (std::getenv("NNHAL_CTS_ARITHMETIC_ONLY") != nullptr) {
    // CI's reruns at the lower kernel levels check the kernels' arithmetic: the model with
    // its shapes known when it is prepared, and with its output shapes found as it runs (the
    // two ways kernels are prepared); the paths around the kernels (callback, burst, fenced,
    // pools, timing) are the same code at every level and run in the full suite.
    for (CtsMode mode : {CtsMode::kSynchronous, CtsMode::kDynamicOutputShape}) {
      const CtsOutcome outcome = runCtsModel(device(), cts, mode);
      EXPECT_TRUE(outcome.passed) << cts.version << "/" << cts.spec << " [" << toString(mode)
                                  << "]: " << outcome.message;
    }
    return;
  }
  CtsRunOptions run;
  bool syncPassed = false, syncSkipped = false;
  for (MeasureTiming measure : {MeasureTiming::NO, MeasureTiming::YES}) {
    run.measure = measure;
    for (CtsMode mode : {CtsMode::kSynchronous, CtsMode::kAsync, CtsMode::kDynamicOutputShape,
                         CtsMode::kBurst, CtsMode::kDeviceBuffers, CtsMode::kFenced}) {
      const CtsOutcome outcome = runCtsModel(device(), cts, mode, run);
      if (mode == CtsMode::kSynchronous && measure == MeasureTiming::NO) {
        syncPassed = outcome.passed;
        syncSkipped = outcome.skipped;
      }
      if (mode == CtsMode::kFenced && outcome.skipped) continue;  // an output of unknown shape
      EXPECT_TRUE(outcome.passed) << cts.version << "/" << cts.spec << " [" << toString(mode)
                                  << ", measure " << (measure == MeasureTiming::YES ? "YES" : "NO")
                                  << "]: " << outcome.message;
    }
  }
  // The request in a hardware_buffer_blob pool (the VTS's BLOB_AHWB memory) for each of
  // its four executors, and in an mmap_fd pool (a region of a regular file).
  for (const auto& [kind, modes] :
       {std::pair{
            MemoryKind::HARDWARE_BUFFER_BLOB,
            std::vector{CtsMode::kSynchronous, CtsMode::kAsync, CtsMode::kBurst, CtsMode::kFenced}},
        std::pair{MemoryKind::MMAP_FD, std::vector{CtsMode::kSynchronous, CtsMode::kBurst}}}) {
    CtsRunOptions pool;
    pool.poolKind = kind;
    for (CtsMode mode : modes) {
      const CtsOutcome outcome = runCtsModel(device(), cts, mode, pool);
      if (mode == CtsMode::kFenced && outcome.skipped) continue;
      EXPECT_TRUE(outcome.passed) << cts.version << "/" << cts.spec << " [" << toString(mode)
                                  << ", " << toString(kind) << " pool]: " << outcome.message;
    }
  }
  CtsRunOptions fence;
  fence.waitForFence = true;
  const CtsOutcome fenced = runCtsModel(device(), cts, CtsMode::kFenced, fence);
  EXPECT_TRUE(fenced.passed || fenced.skipped)
      << cts.version << "/" << cts.spec << " [fenced, waiting for a fence]: " << fenced.message;
  CtsRunOptions shortOutput;
  shortOutput.outputOneElementShort = true;
  const CtsOutcome insufficient =
      runCtsModel(device(), cts, CtsMode::kDynamicOutputShape, shortOutput);
  EXPECT_TRUE(insufficient.passed)
      << cts.version << "/" << cts.spec
      << " [dynamic, output 0 one element short]: " << insufficient.message;
  if (hasCoupledQuantization(cts)) {
    const CtsOutcome coupled =
        runCtsModel(device(), toSignedQuantization(cts), CtsMode::kSynchronous);
    EXPECT_EQ(coupled.passed, syncPassed) << "signed twin: " << coupled.message;
    EXPECT_EQ(coupled.skipped, syncSkipped) << "signed twin: " << coupled.message;
  }
}

INSTANTIATE_TEST_SUITE_P(V1_0, Cts, ::testing::ValuesIn(loadCtsFolder("V1_0")), ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_1, Cts, ::testing::ValuesIn(loadCtsFolder("V1_1")), ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_2, Cts, ::testing::ValuesIn(loadCtsFolder("V1_2")), ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_3, Cts, ::testing::ValuesIn(loadCtsFolder("V1_3")), ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_3_cts_only, Cts, ::testing::ValuesIn(loadCtsFolder("V1_3_cts_only")),
                         ctsTestName);

}  // namespace
}  // namespace nnhal::tools
