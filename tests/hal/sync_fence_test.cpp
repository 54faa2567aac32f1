// SyncFence: eventfd fences, client descriptors, states, waits, sharing across copies,
// duplicates and processes.
#include "nnhal/sync_fence.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

namespace nnhal {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

bool isOpen(int fd) { return ::fcntl(fd, F_GETFD) != -1; }

TEST(SyncFence, CreatedFenceIsActiveUntilSignalled) {
  auto fence = SyncFence::create();
  ASSERT_TRUE(fence) << fence.error().message;
  EXPECT_TRUE(fence->valid());
  ASSERT_GE(fence->fd(), 0);
  EXPECT_NE(::fcntl(fence->fd(), F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_EQ(fence->state(), SyncFence::State::kActive);
  ASSERT_TRUE(fence->signal());
  EXPECT_EQ(fence->state(), SyncFence::State::kSignaled);
  // Idempotent, and it stays signalled (nobody consumes the counter).
  ASSERT_TRUE(fence->signal());
  EXPECT_EQ(fence->state(), SyncFence::State::kSignaled);
  EXPECT_TRUE(fence->wait(0ns));
  EXPECT_TRUE(fence->wait());
}

TEST(SyncFence, EmptyFenceIsAlreadySignalled) {
  const SyncFence empty;
  EXPECT_FALSE(empty.valid());
  EXPECT_EQ(empty.fd(), -1);
  EXPECT_EQ(empty.state(), SyncFence::State::kSignaled);
  EXPECT_TRUE(empty.wait(0ns));
  EXPECT_TRUE(empty.signal());
}

TEST(SyncFence, WaitTimesOutWithMissedDeadline) {
  auto fence = SyncFence::create();
  ASSERT_TRUE(fence);
  const auto start = Clock::now();
  auto waited = fence->wait(30ms);
  ASSERT_FALSE(waited);
  EXPECT_EQ(waited.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_GE(Clock::now() - start, 30ms);
  auto immediate = fence->wait(0ns);
  ASSERT_FALSE(immediate);
  EXPECT_EQ(immediate.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
}

TEST(SyncFence, WaitReturnsWhenAnotherThreadSignals) {
  auto fence = SyncFence::create();
  ASSERT_TRUE(fence);
  const auto start = Clock::now();
  std::thread signaller([copy = *fence] {
    std::this_thread::sleep_for(40ms);
    ASSERT_TRUE(copy.signal());
  });
  auto waited = fence->wait(10s);
  const auto elapsed = Clock::now() - start;
  signaller.join();
  ASSERT_TRUE(waited) << waited.error().message;
  EXPECT_GE(elapsed, 35ms);
  EXPECT_LT(elapsed, 5s);
}

TEST(SyncFence, CopiesShareOneDescriptorClosedWithTheLast) {
  int fd = -1;
  {
    auto fence = SyncFence::create();
    ASSERT_TRUE(fence);
    fd = fence->fd();
    SyncFence copy = *fence;
    EXPECT_EQ(copy.fd(), fd);
    fence = SyncFence::create();  // drops the first reference
    ASSERT_TRUE(fence);
    EXPECT_TRUE(isOpen(fd));
    ASSERT_TRUE(copy.signal());
    SyncFence moved = std::move(copy);
    EXPECT_EQ(moved.fd(), fd);
    EXPECT_EQ(moved.state(), SyncFence::State::kSignaled);
  }
  EXPECT_FALSE(isOpen(fd));
}

TEST(SyncFence, FromFdDuplicatesAndSharesTheSignal) {
  auto fence = SyncFence::create();
  ASSERT_TRUE(fence);
  auto dup = SyncFence::fromFd(fence->fd());
  ASSERT_TRUE(dup) << dup.error().message;
  EXPECT_NE(dup->fd(), fence->fd());
  EXPECT_NE(::fcntl(dup->fd(), F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_EQ(dup->state(), SyncFence::State::kActive);
  // Signalling through the duplicate signals the original too.
  ASSERT_TRUE(dup->signal());
  EXPECT_EQ(fence->state(), SyncFence::State::kSignaled);
  // The caller's descriptor stays the caller's.
  const int original = fence->fd();
  dup = SyncFence();
  EXPECT_TRUE(isOpen(original));
}

TEST(SyncFence, FromFdRejectsBadDescriptors) {
  auto negative = SyncFence::fromFd(-1);
  ASSERT_FALSE(negative);
  EXPECT_EQ(negative.error().status, ErrorStatus::INVALID_ARGUMENT);

  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  ::close(ends[0]);
  ::close(ends[1]);
  auto closed = SyncFence::fromFd(ends[0]);
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error().status, ErrorStatus::INVALID_ARGUMENT);

  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  auto regular = SyncFence::fromFd(::fileno(file));
  std::fclose(file);
  ASSERT_FALSE(regular);
  EXPECT_EQ(regular.error().status, ErrorStatus::INVALID_ARGUMENT);

  const int dir = ::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir, 0);
  auto directory = SyncFence::fromFd(dir);
  ::close(dir);
  ASSERT_FALSE(directory);
  EXPECT_EQ(directory.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST(SyncFence, PipeReadEndIsAFenceSignalledByData) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  auto fence = SyncFence::fromFd(ends[0]);
  ::close(ends[0]);
  ASSERT_TRUE(fence) << fence.error().message;
  EXPECT_EQ(fence->state(), SyncFence::State::kActive);
  // Not an eventfd: it cannot be signalled from this side.
  auto signalled = fence->signal();
  ASSERT_FALSE(signalled);
  EXPECT_EQ(signalled.error().status, ErrorStatus::GENERAL_FAILURE);
  const char byte = 1;
  ASSERT_EQ(::write(ends[1], &byte, 1), 1);
  EXPECT_EQ(fence->state(), SyncFence::State::kSignaled);
  ::close(ends[1]);
}

TEST(SyncFence, FencesThatCanNeverSignalAreInError) {
  // A pipe whose writer left without writing: hang-up, never readable.
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  auto orphan = SyncFence::fromFd(ends[0]);
  ::close(ends[0]);
  ::close(ends[1]);
  ASSERT_TRUE(orphan);
  EXPECT_EQ(orphan->state(), SyncFence::State::kError);
  auto waited = orphan->wait(1s);
  ASSERT_FALSE(waited);
  EXPECT_EQ(waited.error().status, ErrorStatus::GENERAL_FAILURE);

  // A pipe's write end whose reader left: POLLERR.
  ASSERT_EQ(::pipe(ends), 0);
  auto broken = SyncFence::fromFd(ends[1]);
  ::close(ends[0]);
  ::close(ends[1]);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->state(), SyncFence::State::kError);
}

TEST(SyncFence, SignalCrossesFork) {
  auto fence = SyncFence::create();
  ASSERT_TRUE(fence);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child shares the eventfd (inherited descriptor): its signal reaches the parent.
    ::usleep(20'000);
    ::_exit(fence->signal() ? 0 : 1);
  }
  auto waited = fence->wait(10s);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  ASSERT_TRUE(waited) << waited.error().message;
  EXPECT_EQ(fence->state(), SyncFence::State::kSignaled);
}

}  // namespace
}  // namespace nnhal
