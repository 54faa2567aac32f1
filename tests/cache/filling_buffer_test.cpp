// FillingBuffer (a buffer consumed while it is filled) and fillFromFile: waiters see only
// published bytes, a failed fill wakes every waiter with its reason, and a file that is
// shorter or longer than measured fails the fill. Run under ASan+UBSan in CI.
#include "cache/filling_buffer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "cache_test_util.h"

namespace nnhal::cache {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<FillingBuffer> makeBuffer(size_t size) {
  auto buffer = FillingBuffer::allocate(size);
  EXPECT_TRUE(buffer) << buffer.error().message;
  return *buffer;
}

TEST(FillingBufferTest, PublishedBytesAreAvailableAndLaterOnesWait) {
  auto buffer = makeBuffer(100);
  EXPECT_TRUE(buffer->waitFor(0));
  buffer->publish(40);
  EXPECT_TRUE(buffer->waitFor(40));
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    EXPECT_TRUE(buffer->waitFor(41));
    returned = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(returned.load()) << "waitFor(41) returned before byte 40 was published";
  buffer->publish(30);  // smaller than before: ignored
  buffer->publish(41);
  waiter.join();
  EXPECT_TRUE(returned.load());
}

TEST(FillingBufferTest, FinishReleasesEveryWaiterAndEndsAreClamped) {
  auto buffer = makeBuffer(64);
  std::vector<std::thread> waiters;
  std::atomic<int> done{0};
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&] {
      EXPECT_TRUE(buffer->waitDone());
      EXPECT_TRUE(buffer->waitFor(1000));  // past the end: means "all of it"
      ++done;
    });
  }
  std::this_thread::sleep_for(10ms);
  buffer->finish();
  for (auto& w : waiters) w.join();
  EXPECT_EQ(done.load(), 4);
}

TEST(FillingBufferTest, FailureWakesWaitersWithTheReasonButKeepsPublishedBytes) {
  auto buffer = makeBuffer(100);
  buffer->publish(10);
  std::thread waiter([&] {
    auto ready = buffer->waitFor(50);
    ASSERT_FALSE(ready);
    EXPECT_EQ(ready.error().status, ErrorStatus::GENERAL_FAILURE);
    EXPECT_EQ(ready.error().message, "the disk went away");
  });
  std::this_thread::sleep_for(10ms);
  buffer->fail("the disk went away");
  waiter.join();
  EXPECT_TRUE(buffer->waitFor(10)) << "bytes published before the failure stay readable";
  auto done = buffer->waitDone();
  ASSERT_FALSE(done);
  EXPECT_EQ(done.error().message, "the disk went away");
  buffer->finish();  // after a failure: ignored
  EXPECT_FALSE(buffer->waitDone());
  buffer->publish(100);  // ignored too
  EXPECT_FALSE(buffer->waitFor(100));
}

TEST(FillingBufferTest, FailAfterFinishIsIgnored) {
  auto buffer = makeBuffer(8);
  buffer->finish();
  buffer->fail("too late");
  EXPECT_TRUE(buffer->waitDone());
  EXPECT_TRUE(buffer->waitFor(8));
}

TEST(FillingBufferTest, CompleteAndEmptyBuffersNeedNoProducer) {
  AlignedBuffer bytes = *AlignedBuffer::allocate(16);
  for (size_t i = 0; i < 16; ++i) bytes.data()[i] = static_cast<uint8_t>(i);
  auto complete = FillingBuffer::complete(bytes);
  EXPECT_TRUE(complete->waitDone());
  EXPECT_EQ(complete->data(), bytes.data()) << "shared, not copied";
  EXPECT_EQ(complete->bytes()[15], 15);
  EXPECT_TRUE(makeBuffer(0)->waitDone());
}

TEST(FillingBufferTest, ConsumerReadsExactlyWhatTheProducerPublished) {
  // The producer writes each chunk just before publishing it; the unwritten tail holds a
  // pattern a consumer reading ahead would see.
  constexpr size_t kSize = 1 << 20, kChunk = 4096;
  auto buffer = makeBuffer(kSize);
  std::memset(buffer->unfilled(), 0xEE, kSize);
  std::thread producer([&] {
    for (size_t at = 0; at < kSize; at += kChunk) {
      for (size_t i = at; i < at + kChunk; ++i)
        buffer->unfilled()[i] = static_cast<uint8_t>(i % 251);
      buffer->publish(at + kChunk);
      if (at % (64 * kChunk) == 0) std::this_thread::sleep_for(1ms);  // let the consumer wait
    }
    buffer->finish();
  });
  size_t mismatches = 0;
  for (size_t at = 0; at < kSize; at += 977) {
    ASSERT_TRUE(buffer->waitFor(at + 1));
    mismatches += buffer->data()[at] != static_cast<uint8_t>(at % 251);
  }
  producer.join();
  EXPECT_EQ(mismatches, 0u);
  EXPECT_TRUE(buffer->waitDone());
}

// --- fillFromFile ----------------------------------------------------------------------------

class FillFromFileTest : public ::testing::Test {
 protected:
  std::filesystem::path write(const std::vector<uint8_t>& bytes) {
    const auto path = dir_.path() / "data";
    cachetest::writeAll(path, bytes);
    return path;
  }
  static std::vector<uint8_t> pattern(size_t size) {
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
    return bytes;
  }
  cachetest::TempDir dir_;
  cachetest::Fds fds_;
};

TEST_F(FillFromFileTest, ReadsTheWholeFileInChunksIgnoringTheOffset) {
  const std::vector<uint8_t> bytes = pattern(10000);
  const int fd = fds_.open(write(bytes), O_RDONLY);
  ASSERT_EQ(::lseek(fd, 1234, SEEK_SET), 1234);
  auto buffer = makeBuffer(bytes.size());
  ASSERT_TRUE(fillFromFile(fd, *buffer, 333));
  ASSERT_TRUE(buffer->waitDone());
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), buffer->bytes().begin()));
  EXPECT_EQ(::lseek(fd, 0, SEEK_CUR), 1234) << "the descriptor's offset is unchanged";
}

TEST_F(FillFromFileTest, AFileThatShrankFailsTheBuffer) {
  const int fd = fds_.open(write(pattern(1000)), O_RDONLY);
  auto buffer = makeBuffer(1500);  // measured larger than the file now is
  auto filled = fillFromFile(fd, *buffer, 256);
  ASSERT_FALSE(filled);
  EXPECT_EQ(filled.error().status, ErrorStatus::GENERAL_FAILURE);
  auto done = buffer->waitDone();
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message.find("shrank"), std::string::npos) << done.error().message;
  EXPECT_TRUE(buffer->waitFor(768)) << "full chunks read before the end were published";
}

TEST_F(FillFromFileTest, AFileThatGrewFailsTheBuffer) {
  const int fd = fds_.open(write(pattern(1000)), O_RDONLY);
  auto buffer = makeBuffer(999);
  ASSERT_FALSE(fillFromFile(fd, *buffer, 4096));
  auto done = buffer->waitDone();
  ASSERT_FALSE(done);
  EXPECT_NE(done.error().message.find("grew"), std::string::npos) << done.error().message;
}

TEST_F(FillFromFileTest, AnUnreadableDescriptorFailsTheBuffer) {
  const int fd = fds_.open(write(pattern(100)), O_WRONLY);
  auto buffer = makeBuffer(100);
  ASSERT_FALSE(fillFromFile(fd, *buffer, 64));
  EXPECT_FALSE(buffer->waitDone());
  auto closed = makeBuffer(100);
  ASSERT_FALSE(fillFromFile(-1, *closed, 64));
  EXPECT_FALSE(closed->waitFor(1));
}

}  // namespace
}  // namespace nnhal::cache
