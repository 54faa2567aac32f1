// Every CTS model the GPU device runs, with its inputs at the limits of their types
// (tests/common/extreme_values.h: +-FLT_MAX, +-inf, NaN, -0, denormals; INT32_MIN and
// INT32_MAX; 0 and 255), as they are and, for quantized models, at each extreme of their
// quantization parameters: whatever the shaders compute from them, the device answers with a
// status, the host's conversions of the results to 8-bit and int32 outputs stay defined, and
// the validation layer reports no error. One test per HAL version folder.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "common/extreme_values.h"
#include "gpu/gpu_test_models.h"
#include "nnhal/device.h"
#include "tools/common/cts_model.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;

class GpuExtremes : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuExtremes, Answer) {
  DeviceOptions options;
  options.maxExecutionBytes = 64 << 20;
  gputest::ValidatedGpu gpu = gputest::validatedGpu(options);
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  size_t ran = 0;
  size_t failed = 0;
  for (const fs::path& file : ctsFiles(fs::path(NNHAL_SHARED_DIR) / "cts" / GetParam())) {
    auto models = loadCtsFile(file);
    ASSERT_TRUE(models) << models.error().message;
    for (CtsModel& cts : *models) {
      testing::fillInputsWithExtremes(cts.model, cts.inputs);
      auto request = ctsRequest(cts);
      ASSERT_TRUE(request) << request.error().message;
      // As it is, then (for a quantized model) at each extreme of its quantization.
      std::vector<Model> variants{cts.model};
      for (testing::Extreme extreme : testing::kEveryExtreme) {
        Model changed = cts.model;
        if (testing::applyExtreme(extreme, changed) > 0) variants.push_back(std::move(changed));
      }
      for (Model& model : variants) {
        auto prepared = gpu.device->prepareModel(std::move(model));
        if (!prepared) continue;  // unsupported, or invalid as the CTS expects
        auto result = (*prepared)->executeSynchronously(*request);
        ++ran;
        if (!result) {
          ++failed;
          EXPECT_FALSE(result.error().message.empty()) << cts.name;
        }
      }
    }
  }
  EXPECT_GT(ran, 0u);
  std::printf(
      "%s on %s: %zu model variants ran with extreme inputs, %zu of them failed with a status\n",
      GetParam().c_str(), gpu.name.c_str(), ran, failed);
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Folders, GpuExtremes, ::testing::Values("V1_0", "V1_1", "V1_2", "V1_3"));

}  // namespace
}  // namespace nnhal::tools
