// Pools from other processes (hal/pool_io.h): which descriptors are accepted, reads and
// writes of files that shrink, and private copies of model constants.
#include "hal/pool_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>

#include "common/unique_fd.h"

namespace nnhal::hal {
namespace {

using common::UniqueFd;

UniqueFd memfdOf(size_t size, unsigned seals) {
  UniqueFd fd(memfd_create("pool-io-test", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  EXPECT_TRUE(fd.valid());
  EXPECT_EQ(ftruncate(fd.get(), static_cast<off_t>(size)), 0);
  if (seals != 0) {
    EXPECT_EQ(fcntl(fd.get(), F_ADD_SEALS, seals), 0);
  }
  return fd;
}

/// A regular file of `size` bytes (0, 1, 2, ... mod 251) in /tmp, removed with the object.
struct TempFile {
  explicit TempFile(size_t size, int flags = O_RDWR) {
    path = std::filesystem::temp_directory_path() /
           ("nnhal-pool-io-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    UniqueFd writer(open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    for (size_t i = 0; i < size; ++i) {
      const auto byte = static_cast<uint8_t>(i % 251);
      EXPECT_EQ(write(writer.get(), &byte, 1), 1);
    }
    fd.reset(open(path.c_str(), flags | O_CLOEXEC));
  }
  ~TempFile() { std::filesystem::remove(path); }
  static inline int counter = 0;
  std::filesystem::path path;
  UniqueFd fd;
};

void expectRefused(const Result<Memory>& pool, const std::string& words) {
  ASSERT_FALSE(pool);
  EXPECT_EQ(pool.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(pool.error().message.find(words), std::string::npos) << pool.error().message;
  EXPECT_NE(pool.error().message.find("request.pools[3]"), std::string::npos);
}

TEST(PoolIo, RefusesDevicesPipesAndDirectories) {
  UniqueFd zero(open("/dev/zero", O_RDWR | O_CLOEXEC));
  expectRefused(
      adoptClientPool(zero.get(), MemoryKind::MMAP_FD, 4096, 8192, true, "request.pools[3]"),
      "character device");
  int pipeFds[2];
  ASSERT_EQ(pipe2(pipeFds, O_CLOEXEC), 0);
  UniqueFd readEnd(pipeFds[0]), writeEnd(pipeFds[1]);
  expectRefused(
      adoptClientPool(readEnd.get(), MemoryKind::MMAP_FD, 16, 0, false, "request.pools[3]"),
      "pipe");
  UniqueFd dir(open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  expectRefused(adoptClientPool(dir.get(), MemoryKind::MMAP_FD, 16, 0, false, "request.pools[3]"),
                "directory");
  // The embedded API refuses them too.
  auto embedded = Memory::fromFd(zero.get(), 4096, 8192);
  ASSERT_FALSE(embedded);
  EXPECT_EQ(embedded.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST(PoolIo, AshmemPoolsMustBeSealedAgainstShrinking) {
  UniqueFd unsealed = memfdOf(4096, 0);
  expectRefused(
      adoptClientPool(unsealed.get(), MemoryKind::ASHMEM, 4096, 0, true, "request.pools[3]"),
      "F_SEAL_SHRINK");
  expectRefused(adoptClientPool(unsealed.get(), MemoryKind::HARDWARE_BUFFER_BLOB, 4096, 0, true,
                                "request.pools[3]"),
                "F_SEAL_SHRINK");
  UniqueFd sealed = memfdOf(4096, F_SEAL_SHRINK);
  auto pool = adoptClientPool(sealed.get(), MemoryKind::ASHMEM, 4000, 96, true, "p");
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_TRUE(isMapped(*pool));
  EXPECT_TRUE(isShared(*pool));
  EXPECT_EQ(pool->size(), 4000u);
  // Pools the driver creates itself are sealed that way.
  auto created = Memory::create(100);
  ASSERT_TRUE(created);
  EXPECT_TRUE(adoptClientPool(created->fd(), MemoryKind::ASHMEM, 100, 0, true, "p"));
}

TEST(PoolIo, RangesPastTheEndAndWrongAccessAreRefused) {
  UniqueFd sealed = memfdOf(4096, F_SEAL_SHRINK);
  expectRefused(
      adoptClientPool(sealed.get(), MemoryKind::ASHMEM, 4000, 100, true, "request.pools[3]"),
      "past the end");
  expectRefused(
      adoptClientPool(sealed.get(), MemoryKind::ASHMEM, UINT64_MAX, 2, true, "request.pools[3]"),
      "overflows");
  TempFile readOnly(64, O_RDONLY);
  expectRefused(
      adoptClientPool(readOnly.fd.get(), MemoryKind::MMAP_FD, 64, 0, true, "request.pools[3]"),
      "read-write");
  EXPECT_TRUE(adoptClientPool(readOnly.fd.get(), MemoryKind::MMAP_FD, 64, 0, false, "p"));
  TempFile append(64, O_RDWR | O_APPEND);
  expectRefused(
      adoptClientPool(append.fd.get(), MemoryKind::MMAP_FD, 64, 0, true, "request.pools[3]"),
      "append-only");
  UniqueFd writeSealed = memfdOf(4096, F_SEAL_SHRINK | F_SEAL_WRITE);
  expectRefused(
      adoptClientPool(writeSealed.get(), MemoryKind::ASHMEM, 4096, 0, true, "request.pools[3]"),
      "sealed against writes");
  const auto empty = adoptClientPool(sealed.get(), MemoryKind::ASHMEM, 0, 0, true, "p");
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().status, ErrorStatus::INVALID_ARGUMENT);
}

TEST(PoolIo, FilesAreNeverMappedAndAShrunkFileFailsReads) {
  TempFile file(10000);
  auto pool = adoptClientPool(file.fd.get(), MemoryKind::MMAP_FD, 5000, 5000, true, "p");
  ASSERT_TRUE(pool) << pool.error().message;
  EXPECT_FALSE(isMapped(*pool));
  EXPECT_EQ(pool->data(), nullptr);
  uint8_t bytes[16];
  ASSERT_TRUE(readPool(*pool, 10, bytes));
  for (size_t i = 0; i < sizeof(bytes); ++i) EXPECT_EQ(bytes[i], (5010 + i) % 251);
  const uint8_t marks[4] = {9, 8, 7, 6};
  ASSERT_TRUE(writePool(*pool, 100, marks));
  ASSERT_TRUE(readPool(*pool, 100, std::span<uint8_t>(bytes, 4)));
  EXPECT_EQ(std::memcmp(bytes, marks, 4), 0);
  // The owner truncates the file: reads fail with a reason instead of faulting.
  ASSERT_EQ(ftruncate(file.fd.get(), 5008), 0);
  auto shrunk = readPool(*pool, 0, bytes);
  ASSERT_FALSE(shrunk);
  EXPECT_EQ(shrunk.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(shrunk.error().message.find("shrank"), std::string::npos);
  EXPECT_FALSE(readPool(*pool, 4990, bytes));  // outside the pool
  EXPECT_FALSE(writePool(*pool, 4999, marks));
}

TEST(PoolIo, ModelConstantsAreCopiedOnceAndKeepTheirValues) {
  UniqueFd sealed = memfdOf(8192, F_SEAL_SHRINK);
  auto shared = adoptClientPool(sealed.get(), MemoryKind::ASHMEM, 8192, 0, true, "p");
  ASSERT_TRUE(shared);
  for (size_t i = 0; i < 8192; ++i) shared->data()[i] = static_cast<uint8_t>(i % 7 + 1);
  Model model;
  model.pools = {*shared};
  Operand a;
  a.type = OperandType::TENSOR_QUANT8_ASYMM;
  a.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  a.location = {0, 100, 50};
  Operand b = a;
  b.location = {0, 120, 100};  // overlaps a: [100, 220) is copied once
  Operand far = a;
  far.location = {0, 5000, 10};
  Operand outside = a;
  outside.location = {0, 8190, 10};  // left for validateModel
  model.main.operands = {a, b, far};
  model.referenced.resize(1);
  model.referenced[0].operands = {outside};
  auto copied = copyModelPoolsPrivately(model);
  ASSERT_TRUE(copied) << copied.error().message;
  EXPECT_EQ(*copied, 120u + 10u);
  const Memory& copy = model.pools[0];
  EXPECT_FALSE(isShared(copy));
  EXPECT_EQ(copy.size(), 8192u);
  std::memset(shared->data(), 0xEE, 8192);  // the client rewrites its pool afterwards
  for (size_t i = 100; i < 220; ++i) ASSERT_EQ(copy.data()[i], i % 7 + 1) << i;
  for (size_t i = 5000; i < 5010; ++i) ASSERT_EQ(copy.data()[i], i % 7 + 1) << i;
  EXPECT_EQ(copy.data()[99], 0);
  EXPECT_EQ(copy.data()[4000], 0);
}

TEST(PoolIo, AModelNamingMoreConstantsThanAllowedIsRefusedBeforeCopying) {
  UniqueFd sealed = memfdOf(uint64_t{1} << 30, F_SEAL_SHRINK);  // 1 GiB, sparse
  auto shared = adoptClientPool(sealed.get(), MemoryKind::ASHMEM, uint64_t{1} << 30, 0, false, "p");
  ASSERT_TRUE(shared);
  Model model;
  model.pools = {*shared};
  Operand big;
  big.type = OperandType::TENSOR_QUANT8_ASYMM;
  big.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  for (uint32_t i = 0; i < 4; ++i) {
    big.location = {0, i * (uint32_t{1} << 28), uint32_t{1} << 28};
    model.main.operands.push_back(big);
  }
  auto copied = copyModelPoolsPrivately(model, uint64_t{1} << 20);
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  EXPECT_NE(copied.error().message.find("1073741824"), std::string::npos) << copied.error().message;
  EXPECT_TRUE(isShared(model.pools[0]));  // nothing was replaced
}

TEST(PoolIo, ACopyFromAShrunkFileFails) {
  TempFile file(4096);
  auto pool = adoptClientPool(file.fd.get(), MemoryKind::MMAP_FD, 4096, 0, false, "p");
  ASSERT_TRUE(pool);
  Model model;
  model.pools = {*pool};
  Operand a;
  a.type = OperandType::TENSOR_QUANT8_ASYMM;
  a.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  a.location = {0, 1000, 3000};
  model.main.operands = {a};
  ASSERT_EQ(ftruncate(file.fd.get(), 2000), 0);
  auto copied = copyModelPoolsPrivately(model);
  ASSERT_FALSE(copied);
  EXPECT_EQ(copied.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(copied.error().message.find("pools[0]"), std::string::npos);
}

// A pool sealed against writes cannot change under the driver: it is used in place (no copy,
// the client's pages are shared) and its constants still count against the quota.
TEST(PoolIo, ASealedPoolIsUsedInPlaceAndAMutableOneIsCopied) {
  auto sealedPool = Memory::createSealed(8192, [](std::span<uint8_t> bytes) {
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i % 5 + 1);
  });
  ASSERT_TRUE(sealedPool) << sealedPool.error().message;
  EXPECT_FALSE(sealedPool->writable());
  EXPECT_TRUE(isImmutable(*sealedPool));
  // As nnhald receives it: a client's descriptor, mapped read-only.
  auto received = adoptClientPool(sealedPool->fd(), MemoryKind::ASHMEM, 8192, 0, false, "p");
  ASSERT_TRUE(received) << received.error().message;
  EXPECT_TRUE(isImmutable(*received));
  UniqueFd unsealed = memfdOf(8192, F_SEAL_SHRINK);
  auto mutablePool = adoptClientPool(unsealed.get(), MemoryKind::ASHMEM, 8192, 0, false, "q");
  ASSERT_TRUE(mutablePool);
  EXPECT_FALSE(isImmutable(*mutablePool));

  Model model;
  model.pools = {*received, *mutablePool};
  Operand a;
  a.type = OperandType::TENSOR_QUANT8_ASYMM;
  a.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  a.location = {0, 100, 50};
  Operand b = a;
  b.location = {1, 200, 30};
  model.main.operands = {a, b};
  auto constants = copyModelPoolsPrivately(model);
  ASSERT_TRUE(constants) << constants.error().message;
  EXPECT_EQ(*constants, 50u + 30u);
  EXPECT_TRUE(model.pools[0] == *received);  // in place
  EXPECT_EQ(model.pools[0].data()[100], 100 % 5 + 1);
  EXPECT_FALSE(isShared(model.pools[1]));  // copied

  Model tooBig;
  tooBig.pools = {*received};
  tooBig.main.operands = {a};
  auto refused = copyModelPoolsPrivately(tooBig, 49);  // the quota counts sealed bytes too
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
}

TEST(PoolIo, ASealedPoolRefusesEveryWrite) {
  auto pool = Memory::createSealed(4096, [](std::span<uint8_t> bytes) { bytes[0] = 42; });
  ASSERT_TRUE(pool);
  EXPECT_EQ(pool->data()[0], 42);
  const uint8_t byte = 7;
  EXPECT_EQ(pwrite(pool->fd(), &byte, 1, 0), -1);
  EXPECT_EQ(errno, EPERM);
  EXPECT_EQ(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, pool->fd(), 0), MAP_FAILED);
  EXPECT_NE(ftruncate(pool->fd(), 0), 0);
  EXPECT_FALSE(writePool(*pool, 0, std::span<const uint8_t>(&byte, 1)));
}

}  // namespace
}  // namespace nnhal::hal
