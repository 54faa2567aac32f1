// The embedded driver through its public interface: preparation, the execution modes,
// and the errors the HAL specifies.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "actors/device_actor.h"
#include "backend/cpu_backend.h"
#include "common/calibration.h"
#include "common/fully_connected_chain.h"
#include "hal/driver_control.h"
#include "nnhal/device.h"
#include "nnhal/version.h"

namespace nnhal {
namespace {

using namespace std::chrono_literals;

Operand tensor(std::vector<uint32_t> dims, OperandLifeTime lifetime, uint32_t consumers) {
  Operand op;
  op.type = OperandType::TENSOR_FLOAT32;
  op.dimensions = std::move(dims);
  op.lifetime = lifetime;
  op.numberOfConsumers = consumers;
  return op;
}

/// out = (a + b) with a, b, out float32 [4]; with `second`, out = second(a + b).
Model addModel(OperationType second = OperationType::ADD) {
  Model model;
  auto& ops = model.main.operands;
  ops.push_back(tensor({4}, OperandLifeTime::SUBGRAPH_INPUT, 1));  // 0 a
  ops.push_back(tensor({4}, OperandLifeTime::SUBGRAPH_INPUT, 1));  // 1 b
  Operand act;
  act.type = OperandType::INT32;
  act.lifetime = OperandLifeTime::CONSTANT_COPY;
  act.location = {0, 0, 4};
  act.numberOfConsumers = 1;
  ops.push_back(act);  // 2 activation NONE
  model.operandValues.resize(4, 0);
  if (second == OperationType::ADD) {
    ops.push_back(tensor({4}, OperandLifeTime::SUBGRAPH_OUTPUT, 0));  // 3 out
    model.main.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
  } else {
    ops.push_back(tensor({4}, OperandLifeTime::TEMPORARY_VARIABLE, 1));  // 3 sum
    ops.push_back(tensor({4}, OperandLifeTime::SUBGRAPH_OUTPUT, 0));     // 4 out
    model.main.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
    model.main.operations.push_back({second, {3}, {4}});
  }
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {static_cast<uint32_t>(ops.size() - 1)};
  return model;
}

struct AddRequest {
  Memory pool;
  Request request;
  float* a() const { return reinterpret_cast<float*>(pool.data()); }
  float* b() const { return a() + 4; }
  float* out() const { return a() + 8; }
};

AddRequest makeRequest(uint32_t outputBytes = 16) {
  AddRequest r;
  r.pool = *Memory::create(64);
  r.request.pools.push_back(r.pool);
  r.request.inputs = {{false, {0, 0, 16}, {}}, {false, {0, 16, 16}, {}}};
  r.request.outputs = {{false, {0, 32, outputBytes}, {}}};
  for (int i = 0; i < 4; ++i) {
    r.a()[i] = static_cast<float>(i) + 0.5f;
    r.b()[i] = 10.0f * static_cast<float>(i);
  }
  return r;
}

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = createDevice({});
    ASSERT_TRUE(device) << device.error().message;
    device_ = *device;
  }
  std::shared_ptr<PreparedModel> prepare(Model model) {
    auto prepared = device_->prepareModel(std::move(model));
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? *prepared : nullptr;
  }
  std::shared_ptr<Device> device_;
};

TEST_F(DeviceTest, ReportsIdentity) {
  EXPECT_EQ(device_->getType(), DeviceType::CPU);
  // The version of project() in CMakeLists.txt, through the generated nnhal/version.h, and
  // this build's id: 16 lowercase hex digits.
  EXPECT_EQ(device_->getVersionString(),
            std::string(kDriverVersion) + "+" + std::string(buildId()));
  EXPECT_EQ(kDriverVersion, "nnhal-" + std::string(kVersion));
  ASSERT_EQ(buildId().size(), 16u);
  for (const char c : buildId()) {
    EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << buildId();
  }
  const Capabilities caps = device_->getCapabilities();
  EXPECT_FALSE(caps.operandPerformance.empty());
  for (size_t i = 1; i < caps.operandPerformance.size(); ++i) {
    EXPECT_LT(caps.operandPerformance[i - 1].type, caps.operandPerformance[i].type);
  }
}

TEST_F(DeviceTest, ExecutesSynchronously) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = makeRequest();
  auto result =
      prepared->executeSynchronously(r.request, {MeasureTiming::YES, {}, kDefaultLoopTimeout});
  ASSERT_TRUE(result) << result.error().message;
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
  ASSERT_EQ(result->outputShapes.size(), 1u);
  EXPECT_EQ(result->outputShapes[0].dimensions, std::vector<uint32_t>{4});
  EXPECT_TRUE(result->outputShapes[0].isSufficient);
  ASSERT_NE(result->timing.timeInDriver, kNoTiming);
  EXPECT_LE(result->timing.timeOnDevice, result->timing.timeInDriver);
}

TEST_F(DeviceTest, TimingIsUnavailableUnlessMeasured) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = makeRequest();
  auto result = prepared->executeSynchronously(r.request);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->timing, Timing{});
}

TEST_F(DeviceTest, ExecutesAsynchronouslyWithCallback) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = makeRequest();
  std::promise<Result<ExecutionResult>> done;
  const ErrorStatus launched = prepared->execute(
      r.request, {}, [&](Result<ExecutionResult> result) { done.set_value(std::move(result)); });
  ASSERT_EQ(launched, ErrorStatus::NONE);
  auto result = done.get_future().get();
  ASSERT_TRUE(result) << result.error().message;
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
}

TEST_F(DeviceTest, PreparesWithCallback) {
  std::promise<Result<std::shared_ptr<PreparedModel>>> done;
  const ErrorStatus launched = device_->prepareModel(
      addModel(), {},
      [&](Result<std::shared_ptr<PreparedModel>> p) { done.set_value(std::move(p)); });
  EXPECT_EQ(launched, ErrorStatus::NONE);
  auto prepared = done.get_future().get();
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_NE(*prepared, nullptr);
}

TEST_F(DeviceTest, ManyConcurrentExecutionsOnOneModel) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  constexpr int kThreads = 8;
  constexpr int kIterations = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      AddRequest r = makeRequest();
      for (int it = 0; it < kIterations; ++it) {
        r.a()[0] = static_cast<float>(t * 1000 + it);
        auto result = prepared->executeSynchronously(r.request);
        if (!result || r.out()[0] != r.a()[0] + r.b()[0]) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(DeviceTest, ManyConcurrentAsyncExecutions) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  constexpr int kCount = 64;
  std::vector<AddRequest> requests;
  for (int i = 0; i < kCount; ++i) requests.push_back(makeRequest());
  std::atomic<int> ok{0};
  std::atomic<int> finished{0};
  std::promise<void> all;
  for (int i = 0; i < kCount; ++i) {
    requests[i].a()[1] = static_cast<float>(i);
    prepared->execute(requests[i].request, {}, [&](Result<ExecutionResult> result) {
      if (result) ++ok;
      if (++finished == kCount) all.set_value();
    });
  }
  all.get_future().wait();
  EXPECT_EQ(ok.load(), kCount);
  for (int i = 0; i < kCount; ++i)
    EXPECT_FLOAT_EQ(requests[i].out()[1], static_cast<float>(i) + 10.0f);
}

TEST_F(DeviceTest, SmallOutputBufferGivesOutputInsufficientSize) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = makeRequest(/*outputBytes=*/8);
  auto result = prepared->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(result.error().outputShapes.size(), 1u);
  EXPECT_FALSE(result.error().outputShapes[0].isSufficient);
  EXPECT_EQ(result.error().outputShapes[0].dimensions, std::vector<uint32_t>{4});
}

TEST_F(DeviceTest, MalformedRequestIsInvalidArgument) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = makeRequest();
  r.request.inputs.pop_back();
  auto result = prepared->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);

  AddRequest outside = makeRequest();
  outside.request.inputs[1].location.offset = 60;  // 60 + 16 > 64
  std::promise<Result<ExecutionResult>> done;
  const ErrorStatus launched = prepared->execute(
      outside.request, {}, [&](Result<ExecutionResult> res) { done.set_value(std::move(res)); });
  EXPECT_EQ(launched, ErrorStatus::INVALID_ARGUMENT);
  auto asyncResult = done.get_future().get();
  ASSERT_FALSE(asyncResult);
  EXPECT_EQ(asyncResult.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST_F(DeviceTest, PassedDeadlineGivesMissedDeadline) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = makeRequest();
  ExecuteOptions options;
  options.deadline = std::chrono::steady_clock::now() - 1ms;
  auto result = prepared->executeSynchronously(r.request, options);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);

  PrepareOptions prepareOptions;
  prepareOptions.deadline = std::chrono::steady_clock::now() - 1ms;
  auto late = device_->prepareModel(addModel(), prepareOptions);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
}

/// `layers` FULLY_CONNECTED layers [batch, n] x [n, n]^T: slow to prepare and to run.
Model deepFullyConnectedModel(uint32_t layers, uint32_t n, uint32_t batch = 1) {
  return nnhal::testing::fullyConnectedChain(layers, batch, n);
}

// getCapabilities reports a calibration that applies (same driver version and kernel level),
// identically on every device created over the same state directory; otherwise defaults.
TEST_F(DeviceTest, CapabilitiesComeFromAnApplicableCalibration) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("nnhal-device-calibration-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  DeviceOptions options;
  options.stateDirectory = dir;
  common::Calibration c;
  c.driverVersion = backend::cpuDriverVersion(options);
  c.isa = kernelIsa().active;
  c.measuredAt = "2026-11-26T00:00:00Z";
  c.workloads = {{"q", true, 1.0, 8.0, 1.0, 4.0}, {"f", false, 1.0, 5.0, 1.0, 2.0}};
  ASSERT_TRUE(common::computePerformance(&c));
  ASSERT_TRUE(common::writeCalibration(dir / common::kCalibrationFileName, c));
  auto find = [](const Capabilities& caps, OperandType type) {
    for (const OperandPerformance& p : caps.operandPerformance) {
      if (p.type == type) return p.info;
    }
    return PerformanceInfo{};
  };
  for (int restart = 0; restart < 2; ++restart) {
    auto device = createDevice(options);
    ASSERT_TRUE(device);
    const Capabilities caps = (*device)->getCapabilities();
    EXPECT_EQ(find(caps, OperandType::TENSOR_QUANT8_ASYMM).execTime, 0.125f);
    EXPECT_EQ(find(caps, OperandType::TENSOR_QUANT8_ASYMM).powerUsage, 0.25f);
    EXPECT_EQ(find(caps, OperandType::TENSOR_FLOAT32).execTime, 0.2f);
    EXPECT_EQ(caps.relaxedFloat32toFloat16PerformanceTensor.powerUsage, 0.5f);
    EXPECT_TRUE(capabilitiesSource(options).measured);
  }
  c.isa = c.isa == "scalar" ? "vnni" : "scalar";  // measured at another level: not applied
  ASSERT_TRUE(common::writeCalibration(dir / common::kCalibrationFileName, c));
  auto device = createDevice(options);
  ASSERT_TRUE(device);
  EXPECT_EQ(find((*device)->getCapabilities(), OperandType::TENSOR_QUANT8_ASYMM).execTime, 1.0f);
  const CapabilitiesSource source = capabilitiesSource(options);
  EXPECT_FALSE(source.measured);
  EXPECT_NE(source.detail.find("kernel level"), std::string::npos) << source.detail;
  std::filesystem::remove_all(dir);
}

// ExecuteOptions::profile: one entry per operation, in execution order, starts that do not go
// back and durations that fit within the execution; cleared by the next profiled run.
TEST_F(DeviceTest, AProfiledExecutionRecordsEveryOperation) {
  auto prepared = device_->prepareModel(deepFullyConnectedModel(5, 64, 2));
  ASSERT_TRUE(prepared) << prepared.error().message;
  auto input = *Memory::create(2 * 64 * 4);
  auto output = *Memory::create(2 * 64 * 4);
  Request request;
  request.pools = {input, output};
  request.inputs.push_back({false, {0, 0, 2 * 64 * 4}, {}});
  request.outputs.push_back({false, {1, 0, 2 * 64 * 4}, {}});
  ExecutionProfile profile;
  profile.operations.resize(9);  // stale content: cleared by the run
  ExecuteOptions options;
  options.profile = &profile;
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*prepared)->executeSynchronously(request, options));
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_EQ(profile.operations.size(), 5u);
  uint64_t previousEnd = 0;
  for (uint32_t i = 0; i < 5; ++i) {
    const OperationTiming& op = profile.operations[i];
    EXPECT_EQ(op.step, i);
    EXPECT_EQ(op.type, OperationType::FULLY_CONNECTED);
    EXPECT_GE(op.startNs, previousEnd);
    previousEnd = op.startNs + op.durationNs;
  }
  EXPECT_LE(previousEnd, static_cast<uint64_t>(elapsed));
  // Without a profile, nothing is recorded anywhere.
  ASSERT_TRUE((*prepared)->executeSynchronously(request));
  EXPECT_EQ(profile.operations.size(), 5u);
  // A profiled execution that fails before running holds no operations (none stale).
  Request small = request;
  small.outputs[0].location.length = 4;
  auto failed = (*prepared)->executeSynchronously(small, options);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  EXPECT_TRUE(profile.operations.empty());
}

TEST_F(DeviceTest, APreparationStopsBetweenOperationsOnceItsDeadlinePassed) {
  // 400 layers of 512 x 512 weights: each packs 1 MiB, far more than 20 ms in all.
  PrepareOptions options;
  Model model = deepFullyConnectedModel(400, 512);
  options.deadline = std::chrono::steady_clock::now() + 20ms;
  auto late = device_->prepareModel(std::move(model), options);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  // It stopped midway, not after preparing everything.
  EXPECT_NE(late.error().message.find("of 400 operations"), std::string::npos)
      << late.error().message;
  EXPECT_EQ(late.error().message.find("400 of 400"), std::string::npos) << late.error().message;
}

TEST_F(DeviceTest, ALongKernelStopsSoonAfterTheExecutionDeadline) {
  // One FULLY_CONNECTED of [64, 4096] x [4096, 4096]: a single step of 1 GMAC over a small
  // input (staging it takes little time, even under the sanitizers), on one kernel thread.
  DeviceOptions oneThread;
  oneThread.kernelThreads = 1;
  auto device = createDevice(oneThread);
  ASSERT_TRUE(device) << device.error().message;
  const Model model = deepFullyConnectedModel(1, 4096, 64);
  auto measured = (*device)->prepareModel(model);
  auto fresh = (*device)->prepareModel(model);  // no run measured: the deadline is tried
  ASSERT_TRUE(measured && fresh);
  const uint32_t bytes = 64 * 4096 * 4;
  Memory pool = *Memory::create(2 * size_t{bytes});
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, bytes}, {}}};
  request.outputs = {{false, {0, bytes, bytes}, {}}};
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*measured)->executeSynchronously(request));
  const auto full = std::chrono::steady_clock::now() - start;

  // A deadline a quarter into the run: it stops inside the kernel, between its chunks.
  ExecuteOptions options;
  start = std::chrono::steady_clock::now();
  options.deadline = start + full / 4;
  auto late = (*fresh)->executeSynchronously(request, options);
  const auto stopped = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_NE(late.error().message.find("during FULLY_CONNECTED"), std::string::npos)
      << late.error().message;
  // The overshoot is at most one GEMM tile (16 tiles per operation).
  EXPECT_LT(stopped, full * 3 / 4)
      << "full run " << full.count() << " ns, stopped after " << stopped.count() << " ns";
  EXPECT_TRUE((*fresh)->executeSynchronously(request));  // whole without a deadline

  // The driver knows this model's fastest run: a deadline closer than that can never be
  // met, and is refused at once as persistent.
  options.deadline = std::chrono::steady_clock::now() + full / 10;
  start = std::chrono::steady_clock::now();
  auto hopeless = (*measured)->executeSynchronously(request, options);
  const auto refusedAfter = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(hopeless);
  EXPECT_EQ(hopeless.error().status, ErrorStatus::MISSED_DEADLINE_PERSISTENT);
  EXPECT_NE(hopeless.error().message.find("fastest run"), std::string::npos)
      << hopeless.error().message;
  EXPECT_LT(refusedAfter, full / 10);
}

/// A request for deepFullyConnectedModel(layers, n, batch) over one fresh pool.
Request fullyConnectedRequest(uint32_t n, uint32_t batch) {
  const uint32_t bytes = batch * n * 4;
  Memory pool = *Memory::create(2 * size_t{bytes});
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, bytes}, {}}};
  request.outputs = {{false, {0, bytes, bytes}, {}}};
  return request;
}

// One driver thread, LOW executions queued on it: a HIGH execution runs before them, and the
// LOW one running pauses between its operations while the HIGH one runs.
TEST_F(DeviceTest, HighPriorityExecutionsOvertakeQueuedLowOnes) {
  DeviceOptions options;
  options.runtimeThreads = 1;
  options.kernelThreads = 1;
  auto device = createDevice(options);
  ASSERT_TRUE(device);
  // The first LOW execution is long (8 steps of ~5-10 ms): the others and the HIGH one are
  // all queued while it runs, however slowly this thread launches them. (With equal short
  // executions, 1 run in 40 had LOW ones finish before the HIGH one was even queued.)
  const Model model = deepFullyConnectedModel(8, 256, 16);
  const Model longModel = deepFullyConnectedModel(8, 1024, 64);
  PrepareOptions low;
  low.priority = Priority::LOW;
  PrepareOptions high;
  high.priority = Priority::HIGH;
  auto lowModel = (*device)->prepareModel(model, low);
  auto longLowModel = (*device)->prepareModel(longModel, low);
  auto highModel = (*device)->prepareModel(model, high);
  ASSERT_TRUE(lowModel && longLowModel && highModel);

  std::mutex mutex;
  std::vector<std::string> finished;
  std::vector<std::promise<void>> done(7);
  auto launch = [&](PreparedModel& prepared, uint32_t n, uint32_t batch, std::string name,
                    size_t k) {
    ErrorStatus launched = prepared.execute(
        fullyConnectedRequest(n, batch), {}, [&, name, k](Result<ExecutionResult> result) {
          EXPECT_TRUE(result) << name << ": " << result.error().message;
          {
            std::lock_guard lock(mutex);
            finished.push_back(name);
          }
          done[k].set_value();
        });
    EXPECT_EQ(launched, ErrorStatus::NONE);
  };
  launch(**longLowModel, 1024, 64, "low0", 0);
  for (size_t k = 1; k < 6; ++k) launch(**lowModel, 256, 16, "low" + std::to_string(k), k);
  launch(**highModel, 256, 16, "high", 6);
  for (auto& d : done) ASSERT_EQ(d.get_future().wait_for(60s), std::future_status::ready);
  const auto at = std::find(finished.begin(), finished.end(), "high") - finished.begin();
  // Before every LOW execution still queued; at worst after the one already running.
  EXPECT_LE(at, 1) << ::testing::PrintToString(finished);
}

// Beyond DeviceOptions::maxQueuedExecutions waiting executions of one model, execute says
// RESOURCE_EXHAUSTED_TRANSIENT (try again later) at launch; the accepted ones all run.
TEST_F(DeviceTest, TheQueueOfAPreparedModelIsBounded) {
  DeviceOptions options;
  options.runtimeThreads = 1;
  options.kernelThreads = 1;
  options.maxQueuedExecutions = 2;
  auto device = createDevice(options);
  ASSERT_TRUE(device);
  auto prepared = (*device)->prepareModel(deepFullyConnectedModel(8, 256, 16));
  ASSERT_TRUE(prepared);
  std::atomic<int> ran{0};
  std::atomic<int> refused{0};
  std::vector<std::future<void>> accepted;
  for (int i = 0; i < 12; ++i) {
    auto promise = std::make_shared<std::promise<void>>();
    auto future = promise->get_future();
    const ErrorStatus launched = (*prepared)->execute(
        fullyConnectedRequest(256, 16), {}, [&, promise](Result<ExecutionResult> result) {
          if (result) {
            ++ran;
          } else {
            EXPECT_EQ(result.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
            EXPECT_NE(result.error().message.find("try again"), std::string::npos);
            ++refused;
          }
          promise->set_value();
        });
    if (launched == ErrorStatus::NONE) {
      accepted.push_back(std::move(future));
    } else {
      EXPECT_EQ(launched, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
    }
  }
  for (auto& f : accepted) ASSERT_EQ(f.wait_for(60s), std::future_status::ready);
  EXPECT_GE(refused.load(), 1);
  EXPECT_GE(ran.load(), 2);
  EXPECT_EQ(static_cast<size_t>(ran.load()), accepted.size());
  EXPECT_TRUE((*prepared)->executeSynchronously(fullyConnectedRequest(256, 16)));
}

TEST_F(DeviceTest, InvalidModelIsRejectedAtLaunch) {
  Model model = addModel();
  model.main.operations[0].inputs[1] = 42;  // no such operand
  bool called = false;
  const ErrorStatus launched =
      device_->prepareModel(std::move(model), {}, [&](Result<std::shared_ptr<PreparedModel>> p) {
        called = true;
        EXPECT_FALSE(p);
      });
  EXPECT_EQ(launched, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_TRUE(called);
}

TEST_F(DeviceTest, InvalidPreferenceAndPriorityAreRejected) {
  PrepareOptions options;
  options.preference = static_cast<ExecutionPreference>(7);
  auto prepared = device_->prepareModel(addModel(), options);
  ASSERT_FALSE(prepared);
  EXPECT_EQ(prepared.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(prepared.error().message.find("preference"), std::string::npos);
  options = {};
  options.priority = static_cast<Priority>(-1);
  prepared = device_->prepareModel(addModel(), options);
  ASSERT_FALSE(prepared);
  EXPECT_NE(prepared.error().message.find("priority"), std::string::npos);
}

TEST_F(DeviceTest, UnsupportedOperationIsReportedWithReason) {
  // An operation of a vendor extension this driver does not implement.
  constexpr auto kExtensionOp = static_cast<OperationType>((1 << 16) | 7);
  Model model = addModel(kExtensionOp);
  model.extensionNameToPrefix.push_back({"com.example.unknown", 1});
  auto supported = device_->getSupportedOperations(model);
  ASSERT_TRUE(supported) << supported.error().message;
  EXPECT_EQ(*supported, (std::vector<bool>{true, false}));
  auto reasons = device_->explainSupportedOperations(model);
  ASSERT_TRUE(reasons);
  EXPECT_TRUE((*reasons)[0].empty());
  EXPECT_NE((*reasons)[1].find("no implementation"), std::string::npos) << (*reasons)[1];

  auto prepared = device_->prepareModel(model);
  ASSERT_FALSE(prepared);
  EXPECT_EQ(prepared.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(prepared.error().message.find("operation 1"), std::string::npos)
      << prepared.error().message;
}

// What only an operation's own rules reject (a rank it does not take, an activation code out
// of range, shapes that do not broadcast) is refused at launch and by getSupportedOperations,
// as the VTS ValidateModel tests require, not first by the compilation.
TEST_F(DeviceTest, ModelsTheCompilerWouldRejectAreRefusedAtLaunch) {
  auto withActivation = [](int32_t code) {
    Model model = addModel();
    std::memcpy(model.operandValues.data(), &code, 4);
    return model;
  };
  auto withShapes = [](std::vector<uint32_t> a, std::vector<uint32_t> b,
                       std::vector<uint32_t> out) {
    Model model = addModel();
    model.main.operands[0].dimensions = std::move(a);
    model.main.operands[1].dimensions = std::move(b);
    model.main.operands[3].dimensions = std::move(out);
    return model;
  };
  const std::vector<std::pair<std::string, Model>> invalid = {
      {"activation 7", withActivation(7)},
      {"shapes that do not broadcast", withShapes({2, 3}, {4}, {2, 3})},
      {"rank 5", withShapes({1, 1, 1, 1, 4}, {1, 1, 1, 1, 4}, {1, 1, 1, 1, 4})},
  };
  for (const auto& [what, model] : invalid) {
    auto supported = device_->getSupportedOperations(model);
    ASSERT_FALSE(supported) << what;
    EXPECT_EQ(supported.error().status, ErrorStatus::INVALID_ARGUMENT) << what;
    EXPECT_NE(supported.error().message.find("operation 0 (ADD)"), std::string::npos)
        << what << ": " << supported.error().message;
    std::promise<ErrorStatus> callbackStatus;
    const ErrorStatus launch =
        device_->prepareModel(model, {}, [&](Result<std::shared_ptr<PreparedModel>> result) {
          callbackStatus.set_value(result ? ErrorStatus::NONE : result.error().status);
        });
    EXPECT_EQ(launch, ErrorStatus::INVALID_ARGUMENT) << what;
    EXPECT_EQ(callbackStatus.get_future().get(), ErrorStatus::INVALID_ARGUMENT) << what;
  }
}

TEST_F(DeviceTest, PreparedModelOutlivesDevice) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  device_.reset();
  AddRequest r = makeRequest();
  auto result = prepared->executeSynchronously(r.request);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_FLOAT_EQ(r.out()[3], r.a()[3] + r.b()[3]);
}

TEST_F(DeviceTest, ReleasingEverythingInsideACallbackIsSafe) {
  auto prepared = prepare(addModel());
  ASSERT_TRUE(prepared);
  AddRequest r = makeRequest();
  std::promise<void> done;
  auto holder = std::make_shared<std::shared_ptr<PreparedModel>>(prepared);
  prepared.reset();
  device_.reset();
  (*holder)->execute(r.request, {}, [holder, &done](Result<ExecutionResult> result) mutable {
    EXPECT_TRUE(result);
    holder->reset();  // last reference to the model (and runtime) dropped on a driver thread
    done.set_value();
  });
  done.get_future().wait();
}

// nnhald reaches the driver's side of a prepared model through DeviceControl::controlOf, not
// a cast: it finds the models this device made, while they live, and nothing else.
TEST(DeviceControl, ControlOfFindsOnlyTheDevicesOwnPreparedModels) {
  auto first = hal::createEmbeddedDriver({});
  auto second = hal::createEmbeddedDriver({});
  ASSERT_TRUE(first && second);
  auto mine = first->device->prepareModel(addModel());
  auto theirs = second->device->prepareModel(addModel());
  ASSERT_TRUE(mine && theirs);
  hal::PreparedModelControl* control = first->control->controlOf(**mine);
  ASSERT_NE(control, nullptr);
  EXPECT_EQ(first->control->controlOf(**theirs), nullptr);
  EXPECT_NE(second->control->controlOf(**theirs), nullptr);
  // The control is the model's own: it runs the model's checks and the model.
  AddRequest r = makeRequest();
  auto validated = control->validate(r.request, {});
  ASSERT_TRUE(validated) << validated.error().message;
  auto ran = control->executeValidated(*validated);
  ASSERT_TRUE(ran) << ran.error().message;
  EXPECT_FLOAT_EQ(r.out()[3], 33.5f);
  Request wrong = r.request;
  wrong.inputs.pop_back();
  auto refused = control->validate(wrong, {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::INVALID_ARGUMENT);
  // A request validated by one model does not run on another: no path runs it unvalidated.
  hal::PreparedModelControl* other = second->control->controlOf(**theirs);
  auto elsewhere = other->executeValidated(*validated);
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().status, ErrorStatus::INVALID_ARGUMENT);
  std::optional<Result<ExecutionResult>> called;
  auto again = control->validate(r.request, {});
  ASSERT_TRUE(again);
  EXPECT_EQ(other->executeCancellable(
                std::move(*again),
                [&](Result<ExecutionResult> result) { called = std::move(result); }, nullptr),
            ErrorStatus::INVALID_ARGUMENT);
  ASSERT_TRUE(called.has_value());
  EXPECT_FALSE(*called);
  auto fenced = control->validate(r.request, {});
  ASSERT_TRUE(fenced);
  auto fencedElsewhere = other->executeFencedAdmitted(*fenced, {}, {}, nullptr, nullptr);
  ASSERT_FALSE(fencedElsewhere);
  EXPECT_EQ(fencedElsewhere.error().status, ErrorStatus::INVALID_ARGUMENT);
  // The asynchronous path runs a validated request once.
  std::promise<Result<ExecutionResult>> done;
  r.out()[3] = 0;
  EXPECT_EQ(
      control->executeCancellable(
          std::move(*fenced),
          [&](Result<ExecutionResult> result) { done.set_value(std::move(result)); }, nullptr),
      ErrorStatus::NONE);
  auto asyncResult = done.get_future().get();
  ASSERT_TRUE(asyncResult) << asyncResult.error().message;
  EXPECT_FLOAT_EQ(r.out()[3], 33.5f);
  // allocate finds the device's models the same way: another device's model is refused.
  EXPECT_TRUE(first->device->allocate({}, {*mine}, {{0, 0, 1.0f}}, {}));
  EXPECT_FALSE(first->device->allocate({}, {*theirs}, {{0, 0, 1.0f}}, {}));
}

}  // namespace
}  // namespace nnhal
