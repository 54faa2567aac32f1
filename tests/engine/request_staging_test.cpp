// engine/request_staging.h: shared request memory is read once into driver memory and
// written back only on commit; process-local pools, and plain-value arguments in pools this
// process made, are used in place; staging buffers are reused and bounded.
#include "engine/request_staging.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "hal/pool_io.h"
#include "hal/process_memory.h"

namespace nnhal::engine {
namespace {

Request oneInOneOut(const Memory& pool) {
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 16}, {}}};
  request.outputs = {{false, {0, 16, 16}, {}}};
  return request;
}

TEST(RequestStaging, SharedInputsAreCopiedOnceAndOutputsWrittenOnCommit) {
  Memory shared = *Memory::create(64);
  for (int i = 0; i < 16; ++i) shared.data()[i] = static_cast<uint8_t>(i + 1);
  const Request request = oneInOneOut(shared);
  auto staged = StagedRequest::stage(request);
  ASSERT_TRUE(staged) << staged.error().message;
  EXPECT_NE(staged->inputs()[0], shared.data());
  EXPECT_EQ(staged->stagedBytes(), 128u);  // two arguments, each 64-byte aligned
  shared.data()[3] = 99;                   // the client rewrites its input after staging
  EXPECT_EQ(staged->inputs()[0][3], 4);
  std::memset(staged->outputs()[0], 7, 16);
  EXPECT_EQ(shared.data()[16], 0);  // nothing written before the commit
  ASSERT_TRUE(staged->commitOutput(0, 10));
  EXPECT_EQ(shared.data()[16], 7);
  EXPECT_EQ(shared.data()[25], 7);
  EXPECT_EQ(shared.data()[26], 0);  // only the bytes committed
}

TEST(RequestStaging, ProcessLocalPoolsAreUsedInPlace) {
  Memory local = *hal::lazyZeroPool(64);
  const Request request = oneInOneOut(local);
  auto staged = StagedRequest::stage(request);
  ASSERT_TRUE(staged);
  EXPECT_EQ(staged->inputs()[0], local.data());
  EXPECT_EQ(staged->outputs()[0], local.data() + 16);
  EXPECT_EQ(staged->stagedBytes(), 0u);
}

// The embedded driver's own pools (Memory::create: a memfd sealed against shrinking) hold
// arguments the kernels use as plain values where they lie; the rest is staged as before.
TEST(RequestStaging, PlainArgumentsInPoolsThisProcessMadeAreUsedInPlace) {
  Memory pool = *Memory::create(128);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 16}, {}}};
  request.outputs = {{false, {0, 64, 16}, {}}};
  const InPlaceArguments both{{true}, {true}};
  auto staged = StagedRequest::stage(request, 0, nullptr, &both);
  ASSERT_TRUE(staged) << staged.error().message;
  EXPECT_EQ(staged->inputs()[0], pool.data());
  EXPECT_EQ(staged->outputs()[0], pool.data() + 64);
  EXPECT_EQ(staged->stagedBytes(), 0u);
  std::memset(staged->outputs()[0], 5, 16);
  EXPECT_EQ(pool.data()[64], 5);  // written where it lies
  ASSERT_TRUE(staged->commitOutput(0, 16));

  const InPlaceArguments outputOnly{{false}, {true}};
  staged = StagedRequest::stage(request, 0, nullptr, &outputOnly);
  ASSERT_TRUE(staged);
  EXPECT_NE(staged->inputs()[0], pool.data());  // e.g. indices: read once, into driver memory
  EXPECT_EQ(staged->outputs()[0], pool.data() + 64);
  EXPECT_EQ(staged->stagedBytes(), 64u);
  EXPECT_TRUE(hal::usableInPlace(pool));
}

// An argument off the 64-byte alignment staged arguments have is staged, plain or not.
TEST(RequestStaging, MisalignedPlainArgumentsAreStaged) {
  Memory pool = *Memory::create(128);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 4, 16}, {}}};
  request.outputs = {{false, {0, 64, 16}, {}}};
  const InPlaceArguments both{{true}, {true}};
  auto staged = StagedRequest::stage(request, 0, nullptr, &both);
  ASSERT_TRUE(staged);
  EXPECT_NE(staged->inputs()[0], pool.data() + 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(staged->inputs()[0]) % 64, 0u);
  EXPECT_EQ(staged->outputs()[0], pool.data() + 64);
  EXPECT_EQ(staged->stagedBytes(), 64u);
}

// Through nnhald every client pool is staged, plain values or not: the rules for untrusted
// memory do not change.
TEST(RequestStaging, ClientPoolsAreStagedEvenForPlainArguments) {
  Memory clientSide = *Memory::create(64);
  auto adopted = hal::adoptClientPool(clientSide.fd(), MemoryKind::ASHMEM, 64, 0, true, "pools[0]");
  ASSERT_TRUE(adopted) << adopted.error().message;
  EXPECT_FALSE(hal::usableInPlace(*adopted));
  const Request request = oneInOneOut(*adopted);
  const InPlaceArguments both{{true}, {true}};
  auto staged = StagedRequest::stage(request, 0, nullptr, &both);
  ASSERT_TRUE(staged);
  EXPECT_NE(staged->inputs()[0], adopted->data());
  EXPECT_EQ(staged->stagedBytes(), 128u);
}

// A file another process may truncate is never used in place (a read past its new end would
// fault), even when the application mapped it itself.
TEST(RequestStaging, PoolsThatCanShrinkAreStaged) {
  char path[] = "/tmp/nnhal-staging-XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  ASSERT_EQ(ftruncate(fd, 64), 0);
  auto file = Memory::fromFd(fd, 64);
  close(fd);
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_FALSE(hal::usableInPlace(*file));
  const Request request = oneInOneOut(*file);
  const InPlaceArguments both{{true}, {true}};
  auto staged = StagedRequest::stage(request, 0, nullptr, &both);
  ASSERT_TRUE(staged);
  EXPECT_NE(staged->inputs()[0], file->data());
  EXPECT_EQ(staged->stagedBytes(), 128u);
}

TEST(RequestStaging, StagingBeyondTheLimitIsRefused) {
  Memory shared = *Memory::create(64);
  const Request request = oneInOneOut(shared);
  auto staged = StagedRequest::stage(request, 100);
  ASSERT_FALSE(staged);
  EXPECT_EQ(staged.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_TRUE(StagedRequest::stage(request, 128));
}

TEST(RequestStaging, BuffersAreReusedAndBounded) {
  StagingPool pool;
  size_t capacity = 0;
  uint8_t* first = pool.acquire(1000, capacity);
  ASSERT_NE(first, nullptr);
  EXPECT_GE(capacity, 1000u);
  pool.release(first, capacity);
  size_t again = 0;
  EXPECT_EQ(pool.acquire(900, again), first);  // large enough: reused
  EXPECT_EQ(again, capacity);
  pool.release(first, again);
  // Requests through the pool reuse its buffer too.
  Memory shared = *Memory::create(64);
  const Request request = oneInOneOut(shared);
  for (int i = 0; i < 3; ++i) {
    auto staged = StagedRequest::stage(request, 0, &pool);
    ASSERT_TRUE(staged);
    EXPECT_EQ(staged->outputs()[0] - 64, first);
  }
  // More buffers released than it keeps: the pool frees the rest.
  std::vector<std::pair<uint8_t*, size_t>> many;
  for (size_t i = 0; i < StagingPool::kKept + 3; ++i) {
    size_t c = 0;
    many.emplace_back(pool.acquire(64 * (i + 1), c), c);
  }
  for (auto& [buffer, c] : many) pool.release(buffer, c);
  size_t largest = 0;
  uint8_t* kept = pool.acquire(64 * (StagingPool::kKept + 3), largest);
  EXPECT_EQ(kept, many.back().first);  // the largest ones were kept
  pool.release(kept, largest);
}

}  // namespace
}  // namespace nnhal::engine
