// The MobileNets of shared/models on the GPU device: the quantized graphs dequantized to
// float32 (tools/common/dequantize_model.h) run whole on nnhal-vulkan, within float
// tolerance of the CPU device on the same input, with the same top class.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gpu/gpu_test_models.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/dequantize_model.h"

namespace nnhal {
namespace {

/// Runs `model` (one float input, one float output) on `device` with `input`; the output.
std::vector<float> runOnce(Device& device, const Model& model, const std::vector<float>& input,
                           size_t outputElements, double* milliseconds = nullptr) {
  auto prepared = device.prepareModel(model);
  EXPECT_TRUE(prepared) << prepared.error().message;
  if (!prepared) return {};
  const size_t inBytes = input.size() * 4;
  const size_t outBytes = outputElements * 4;
  Memory pool = *Memory::create(inBytes + outBytes);
  std::memcpy(pool.data(), input.data(), inBytes);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, static_cast<uint32_t>(inBytes)}, {}}};
  request.outputs = {
      {false, {0, static_cast<uint32_t>(inBytes), static_cast<uint32_t>(outBytes)}, {}}};
  const auto start = std::chrono::steady_clock::now();
  auto result = (*prepared)->executeSynchronously(request);
  if (milliseconds != nullptr) {
    *milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  EXPECT_TRUE(result) << result.error().message;
  std::vector<float> output(outputElements);
  std::memcpy(output.data(), pool.data() + inBytes, outBytes);
  return output;
}

class GpuMobilenet : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuMobilenet, MatchesTheCpuDevice) {
  gputest::ValidatedGpu gpu = gputest::validatedGpu();
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);

  auto imported = importTfliteFile(std::filesystem::path(NNHAL_SHARED_DIR) / "models" / GetParam());
  ASSERT_TRUE(imported) << imported.error().message;
  auto model = tools::dequantizeModel(imported->model);
  ASSERT_TRUE(model) << model.error().message;
  auto supported = gpu.device->explainSupportedOperations(*model);
  ASSERT_TRUE(supported) << supported.error().message;
  for (const std::string& reason : *supported) EXPECT_EQ(reason, "");

  const Operand& in = model->main.operands[model->main.inputIndexes[0]];
  const Operand& out = model->main.operands[model->main.outputIndexes[0]];
  size_t inElements = 1, outElements = 1;
  for (uint32_t d : in.dimensions) inElements *= d;
  for (uint32_t d : out.dimensions) outElements *= d;
  std::vector<float> input(inElements);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  for (float& v : input) v = pixel(rng);

  double gpuMs = 0;
  const std::vector<float> onGpu = runOnce(*gpu.device, *model, input, outElements, &gpuMs);
  const std::vector<float> onCpu = runOnce(**cpu, *model, input, outElements);
  ASSERT_EQ(onGpu.size(), onCpu.size());
  float largest = 0;
  for (size_t i = 0; i < onGpu.size(); ++i) {
    largest = std::max(largest, std::fabs(onGpu[i] - onCpu[i]));
  }
  EXPECT_LT(largest, 1e-3f) << "largest difference of the class probabilities";
  const auto top = [](const std::vector<float>& v) {
    return std::max_element(v.begin(), v.end()) - v.begin();
  };
  EXPECT_EQ(top(onGpu), top(onCpu));
  std::printf("%s on %s: largest difference %.3g, one execution %.1f ms\n", GetParam().c_str(),
              gpu.name.c_str(), largest, gpuMs);
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Models, GpuMobilenet,
                         ::testing::Values("mobilenet_v1_0.25_128_quant.tflite",
                                           "mobilenet_v2_1.0_224_quant.tflite"),
                         [](const auto& info) {
                           return info.param.find("v1") != std::string::npos ? "V1" : "V2";
                         });

}  // namespace
}  // namespace nnhal
