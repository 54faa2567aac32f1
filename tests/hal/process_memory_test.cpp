// The driver's process-local pools (hal/process_memory.h): a borrowed view keeps its owner
// alive and is read-only; a lazy zero pool reads zero, can be written, and has no descriptor.
#include "hal/process_memory.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace nnhal::hal {
namespace {

TEST(ProcessMemory, BorrowedPoolViewsTheBytesAndKeepsTheirOwnerAlive) {
  auto owner = std::make_shared<std::vector<uint8_t>>(100, 42);
  std::weak_ptr<std::vector<uint8_t>> watch = owner;
  const uint8_t* bytes = owner->data();
  Memory pool = borrowedPool(bytes + 10, 50, owner);
  owner.reset();
  ASSERT_FALSE(watch.expired()) << "the pool must keep the bytes it borrows alive";
  EXPECT_TRUE(pool.valid());
  EXPECT_EQ(pool.data(), bytes + 10) << "a view, not a copy";
  EXPECT_EQ(pool.size(), 50u);
  EXPECT_EQ(pool.fd(), -1);
  EXPECT_FALSE(pool.writable());
  EXPECT_EQ(pool.data()[49], 42);
  Memory copy = pool;
  EXPECT_EQ(copy.id(), pool.id());
  pool = Memory();
  EXPECT_FALSE(watch.expired());
  copy = Memory();
  EXPECT_TRUE(watch.expired()) << "released with the last handle";
}

TEST(ProcessMemory, LazyZeroPoolReadsZeroAndIsPrivatelyWritable) {
  auto pool = lazyZeroPool(size_t{64} << 20);  // 64 MiB costs nothing until written
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_EQ(pool->size(), size_t{64} << 20);
  EXPECT_EQ(pool->fd(), -1);
  EXPECT_TRUE(pool->writable());
  EXPECT_EQ(pool->data()[0], 0);
  EXPECT_EQ(pool->data()[pool->size() - 1], 0);
  pool->data()[12345] = 9;
  EXPECT_EQ(pool->data()[12345], 9);
  EXPECT_NE(pool->id(), 0u);
}

TEST(ProcessMemory, LazyZeroPoolRejectsSizeZero) {
  auto pool = lazyZeroPool(0);
  ASSERT_FALSE(pool);
  EXPECT_EQ(pool.error().status, ErrorStatus::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace nnhal::hal
