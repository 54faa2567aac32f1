// A request's client files staged where only their client waits (hal/file_pool_staging.h):
// the ranges its arguments name are read into a local pool, the request is rewritten to use
// it, and outputs are written back after the execution; what the execution did not write
// goes back unchanged, a file that shrank or arguments beyond the bound are refused.
#include "hal/file_pool_staging.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <variant>

#include "common/unique_fd.h"
#include "hal/pool_io.h"

namespace nnhal::hal {
namespace {

using common::UniqueFd;

/// A regular file of `size` bytes (i mod 251) in /tmp, and a writable mmap_fd pool over it.
struct FilePool {
  explicit FilePool(size_t size) {
    path = std::filesystem::temp_directory_path() /
           ("nnhal-staging-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    UniqueFd fd(open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    std::vector<uint8_t> bytes(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(i % 251);
    EXPECT_EQ(write(fd.get(), bytes.data(), size), static_cast<ssize_t>(size));
    auto adopted = adoptClientPool(fd.get(), MemoryKind::MMAP_FD, size, 0, true, "pool");
    EXPECT_TRUE(adopted) << adopted.error().message;
    if (adopted) memory = *adopted;
  }
  ~FilePool() { std::filesystem::remove(path); }
  std::vector<uint8_t> read(size_t offset, size_t length) const {
    std::vector<uint8_t> out(length);
    EXPECT_TRUE(readPool(memory, offset, out));
    return out;
  }
  static inline int counter = 0;
  std::filesystem::path path;
  Memory memory;
};

TEST(FilePoolStaging, ReadsArgumentsIntoALocalPoolAndWritesOutputsBack) {
  FilePool file(100000);
  ASSERT_FALSE(isMapped(file.memory));
  Memory mapped = *Memory::create(64);
  Request request;
  request.pools = {mapped, file.memory};
  request.inputs = {{false, {1, 90000, 16}, {}}, {false, {0, 0, 16}, {}}};
  request.outputs = {{false, {1, 500, 40}, {}}};
  ASSERT_TRUE(hasFilePools(request));
  auto staged = FilePoolStaging::stage(request);
  ASSERT_TRUE(staged) << staged.error().message;
  EXPECT_FALSE(staged->empty());
  EXPECT_FALSE(hasFilePools(request));
  // The mapped pool is left alone; the file became one packed local pool.
  EXPECT_EQ(std::get<Memory>(request.pools[0]).data(), mapped.data());
  const Memory& local = std::get<Memory>(request.pools[1]);
  ASSERT_TRUE(isMapped(local));
  EXPECT_LE(local.size(), 256u);
  const DataLocation in = request.inputs[0].location;
  const DataLocation out = request.outputs[0].location;
  EXPECT_EQ(in.poolIndex, 1u);
  EXPECT_EQ(in.length, 16u);
  EXPECT_EQ(0, std::memcmp(local.data() + in.offset, file.read(90000, 16).data(), 16));
  EXPECT_EQ(0, std::memcmp(local.data() + out.offset, file.read(500, 40).data(), 40));
  // The execution writes part of its output; the rest goes back as it was.
  std::memset(local.data() + out.offset, 0xAB, 8);
  const std::vector<uint8_t> before = file.read(500, 40);
  ASSERT_TRUE(staged->writeBack());
  const std::vector<uint8_t> after = file.read(500, 40);
  for (size_t i = 0; i < 40; ++i) {
    EXPECT_EQ(after[i], i < 8 ? 0xAB : before[i]) << i;
  }
  // Inputs are not written back.
  std::memset(local.data() + in.offset, 0xCD, 16);
  ASSERT_TRUE(staged->writeBack());
  EXPECT_NE(file.read(90000, 16)[0], 0xCD);
}

// plan() rewrites the request and reads nothing; readInputs() reads the files as they are
// then (a fenced execution's inputs are ready only once its fences signalled).
TEST(FilePoolStaging, APlanReadsItsFilesOnlyWhenAskedTo) {
  FilePool file(4096);
  Request request;
  request.pools = {file.memory};
  request.inputs = {{false, {0, 100, 8}, {}}};
  request.outputs = {{false, {0, 200, 8}, {}}};
  auto planned = FilePoolStaging::plan(request);
  ASSERT_TRUE(planned) << planned.error().message;
  EXPECT_FALSE(hasFilePools(request));
  const std::vector<uint8_t> later(8, 0x5A);
  ASSERT_TRUE(writePool(file.memory, 100, later));
  ASSERT_TRUE(planned->readInputs());
  const Memory& local = std::get<Memory>(request.pools[0]);
  EXPECT_EQ(0, std::memcmp(local.data() + request.inputs[0].location.offset, later.data(), 8));
  EXPECT_EQ(0, std::memcmp(local.data() + request.outputs[0].location.offset,
                           file.read(200, 8).data(), 8));
  ASSERT_EQ(::ftruncate(file.memory.fd(), 50), 0);
  auto shrunk = planned->readInputs();
  ASSERT_FALSE(shrunk);
  EXPECT_EQ(shrunk.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(FilePoolStaging, ARequestWithoutFilesIsLeftAsItIs) {
  Memory mapped = *Memory::create(64);
  Request request;
  request.pools = {mapped};
  request.inputs = {{false, {0, 0, 16}, {}}};
  request.outputs = {{false, {0, 16, 16}, {}}};
  EXPECT_FALSE(hasFilePools(request));
  auto staged = FilePoolStaging::stage(request);
  ASSERT_TRUE(staged);
  EXPECT_TRUE(staged->empty());
  EXPECT_EQ(request.outputs[0].location.offset, 16u);
}

TEST(FilePoolStaging, AFileThatShrankOrArgumentsBeyondTheBoundAreRefused) {
  FilePool file(4096);
  Request request;
  request.pools = {file.memory};
  request.inputs = {{false, {0, 3000, 1000}, {}}};
  request.outputs = {{false, {0, 0, 1000}, {}}};
  Request bounded = request;
  auto tooMuch = FilePoolStaging::stage(bounded, 1500);
  ASSERT_FALSE(tooMuch);
  EXPECT_EQ(tooMuch.error().status, ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT);
  ASSERT_EQ(truncate(file.path.c_str(), 2000), 0);
  auto shrank = FilePoolStaging::stage(request);
  ASSERT_FALSE(shrank);
  EXPECT_EQ(shrank.error().status, ErrorStatus::GENERAL_FAILURE);
}

}  // namespace
}  // namespace nnhal::hal
