// The embedded driver given what a hostile client sends: control flow nested past the
// limit, shapes whose size overflows 32 bits, outputs in read-only pools, and index
// tensors rewritten in shared memory while an execution runs.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <thread>

#include "common/hostile_models.h"
#include "hal/process_memory.h"
#include "nnhal/device.h"

namespace nnhal {
namespace {

using namespace nnhal::testing;

std::shared_ptr<Device> device(uint64_t maxExecutionBytes = 0) {
  DeviceOptions options;
  options.maxExecutionBytes = maxExecutionBytes;
  options.runtimeThreads = 2;
  options.kernelThreads = 1;
  auto created = createDevice(options);
  EXPECT_TRUE(created);
  return *created;
}

void expectInvalidEverywhere(Device& dev, const Model& model, const std::string& words) {
  auto supported = dev.getSupportedOperations(model);
  ASSERT_FALSE(supported);
  EXPECT_EQ(supported.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(supported.error().message.find(words), std::string::npos) << supported.error().message;
  ErrorStatus delivered = ErrorStatus::NONE;
  EXPECT_EQ(dev.prepareModel(model, {},
                             [&](Result<std::shared_ptr<PreparedModel>> result) {
                               delivered = result ? ErrorStatus::NONE : result.error().status;
                             }),
            ErrorStatus::INVALID_ARGUMENT);
  EXPECT_EQ(delivered, ErrorStatus::INVALID_ARGUMENT);
}

TEST(HostileModel, ControlFlowNestedAtTheLimitRuns) {
  auto dev = device();
  auto prepared = dev->prepareModel(nestedIfModel(kMaxSubgraphNesting));
  ASSERT_TRUE(prepared) << prepared.error().message;
  Memory pool = *Memory::create(64);
  pool.data()[0] = 1;  // condition true
  float x[2] = {-2.0f, 3.0f};
  std::memcpy(pool.data() + 16, x, sizeof(x));
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 1}, {}}, {false, {0, 16, 8}, {}}};
  request.outputs = {{false, {0, 32, 8}, {}}};
  auto result = (*prepared)->executeSynchronously(request);
  ASSERT_TRUE(result) << result.error().message;
  float y[2];
  std::memcpy(y, pool.data() + 32, sizeof(y));
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_EQ(y[1], 3.0f);
}

TEST(HostileModel, ControlFlowNestedDeeperIsInvalid) {
  auto dev = device();
  expectInvalidEverywhere(*dev, nestedIfModel(kMaxSubgraphNesting + 1), "nested");
  // Tens of thousands of levels: rejected without recursion.
  expectInvalidEverywhere(*dev, nestedIfModel(50000), "nested");
}

TEST(HostileModel, ShapesWhoseSizeOverflows32BitsAreInvalid) {
  auto dev = device();
  // Declared: 65536 x 65536 floats.
  expectInvalidEverywhere(*dev, broadcastAddModel(65536, 65536, {65536, 65536}), "32 bits");
  // Inferred by broadcasting [65536, 1] and [1, 65536].
  auto inferred = dev->prepareModel(broadcastAddModel());
  ASSERT_FALSE(inferred);
  EXPECT_EQ(inferred.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(inferred.error().message.find("2^32"), std::string::npos) << inferred.error().message;
  // The same broadcast with small sizes works.
  EXPECT_TRUE(dev->prepareModel(broadcastAddModel(4, 3)));
}

TEST(HostileModel, OutputsInReadOnlyPoolsAreInvalid) {
  auto dev = device();
  auto prepared = dev->prepareModel(gatherModel());
  ASSERT_TRUE(prepared);
  Memory writable = *Memory::create(64);
  auto readOnly = Memory::fromFd(writable.fd(), 64, 0, MemoryKind::MMAP_FD, false);
  ASSERT_TRUE(readOnly);
  Request request;
  request.pools = {writable, *readOnly};
  request.inputs = {{false, {0, 0, 16}, {}}};
  request.outputs = {{false, {1, 16, 16}, {}}};
  auto result = (*prepared)->executeSynchronously(request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(result.error().message.find("read-only"), std::string::npos);
  // An input may be in a read-only pool.
  request.inputs = {{false, {1, 0, 16}, {}}};
  request.outputs = {{false, {0, 16, 16}, {}}};
  EXPECT_TRUE((*prepared)->executeSynchronously(request));
}

TEST(HostileModel, IndicesRewrittenDuringExecutionNeverReadOtherMemory) {
  auto dev = device();
  auto prepared = dev->prepareModel(gatherModel(256));
  ASSERT_TRUE(prepared);
  Memory pool = *Memory::create(2048);
  auto* indices = reinterpret_cast<int32_t*>(pool.data());
  for (int i = 0; i < 256; ++i) indices[i] = i % 16;
  const Request request = gatherRequest(pool);
  std::optional<IndexFlipper> flipper(std::in_place, pool);
  int succeeded = 0, rejected = 0;
  for (int run = 0; run < 2000; ++run) {
    auto result = (*prepared)->executeSynchronously(request);
    if (!result) {
      ASSERT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE) << result.error().message;
      ++rejected;
      continue;
    }
    ++succeeded;
    const auto* out = reinterpret_cast<const float*>(pool.data() + 1024);
    for (int i = 0; i < 256; ++i) {
      ASSERT_GE(out[i], 100.0f);
      ASSERT_LE(out[i], 115.0f);
    }
  }
  flipper.reset();
  EXPECT_EQ(succeeded + rejected, 2000);
}

// The embedded driver reads an ADD's operands where they lie (engine/request_staging.h): a
// thread of the application that rewrites them mid-execution changes the results, and
// nothing else. (Under ThreadSanitizer this race is the test's own doing: skipped there.)
TEST(HostileModel, PlainInputsRewrittenDuringExecutionOnlyChangeTheResults) {
#if defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "the writer races with the kernels on purpose";
#endif
  auto dev = device();
  auto prepared = dev->prepareModel(broadcastAddModel(64, 64, {64, 64}));
  ASSERT_TRUE(prepared) << prepared.error().message;
  Memory pool = *Memory::create(2 * 64 * 4 + 64 * 64 * 4);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 256}, {}}, {false, {0, 256, 256}, {}}};
  request.outputs = {{false, {0, 512, 64 * 64 * 4}, {}}};
  // Every input 1.0 or 2.0 at any moment, so every sum lies in [2, 4].
  auto* inputs = reinterpret_cast<float*>(pool.data());
  for (int i = 0; i < 128; ++i) inputs[i] = 1.0f;
  struct Writer {
    explicit Writer(uint32_t* words)
        : thread([this, words] {
            for (uint32_t round = 0; !stop.load(std::memory_order_relaxed); ++round) {
              const float value = round % 2 == 0 ? 2.0f : 1.0f;
              uint32_t bits;
              std::memcpy(&bits, &value, sizeof bits);
              for (int i = 0; i < 128; ++i) {
                std::atomic_ref<uint32_t>(words[i]).store(bits, std::memory_order_relaxed);
              }
            }
          }) {}
    ~Writer() {
      stop = true;
      thread.join();
    }
    std::atomic<bool> stop{false};
    std::thread thread;
  } writer(reinterpret_cast<uint32_t*>(pool.data()));
  for (int run = 0; run < 500; ++run) {
    auto result = (*prepared)->executeSynchronously(request);
    ASSERT_TRUE(result) << result.error().message;
    const auto* out = reinterpret_cast<const float*>(pool.data() + 512);
    for (int i = 0; i < 64 * 64; ++i) {
      ASSERT_GE(out[i], 2.0f) << i;
      ASSERT_LE(out[i], 4.0f) << i;
    }
  }
}

TEST(HostileModel, ExecutionsStayWithinTheirMemoryLimit) {
  constexpr uint64_t kLimit = 1 << 20;
  auto dev = device(kLimit);
  // A static temporary of 4 MiB: the preparation is refused.
  auto tooBig = dev->prepareModel(bigTemporaryModel(1024, 1024));
  ASSERT_FALSE(tooBig);
  EXPECT_EQ(tooBig.error().status, ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT);
  EXPECT_NE(tooBig.error().message.find("temporaries"), std::string::npos);
  // The same with sizes known only at execution: small requests run, a large one fails.
  auto dynamic = dev->prepareModel(bigTemporaryModel(0, 0, false));
  ASSERT_TRUE(dynamic) << dynamic.error().message;
  auto run = [&](uint32_t rows, uint32_t cols, bool shared) {
    const uint32_t bytes = rows * cols * 4;
    Memory pool = shared ? *Memory::create(3 * bytes) : Memory();
    std::vector<uint8_t> local;
    if (!shared) {
      // A process-local pool is not staged: only the temporary counts.
      auto lazy = hal::lazyZeroPool(3 * bytes);
      pool = *lazy;
    }
    Request request;
    request.pools = {pool};
    request.inputs = {{false, {0, 0, bytes}, {rows, cols}},
                      {false, {0, bytes, bytes}, {rows, cols}}};
    request.outputs = {{false, {0, 2 * bytes, bytes}, {rows, cols}}};
    return (*dynamic)->executeSynchronously(request);
  };
  EXPECT_TRUE(run(64, 64, true));
  auto large = run(1024, 512, false);  // a 2 MiB temporary
  ASSERT_FALSE(large);
  EXPECT_EQ(large.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  auto staged = run(512, 512, true);  // 3 MiB of shared request memory to stage
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  // Without a limit, the same executions run.
  auto unlimited = device();
  auto prepared = unlimited->prepareModel(bigTemporaryModel(1024, 1024));
  EXPECT_TRUE(prepared);
}

}  // namespace
}  // namespace nnhal
