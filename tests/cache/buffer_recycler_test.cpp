// BufferRecycler: released buffers come back to later allocations within the limits, the
// rest is freed, and buffers outliving the recycler are freed normally (LeakSanitizer in
// CI would report anything lost).
#include "cache/buffer_recycler.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

namespace nnhal::cache {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

TEST(BufferRecyclerTest, AReleasedBufferIsReusedForASimilarSize) {
  auto recycler = BufferRecycler::create();
  uint8_t* first = nullptr;
  {
    AlignedBuffer a = *recycler->allocate(3 * kMiB);
    first = a.data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % AlignedBuffer::kAlignment, 0u);
    a.data()[3 * kMiB - 1] = 1;  // it is writable to its end
    EXPECT_EQ(recycler->keptBuffers(), 0u);
  }
  EXPECT_EQ(recycler->keptBuffers(), 1u);
  EXPECT_EQ(recycler->keptBytes(), 4 * kMiB) << "mapped in whole 2 MiB huge pages";
  AlignedBuffer b = *recycler->allocate(2 * kMiB);  // within [capacity / 2, capacity]
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(b.size(), 2 * kMiB);
  EXPECT_EQ(recycler->keptBuffers(), 0u);
}

TEST(BufferRecyclerTest, SizesThatDoNotFitGetNewBuffers) {
  auto recycler = BufferRecycler::create();
  { AlignedBuffer a = *recycler->allocate(4 * kMiB); }
  AlignedBuffer bigger = *recycler->allocate(5 * kMiB);   // does not fit
  AlignedBuffer smaller = *recycler->allocate(kMiB + 1);  // would waste more than half
  EXPECT_EQ(recycler->keptBuffers(), 1u);
  AlignedBuffer tiny = *recycler->allocate(4096);  // below minBytes: plain allocation
  EXPECT_EQ(tiny.size(), 4096u);
  { AlignedBuffer t = std::move(tiny); }
  EXPECT_EQ(recycler->keptBuffers(), 1u) << "small buffers are never kept";
}

TEST(BufferRecyclerTest, KeepsAtMostItsLimitsForgettingTheOldest) {
  BufferRecycler::Limits limits;
  limits.minBytes = 1024;
  limits.maxBuffers = 2;
  limits.maxBytes = 10 * kMiB;
  auto recycler = BufferRecycler::create(limits);
  std::vector<AlignedBuffer> buffers;
  // Capacities are whole 2 MiB huge pages: 1 and 2 MiB take 2 MiB, 3 MiB takes 4 MiB.
  for (size_t mib : {1, 2, 3}) buffers.push_back(*recycler->allocate(mib * kMiB));
  buffers.clear();  // returns them in that order: the first one is forgotten
  EXPECT_EQ(recycler->keptBuffers(), 2u);
  EXPECT_EQ(recycler->keptBytes(), 6 * kMiB);
  { AlignedBuffer huge = *recycler->allocate(11 * kMiB); }  // above maxBytes: unmapped
  EXPECT_EQ(recycler->keptBytes(), 6 * kMiB);
  { AlignedBuffer big = *recycler->allocate(8 * kMiB); }  // fits only alone
  EXPECT_EQ(recycler->keptBuffers(), 1u);
  EXPECT_EQ(recycler->keptBytes(), 8 * kMiB);
}

TEST(BufferRecyclerTest, LargeBuffersStartOnAHugePageBoundary) {
  auto recycler = BufferRecycler::create();
  AlignedBuffer b = *recycler->allocate(3 * kMiB + 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (2 * kMiB), 0u);
  EXPECT_EQ(b.size(), 3 * kMiB + 5);
  b.data()[0] = 1;
  b.data()[b.size() - 1] = 2;
}

TEST(BufferRecyclerTest, ImpossibleSizesAreRefused) {
  auto recycler = BufferRecycler::create();
  for (size_t size : {SIZE_MAX, SIZE_MAX - kMiB, size_t{1} << 62}) {
    auto buffer = recycler->allocate(size);
    ASSERT_FALSE(buffer) << size;
    EXPECT_EQ(buffer.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  }
  EXPECT_EQ(recycler->keptBuffers(), 0u);
}

TEST(BufferRecyclerTest, BuffersOutlivingTheRecyclerAreFreed) {
  AlignedBuffer survivor;
  {
    auto recycler = BufferRecycler::create();
    survivor = *recycler->allocate(2 * kMiB);
    { AlignedBuffer kept = *recycler->allocate(2 * kMiB); }
    EXPECT_EQ(recycler->keptBuffers(), 1u);
  }
  survivor.data()[0] = 7;  // still valid after the recycler is gone
  survivor = AlignedBuffer();
}

TEST(BufferRecyclerTest, ConcurrentAllocationsAndReleases) {
  BufferRecycler::Limits limits;
  limits.minBytes = 1024;
  auto recycler = BufferRecycler::create(limits);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&recycler, t] {
      for (int i = 0; i < 200; ++i) {
        AlignedBuffer b = *recycler->allocate(4096 + static_cast<size_t>((t * 7 + i) % 5) * 1024);
        b.data()[b.size() - 1] = static_cast<uint8_t>(i);  // ours alone while we hold it
        EXPECT_EQ(b.data()[b.size() - 1], static_cast<uint8_t>(i));
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(recycler->keptBuffers(), 4u);
}

}  // namespace
}  // namespace nnhal::cache
