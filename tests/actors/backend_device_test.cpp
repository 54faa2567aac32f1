// The device seam (backend/backend.h): a second backend, the fault-injecting test backend
// around the CPU engine, gets the whole HAL plumbing by actors::createDriver alone: identity
// and supported operations from the backend, refusals at launch, compilation and execution
// failures on every execution path, deadlines honoured inside a slow backend, its own
// compilation cache, and a CPU device beside it in the same process.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "actors/device_factory.h"
#include "backend/cpu_backend.h"
#include "backend/fault_injecting_backend.h"
#include "cache/cache_test_util.h"
#include "nnhal/burst.h"
#include "nnhal/device.h"
#include "nnhal/sync_fence.h"

namespace nnhal {
namespace {

using namespace std::chrono_literals;
using cachetest::buildModel;
using cachetest::TestRequest;

constexpr OperandType kFloat = OperandType::TENSOR_FLOAT32;

struct TestDevice {
  std::shared_ptr<backend::FaultInjectingBackend> backend;
  std::shared_ptr<Device> device;
};

TestDevice makeTestDevice(backend::FaultPlan plan, DeviceOptions options = {}) {
  options.kernelThreads = 1;
  auto cpu = std::make_shared<backend::CpuBackend>(options);
  auto faulty = std::make_shared<backend::FaultInjectingBackend>(cpu, std::move(plan));
  auto driver = actors::createDriver(options, faulty);
  EXPECT_TRUE(driver) << driver.error().message;
  return {faulty, driver ? driver->device : nullptr};
}

/// A fault plan with one field set by `set`.
template <typename Set>
backend::FaultPlan planWith(Set set) {
  backend::FaultPlan plan;
  set(plan);
  return plan;
}

std::shared_ptr<PreparedModel> prepare(Device& device, Model model) {
  auto prepared = device.prepareModel(std::move(model));
  EXPECT_TRUE(prepared) << prepared.error().message;
  return prepared ? *prepared : nullptr;
}

TEST(BackendDeviceTest, IdentityComesFromTheBackend) {
  TestDevice test = makeTestDevice(planWith([](auto& p) { p.name = "nnhal-test-a"; }));
  ASSERT_NE(test.device, nullptr);
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  EXPECT_EQ(test.device->getName(), "nnhal-test-a");
  EXPECT_EQ(test.device->getVersionString(), (*cpu)->getVersionString() + "+faults");
  EXPECT_EQ(test.device->getType(), DeviceType::CPU);
  EXPECT_EQ(test.device->getCapabilities().operandPerformance.size(),
            (*cpu)->getCapabilities().operandPerformance.size());
  EXPECT_EQ(test.device->getSupportedExtensions().size(), (*cpu)->getSupportedExtensions().size());
}

TEST(BackendDeviceTest, RefusedOperationsAreUnsupportedAndRefusedAtLaunch) {
  TestDevice test =
      makeTestDevice(planWith([](auto& p) { p.refuse = {OperationType::DEPTHWISE_CONV_2D}; }));
  const Model model = buildModel(kFloat, 1);
  auto reasons = test.device->explainSupportedOperations(model);
  ASSERT_TRUE(reasons) << reasons.error().message;
  auto supported = test.device->getSupportedOperations(model);
  ASSERT_TRUE(supported);
  ASSERT_EQ(supported->size(), model.main.operations.size());
  for (size_t i = 0; i < model.main.operations.size(); ++i) {
    const bool refused = model.main.operations[i].type == OperationType::DEPTHWISE_CONV_2D;
    EXPECT_EQ((*supported)[i], !refused) << i;
    EXPECT_EQ((*reasons)[i].find("fault plan") != std::string::npos, refused) << (*reasons)[i];
  }
  std::promise<ErrorStatus> called;
  const ErrorStatus launched =
      test.device->prepareModel(model, {}, [&](Result<std::shared_ptr<PreparedModel>> result) {
        called.set_value(result ? ErrorStatus::NONE : result.error().status);
      });
  EXPECT_EQ(launched, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(called.get_future().get(), ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(test.backend->compilations(), 0u);  // refused before any compilation
}

TEST(BackendDeviceTest, EveryNthCompilationFails) {
  TestDevice test = makeTestDevice(planWith([](auto& p) { p.failCompileEvery = 2; }));
  EXPECT_NE(prepare(*test.device, buildModel(kFloat, 1)), nullptr);
  auto second = test.device->prepareModel(buildModel(kFloat, 1));
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(second.error().message.find("fault plan"), std::string::npos);
  EXPECT_NE(prepare(*test.device, buildModel(kFloat, 1)), nullptr);
  EXPECT_EQ(test.backend->compilations(), 3u);
}

TEST(BackendDeviceTest, ExecutionFaultsReachEveryExecutionPath) {
  TestDevice test = makeTestDevice(planWith([](auto& p) { p.failExecuteEvery = 2; }));
  auto reference = createDevice({});
  ASSERT_TRUE(reference);
  const std::vector<uint8_t> expected =
      cachetest::run(*prepare(**reference, buildModel(kFloat, 1)), kFloat);
  auto prepared = prepare(*test.device, buildModel(kFloat, 1));
  ASSERT_NE(prepared, nullptr);
  auto burst = prepared->configureExecutionBurst();
  ASSERT_TRUE(burst) << burst.error().message;

  // Each path runs twice: one execution is the backend's (odd), one fails (even).
  enum Path { kSync, kAsync, kFenced, kBurst };
  for (Path path : {kSync, kAsync, kFenced, kBurst}) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      TestRequest request(kFloat, 7);
      Result<ExecutionResult> result = fail(ErrorStatus::GENERAL_FAILURE, "not run");
      if (path == kSync) {
        result = prepared->executeSynchronously(request.request);
      } else if (path == kAsync) {
        std::promise<Result<ExecutionResult>> done;
        ASSERT_EQ(prepared->execute(request.request, {},
                                    [&](Result<ExecutionResult> r) { done.set_value(r); }),
                  ErrorStatus::NONE);
        result = done.get_future().get();
      } else if (path == kFenced) {
        auto fenced = prepared->executeFenced(request.request, {}, {}, {});
        ASSERT_TRUE(fenced) << fenced.error().message;
        (void)fenced->syncFence.wait(5s);  // a failed execution leaves it in error
        auto info = fenced->callback->getExecutionInfo();
        ASSERT_TRUE(info) << info.error().message;
        if (info->status == ErrorStatus::NONE) {
          result = ExecutionResult{};
        } else {
          result = fail(info->status, "fenced execution failed by the test device's fault plan");
        }
      } else {
        result = (*burst)->execute(request.request, MeasureTiming::NO, {});
      }
      const uint64_t n = test.backend->executions();
      if (n % 2 == 0) {
        ASSERT_FALSE(result) << "path " << path << ", execution " << n;
        EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
        EXPECT_NE(result.error().message.find("fault plan"), std::string::npos);
      } else {
        ASSERT_TRUE(result) << "path " << path << ": " << result.error().message;
        EXPECT_EQ(request.output(), expected) << "path " << path;
      }
    }
  }
  EXPECT_EQ(test.backend->executions(), 8u);
}

TEST(BackendDeviceTest, ASlowBackendStillMeetsTheDeadlineRules) {
  TestDevice test = makeTestDevice(planWith([](auto& p) { p.executeDelay = 200ms; }));
  auto prepared = prepare(*test.device, buildModel(kFloat, 1));
  ASSERT_NE(prepared, nullptr);
  TestRequest request(kFloat, 7);
  ExecuteOptions options;
  options.deadline = std::chrono::steady_clock::now() + 20ms;
  const auto start = std::chrono::steady_clock::now();
  auto result = prepared->executeSynchronously(request.request, options);
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_LT(took, 150ms);  // stopped at the deadline, not after the whole delay
  auto unhurried = prepared->executeSynchronously(request.request);
  EXPECT_TRUE(unhurried) << unhurried.error().message;
}

TEST(BackendDeviceTest, CachesInItsOwnStateAndNeverLoadsAnotherDevicesCache) {
  cachetest::TempDir dir;
  DeviceOptions cpuOptions;
  cpuOptions.stateDirectory = dir.path() / "cpu";
  DeviceOptions testOptions;
  testOptions.stateDirectory = dir.path() / "test";
  TestDevice test = makeTestDevice({}, testOptions);
  auto cpu = createDevice(cpuOptions);
  ASSERT_TRUE(cpu);
  ASSERT_EQ(test.device->getNumberOfCacheFilesNeeded().modelCache, 1u);

  const Model model = buildModel(kFloat, 1);
  cachetest::Fds fds;
  auto files = [&](const char* name) {
    CacheFiles cache;
    cache.modelCache = {{fds.open(dir.path() / (std::string(name) + ".model"), O_RDWR)}};
    cache.dataCache = {{fds.open(dir.path() / (std::string(name) + ".data"), O_RDWR)}};
    cache.token = cachetest::tokenFor(3);
    return cache;
  };
  // Saved by the test device, loaded by it: same results as compiled.
  const CacheFiles testFiles = files("test");
  PrepareOptions saving;
  saving.cache = testFiles;
  auto saved = test.device->prepareModel(model, saving);
  ASSERT_TRUE(saved) << saved.error().message;
  const std::vector<uint8_t> expected = cachetest::run(**saved, kFloat);
  auto loaded = test.device->prepareModelFromCache(testFiles);
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(cachetest::run(**loaded, kFloat), expected);

  // Saved by the CPU device under the same token: the test device's token map does not
  // know it, and the CPU device does not know the test device's entry.
  const CacheFiles cpuFiles = files("cpu");
  saving.cache = cpuFiles;
  ASSERT_TRUE((*cpu)->prepareModel(model, saving));
  auto crossed = test.device->prepareModelFromCache(cpuFiles);
  ASSERT_FALSE(crossed);
  EXPECT_EQ(crossed.error().status, ErrorStatus::GENERAL_FAILURE);
  auto crossedBack = (*cpu)->prepareModelFromCache(testFiles);
  ASSERT_FALSE(crossedBack);
  EXPECT_EQ(crossedBack.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(BackendDeviceTest, TwoDevicesServeConcurrentlyInOneProcess) {
  TestDevice test = makeTestDevice({});
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  auto onTest = prepare(*test.device, buildModel(kFloat, 2));
  auto onCpu = prepare(**cpu, buildModel(kFloat, 2));
  ASSERT_NE(onTest, nullptr);
  ASSERT_NE(onCpu, nullptr);
  const std::vector<uint8_t> expected = cachetest::run(*onCpu, kFloat);
  std::vector<std::future<bool>> runs;
  for (int i = 0; i < 8; ++i) {
    PreparedModel* model = i % 2 == 0 ? onTest.get() : onCpu.get();
    runs.push_back(std::async(std::launch::async, [model, &expected] {
      bool same = true;
      for (int k = 0; k < 20; ++k) same = same && cachetest::run(*model, kFloat) == expected;
      return same;
    }));
  }
  for (auto& run : runs) EXPECT_TRUE(run.get());
  EXPECT_EQ(test.backend->executions(), 80u);
}

TEST(BackendDeviceTest, DevicesOnOneRuntimeAreReleasedIndependently) {
  DeviceOptions options;
  options.kernelThreads = 1;
  auto runtime = actors::makeRuntime(options);
  ASSERT_TRUE(runtime) << runtime.error().message;
  auto cpuBackend = std::make_shared<backend::CpuBackend>(options);
  auto cpu = actors::createDriver(options, cpuBackend, *runtime);
  auto test = actors::createDriver(
      options, std::make_shared<backend::FaultInjectingBackend>(cpuBackend, backend::FaultPlan{}),
      *runtime);
  ASSERT_TRUE(cpu && test);
  auto onCpu = prepare(*cpu->device, buildModel(kFloat, 1));
  auto onTest = prepare(*test->device, buildModel(kFloat, 1));
  ASSERT_NE(onCpu, nullptr);
  ASSERT_NE(onTest, nullptr);
  const std::vector<uint8_t> expected = cachetest::run(*onCpu, kFloat);
  EXPECT_EQ(cachetest::run(*onTest, kFloat), expected);

  // A fenced execution waits on each device; releasing the test device ends only its own.
  auto gate = SyncFence::create();
  ASSERT_TRUE(gate);
  TestRequest cpuRequest(kFloat, 7), testRequest(kFloat, 7);
  auto cpuFenced = onCpu->executeFenced(cpuRequest.request, {*gate}, {}, {});
  auto testFenced = onTest->executeFenced(testRequest.request, {*gate}, {}, {});
  ASSERT_TRUE(cpuFenced && testFenced);
  test = fail(ErrorStatus::GENERAL_FAILURE, "released");  // the test device goes
  (void)testFenced->syncFence.wait(5s);
  auto testInfo = testFenced->callback->getExecutionInfo();
  ASSERT_TRUE(testInfo);
  EXPECT_EQ(testInfo->status, ErrorStatus::DEVICE_UNAVAILABLE);
  ASSERT_TRUE(gate->signal());
  ASSERT_TRUE(cpuFenced->syncFence.wait(5s));
  auto cpuInfo = cpuFenced->callback->getExecutionInfo();
  ASSERT_TRUE(cpuInfo);
  EXPECT_EQ(cpuInfo->status, ErrorStatus::NONE);
  EXPECT_EQ(cpuRequest.output(), expected);
  // And the CPU device, on the runtime the two shared, goes on serving.
  EXPECT_EQ(cachetest::run(*onCpu, kFloat), expected);
}

/// The process's mappings of the test device's leaked memfds (/proc/self/maps lines naming
/// them): other mappings come and go with the allocator (ASan's releases and maps memory of
/// its own), so counting every line could miss a leak or invent one.
size_t leakedMappings() {
  std::ifstream maps("/proc/self/maps");
  size_t lines = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("nnhal-test-leak") != std::string::npos) ++lines;
  }
  return lines;
}

TEST(BackendDeviceTest, ALeakingDeviceLeaksOneMappingPerExecution) {
  TestDevice test = makeTestDevice(planWith([](auto& p) { p.leakMappingPerExecution = true; }));
  auto prepared = prepare(*test.device, buildModel(kFloat, 1));
  ASSERT_NE(prepared, nullptr);
  (void)cachetest::run(*prepared, kFloat);  // arenas and staging allocated
  const size_t before = leakedMappings();
  for (int i = 0; i < 50; ++i) (void)cachetest::run(*prepared, kFloat);
  EXPECT_EQ(leakedMappings(), before + 50);
}

}  // namespace
}  // namespace nnhal
