// The GPU device nnhal-vulkan through the whole HAL plumbing, on whatever Vulkan device the
// machine has (CI: Mesa's lavapipe), with the Khronos validation layer on: its identity,
// results equal to the CPU device's within float tolerance, refusals at launch with their
// reasons, compilation caching in its own state and never across devices, output buffers
// too small, concurrent executions and bursts. Every test ends with no validation error.
// Skipped, with the reason, where no Vulkan device exists.
#include <gtest/gtest.h>

#include <fcntl.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "actors/device_factory.h"
#include "backend/vulkan/vulkan_backend.h"
#include "backend/vulkan/vulkan_pipeline_cache.h"
#include "backend/vulkan_factory.h"
#include "cache/cache_test_util.h"
#include "common/calibration.h"
#include "common/hostile_models.h"
#include "engine/arena_budget.h"
#include "engine/yield_point.h"
#include "gpu/gpu_test_models.h"
#include "nnhal/burst.h"
#include "nnhal/device.h"
#include "nnhal/gpu_device.h"

namespace nnhal {
namespace {

using cachetest::buildModel;
constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;

/// Float outputs equal within 1e-4 absolute plus 1e-4 relative.
void expectClose(const std::vector<uint8_t>& actual, const std::vector<uint8_t>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i + 4 <= actual.size(); i += 4) {
    float a = 0, e = 0;
    std::memcpy(&a, actual.data() + i, 4);
    std::memcpy(&e, expected.data() + i, 4);
    EXPECT_NEAR(a, e, 1e-4f + 1e-4f * std::fabs(e)) << "element " << i / 4;
  }
}

class VulkanDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    gputest::ValidatedGpu gpu = gputest::validatedGpu(options_);
    if (gpu.backend == nullptr) GTEST_SKIP() << gpu.whyNot;
    ASSERT_NE(gpu.device, nullptr) << gpu.whyNot;
    backend_ = gpu.backend;
    vulkan_ = gpu.vulkan;
    device_ = gpu.device;
  }
  void TearDown() override {
    device_.reset();
    if (vulkan_ != nullptr) {
      EXPECT_EQ(vulkan_->context().validationErrors(), 0u);
    }
  }

  std::shared_ptr<PreparedModel> prepare(Model model, const PrepareOptions& options = {}) {
    auto prepared = device_->prepareModel(std::move(model), options);
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? *prepared : nullptr;
  }

  DeviceOptions options_;
  std::shared_ptr<const backend::Backend> backend_;
  const backend::vulkan::VulkanBackend* vulkan_ = nullptr;
  std::shared_ptr<Device> device_;
};

TEST_F(VulkanDeviceTest, IsTheGpuDevice) {
  EXPECT_EQ(device_->getName(), "nnhal-vulkan");
  EXPECT_EQ(device_->getType(), DeviceType::GPU);
  EXPECT_NE(device_->getVersionString().find(vulkan_->context().description().name),
            std::string::npos)
      << device_->getVersionString();
  // Unmeasured: nothing better than 10x the CPU reference is claimed.
  for (const OperandPerformance& p : device_->getCapabilities().operandPerformance) {
    EXPECT_GE(p.info.execTime, 10.0f) << toString(p.type);
  }
  const VulkanDeviceStatus status = vulkanDeviceStatus();
  EXPECT_TRUE(status.available) << status.reason;
  EXPECT_EQ(status.name, vulkan_->context().description().name);
}

TEST_F(VulkanDeviceTest, GivesTheCpuDevicesResults) {
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto onCpu = (*cpu)->prepareModel(buildModel(kFloat, seed));
    ASSERT_TRUE(onCpu);
    auto onGpu = prepare(buildModel(kFloat, seed));
    ASSERT_NE(onGpu, nullptr);
    for (uint32_t input : {7u, 8u}) {
      expectClose(cachetest::run(*onGpu, kFloat, input), cachetest::run(**onCpu, kFloat, input));
    }
  }
}

// The 8-bit operations (convolutions, ADD, FULLY_CONNECTED) compute what the CPU device
// does to the bit: integer accumulation and the gemmlowp requantization.
TEST_F(VulkanDeviceTest, GivesTheCpuDevicesBytesOnQuantizedModels) {
  constexpr OperandType kQuant = OperandType::TENSOR_QUANT8_ASYMM;
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto onCpu = (*cpu)->prepareModel(buildModel(kQuant, seed));
    ASSERT_TRUE(onCpu);
    auto onGpu = prepare(buildModel(kQuant, seed));
    ASSERT_NE(onGpu, nullptr);
    for (uint32_t input : {7u, 8u, 9u}) {
      EXPECT_EQ(cachetest::run(*onGpu, kQuant, input), cachetest::run(**onCpu, kQuant, input))
          << "seed " << seed << ", input " << input;
    }
  }
}

// GATHER's indices that arrive with the request are checked by the host before the run, as
// the CPU device checks them: one outside [0, axis size) fails that execution with
// GENERAL_FAILURE naming it, and the next execution runs normally. Constant indices outside
// the range make the model invalid at preparation.
TEST_F(VulkanDeviceTest, ChecksGathersIndicesBeforeTheRun) {
  const auto gatherModel = [](const std::vector<int32_t>* constantIndices) {
    cachetest::ModelBuilder b;
    const OperandType f = OperandType::TENSOR_FLOAT32;
    const OperandType i = OperandType::TENSOR_INT32;
    const uint32_t values = b.tensor(f, {4, 2}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t indices =
        constantIndices != nullptr
            ? b.constant(i, {3}, 0.0f, 0, constantIndices->data(), 3 * sizeof(int32_t))
            : b.tensor(i, {3}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t out = b.tensor(f, {3, 2}, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
    b.operation(OperationType::GATHER, {values, b.scalar(0), indices}, {out});
    b.model.main.inputIndexes = constantIndices != nullptr ? std::vector<uint32_t>{values}
                                                           : std::vector<uint32_t>{values, indices};
    b.model.main.outputIndexes = {out};
    // A constant pool only where the indices are constant.
    return constantIndices != nullptr ? b.finish() : std::move(b.model);
  };
  auto prepared = prepare(gatherModel(nullptr));
  ASSERT_NE(prepared, nullptr);
  const auto run = [&](std::array<int32_t, 3> indices) -> Result<std::vector<float>> {
    Memory pool = *Memory::create(8 * 4 + 3 * 4 + 6 * 4);
    for (int k = 0; k < 8; ++k) {
      const float v = static_cast<float>(10 * (k / 2) + k % 2);  // row r: 10r, 10r + 1
      std::memcpy(pool.data() + k * 4, &v, 4);
    }
    std::memcpy(pool.data() + 32, indices.data(), 12);
    Request request;
    request.pools = {pool};
    request.inputs = {{false, {0, 0, 32}, {}}, {false, {0, 32, 12}, {}}};
    request.outputs = {{false, {0, 44, 24}, {}}};
    NNHAL_TRY(prepared->executeSynchronously(request));
    std::vector<float> out(6);
    std::memcpy(out.data(), pool.data() + 44, 24);
    return out;
  };
  auto rows = run({3, 0, 1});
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(*rows, (std::vector<float>{30, 31, 0, 1, 10, 11}));
  for (const std::array<int32_t, 3> bad : {std::array<int32_t, 3>{0, 4, 1}, {-1, 0, 0}}) {
    auto refused = run(bad);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().status, ErrorStatus::GENERAL_FAILURE);
    EXPECT_NE(refused.error().message.find("GATHER input 2 (indices) element"), std::string::npos)
        << refused.error().message;
  }
  rows = run({2, 2, 0});
  ASSERT_TRUE(rows) << rows.error().message;
  EXPECT_EQ(*rows, (std::vector<float>{20, 21, 20, 21, 0, 1}));

  const std::vector<int32_t> outside = {0, 5, 1};
  auto invalid = device_->prepareModel(gatherModel(&outside));
  ASSERT_FALSE(invalid);
  EXPECT_NE(invalid.error().message.find("is 5, outside [0, 4)"), std::string::npos)
      << invalid.error().message;
  const std::vector<int32_t> inside = {1, 1, 3};
  EXPECT_NE(prepare(gatherModel(&inside)), nullptr);
}

// TILE by constant multiples repeats the whole input along each dimension, as on the CPU
// device; multiples given with the request are refused (the plan needs them).
TEST_F(VulkanDeviceTest, TilesAsTheCpuDeviceDoes) {
  const auto tileModel = [](bool constantMultiples) {
    cachetest::ModelBuilder b;
    const OperandType f = OperandType::TENSOR_FLOAT32;
    const OperandType i = OperandType::TENSOR_INT32;
    const std::vector<int32_t> repeats = {3, 1, 2};
    const uint32_t values = b.tensor(f, {2, 1, 3}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t multiples =
        constantMultiples ? b.constant(i, {3}, 0.0f, 0, repeats.data(), 3 * sizeof(int32_t))
                          : b.tensor(i, {3}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t out = b.tensor(f, {6, 1, 6}, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
    b.operation(OperationType::TILE, {values, multiples}, {out});
    b.model.main.inputIndexes = constantMultiples ? std::vector<uint32_t>{values}
                                                  : std::vector<uint32_t>{values, multiples};
    b.model.main.outputIndexes = {out};
    return constantMultiples ? b.finish() : std::move(b.model);
  };
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  const auto run = [](PreparedModel& prepared) {
    Memory pool = *Memory::create(6 * 4 + 36 * 4);
    for (int k = 0; k < 6; ++k) {
      const float v = static_cast<float>(k + 1);
      std::memcpy(pool.data() + k * 4, &v, 4);
    }
    Request request;
    request.pools = {pool};
    request.inputs = {{false, {0, 0, 24}, {}}};
    request.outputs = {{false, {0, 24, 144}, {}}};
    auto result = prepared.executeSynchronously(request);
    EXPECT_TRUE(result) << result.error().message;
    std::vector<float> out(36);
    std::memcpy(out.data(), pool.data() + 24, 144);
    return out;
  };
  auto onGpu = prepare(tileModel(true));
  ASSERT_NE(onGpu, nullptr);
  auto onCpu = (*cpu)->prepareModel(tileModel(true));
  ASSERT_TRUE(onCpu) << onCpu.error().message;
  const std::vector<float> tiled = run(*onGpu);
  EXPECT_EQ(tiled, run(**onCpu));
  // Row 0 of the output: input row 0 twice; output rows 2 and 4 repeat rows 0 and 1.
  EXPECT_EQ(std::vector<float>(tiled.begin(), tiled.begin() + 6),
            (std::vector<float>{1, 2, 3, 1, 2, 3}));
  EXPECT_EQ(std::vector<float>(tiled.begin() + 24, tiled.begin() + 30),
            (std::vector<float>{1, 2, 3, 1, 2, 3}));
  auto supported = device_->explainSupportedOperations(tileModel(false));
  ASSERT_TRUE(supported) << supported.error().message;
  EXPECT_NE(supported->at(0).find("must be a constant"), std::string::npos) << supported->at(0);
}

TEST_F(VulkanDeviceTest, RunsNchwAsTheCpuDeviceDoes) {
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  const Model model = gputest::nchwConvModel();
  auto onCpu = (*cpu)->prepareModel(model);
  ASSERT_TRUE(onCpu) << onCpu.error().message;
  auto onGpu = prepare(model);
  ASSERT_NE(onGpu, nullptr);
  const auto run = [](PreparedModel& prepared) {
    Memory pool = *Memory::create((32 + 48) * 4);
    for (int i = 0; i < 32; ++i) {
      const float v = static_cast<float>((i * 5) % 11) - 5.0f;
      std::memcpy(pool.data() + i * 4, &v, 4);
    }
    Request request;
    request.pools = {pool};
    request.inputs = {{false, {0, 0, 128}, {}}};
    request.outputs = {{false, {0, 128, 192}, {}}};
    auto result = prepared.executeSynchronously(request);
    EXPECT_TRUE(result) << result.error().message;
    return std::vector<uint8_t>(pool.data() + 128, pool.data() + 320);
  };
  expectClose(run(*onGpu), run(**onCpu));
}

TEST_F(VulkanDeviceTest, BroadcastsAndClampsLikeTheHal) {
  // [2, 1] + [1, 3] -> [2, 3] with RELU6 fused.
  Model model = testing::broadcastAddModel(2, 3, {2, 3});
  const uint32_t relu6 = 3;
  std::memcpy(model.operandValues.data() + model.main.operands[2].location.offset, &relu6, 4);
  auto prepared = prepare(std::move(model));
  ASSERT_NE(prepared, nullptr);
  Memory pool = *Memory::create(11 * 4);
  const float in[5] = {1.0f, 5.0f, -2.0f, 0.5f, 2.0f};
  std::memcpy(pool.data(), in, sizeof in);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 8}, {}}, {false, {0, 8, 12}, {}}};
  request.outputs = {{false, {0, 20, 24}, {}}};
  auto result = prepared->executeSynchronously(request);
  ASSERT_TRUE(result) << result.error().message;
  float out[6];
  std::memcpy(out, pool.data() + 20, sizeof out);
  const float expected[6] = {0.0f, 1.5f, 3.0f, 3.0f, 5.5f, 6.0f};
  for (int i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(out[i], expected[i]) << i;
  EXPECT_EQ(result->outputShapes[0].dimensions, (std::vector<uint32_t>{2, 3}));
}

TEST_F(VulkanDeviceTest, RefusesWhatItDoesNotRunAtLaunch) {
  const Model ints = gputest::int32AddModel();
  auto supported = device_->getSupportedOperations(ints);
  ASSERT_TRUE(supported) << supported.error().message;
  for (bool s : *supported) EXPECT_FALSE(s);
  auto reasons = device_->explainSupportedOperations(ints);
  ASSERT_TRUE(reasons);
  EXPECT_NE((*reasons)[0].find("TENSOR_INT32"), std::string::npos) << (*reasons)[0];
  auto prepared = device_->prepareModel(ints);
  ASSERT_FALSE(prepared);
  EXPECT_EQ(prepared.error().status, ErrorStatus::INVALID_ARGUMENT);
  // A model whose shapes do not fit is invalid, not unsupported.
  auto invalid = device_->getSupportedOperations(testing::broadcastAddModel(2, 3, {2, 4}));
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST_F(VulkanDeviceTest, OutputTooSmallReportsTheShapes) {
  auto prepared = prepare(buildModel(kFloat, 1));
  ASSERT_NE(prepared, nullptr);
  cachetest::TestRequest test(kFloat, 7);
  test.request.outputs[0].location.length -= 4;
  auto result = prepared->executeSynchronously(test.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(result.error().outputShapes.size(), 1u);
  EXPECT_FALSE(result.error().outputShapes[0].isSufficient);
  EXPECT_EQ(result.error().outputShapes[0].dimensions,
            (std::vector<uint32_t>{1, cachetest::kOutputUnits}));
}

TEST_F(VulkanDeviceTest, ConcurrentExecutionsAndBurstsAgree) {
  auto prepared = prepare(buildModel(kFloat, 4));
  ASSERT_NE(prepared, nullptr);
  const std::vector<uint8_t> expected = cachetest::run(*prepared, kFloat);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 10; ++k) {
        if (cachetest::run(*prepared, kFloat) != expected) ++mismatches;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  auto burst = prepared->configureExecutionBurst();
  ASSERT_TRUE(burst) << burst.error().message;
  for (int k = 0; k < 3; ++k) {
    cachetest::TestRequest test(kFloat, 7);
    auto result = (*burst)->execute(test.request, MeasureTiming::YES);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(test.output(), expected);
  }
}

// The buffers GPU executions keep between runs are charged to the runtime's ArenaBudget like
// the CPU engine's arenas: per application, freed when idle, and refused beyond the limit
// (RESOURCE_EXHAUSTED_TRANSIENT), so that one client of nnhald cannot hold the GPU's
// memory outside its share.
TEST_F(VulkanDeviceTest, ExecutionBuffersAreChargedToTheArenaBudget) {
  constexpr hal::ApplicationId kApplication = 1234;
  auto compiled = backend_->compile(buildModel(kFloat, 4), {});
  ASSERT_TRUE(compiled) << compiled.error().message;
  const backend::CompiledModel& model = *compiled->model;
  const uint64_t slot = model.executionBytes();
  ASSERT_GT(slot, 0u);

  engine::ArenaBudget budget(0, std::chrono::milliseconds(0));
  auto memory = model.createMemory(&budget, kApplication);
  ASSERT_TRUE(memory) << memory.error().message;
  cachetest::TestRequest test(kFloat, 3);
  ASSERT_TRUE(model.execute(test.request, **memory, {}));
  EXPECT_EQ(budget.held(kApplication), slot) << "the slot stays for the next execution";
  ASSERT_TRUE(model.execute(test.request, **memory, {}));
  EXPECT_EQ(budget.held(kApplication), slot) << "reused, not charged twice";
  EXPECT_EQ(budget.trimIdle(true), slot);
  EXPECT_EQ(budget.held(), 0u);
  ASSERT_TRUE(model.execute(test.request, **memory, {})) << "a freed slot is made again";
  memory->reset();
  EXPECT_EQ(budget.held(), 0u) << "the memory gave its slots back when destroyed";

  engine::ArenaBudget small(slot - 1, std::chrono::milliseconds(0));
  auto refused = model.createMemory(&small, kApplication);
  ASSERT_TRUE(refused);
  auto result = model.execute(test.request, **refused, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT)
      << result.error().message;
  EXPECT_EQ(small.held(), 0u);
}

// timeOnDevice is the GPU's own: the time between a timestamp before the first dispatch and
// one after the last, never more than the run took on the host; through the HAL it stays
// within timeInDriver.
TEST_F(VulkanDeviceTest, TimeOnDeviceComesFromTheGpusTimestamps) {
  if (vulkan_->context().timestampPeriod() == 0) GTEST_SKIP() << "the queue has no timestamps";
  auto compiled = backend_->compile(gputest::addChainModel(40), {});
  ASSERT_TRUE(compiled) << compiled.error().message;
  auto memory = compiled->model->createMemory(nullptr, hal::kEmbeddedApplication);
  ASSERT_TRUE(memory);
  Memory pool = *Memory::create(64);
  Request request;
  request.pools.push_back(pool);
  request.inputs = {{false, {0, 0, 32}, {}}};
  request.outputs = {{false, {0, 32, 32}, {}}};
  std::chrono::nanoseconds onDevice{-1};
  backend::RunOptions options;
  options.timeOnDevice = &onDevice;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(compiled->model->execute(request, **memory, options));
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GT(onDevice.count(), 0);
  EXPECT_LE(onDevice, took);

  auto prepared = prepare(gputest::addChainModel(40));
  ASSERT_NE(prepared, nullptr);
  ExecuteOptions timed;
  timed.measure = MeasureTiming::YES;
  auto result = prepared->executeSynchronously(request, timed);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_NE(result->timing.timeOnDevice, kNoTiming);
  EXPECT_LE(result->timing.timeOnDevice, result->timing.timeInDriver);
}

/// A yield point that acts at its `at`-th call (the first comes before the submission, the
/// others between two segments of dispatches).
class ActingYield final : public engine::YieldPoint {
 public:
  ActingYield(int at, std::function<void()> act) : at_(at), act_(std::move(act)) {}
  void yield() override {
    if (++calls_ == at_) act_();
  }
  int calls() const { return calls_; }

 private:
  int calls_ = 0;
  const int at_;
  std::function<void()> act_;
};

// A run stops between two segments of dispatches when it is cancelled or its deadline
// passes, not only before the submission; the slot is usable again afterwards.
TEST_F(VulkanDeviceTest, DeadlinesAndCancellationStopARunBetweenDispatches) {
  constexpr uint32_t kAdds = 100;  // 7 segments of at most 16 dispatches
  auto compiled = backend_->compile(gputest::addChainModel(kAdds), {});
  ASSERT_TRUE(compiled) << compiled.error().message;
  const backend::CompiledModel& model = *compiled->model;
  auto memory = model.createMemory(nullptr, hal::kEmbeddedApplication);
  ASSERT_TRUE(memory);
  Memory pool = *Memory::create(64);
  auto* values = reinterpret_cast<float*>(pool.data());
  for (int i = 0; i < 8; ++i) values[i] = static_cast<float>(i);
  Request request;
  request.pools.push_back(pool);
  request.inputs = {{false, {0, 0, 32}, {}}};
  request.outputs = {{false, {0, 32, 32}, {}}};
  const auto expectSums = [&] {
    for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(values[8 + i], static_cast<float>(i + kAdds));
  };
  ASSERT_TRUE(model.execute(request, **memory, {}));
  expectSums();

  std::atomic<bool> cancelled{false};
  ActingYield cancel(2, [&] { cancelled = true; });
  backend::RunOptions options;
  options.cancelled = &cancelled;
  options.yield = &cancel;
  std::fill_n(values + 8, 8, 0.0f);
  auto stopped = model.execute(request, **memory, options);
  ASSERT_FALSE(stopped);
  EXPECT_EQ(stopped.error().status, ErrorStatus::DEVICE_UNAVAILABLE) << stopped.error().message;
  EXPECT_EQ(cancel.calls(), 2) << "stopped at the next gap between segments";
  EXPECT_EQ(values[8], 0.0f) << "no output is written by a stopped run";

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  ActingYield late(2, [&] { std::this_thread::sleep_until(deadline); });
  options = {};
  options.deadline = deadline;
  options.yield = &late;
  auto missed = model.execute(request, **memory, options);
  ASSERT_FALSE(missed);
  EXPECT_EQ(missed.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_NE(missed.error().message.find("stopped after segment 3 of 7"), std::string::npos)
      << missed.error().message;

  ASSERT_TRUE(model.execute(request, **memory, {}));
  expectSums();
}

// `nnhal calibrate --device nnhal-vulkan` stores what it measured in the device's state
// directory; the device then reports it for the types it runs, and nothing for the others.
TEST(VulkanCalibration, CapabilitiesComeFromTheCalibrationOfThisDevice) {
  cachetest::TempDir dir;
  backend::VulkanOptions options;
  options.stateDirectory = dir.path();
  auto first = backend::createVulkanBackend(options);
  if (!first) GTEST_SKIP() << "no Vulkan device: " << first.error().message;
  common::Calibration c;
  c.driverVersion = first->backend->version();
  c.isa = common::kVulkanCalibrationLevel;
  c.measuredAt = "2026-12-07T00:00:00Z";
  c.workloads = {{"mobilenet_v2_1.0_224_quant", true, 40.0, 10.0, 40.0, 20.0},
                 {"mobilenet_v2_1.0_224_float", false, 30.0, 10.0, 30.0, 20.0}};
  // The float types get the float workload's ratio, the 8-bit ones (with TENSOR_INT32, their
  // biases) the quantized workload's, or 10 when the calibration ran none.
  const auto expected = [](OperandType type, float quantized) {
    switch (type) {
      case OperandType::TENSOR_FLOAT32:
      case OperandType::FLOAT32:
      case OperandType::TENSOR_FLOAT16:
      case OperandType::FLOAT16:
      case OperandType::INT32:
      case OperandType::BOOL:
        return 3.0f;
      case OperandType::TENSOR_QUANT8_ASYMM:
      case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
      case OperandType::TENSOR_INT32:
        return quantized;
      default:
        return std::numeric_limits<float>::max();
    }
  };
  for (const float quantized : {4.0f, 10.0f}) {
    if (quantized == 10.0f) c.workloads.erase(c.workloads.begin());
    ASSERT_TRUE(common::computeGpuPerformance(&c));
    ASSERT_TRUE(common::writeCalibration(dir.path() / common::kCalibrationFileName, c));
    auto measured = backend::createVulkanBackend(options);
    ASSERT_TRUE(measured);
    for (const OperandPerformance& p : measured->backend->capabilities().operandPerformance) {
      EXPECT_FLOAT_EQ(p.info.execTime, expected(p.type, quantized)) << toString(p.type);
    }
  }
  // Another version string (another GPU or driver): the calibration does not apply.
  c.driverVersion += " elsewhere";
  ASSERT_TRUE(common::writeCalibration(dir.path() / common::kCalibrationFileName, c));
  auto stale = backend::createVulkanBackend(options);
  ASSERT_TRUE(stale);
  EXPECT_FLOAT_EQ(stale->backend->capabilities().operandPerformance[0].info.execTime, 10.0f);
}

// The compiled shaders are kept in the device's state directory and taken from it by the
// next process; a pipeline cache of another device or driver, or a damaged one, is ignored
// and replaced, never handed to the driver.
TEST(VulkanPipelineCache, KeptInTheStateDirectoryAndCheckedBeforeUse) {
  cachetest::TempDir dir;
  backend::VulkanOptions options;
  options.stateDirectory = dir.path();
  options.validation = true;
  const std::filesystem::path file = dir.path() / backend::vulkan::kPipelineCacheFileName;
  const auto compileOnce = [&]() -> size_t {
    auto made = backend::createVulkanBackend(options);
    if (!made) return SIZE_MAX;
    const auto& vulkan = static_cast<const backend::vulkan::VulkanBackend&>(*made->backend);
    const size_t loaded = vulkan.context().pipelineCacheLoaded();
    EXPECT_TRUE(made->backend->compile(buildModel(kFloat, 1), {}));
    EXPECT_EQ(vulkan.context().validationErrors(), 0u);
    return loaded;
  };
  const size_t first = compileOnce();
  if (first == SIZE_MAX) GTEST_SKIP() << "no Vulkan device";
  EXPECT_EQ(first, 0u) << "nothing kept yet";
  ASSERT_TRUE(std::filesystem::exists(file));
  auto made = backend::createVulkanBackend(options);
  ASSERT_TRUE(made);
  const backend::vulkan::PhysicalDeviceDescription device =  // a copy: `made` goes below
      static_cast<const backend::vulkan::VulkanBackend&>(*made->backend).context().description();
  std::vector<uint8_t> blob(std::filesystem::file_size(file));
  std::ifstream(file, std::ios::binary).read(reinterpret_cast<char*>(blob.data()), blob.size());
  std::string why;
  EXPECT_TRUE(backend::vulkan::pipelineCacheFits(blob, device, &why)) << why;
  made = {};
  EXPECT_EQ(compileOnce(), blob.size()) << "the next process takes what the first kept";

  // Another device's (its UUID changed) and a damaged one: ignored, then replaced.
  std::vector<uint8_t> other = blob;
  other[16] ^= 0xff;  // the first byte of pipelineCacheUUID
  EXPECT_FALSE(backend::vulkan::pipelineCacheFits(other, device, &why));
  for (const std::vector<uint8_t>& bad : {other, std::vector<uint8_t>(7, 0x5a)}) {
    std::ofstream(file, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(bad.data()), static_cast<std::streamsize>(bad.size()));
    EXPECT_EQ(compileOnce(), 0u);
    std::vector<uint8_t> rewritten(std::filesystem::file_size(file));
    std::ifstream(file, std::ios::binary)
        .read(reinterpret_cast<char*>(rewritten.data()), rewritten.size());
    EXPECT_TRUE(backend::vulkan::pipelineCacheFits(rewritten, device, &why)) << why;
  }
}

class VulkanCachingTest : public VulkanDeviceTest {
 protected:
  void SetUp() override {
    options_.stateDirectory = dir_.path() / "gpu";
    VulkanDeviceTest::SetUp();
  }
  cachetest::TempDir dir_;
};

TEST_F(VulkanCachingTest, LoadsItsOwnCacheAndNeverTheCpuDevices) {
  if (device_ == nullptr) GTEST_SKIP();
  ASSERT_EQ(device_->getNumberOfCacheFilesNeeded().modelCache, 1u);
  cachetest::Fds fds;
  auto files = [&](const char* name) {
    CacheFiles cache;
    cache.modelCache = {{fds.open(dir_.path() / (std::string(name) + ".model"), O_RDWR)}};
    cache.dataCache = {{fds.open(dir_.path() / (std::string(name) + ".data"), O_RDWR)}};
    cache.token = cachetest::tokenFor(5);
    return cache;
  };
  const Model model = buildModel(kFloat, 2);
  const CacheFiles gpuFiles = files("gpu");
  PrepareOptions saving;
  saving.cache = gpuFiles;
  auto saved = prepare(model, saving);
  ASSERT_NE(saved, nullptr);
  const std::vector<uint8_t> expected = cachetest::run(*saved, kFloat);
  auto loaded = device_->prepareModelFromCache(gpuFiles);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(cachetest::run(**loaded, kFloat), expected);

  DeviceOptions cpuOptions;
  cpuOptions.stateDirectory = dir_.path() / "cpu";
  auto cpu = createDevice(cpuOptions);
  ASSERT_TRUE(cpu);
  const CacheFiles cpuFiles = files("cpu");
  saving.cache = cpuFiles;
  ASSERT_TRUE((*cpu)->prepareModel(model, saving));
  auto crossed = device_->prepareModelFromCache(cpuFiles);
  ASSERT_FALSE(crossed);
  EXPECT_EQ(crossed.error().status, ErrorStatus::GENERAL_FAILURE);
  auto crossedBack = (*cpu)->prepareModelFromCache(gpuFiles);
  ASSERT_FALSE(crossedBack);
}

}  // namespace
}  // namespace nnhal
