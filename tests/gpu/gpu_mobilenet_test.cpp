// The real models of shared/models on the GPU device: the quantized MobileNets dequantized
// to float32 (tools/common/dequantize_model.h) run whole on nnhal-vulkan, within float
// tolerance of the CPU device on the same input, with the same top class; and the quantized
// graphs as they are (8-bit MobileNets, keyword spotting, visual wake words, person
// detection, micro speech, DeepLab v3 segmentation with its ARGMAX) give the CPU device's
// bytes exactly.
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
#include "hal/operand_utils.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/dequantize_model.h"

namespace nnhal {
namespace {

/// Runs `model` (one input, one output) on `device`: the output's bytes; `milliseconds`, when
/// given, gets the execution's time.
std::vector<uint8_t> runBytes(Device& device, const Model& model, const std::vector<uint8_t>& input,
                              size_t outBytes, double* milliseconds = nullptr) {
  auto prepared = device.prepareModel(model);
  EXPECT_TRUE(prepared) << prepared.error().message;
  if (!prepared) return {};
  Memory pool = *Memory::create(input.size() + outBytes);
  std::memcpy(pool.data(), input.data(), input.size());
  Request request;
  request.pools = {pool};
  const auto inBytes = static_cast<uint32_t>(input.size());
  request.inputs = {{false, {0, 0, inBytes}, {}}};
  request.outputs = {{false, {0, inBytes, static_cast<uint32_t>(outBytes)}, {}}};
  const auto start = std::chrono::steady_clock::now();
  auto result = (*prepared)->executeSynchronously(request);
  if (milliseconds != nullptr) {
    *milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  EXPECT_TRUE(result) << result.error().message;
  return {pool.data() + inBytes, pool.data() + inBytes + outBytes};
}

/// Runs `model` (one float input, one float output) on `device` with `input`; the output.
std::vector<float> runOnce(Device& device, const Model& model, const std::vector<float>& input,
                           size_t outputElements, double* milliseconds = nullptr) {
  std::vector<uint8_t> bytes(input.size() * 4);
  std::memcpy(bytes.data(), input.data(), bytes.size());
  const std::vector<uint8_t> out = runBytes(device, model, bytes, outputElements * 4, milliseconds);
  std::vector<float> output(out.size() / 4);
  std::memcpy(output.data(), out.data(), output.size() * 4);
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

class GpuQuantizedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(GpuQuantizedModel, GivesTheCpuDevicesBytes) {
  gputest::ValidatedGpu gpu = gputest::validatedGpu();
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  auto imported = importTfliteFile(std::filesystem::path(NNHAL_SHARED_DIR) / "models" / GetParam());
  ASSERT_TRUE(imported) << imported.error().message;
  const Model& model = imported->model;
  auto supported = gpu.device->explainSupportedOperations(model);
  ASSERT_TRUE(supported) << supported.error().message;
  for (const std::string& reason : *supported) EXPECT_EQ(reason, "");
  ASSERT_EQ(model.main.inputIndexes.size(), 1u);
  ASSERT_EQ(model.main.outputIndexes.size(), 1u);
  const Operand& in = model.main.operands[model.main.inputIndexes[0]];
  const Operand& out = model.main.operands[model.main.outputIndexes[0]];
  size_t inBytes = hal::sizeOfElement(in.type), outBytes = hal::sizeOfElement(out.type);
  for (uint32_t d : in.dimensions) inBytes *= d;
  for (uint32_t d : out.dimensions) outBytes *= d;
  std::vector<uint8_t> input(inBytes);
  std::mt19937 rng(11);
  if (in.type == OperandType::TENSOR_FLOAT32) {
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (size_t i = 0; i < inBytes; i += 4) {
      const float v = value(rng);
      std::memcpy(input.data() + i, &v, 4);
    }
  } else {
    for (uint8_t& b : input) b = static_cast<uint8_t>(rng());
  }
  const std::vector<uint8_t> onGpu = runBytes(*gpu.device, model, input, outBytes);
  const std::vector<uint8_t> onCpu = runBytes(**cpu, model, input, outBytes);
  EXPECT_EQ(onGpu, onCpu);
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

INSTANTIATE_TEST_SUITE_P(
    Models, GpuQuantizedModel,
    ::testing::Values("mobilenet_v1_0.25_128_quant.tflite", "mobilenet_v2_1.0_224_quant.tflite",
                      "mlperftiny_kws_ref_model.tflite", "mlperftiny_vww_96_int8.tflite",
                      "tfmicro_person_detect.tflite", "tfmicro_micro_speech_quantized.tflite",
                      "deeplabv3_mnv2_dm05_pascal_quant.tflite"),
    [](const auto& info) {
      std::string name = info.param.substr(0, info.param.rfind('.'));
      std::replace(name.begin(), name.end(), '.', '_');
      return name;
    });

INSTANTIATE_TEST_SUITE_P(Models, GpuMobilenet,
                         ::testing::Values("mobilenet_v1_0.25_128_quant.tflite",
                                           "mobilenet_v2_1.0_224_quant.tflite"),
                         [](const auto& info) {
                           return info.param.find("v1") != std::string::npos ? "V1" : "V2";
                         });

}  // namespace
}  // namespace nnhal
