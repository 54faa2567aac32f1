// What the GPU device's tests share: the device with the validation layer on, and small
// float models.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "actors/device_factory.h"
#include "backend/vulkan/vulkan_backend.h"
#include "backend/vulkan_factory.h"
#include "cache/cache_test_util.h"

namespace nnhal::gputest {

/// The GPU device through the HAL plumbing, the Khronos validation layer on; `device` null
/// and `whyNot` set where the machine has no Vulkan device (the test then skips).
struct ValidatedGpu {
  std::shared_ptr<const backend::Backend> backend;
  const backend::vulkan::VulkanBackend* vulkan = nullptr;  ///< for validationErrors()
  std::shared_ptr<Device> device;
  std::string name;  ///< the physical device's
  std::string whyNot;
};

inline ValidatedGpu validatedGpu(const DeviceOptions& options = {}) {
  backend::VulkanOptions vulkan;
  vulkan.validation = true;
  auto made = backend::createVulkanBackend(vulkan);
  if (!made) return {nullptr, nullptr, nullptr, "", "no Vulkan device: " + made.error().message};
  ValidatedGpu gpu;
  gpu.backend = made->backend;
  gpu.vulkan = static_cast<const backend::vulkan::VulkanBackend*>(gpu.backend.get());
  gpu.name = made->device.name;
  auto driver = actors::createDriver(options, gpu.backend);
  if (!driver) {
    gpu.whyNot = "the driver did not start: " + driver.error().message;
    return gpu;
  }
  gpu.device = driver->device;
  return gpu;
}

/// CONV_2D in the NCHW layout: input [1, 2, 4, 4], filter [3, 3, 3, 2], SAME padding,
/// stride 1, no activation, output [1, 3, 4, 4]; weights and bias fixed, not random.
inline Model nchwConvModel() {
  cachetest::ModelBuilder b;
  const OperandType f = OperandType::TENSOR_FLOAT32;
  const uint32_t x = b.tensor(f, {1, 2, 4, 4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
  std::vector<float> w(3 * 3 * 3 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  const uint32_t filter =
      b.constant(f, {3, 3, 3, 2}, 0.0f, 0, w.data(), static_cast<uint32_t>(w.size() * 4));
  const float biasValues[3] = {0.5f, -0.25f, 1.0f};
  const uint32_t bias = b.constant(f, {3}, 0.0f, 0, biasValues, sizeof biasValues);
  Operand layout;
  layout.type = OperandType::BOOL;
  const uint32_t nchw = b.add(layout);
  b.model.main.operands[nchw].lifetime = OperandLifeTime::CONSTANT_COPY;
  b.model.main.operands[nchw].location = {0, static_cast<uint32_t>(b.model.operandValues.size()),
                                          1};
  b.model.operandValues.push_back(1);
  const uint32_t y = b.tensor(f, {1, 3, 4, 4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.operation(OperationType::CONV_2D,
              {x, filter, bias, b.scalar(1), b.scalar(1), b.scalar(1), b.scalar(0), nchw}, {y});
  b.model.main.inputIndexes = {x};
  b.model.main.outputIndexes = {y};
  return b.finish();
}

/// ADD of two TENSOR_INT32 [4] inputs (a type nnhal-vulkan does not run).
inline Model int32AddModel() {
  cachetest::ModelBuilder b;
  const OperandType i = OperandType::TENSOR_INT32;
  const uint32_t x = b.tensor(i, {4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t y = b.tensor(i, {4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t sum = b.tensor(i, {4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.operation(OperationType::ADD, {x, y, b.scalar(0)}, {sum});
  b.model.main.inputIndexes = {x, y};
  b.model.main.outputIndexes = {sum};
  return std::move(b.model);  // no constant pool to finish
}

/// `count` ADDs in a chain, each adding the constant 1 to the one before: output [1, 8] =
/// input [1, 8] + count. One dispatch per ADD, so a long chain spans many segments.
inline Model addChainModel(uint32_t count) {
  cachetest::ModelBuilder b;
  const OperandType f = OperandType::TENSOR_FLOAT32;
  const uint32_t x = b.tensor(f, {1, 8}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
  const float oneValue = 1.0f;
  const uint32_t one = b.constant(f, {1}, 0.0f, 0, &oneValue, sizeof oneValue);
  uint32_t previous = x;
  for (uint32_t k = 0; k < count; ++k) {
    const auto lifetime =
        k + 1 == count ? OperandLifeTime::SUBGRAPH_OUTPUT : OperandLifeTime::TEMPORARY_VARIABLE;
    const uint32_t sum = b.tensor(f, {1, 8}, 0.0f, 0, lifetime);
    b.operation(OperationType::ADD, {previous, one, b.scalar(0)}, {sum});
    previous = sum;
  }
  b.model.main.inputIndexes = {x};
  b.model.main.outputIndexes = {previous};
  return b.finish();
}

}  // namespace nnhal::gputest
