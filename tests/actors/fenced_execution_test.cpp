// Fenced executions (IPreparedModel::executeFenced) in the embedded driver: waiting for
// fences without blocking threads, results, argument errors, deadlines and the timeout
// after the fences, timing, concurrency, and shutdown with fences that never signal.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "nnhal/device.h"
#include "nnhal/sync_fence.h"

namespace nnhal {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr float kUntouched = -12345.0f;

Operand operand(OperandType type, std::vector<uint32_t> dims, OperandLifeTime lifetime) {
  Operand op;
  op.type = type;
  op.dimensions = std::move(dims);
  op.lifetime = lifetime;
  return op;
}

/// Appends a constant INT32 scalar to `graph` (value in model.operandValues).
uint32_t constantInt(Model& model, Subgraph& graph, int32_t value) {
  Operand op = operand(OperandType::INT32, {}, OperandLifeTime::CONSTANT_COPY);
  const auto offset = static_cast<uint32_t>(model.operandValues.size());
  model.operandValues.resize(offset + 4);
  std::memcpy(model.operandValues.data() + offset, &value, 4);
  op.location = {0, offset, 4};
  graph.operands.push_back(op);
  return static_cast<uint32_t>(graph.operands.size() - 1);
}

uint32_t addOperand(Subgraph& graph, Operand op) {
  graph.operands.push_back(std::move(op));
  return static_cast<uint32_t>(graph.operands.size() - 1);
}

void addOperation(Subgraph& graph, OperationType type, std::vector<uint32_t> in,
                  std::vector<uint32_t> out) {
  for (uint32_t i : in) graph.operands[i].numberOfConsumers++;
  graph.operations.push_back({type, std::move(in), std::move(out)});
}

/// out = a + b over float32 [4]; `outputDims` the declared output dimensions.
Model addModel(std::vector<uint32_t> outputDims = {4}) {
  Model model;
  Subgraph& g = model.main;
  const uint32_t a =
      addOperand(g, operand(OperandType::TENSOR_FLOAT32, {4}, OperandLifeTime::SUBGRAPH_INPUT));
  const uint32_t b =
      addOperand(g, operand(OperandType::TENSOR_FLOAT32, {4}, OperandLifeTime::SUBGRAPH_INPUT));
  const uint32_t act = constantInt(model, g, 0);
  const uint32_t out = addOperand(g, operand(OperandType::TENSOR_FLOAT32, std::move(outputDims),
                                             OperandLifeTime::SUBGRAPH_OUTPUT));
  addOperation(g, OperationType::ADD, {a, b, act}, {out});
  g.inputIndexes = {a, b};
  g.outputIndexes = {out};
  return model;
}

/// WHILE (i < limit) { i = i + 1 } over float32 [1]: i is an input-output operand, limit an
/// input-only one; main: (i, limit) -> i.
Model whileModel() {
  Model model;
  model.referenced.resize(2);
  const auto f32 = [](OperandLifeTime lifetime) {
    return operand(OperandType::TENSOR_FLOAT32, {1}, lifetime);
  };
  {  // condition: (i, limit) -> i < limit
    Subgraph& g = model.referenced[0];
    const uint32_t i = addOperand(g, f32(OperandLifeTime::SUBGRAPH_INPUT));
    const uint32_t limit = addOperand(g, f32(OperandLifeTime::SUBGRAPH_INPUT));
    const uint32_t less =
        addOperand(g, operand(OperandType::TENSOR_BOOL8, {1}, OperandLifeTime::SUBGRAPH_OUTPUT));
    addOperation(g, OperationType::LESS, {i, limit}, {less});
    g.inputIndexes = {i, limit};
    g.outputIndexes = {less};
  }
  {  // body: (i, limit) -> i + 1
    Subgraph& g = model.referenced[1];
    const uint32_t i = addOperand(g, f32(OperandLifeTime::SUBGRAPH_INPUT));
    const uint32_t limit = addOperand(g, f32(OperandLifeTime::SUBGRAPH_INPUT));
    Operand one = f32(OperandLifeTime::CONSTANT_COPY);
    const auto offset = static_cast<uint32_t>(model.operandValues.size());
    const float value = 1.0f;
    model.operandValues.resize(offset + 4);
    std::memcpy(model.operandValues.data() + offset, &value, 4);
    one.location = {0, offset, 4};
    const uint32_t step = addOperand(g, one);
    const uint32_t act = constantInt(model, g, 0);
    const uint32_t next = addOperand(g, f32(OperandLifeTime::SUBGRAPH_OUTPUT));
    addOperation(g, OperationType::ADD, {i, step, act}, {next});
    g.inputIndexes = {i, limit};
    g.outputIndexes = {next};
  }
  Subgraph& g = model.main;
  const uint32_t i = addOperand(g, f32(OperandLifeTime::SUBGRAPH_INPUT));
  const uint32_t limit = addOperand(g, f32(OperandLifeTime::SUBGRAPH_INPUT));
  Operand condRef = operand(OperandType::SUBGRAPH, {}, OperandLifeTime::SUBGRAPH);
  condRef.location = {0, 0, 0};
  Operand bodyRef = condRef;
  bodyRef.location = {0, 1, 0};
  const uint32_t cond = addOperand(g, condRef);
  const uint32_t body = addOperand(g, bodyRef);
  const uint32_t out = addOperand(g, f32(OperandLifeTime::SUBGRAPH_OUTPUT));
  addOperation(g, OperationType::WHILE, {cond, body, i, limit}, {out});
  g.inputIndexes = {i, limit};
  g.outputIndexes = {out};
  return model;
}

/// One pool: float inputs, then float outputs (pre-filled with kUntouched).
struct FloatRequest {
  Memory pool;
  Request request;
  std::vector<uint32_t> outputOffsets;

  FloatRequest(const std::vector<std::vector<float>>& inputs, const std::vector<size_t>& outputs) {
    size_t floats = 0;
    for (const auto& in : inputs) floats += in.size();
    for (size_t n : outputs) floats += n;
    pool = *Memory::create(floats * 4);
    request.pools.push_back(pool);
    uint32_t offset = 0;
    for (const auto& in : inputs) {
      const auto bytes = static_cast<uint32_t>(in.size() * 4);
      std::memcpy(pool.data() + offset, in.data(), bytes);
      request.inputs.push_back({false, {0, offset, bytes}, {}});
      offset += bytes;
    }
    for (size_t n : outputs) {
      const auto bytes = static_cast<uint32_t>(n * 4);
      request.outputs.push_back({false, {0, offset, bytes}, {}});
      outputOffsets.push_back(offset);
      for (size_t i = 0; i < n; ++i) std::memcpy(pool.data() + offset + i * 4, &kUntouched, 4);
      offset += bytes;
    }
  }
  float at(size_t output, size_t i) const {
    float v;
    std::memcpy(&v, pool.data() + outputOffsets[output] + i * 4, 4);
    return v;
  }
};

FloatRequest addRequest(float base = 0.0f) {
  return FloatRequest({{base + 1, base + 2, base + 3, base + 4}, {10, 20, 30, 40}}, {4});
}

void expectAddResult(const FloatRequest& r, float base = 0.0f) {
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(r.at(0, i), base + static_cast<float>(i + 1) + 10.0f * static_cast<float>(i + 1))
        << "element " << i;
  }
}

SyncFence newFence() {
  auto fence = SyncFence::create();
  EXPECT_TRUE(fence) << fence.error().message;
  return fence ? *fence : SyncFence();
}

class FencedExecutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = createDevice({});
    ASSERT_TRUE(device) << device.error().message;
    device_ = *device;
    add_ = prepare(addModel());
    ASSERT_NE(add_, nullptr);
  }
  std::shared_ptr<PreparedModel> prepare(Model model) {
    auto prepared = device_->prepareModel(std::move(model));
    EXPECT_TRUE(prepared) << prepared.error().message;
    return prepared ? *prepared : nullptr;
  }
  /// Waits for the returned fence (bounded), then returns the callback's info.
  static FencedExecutionInfo finish(const FencedExecutionResult& launched) {
    auto waited = launched.syncFence.wait(10s);
    EXPECT_TRUE(waited) << waited.error().message;
    EXPECT_NE(launched.callback, nullptr);
    auto info = launched.callback->getExecutionInfo();
    EXPECT_TRUE(info) << info.error().message;
    return info ? *info : FencedExecutionInfo{ErrorStatus::GENERAL_FAILURE, {}, {}};
  }

  std::shared_ptr<Device> device_;
  std::shared_ptr<PreparedModel> add_;
};

TEST_F(FencedExecutionTest, WithoutFencesRunsAtOnce) {
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  const FencedExecutionInfo info = finish(*launched);
  EXPECT_EQ(info.status, ErrorStatus::NONE);
  expectAddResult(r);
  EXPECT_EQ(info.timingLaunched, Timing{});
  EXPECT_EQ(info.timingFenced, Timing{});
}

TEST_F(FencedExecutionTest, WaitsForEveryFenceBeforeStarting) {
  SyncFence first = newFence();
  SyncFence second = newFence();
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {first, second}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  ASSERT_TRUE(launched->syncFence.valid());

  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
  EXPECT_EQ(r.at(0, 0), kUntouched);
  ASSERT_TRUE(first.signal());
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
  EXPECT_EQ(r.at(0, 0), kUntouched) << "ran before the second fence signalled";

  std::thread signaller([second] { ASSERT_TRUE(second.signal()); });
  const FencedExecutionInfo info = finish(*launched);
  signaller.join();
  EXPECT_EQ(info.status, ErrorStatus::NONE);
  expectAddResult(r);
}

TEST_F(FencedExecutionTest, SignalledAndEmptyFencesDoNotDelay) {
  SyncFence signalled = newFence();
  ASSERT_TRUE(signalled.signal());
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {signalled, SyncFence(), signalled}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  EXPECT_EQ(finish(*launched).status, ErrorStatus::NONE);
  expectAddResult(r);
}

TEST_F(FencedExecutionTest, PipeDescriptorFenceSignalsWithData) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  auto fence = SyncFence::fromFd(ends[0]);
  ::close(ends[0]);
  ASSERT_TRUE(fence) << fence.error().message;
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {*fence}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  std::this_thread::sleep_for(20ms);
  // Not run yet (its own fence is still active). The outputs are not read here: ordering
  // through a raw pipe write is invisible to ThreadSanitizer.
  EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
  const char byte = 1;
  ASSERT_EQ(::write(ends[1], &byte, 1), 1);
  EXPECT_EQ(finish(*launched).status, ErrorStatus::NONE);
  expectAddResult(r);
  ::close(ends[1]);
}

TEST_F(FencedExecutionTest, ChainsOnTheFenceOfAnotherExecution) {
  SyncFence gate = newFence();
  FloatRequest first = addRequest(1.0f);
  FloatRequest second = addRequest(2.0f);
  auto a = add_->executeFenced(first.request, {gate}, {});
  ASSERT_TRUE(a) << a.error().message;
  auto b = add_->executeFenced(second.request, {a->syncFence}, {});
  ASSERT_TRUE(b) << b.error().message;
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(first.at(0, 0), kUntouched);
  EXPECT_EQ(second.at(0, 0), kUntouched);
  ASSERT_TRUE(gate.signal());
  EXPECT_EQ(finish(*b).status, ErrorStatus::NONE);
  // b started only after a's fence, which a signals after writing its outputs.
  EXPECT_EQ(a->syncFence.state(), SyncFence::State::kSignaled);
  expectAddResult(first, 1.0f);
  expectAddResult(second, 2.0f);
}

TEST_F(FencedExecutionTest, WaitingOccupiesNoPoolThread) {
  // Far more pending fenced executions than runtime threads (2): an ordinary asynchronous
  // execution still runs.
  SyncFence gate = newFence();
  std::vector<FloatRequest> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(addRequest(static_cast<float>(i)));
  std::vector<FencedExecutionResult> pending;
  for (auto& r : requests) {
    auto launched = add_->executeFenced(r.request, {gate}, {});
    ASSERT_TRUE(launched) << launched.error().message;
    pending.push_back(*launched);
  }
  FloatRequest plain = addRequest(100.0f);
  std::promise<Result<ExecutionResult>> done;
  auto future = done.get_future();
  ASSERT_EQ(
      add_->execute(plain.request, {},
                    [&done](Result<ExecutionResult> result) { done.set_value(std::move(result)); }),
      ErrorStatus::NONE);
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready);
  EXPECT_TRUE(future.get());
  expectAddResult(plain, 100.0f);
  for (auto& r : requests) EXPECT_EQ(r.at(0, 0), kUntouched);

  ASSERT_TRUE(gate.signal());
  for (size_t i = 0; i < pending.size(); ++i) {
    EXPECT_EQ(finish(pending[i]).status, ErrorStatus::NONE);
    expectAddResult(requests[i], static_cast<float>(i));
  }
}

TEST_F(FencedExecutionTest, FenceInErrorStateIsInvalidArgument) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  auto orphan = SyncFence::fromFd(ends[0]);  // the writer leaves: it can never signal
  ::close(ends[0]);
  ::close(ends[1]);
  ASSERT_TRUE(orphan);
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {newFence(), *orphan}, {});
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(launched.error().message.find("waitFor[1]"), std::string::npos)
      << launched.error().message;

  // A descriptor that is no fence at all never gets that far.
  auto bad = SyncFence::fromFd(-1);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST_F(FencedExecutionTest, FenceFallingIntoErrorFailsTheExecution) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  auto fence = SyncFence::fromFd(ends[0]);
  ::close(ends[0]);
  ASSERT_TRUE(fence);
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {*fence}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  ::close(ends[1]);  // hang-up without data: the fence can never signal now
  EXPECT_EQ(finish(*launched).status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_EQ(r.at(0, 0), kUntouched);
}

TEST_F(FencedExecutionTest, OutputsOfUnspecifiedDimensionsAreInvalidArgument) {
  auto dynamic = prepare(addModel({0}));
  ASSERT_NE(dynamic, nullptr);
  FloatRequest r = addRequest();
  auto launched = dynamic->executeFenced(r.request, {}, {});
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(launched.error().message.find("outputs[0]"), std::string::npos)
      << launched.error().message;

  auto unknownRank = prepare(addModel({}));
  ASSERT_NE(unknownRank, nullptr);
  launched = unknownRank->executeFenced(r.request, {}, {});
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().status, ErrorStatus::INVALID_ARGUMENT);

  // The request may complete the dimensions.
  r.request.outputs[0].dimensions = {4};
  launched = dynamic->executeFenced(r.request, {}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  EXPECT_EQ(finish(*launched).status, ErrorStatus::NONE);
  expectAddResult(r);
}

TEST_F(FencedExecutionTest, BadRequestAndOptionsAreInvalidArgument) {
  SyncFence fence = newFence();
  FloatRequest r = addRequest();
  Request missingInput = r.request;
  missingInput.inputs.pop_back();
  auto launched = add_->executeFenced(missingInput, {fence}, {});
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().status, ErrorStatus::INVALID_ARGUMENT);

  Request outsidePool = r.request;
  outsidePool.inputs[0].location.offset = 1 << 20;
  launched = add_->executeFenced(outsidePool, {fence}, {});
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().status, ErrorStatus::INVALID_ARGUMENT);

  ExecuteOptions badMeasure;
  badMeasure.measure = static_cast<MeasureTiming>(7);
  launched = add_->executeFenced(r.request, {fence}, badMeasure);
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().status, ErrorStatus::INVALID_ARGUMENT);

  launched = add_->executeFenced(r.request, {fence}, {}, -1ms);
  ASSERT_FALSE(launched);
  EXPECT_EQ(launched.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(launched.error().message.find("timeoutAfterFence"), std::string::npos);
  EXPECT_EQ(r.at(0, 0), kUntouched);
}

TEST_F(FencedExecutionTest, TimeoutAfterFenceStopsARunawayLoop) {
  auto loop = prepare(whileModel());
  ASSERT_NE(loop, nullptr);
  // Sanity: a short loop completes.
  FloatRequest shortLoop({{0}, {5}}, {1});
  auto launched = loop->executeFenced(shortLoop.request, {}, {}, 10s);
  ASSERT_TRUE(launched) << launched.error().message;
  ASSERT_EQ(finish(*launched).status, ErrorStatus::NONE);
  EXPECT_EQ(shortLoop.at(0, 0), 5.0f);

  // 1e30 is never reached (i stops growing at 2^24); only the timeout ends it. The timeout
  // counts from the fence: the 150 ms before the signal do not use it up.
  FloatRequest runaway({{0}, {1e30f}}, {1});
  ExecuteOptions options;
  options.loopTimeout = 10s;
  SyncFence fence = newFence();
  launched = loop->executeFenced(runaway.request, {fence}, options, 100ms);
  ASSERT_TRUE(launched) << launched.error().message;
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(launched->syncFence.state(), SyncFence::State::kActive);
  const auto signalled = Clock::now();
  ASSERT_TRUE(fence.signal());
  const FencedExecutionInfo info = finish(*launched);
  const auto elapsed = Clock::now() - signalled;
  EXPECT_EQ(info.status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_GE(elapsed, 90ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_EQ(info.timingLaunched, Timing{});
}

TEST_F(FencedExecutionTest, PassedDeadlineIsMissedDeadline) {
  FloatRequest r = addRequest();
  ExecuteOptions options;
  options.deadline = Clock::now() - 1ms;
  options.measure = MeasureTiming::YES;
  auto launched = add_->executeFenced(r.request, {}, options);
  ASSERT_TRUE(launched) << launched.error().message;
  const FencedExecutionInfo info = finish(*launched);
  EXPECT_EQ(info.status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_EQ(info.timingLaunched, Timing{});
  EXPECT_EQ(info.timingFenced, Timing{});
  EXPECT_EQ(r.at(0, 0), kUntouched);
}

TEST_F(FencedExecutionTest, DeadlinePassingWhileWaitingEndsTheWait) {
  SyncFence never = newFence();
  FloatRequest r = addRequest();
  ExecuteOptions options;
  options.deadline = Clock::now() + 50ms;
  const auto start = Clock::now();
  auto launched = add_->executeFenced(r.request, {never}, options);
  ASSERT_TRUE(launched) << launched.error().message;
  const FencedExecutionInfo info = finish(*launched);
  const auto elapsed = Clock::now() - start;
  EXPECT_EQ(info.status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_GE(elapsed, 45ms);
  EXPECT_LT(elapsed, 5s);
  EXPECT_EQ(r.at(0, 0), kUntouched);
}

TEST_F(FencedExecutionTest, TimingIsMeasuredOnlyWhenAsked) {
  SyncFence fence = newFence();
  FloatRequest r = addRequest();
  ExecuteOptions options;
  options.measure = MeasureTiming::YES;
  auto launched = add_->executeFenced(r.request, {fence}, options);
  ASSERT_TRUE(launched) << launched.error().message;
  std::this_thread::sleep_for(30ms);
  ASSERT_TRUE(fence.signal());
  const FencedExecutionInfo info = finish(*launched);
  ASSERT_EQ(info.status, ErrorStatus::NONE);
  expectAddResult(r);
  for (const Timing& t : {info.timingLaunched, info.timingFenced}) {
    ASSERT_NE(t.timeOnDevice, kNoTiming);
    ASSERT_NE(t.timeInDriver, kNoTiming);
    EXPECT_LE(t.timeOnDevice, t.timeInDriver);
  }
  // Launched covers the wait for the fence; fenced does not.
  EXPECT_GE(info.timingLaunched.timeInDriver, 25'000u);
  EXPECT_LE(info.timingFenced.timeInDriver, info.timingLaunched.timeInDriver);
  EXPECT_LT(info.timingFenced.timeInDriver, 25'000u);

  FloatRequest unmeasured = addRequest();
  launched = add_->executeFenced(unmeasured.request, {}, {});
  ASSERT_TRUE(launched);
  const FencedExecutionInfo plain = finish(*launched);
  EXPECT_EQ(plain.status, ErrorStatus::NONE);
  EXPECT_EQ(plain.timingLaunched, Timing{});
  EXPECT_EQ(plain.timingFenced, Timing{});
}

TEST_F(FencedExecutionTest, FiftyConcurrentFencedExecutions) {
  constexpr int kCount = 50;
  std::vector<FloatRequest> requests;
  std::vector<SyncFence> fences;
  for (int i = 0; i < kCount; ++i) {
    requests.push_back(addRequest(static_cast<float>(i)));
    fences.push_back(newFence());
  }
  std::vector<FencedExecutionResult> launched(kCount);
  std::vector<std::thread> launchers;
  for (int t = 0; t < 5; ++t) {
    launchers.emplace_back([&, t] {
      for (int i = t; i < kCount; i += 5) {
        // Each waits for its own fence and the next one's.
        auto result =
            add_->executeFenced(requests[i].request, {fences[i], fences[(i + 1) % kCount]}, {});
        ASSERT_TRUE(result) << result.error().message;
        launched[i] = *result;
      }
    });
  }
  for (auto& t : launchers) t.join();
  std::vector<int> order(kCount);
  for (int i = 0; i < kCount; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  std::thread signaller([&] {
    for (int i : order) ASSERT_TRUE(fences[i].signal());
  });
  signaller.join();
  for (int i = 0; i < kCount; ++i) {
    ASSERT_NE(launched[i].callback, nullptr);
    EXPECT_EQ(finish(launched[i]).status, ErrorStatus::NONE) << "execution " << i;
    expectAddResult(requests[i], static_cast<float>(i));
  }
}

TEST_F(FencedExecutionTest, ReleasingTheDeviceEndsWaitsThatNeverSignal) {
  SyncFence never = newFence();
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {never}, {});
  ASSERT_TRUE(launched) << launched.error().message;

  auto released = std::async(std::launch::async, [this] { device_.reset(); });
  ASSERT_EQ(released.wait_for(10s), std::future_status::ready) << "the device stop hung";
  const FencedExecutionInfo info = finish(*launched);
  EXPECT_EQ(info.status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_EQ(r.at(0, 0), kUntouched);

  // The prepared model still runs ordinary executions, but takes no fenced ones.
  auto again = add_->executeFenced(r.request, {}, {});
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  auto sync = add_->executeSynchronously(r.request);
  ASSERT_TRUE(sync) << sync.error().message;
  expectAddResult(r);
}

TEST_F(FencedExecutionTest, ReleasingThePreparedModelEndsWaitsThatNeverSignal) {
  SyncFence never = newFence();
  FloatRequest r = addRequest();
  auto launched = add_->executeFenced(r.request, {never}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  auto released = std::async(std::launch::async, [this] { add_.reset(); });
  ASSERT_EQ(released.wait_for(10s), std::future_status::ready) << "the model release hung";
  // The callback outlives the prepared model.
  EXPECT_EQ(finish(*launched).status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_EQ(r.at(0, 0), kUntouched);
  // The device is unaffected.
  auto other = prepare(addModel());
  ASSERT_NE(other, nullptr);
  launched = other->executeFenced(r.request, {}, {});
  ASSERT_TRUE(launched) << launched.error().message;
  EXPECT_EQ(finish(*launched).status, ErrorStatus::NONE);
}

TEST(FencedExecutionStop, ReleasingOnTheOnlyPoolThreadDoesNotHang) {
  // One runtime thread, and the last reference to the model dropped inside a callback on
  // it: cancelling the pending fenced execution must not need another pool thread.
  DeviceOptions options;
  options.runtimeThreads = 1;
  auto device = createDevice(options);
  ASSERT_TRUE(device) << device.error().message;
  auto prepared = (*device)->prepareModel(addModel());
  ASSERT_TRUE(prepared) << prepared.error().message;
  auto model = std::make_shared<std::shared_ptr<PreparedModel>>(*prepared);
  prepared->reset();

  SyncFence never = newFence();
  FloatRequest fenced = addRequest();
  auto launched = (*model)->executeFenced(fenced.request, {never}, {});
  ASSERT_TRUE(launched) << launched.error().message;

  FloatRequest plain = addRequest();
  std::promise<void> released;
  auto done = released.get_future();
  ASSERT_EQ((*model)->execute(plain.request, {},
                              [model, &released](Result<ExecutionResult>) mutable {
                                model->reset();  // the last reference, on the pool thread
                                model.reset();
                                released.set_value();
                              }),
            ErrorStatus::NONE);
  model.reset();
  ASSERT_EQ(done.wait_for(10s), std::future_status::ready) << "the release hung";
  ASSERT_TRUE(launched->syncFence.wait(10s));
  auto info = launched->callback->getExecutionInfo();
  ASSERT_TRUE(info);
  EXPECT_EQ(info->status, ErrorStatus::DEVICE_UNAVAILABLE);
}

}  // namespace
}  // namespace nnhal
