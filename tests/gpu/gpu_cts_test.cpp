// The NNAPI CTS test models of shared/cts on the GPU device nnhal-vulkan, with the Khronos
// validation layer on: in every execution mode (output shapes left open included, which the
// device finds from the inputs' at preparation), and with output 0 one element short, each
// model passes or is skipped because the device reports one of its operations as
// unsupported (the VTS rule); no validation error. One test per HAL version folder.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "gpu/gpu_test_models.h"
#include "nnhal/device.h"
#include "tools/common/cts_model.h"
#include "tools/common/cts_runner.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;

class GpuCts : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuCts, PassesOrIsUnsupported) {
  gputest::ValidatedGpu gpu = gputest::validatedGpu();
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  size_t passed = 0;
  size_t skipped = 0;
  for (const fs::path& file : ctsFiles(fs::path(NNHAL_SHARED_DIR) / "cts" / GetParam())) {
    auto models = loadCtsFile(file);
    ASSERT_TRUE(models) << models.error().message;
    for (const CtsModel& cts : *models) {
      for (CtsMode mode : {CtsMode::kSynchronous, CtsMode::kAsync, CtsMode::kDynamicOutputShape,
                           CtsMode::kBurst, CtsMode::kDeviceBuffers, CtsMode::kFenced}) {
        const CtsOutcome outcome = runCtsModel(*gpu.device, cts, mode);
        EXPECT_TRUE(outcome.passed || outcome.skipped)
            << cts.version << "/" << cts.spec << " [" << toString(mode) << "]: " << outcome.message;
        passed += outcome.passed ? 1 : 0;
        skipped += outcome.skipped ? 1 : 0;
      }
      CtsRunOptions shortOutput;
      shortOutput.outputOneElementShort = true;
      const CtsOutcome insufficient =
          runCtsModel(*gpu.device, cts, CtsMode::kDynamicOutputShape, shortOutput);
      EXPECT_TRUE(insufficient.passed || insufficient.skipped)
          << cts.version << "/" << cts.spec
          << " [output 0 one element short]: " << insufficient.message;
    }
  }
  EXPECT_GT(passed, 0u);
  std::printf("%s on %s: %zu runs passed, %zu skipped (unsupported)\n", GetParam().c_str(),
              gpu.name.c_str(), passed, skipped);
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Folders, GpuCts, ::testing::Values("V1_0", "V1_1", "V1_2", "V1_3"));

// Operations the GPU runs bit-exact with the CPU device give its bytes on the CTS models: the
// 8-bit SUB (an ADD whose second multiplier is negated) and TRANSPOSE_CONV_2D, in both 8-bit
// types (the VTS's signed twin of each model) and both layouts, and the six comparisons on
// float, 8-bit and BOOL8 inputs, SELECT, GATHER, REDUCE_MAX, REDUCE_MIN, PRELU, TOPK_V2,
// CAST, SPACE_TO_BATCH_ND (with padding, both layouts) and DEQUANTIZE (per-channel too). None
// of these models is refused.
TEST(GpuCtsBytes, GiveTheCpuDevicesBytes) {
  gputest::ValidatedGpu gpu = gputest::validatedGpu();
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  struct Group {
    std::vector<const char*> files;
    bool eightBitOnly;  // the float models of these files are judged by the CTS's tolerance
    size_t atLeast;     // models compared
  };
  const std::vector<Group> groups = {
      {{"sub_quantized_different_scales.json", "transpose_conv2d.json",
        "transpose_conv2d_large.json"},
       true,
       100},
      {{"equal.json", "not_equal.json", "greater.json", "greater_equal.json", "less.json",
        "less_equal.json", "select_v1_2.json", "gather.json", "gather_higher_rank.json",
        "reduce_max.json", "reduce_min.json", "prelu.json", "topk_v2.json", "cast.json",
        "space_to_batch_v1_2.json", "dequantize_v1_2.json"},
       false,
       100},
  };
  const fs::path folder = fs::path(NNHAL_SHARED_DIR) / "cts" / "V1_2";
  for (const Group& group : groups) {
    size_t compared = 0;
    for (const char* file : group.files) {
      auto models = loadCtsFile(folder / file);
      ASSERT_TRUE(models) << models.error().message;
      for (const CtsModel& original : *models) {
        const bool eightBit = original.name.find("quant8") != std::string::npos ||
                              original.spec.find("sub_quantized") != std::string::npos;
        // The zero-sized models start with BOX_WITH_NMS_LIMIT, int32 tensors are not exact
        // as the GPU holds them, five-dimensional comparisons index rank-4 views, and block
        // shapes and paddings given with the request are not planned: all refused.
        const Subgraph& main = original.model.main;
        const bool int32Values =
            main.operands[main.operations.front().inputs.front()].type == OperandType::TENSOR_INT32;
        if ((group.eightBitOnly && !eightBit) || int32Values ||
            original.name.find("int32") != std::string::npos ||
            original.name.find("zero_sized") != std::string::npos ||
            original.name.find("five_dim") != std::string::npos ||
            (original.name.find("space_to_batch") != std::string::npos &&
             original.name.find("all_tensors_as_inputs") != std::string::npos)) {
          continue;
        }
        std::vector<CtsModel> variants = {original};
        if (eightBit && hasCoupledQuantization(original)) {
          variants.push_back(toSignedQuantization(original));
        }
        for (const CtsModel& cts : variants) {
          auto expected = computeOutputs(**cpu, cts);
          ASSERT_TRUE(expected) << cts.name << ": " << expected.error().message;
          auto actual = computeOutputs(*gpu.device, cts);
          ASSERT_TRUE(actual) << cts.name << ": " << actual.error().message;
          EXPECT_EQ(*actual, *expected) << cts.name;
          ++compared;
        }
      }
    }
    EXPECT_GE(compared, group.atLeast) << group.files.front();
  }
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

// Float operations whose results the CTS judges with its tolerance (the GPU computes in
// float32 where the CPU device may use double): each model of these files runs and passes on
// the GPU, none is refused.
TEST(GpuCtsRuns, InstanceNormalizationAndPowPass) {
  gputest::ValidatedGpu gpu = gputest::validatedGpu();
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  size_t passed = 0;
  const fs::path folder = fs::path(NNHAL_SHARED_DIR) / "cts" / "V1_2";
  for (const char* file : {"instance_normalization.json", "pow.json"}) {
    auto models = loadCtsFile(folder / file);
    ASSERT_TRUE(models) << models.error().message;
    for (const CtsModel& cts : *models) {
      const CtsOutcome outcome = runCtsModel(*gpu.device, cts, CtsMode::kSynchronous);
      EXPECT_TRUE(outcome.passed) << cts.name << ": " << outcome.message;
      passed += outcome.passed ? 1 : 0;
    }
  }
  EXPECT_GE(passed, 40u);
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

}  // namespace
}  // namespace nnhal::tools
