// The driver through its public interface, run twice: against the embedded driver and
// against a real nnhald reached with nnhal::connect. Same statuses, same results.
#include <gtest/gtest.h>

#include <future>
#include <mutex>

#include "common/tflite_compat_checks.h"
#include "ipc/client/remote_device.h"
#include "ipc_test_util.h"
#include "nnhal/burst.h"
#include "nnhal/sync_fence.h"

namespace nnhal::ipc {
namespace {

using namespace testing;
using namespace std::chrono_literals;

enum class Backend { kEmbedded, kRemote };

std::string backendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kEmbedded ? "Embedded" : "Remote";
}

class DriverTest : public ::testing::TestWithParam<Backend> {
 protected:
  static void SetUpTestSuite() {
    stateDir_ = new TempDir();
    daemon_ = new Daemon({"--cache-dir", (stateDir_->path() / "daemon").string()});
  }
  static void TearDownTestSuite() {
    delete daemon_;
    delete stateDir_;
  }

  void SetUp() override {
    ASSERT_TRUE(daemon_->running()) << "nnhald did not start";
    if (GetParam() == Backend::kEmbedded) {
      DeviceOptions options;
      options.kernelThreads = 1;
      options.stateDirectory = stateDir_->path() / "embedded";
      auto device = createDevice(options);
      ASSERT_TRUE(device) << device.error().message;
      device_ = *device;
    } else {
      auto device = connect(daemon_->socket());
      ASSERT_TRUE(device) << device.error().message;
      device_ = *device;
    }
  }

  std::shared_ptr<PreparedModel> prepare(Model model) {
    auto prepared = device_->prepareModel(std::move(model));
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? *prepared : nullptr;
  }

  static TempDir* stateDir_;
  static Daemon* daemon_;
  std::shared_ptr<Device> device_;
};

TempDir* DriverTest::stateDir_ = nullptr;
Daemon* DriverTest::daemon_ = nullptr;

// The org.nnhal.tflite_compat extension: listed, its operations supported, prepared and run
// (the model's extensionNameToPrefix crosses the wire), and the same refusals.
TEST_P(DriverTest, RunsTheTfliteCompatExtension) {
  nnhal::testing::expectListsTfliteCompat(*device_);
  nnhal::testing::expectRunsTfliteCompat(*device_);
  nnhal::testing::expectRefusesBadTfliteCompatModels(*device_);
}

TEST_P(DriverTest, AnswersQueries) {
  EXPECT_EQ(device_->getName(), "nnhal-cpu");
  EXPECT_FALSE(device_->getVersionString().empty());
  EXPECT_EQ(device_->getType(), DeviceType::CPU);
  const Capabilities caps = device_->getCapabilities();
  EXPECT_EQ(caps.operandPerformance.size(), 15u);
  EXPECT_EQ(caps.ifPerformance.execTime, 1.0f);
  ASSERT_EQ(device_->getSupportedExtensions().size(), 1u);
  EXPECT_EQ(device_->getSupportedExtensions()[0].name, "org.nnhal.tflite_compat");
  EXPECT_EQ(device_->getNumberOfCacheFilesNeeded().modelCache, 1u);
  EXPECT_EQ(device_->getNumberOfCacheFilesNeeded().dataCache, 1u);
  auto supported = device_->getSupportedOperations(convModel());
  ASSERT_TRUE(supported) << supported.error().message;
  EXPECT_EQ(*supported, std::vector<bool>{true});
  Model bad = addModel();
  bad.main.operations[0].inputs = {0, 1};
  auto rejected = device_->getSupportedOperations(bad);
  ASSERT_FALSE(rejected);
  EXPECT_EQ(rejected.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST_P(DriverTest, ExecutesAdd) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  AddRequest r = addRequest();
  auto result = prepared->executeSynchronously(r.request);
  ASSERT_TRUE(result) << result.error().message;
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
  ASSERT_EQ(result->outputShapes.size(), 1u);
  EXPECT_EQ(result->outputShapes[0].dimensions, std::vector<uint32_t>{4});
  EXPECT_EQ(result->timing, Timing{});
  // The same pool again (the daemon has it cached), with new inputs.
  r.a()[0] = 100.0f;
  ASSERT_TRUE(prepared->executeSynchronously(r.request));
  EXPECT_FLOAT_EQ(r.out()[0], 100.0f);
}

TEST_P(DriverTest, ExecutesConvWithConstantReferenceWeights) {
  auto prepared = prepare(convModel());
  ASSERT_NE(prepared, nullptr);
  Memory pool = *Memory::create(64);
  auto* f = reinterpret_cast<float*>(pool.data());
  for (int i = 0; i < 9; ++i) f[i] = static_cast<float>(i + 1);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 36}, {}}};
  request.outputs = {{false, {0, 40, 16}, {}}};
  auto result = prepared->executeSynchronously(request);
  ASSERT_TRUE(result) << result.error().message;
  const float* out = f + 10;
  EXPECT_FLOAT_EQ(out[0], 12.5f);
  EXPECT_FLOAT_EQ(out[1], 16.5f);
  EXPECT_FLOAT_EQ(out[2], 24.5f);
  EXPECT_FLOAT_EQ(out[3], 28.5f);
}

TEST_P(DriverTest, ExecutesAsynchronously) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  AddRequest r = addRequest();
  std::promise<Result<ExecutionResult>> done;
  const ErrorStatus launched = prepared->execute(
      r.request, {}, [&](Result<ExecutionResult> result) { done.set_value(std::move(result)); });
  ASSERT_EQ(launched, ErrorStatus::NONE);
  auto future = done.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  auto result = future.get();
  ASSERT_TRUE(result) << result.error().message;
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
}

TEST_P(DriverTest, MeasuresTimingWhenAsked) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  AddRequest r = addRequest();
  ExecuteOptions options;
  options.measure = MeasureTiming::YES;
  auto result = prepared->executeSynchronously(r.request, options);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_NE(result->timing.timeInDriver, kNoTiming);
  EXPECT_LE(result->timing.timeOnDevice, result->timing.timeInDriver);
  // Errors carry no timing; unmeasured executions neither.
  options.measure = MeasureTiming::NO;
  auto unmeasured = prepared->executeSynchronously(r.request, options);
  ASSERT_TRUE(unmeasured);
  EXPECT_EQ(unmeasured->timing.timeOnDevice, kNoTiming);
}

TEST_P(DriverTest, ReportsDynamicOutputShapesAndInsufficientSize) {
  auto prepared = prepare(addModel({0}));
  ASSERT_NE(prepared, nullptr);
  AddRequest r = addRequest();
  auto result = prepared->executeSynchronously(r.request);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->outputShapes[0].dimensions, std::vector<uint32_t>{4});
  AddRequest small = addRequest(8);
  auto tooSmall = prepared->executeSynchronously(small.request);
  ASSERT_FALSE(tooSmall);
  EXPECT_EQ(tooSmall.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(tooSmall.error().outputShapes.size(), 1u);
  EXPECT_EQ(tooSmall.error().outputShapes[0].dimensions, std::vector<uint32_t>{4});
  EXPECT_FALSE(tooSmall.error().outputShapes[0].isSufficient);
}

TEST_P(DriverTest, RejectsBadRequestsAsTheEmbeddedDriverDoes) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  AddRequest r = addRequest();
  r.request.inputs[1].location.offset = 60;  // past the 64-byte pool
  auto result = prepared->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  std::promise<ErrorStatus> callbackStatus;
  const ErrorStatus launched =
      prepared->execute(r.request, {}, [&](Result<ExecutionResult> outcome) {
        callbackStatus.set_value(outcome ? ErrorStatus::NONE : outcome.error().status);
      });
  EXPECT_EQ(launched, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(callbackStatus.get_future().get(), ErrorStatus::INVALID_ARGUMENT);

  Model bad = addModel();
  bad.main.inputIndexes = {0, 7};
  std::promise<ErrorStatus> prepareStatus;
  EXPECT_EQ(device_->prepareModel(bad, {},
                                  [&](Result<std::shared_ptr<PreparedModel>> outcome) {
                                    prepareStatus.set_value(outcome ? ErrorStatus::NONE
                                                                    : outcome.error().status);
                                  }),
            ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(prepareStatus.get_future().get(), ErrorStatus::INVALID_ARGUMENT);

  ExecuteOptions late;
  late.deadline = std::chrono::steady_clock::now() - 1ms;
  auto missed = prepared->executeSynchronously(addRequest().request, late);
  ASSERT_FALSE(missed);
  EXPECT_EQ(missed.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
}

TEST_P(DriverTest, RunsOnEveryMemoryKind) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  // ashmem, hardware_buffer_blob, and mmap_fd at an offset inside a bigger memfd.
  Memory backing = *Memory::create(8192);
  auto mmapFd = Memory::fromFd(backing.fd(), 64, 4096 + 128, MemoryKind::MMAP_FD);
  ASSERT_TRUE(mmapFd) << mmapFd.error().message;
  for (Memory pool : {*Memory::create(64, MemoryKind::ASHMEM),
                      *Memory::create(64, MemoryKind::HARDWARE_BUFFER_BLOB), *mmapFd}) {
    AddRequest r = addRequest(pool);
    auto result = prepared->executeSynchronously(r.request);
    ASSERT_TRUE(result) << toString(pool.kind()) << ": " << result.error().message;
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
  }
  EXPECT_FLOAT_EQ(reinterpret_cast<float*>(backing.data() + 4096 + 128)[8], 0.5f);
}

TEST_P(DriverTest, ManyExecutionsInFlightFromSeveralThreads) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  constexpr int kThreads = 4;
  constexpr int kRounds = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        AddRequest r = addRequest(16, static_cast<float>(t * 1000 + round));
        if (round % 2 == 0) {
          if (!prepared->executeSynchronously(r.request)) ++failures;
        } else {
          std::promise<bool> done;
          prepared->execute(r.request, {}, [&](Result<ExecutionResult> result) {
            done.set_value(result.has_value());
          });
          if (!done.get_future().get()) ++failures;
        }
        for (int i = 0; i < 4; ++i) {
          if (r.out()[i] != r.a()[i] + r.b()[i]) ++failures;
        }
      }
    });
  }
  // Plus several asynchronous executions in flight at once on one thread.
  std::vector<AddRequest> requests;
  for (int i = 0; i < 16; ++i) requests.push_back(addRequest(16, 500.0f + static_cast<float>(i)));
  std::atomic<int> pending{static_cast<int>(requests.size())};
  std::promise<void> allDone;
  for (AddRequest& r : requests) {
    ASSERT_EQ(prepared->execute(r.request, {},
                                [&](Result<ExecutionResult> result) {
                                  if (!result) ++failures;
                                  if (--pending == 0) allDone.set_value();
                                }),
              ErrorStatus::NONE);
  }
  allDone.get_future().wait();
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (AddRequest& r : requests) EXPECT_FLOAT_EQ(r.out()[3], r.a()[3] + r.b()[3]);
}

TEST_P(DriverTest, SavesAndLoadsCompilationCaches) {
  TempDir files;
  auto open = [&](const char* name) {
    return ::open((files.path() / name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  };
  const int modelFd = open("model.bin");
  const int dataFd = open("data.bin");
  ASSERT_GE(modelFd, 0);
  CacheFiles cache;
  cache.modelCache = {{modelFd}};
  cache.dataCache = {{dataFd}};
  cache.token.fill(GetParam() == Backend::kEmbedded ? 1 : 2);
  PrepareOptions options;
  options.cache = cache;
  auto saved = device_->prepareModel(convModel(), options);
  ASSERT_TRUE(saved) << saved.error().message;
  EXPECT_GT(fs::file_size(files.path() / "model.bin"), 0u);

  auto loaded = device_->prepareModelFromCache(cache);
  ASSERT_TRUE(loaded) << loaded.error().message;
  Memory pool = *Memory::create(64);
  auto* f = reinterpret_cast<float*>(pool.data());
  for (int i = 0; i < 9; ++i) f[i] = 1.0f;
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 36}, {}}};
  request.outputs = {{false, {0, 40, 16}, {}}};
  ASSERT_TRUE((*loaded)->executeSynchronously(request));
  EXPECT_FLOAT_EQ(f[10], 4.5f);

  // Wrong handle counts are INVALID_ARGUMENT at launch; an unknown token GENERAL_FAILURE.
  CacheFiles wrong = cache;
  wrong.dataCache.clear();
  auto badShape = device_->prepareModelFromCache(wrong);
  ASSERT_FALSE(badShape);
  EXPECT_EQ(badShape.error().status, ErrorStatus::INVALID_ARGUMENT);
  CacheFiles unknown = cache;
  unknown.token.fill(9);
  auto badToken = device_->prepareModelFromCache(unknown);
  ASSERT_FALSE(badToken);
  EXPECT_EQ(badToken.error().status, ErrorStatus::GENERAL_FAILURE);
  ::close(modelFd);
  ::close(dataFd);
}

TEST_P(DriverTest, FencedExecutionWithoutFences) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  AddRequest r = addRequest();
  ExecuteOptions options;
  options.measure = MeasureTiming::YES;
  auto launched = prepared->executeFenced(r.request, {}, options);
  ASSERT_TRUE(launched) << launched.error().message;
  ASSERT_TRUE(launched->syncFence.wait(10s));
  ASSERT_NE(launched->callback, nullptr);
  auto info = launched->callback->getExecutionInfo();
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->status, ErrorStatus::NONE);
  EXPECT_NE(info->timingLaunched.timeInDriver, kNoTiming);
  EXPECT_LE(info->timingLaunched.timeOnDevice, info->timingLaunched.timeInDriver);
  EXPECT_LE(info->timingFenced.timeOnDevice, info->timingFenced.timeInDriver);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
}

TEST_P(DriverTest, FencedExecutionWaitsForItsFences) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  AddRequest r = addRequest();
  auto first = SyncFence::create();
  auto second = SyncFence::create();
  ASSERT_TRUE(first && second);
  // A pipe's read end is a fence too: it signals when a byte is written.
  int pipeFds[2];
  ASSERT_EQ(::pipe2(pipeFds, O_CLOEXEC), 0);
  auto third = SyncFence::fromFd(pipeFds[0]);
  ASSERT_TRUE(third) << third.error().message;
  auto launched = prepared->executeFenced(r.request, {*first, SyncFence(), *second, *third}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
  EXPECT_EQ(r.out()[3], 0.0f);  // not run yet
  ASSERT_TRUE(first->signal());
  ASSERT_TRUE(second->signal());
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
  ASSERT_EQ(::write(pipeFds[1], "x", 1), 1);
  ASSERT_TRUE(launched->syncFence.wait(10s));
  auto info = launched->callback->getExecutionInfo();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, ErrorStatus::NONE);
  EXPECT_EQ(info->timingFenced, Timing{});  // not measured
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
}

TEST_P(DriverTest, FencedExecutionsChainOnEachOthersFences) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  auto gate = SyncFence::create();
  ASSERT_TRUE(gate);
  std::vector<AddRequest> requests;
  for (int i = 0; i < 5; ++i) requests.push_back(addRequest(16, static_cast<float>(i)));
  std::vector<FencedExecutionResult> chain;
  SyncFence previous = *gate;
  for (AddRequest& r : requests) {
    auto launched = prepared->executeFenced(r.request, {previous}, {});
    ASSERT_TRUE(launched) << launched.error().message;
    previous = launched->syncFence;
    chain.push_back(std::move(*launched));
  }
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(previous.state(), SyncFence::State::kActive);
  ASSERT_TRUE(gate->signal());
  ASSERT_TRUE(previous.wait(10s));
  for (size_t i = 0; i < chain.size(); ++i) {
    auto info = chain[i].callback->getExecutionInfo();
    ASSERT_TRUE(info);
    EXPECT_EQ(info->status, ErrorStatus::NONE);
    EXPECT_FLOAT_EQ(requests[i].out()[2], requests[i].a()[2] + requests[i].b()[2]);
  }
}

TEST_P(DriverTest, FencedExecutionErrors) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  AddRequest bad = addRequest();
  bad.request.inputs[0].location.offset = 60;
  auto invalid = prepared->executeFenced(bad.request, {}, {});
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().status, ErrorStatus::INVALID_ARGUMENT);

  auto dynamic = prepare(addModel({0}));
  ASSERT_NE(dynamic, nullptr);
  AddRequest r = addRequest();
  auto unspecified = dynamic->executeFenced(r.request, {}, {});
  ASSERT_FALSE(unspecified);
  EXPECT_EQ(unspecified.error().status, ErrorStatus::INVALID_ARGUMENT);

  ExecuteOptions late;
  late.deadline = std::chrono::steady_clock::now() - 1ms;
  auto missed = prepared->executeFenced(r.request, {}, late);
  ASSERT_TRUE(missed) << missed.error().message;
  ASSERT_TRUE(missed->syncFence.wait(10s));
  auto info = missed->callback->getExecutionInfo();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_EQ(info->timingLaunched, Timing{});
}

// --- bursts: the same results and statuses as executeSynchronously --------------------------

TEST_P(DriverTest, BurstExecutesLikeExecuteSynchronously) {
  auto prepared = prepare(convModel());
  ASSERT_NE(prepared, nullptr);
  auto burst = prepared->configureExecutionBurst();
  ASSERT_TRUE(burst) << burst.error().message;
  for (int round = 0; round < 5; ++round) {
    Memory pool = *Memory::create(64);
    auto* in = reinterpret_cast<float*>(pool.data());
    for (int i = 0; i < 9; ++i) in[i] = static_cast<float>(i + round);
    Request request;
    request.pools = {pool};
    request.inputs = {{false, {0, 0, 36}, {}}};
    request.outputs = {{false, {0, 36, 16}, {}}};
    auto viaBurst = (*burst)->execute(request, MeasureTiming::YES);
    ASSERT_TRUE(viaBurst) << viaBurst.error().message;
    std::vector<float> burstOut(in + 9, in + 13);
    auto direct = prepared->executeSynchronously(request);
    ASSERT_TRUE(direct) << direct.error().message;
    EXPECT_EQ(std::vector<float>(in + 9, in + 13), burstOut);
    EXPECT_EQ(viaBurst->outputShapes, direct->outputShapes);
    EXPECT_NE(viaBurst->timing.timeInDriver, kNoTiming);
    EXPECT_LE(viaBurst->timing.timeOnDevice, viaBurst->timing.timeInDriver);
    // 1 + 2 + 3 + 4 windows of ones plus the bias.
    EXPECT_FLOAT_EQ(burstOut[0], in[0] + in[1] + in[3] + in[4] + 0.5f);
  }
  Memory pool = *Memory::create(64);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 36}, {}}};
  request.outputs = {{false, {0, 36, 16}, {}}};
  auto untimed = (*burst)->execute(request, MeasureTiming::NO);
  ASSERT_TRUE(untimed);
  EXPECT_EQ(untimed->timing, Timing{});
}

TEST_P(DriverTest, BurstReportsDynamicShapesAndErrorsAsExecuteSynchronously) {
  auto prepared = prepare(addModel({0}));
  ASSERT_NE(prepared, nullptr);
  auto burst = prepared->configureExecutionBurst();
  ASSERT_TRUE(burst);
  AddRequest r = addRequest();
  auto result = (*burst)->execute(r.request, MeasureTiming::NO);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->outputShapes[0].dimensions, std::vector<uint32_t>{4});
  AddRequest small = addRequest(8);
  auto tooSmall = (*burst)->execute(small.request, MeasureTiming::YES);
  ASSERT_FALSE(tooSmall);
  EXPECT_EQ(tooSmall.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(tooSmall.error().outputShapes.size(), 1u);
  EXPECT_EQ(tooSmall.error().outputShapes[0].dimensions, std::vector<uint32_t>{4});
  EXPECT_FALSE(tooSmall.error().outputShapes[0].isSufficient);

  AddRequest bad = addRequest();
  bad.request.inputs[1].location.offset = 60;  // past the 64-byte pool
  auto invalid = (*burst)->execute(bad.request, MeasureTiming::NO);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_TRUE(invalid.error().outputShapes.empty());
  auto badMeasure = (*burst)->execute(r.request, static_cast<MeasureTiming>(7));
  ASSERT_FALSE(badMeasure);
  EXPECT_EQ(badMeasure.error().status, ErrorStatus::INVALID_ARGUMENT);
  auto missed =
      (*burst)->execute(r.request, MeasureTiming::NO, std::chrono::steady_clock::now() - 1ms);
  ASSERT_FALSE(missed);
  EXPECT_EQ(missed.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  // Removing an input, as the VTS's removeInputTest does on the burst path.
  AddRequest removed = addRequest();
  removed.request.inputs.pop_back();
  auto missing = (*burst)->execute(removed.request, MeasureTiming::NO);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().status, ErrorStatus::INVALID_ARGUMENT);
  // After all that the burst still works; freeing unknown or freed memories breaks nothing.
  (*burst)->freeMemory(r.pool);
  (*burst)->freeMemory(r.pool);
  (*burst)->freeMemory(*Memory::create(16));
  EXPECT_TRUE((*burst)->execute(r.request, MeasureTiming::NO));
}

TEST_P(DriverTest, BurstRunsOnEveryMemoryKindAndWithTokenPools) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  auto burst = prepared->configureExecutionBurst();
  ASSERT_TRUE(burst);
  Memory backing = *Memory::create(8192);
  auto mmapFd = Memory::fromFd(backing.fd(), 64, 4096 + 128, MemoryKind::MMAP_FD);
  ASSERT_TRUE(mmapFd) << mmapFd.error().message;
  for (Memory pool : {*Memory::create(64, MemoryKind::ASHMEM),
                      *Memory::create(64, MemoryKind::HARDWARE_BUFFER_BLOB), *mmapFd}) {
    AddRequest r = addRequest(pool);
    auto result = (*burst)->execute(r.request, MeasureTiming::NO);
    ASSERT_TRUE(result) << toString(pool.kind()) << ": " << result.error().message;
    for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);
  }
  // A token of no allocated buffer fails as executeSynchronously fails.
  AddRequest r = addRequest();
  r.request.pools.push_back(MemoryDomainToken{5});
  auto direct = prepared->executeSynchronously(r.request);
  auto viaBurst = (*burst)->execute(r.request, MeasureTiming::NO);
  ASSERT_EQ(direct.has_value(), viaBurst.has_value());
  if (!direct) {
    EXPECT_EQ(direct.error().status, viaBurst.error().status);
  }
}

TEST_P(DriverTest, BurstsRunConcurrentlyOneThreadEach) {
  auto prepared = prepare(addModel());
  ASSERT_NE(prepared, nullptr);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto burst = prepared->configureExecutionBurst();
      if (!burst) {
        ++failures;
        return;
      }
      for (int i = 0; i < 200; ++i) {
        AddRequest r = addRequest(16, static_cast<float>(t * 1000 + i));
        auto result = (*burst)->execute(r.request, MeasureTiming::NO);
        if (!result || r.out()[3] != r.a()[3] + r.b()[3]) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Backends, DriverTest,
                         ::testing::Values(Backend::kEmbedded, Backend::kRemote), backendName);

}  // namespace
}  // namespace nnhal::ipc
