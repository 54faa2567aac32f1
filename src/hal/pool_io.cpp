// Pools from other processes: which descriptors are accepted, and pread/pwrite access to
// the ones never mapped (hal/pool_io.h).
#include "hal/pool_io.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "hal/process_memory.h"

namespace nnhal::hal {
namespace {

#ifndef FUSE_SUPER_MAGIC
constexpr long kFuseSuperMagic = 0x65735546;
#else
constexpr long kFuseSuperMagic = FUSE_SUPER_MAGIC;
#endif

std::unexpected<Error> refuse(const std::string& name, const std::string& why) {
  return fail(ErrorStatus::GENERAL_FAILURE, name + ": " + why);
}

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

size_t pageSize() { return static_cast<size_t>(sysconf(_SC_PAGESIZE)); }

}  // namespace

std::string fileTypeName(unsigned mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "regular file";
    case S_IFCHR:
      return "character device";
    case S_IFBLK:
      return "block device";
    case S_IFIFO:
      return "pipe";
    case S_IFSOCK:
      return "socket";
    case S_IFDIR:
      return "directory";
    case S_IFLNK:
      return "symbolic link";
    default:
      return "file of unknown type";
  }
}

Result<Memory> adoptClientPool(int fd, MemoryKind kind, uint64_t size, uint64_t offset,
                               bool writable, const std::string& name) {
  if (size == 0) return invalidArgument(name + ": size must be > 0");
  if (offset > std::numeric_limits<uint64_t>::max() - size ||
      offset + size > static_cast<uint64_t>(std::numeric_limits<off_t>::max())) {
    return refuse(name, "offset " + std::to_string(offset) + " + size " + std::to_string(size) +
                            " overflows");
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) return refuse(name, errnoText("fstat"));
  if (!S_ISREG(st.st_mode)) {
    return refuse(name, "the descriptor of a " + std::string(toString(kind)) + " pool is a " +
                            fileTypeName(st.st_mode) +
                            "; only memfd and regular files are accepted");
  }
  struct statfs fs {};
  if (fstatfs(fd, &fs) == 0 && static_cast<long>(fs.f_type) == kFuseSuperMagic) {
    return refuse(name, "files on FUSE file systems are not accepted as pools");
  }
  if (offset + size > static_cast<uint64_t>(st.st_size)) {
    return refuse(name, "range [" + std::to_string(offset) + ", " + std::to_string(offset + size) +
                            ") is past the end of the file (" + std::to_string(st.st_size) +
                            " bytes)");
  }
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return refuse(name, errnoText("fcntl(F_GETFL)"));
  const int access = flags & O_ACCMODE;
  if (access == O_WRONLY) return refuse(name, "the descriptor is not readable");
  if (writable && access != O_RDWR) {
    return refuse(name, "a writable pool needs a read-write descriptor");
  }
  if (writable && (flags & O_APPEND) != 0) {
    return refuse(name, "a writable pool cannot be an append-only descriptor");
  }
  const int seals = fcntl(fd, F_GET_SEALS);
  const bool cannotShrink = seals >= 0 && (seals & F_SEAL_SHRINK) != 0;
  if (kind != MemoryKind::MMAP_FD && !cannotShrink) {
    return refuse(name, "a " + std::string(toString(kind)) +
                            " pool must be a memfd sealed with F_SEAL_SHRINK");
  }
  if (writable && seals >= 0 && (seals & (F_SEAL_WRITE | F_SEAL_FUTURE_WRITE)) != 0) {
    return refuse(name, "a writable pool cannot be sealed against writes");
  }
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return refuse(name, errnoText("dup"));
  if (!cannotShrink) {
    // A file its owner may truncate at any time: never mapped (hal/pool_io.h).
    return MemoryAccess::clientPool(copy, kind, size, offset, writable, nullptr, 0);
  }
  const size_t page = pageSize();
  const uint64_t alignedOffset = offset - offset % page;
  const size_t mapLength = static_cast<size_t>(size + (offset - alignedOffset));
  const int prot = writable ? (PROT_READ | PROT_WRITE) : PROT_READ;
  void* base = mmap(nullptr, mapLength, prot, MAP_SHARED, copy, static_cast<off_t>(alignedOffset));
  if (base == MAP_FAILED) {
    const std::string why = errnoText("mmap");
    close(copy);
    return refuse(name, why);
  }
  return MemoryAccess::clientPool(copy, kind, size, offset, writable, static_cast<uint8_t*>(base),
                                  mapLength);
}

bool isShared(const Memory& pool) { return pool.fd() >= 0; }

bool isMapped(const Memory& pool) { return pool.data() != nullptr; }

bool isImmutable(const Memory& pool) {
  if (!isShared(pool) || !isMapped(pool)) return false;
  const int seals = fcntl(pool.fd(), F_GET_SEALS);
  return seals >= 0 && (seals & F_SEAL_WRITE) != 0 && (seals & F_SEAL_SHRINK) != 0;
}

Result<void> readPool(const Memory& pool, size_t offset, std::span<uint8_t> out) {
  if (offset > pool.size() || out.size() > pool.size() - offset) {
    return fail(ErrorStatus::GENERAL_FAILURE, "read outside the pool");
  }
  if (isMapped(pool)) {
    if (!out.empty()) std::memcpy(out.data(), pool.data() + offset, out.size());
    return {};
  }
  size_t done = 0;
  while (done < out.size()) {
    const ssize_t got = pread(pool.fd(), out.data() + done, out.size() - done,
                              static_cast<off_t>(pool.offset() + offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return fail(ErrorStatus::GENERAL_FAILURE, errnoText("reading a pool"));
    if (got == 0) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "the pool's file shrank: " + std::to_string(out.size() - done) +
                      " bytes could not be read");
    }
    done += static_cast<size_t>(got);
  }
  return {};
}

Result<void> writePool(const Memory& pool, size_t offset, std::span<const uint8_t> bytes) {
  if (offset > pool.size() || bytes.size() > pool.size() - offset) {
    return fail(ErrorStatus::GENERAL_FAILURE, "write outside the pool");
  }
  if (!pool.writable()) return fail(ErrorStatus::GENERAL_FAILURE, "the pool is read-only");
  if (isMapped(pool)) {
    if (!bytes.empty()) std::memcpy(pool.data() + offset, bytes.data(), bytes.size());
    return {};
  }
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t put = pwrite(pool.fd(), bytes.data() + done, bytes.size() - done,
                               static_cast<off_t>(pool.offset() + offset + done));
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return fail(ErrorStatus::GENERAL_FAILURE, errnoText("writing a pool"));
    done += static_cast<size_t>(put);
  }
  return {};
}

Result<uint64_t> copyModelPoolsPrivately(Model& model, uint64_t maxBytes) {
  using Range = std::pair<uint64_t, uint64_t>;  // [begin, end)
  std::vector<std::vector<Range>> ranges(model.pools.size());
  auto collect = [&](const Subgraph& graph) {
    for (const Operand& operand : graph.operands) {
      if (operand.lifetime != OperandLifeTime::CONSTANT_REFERENCE) continue;
      const DataLocation& at = operand.location;
      if (at.poolIndex >= model.pools.size() || at.length == 0) continue;
      const uint64_t end = uint64_t{at.offset} + at.length;
      if (end > model.pools[at.poolIndex].size()) continue;  // validateModel rejects it
      ranges[at.poolIndex].emplace_back(at.offset, end);
    }
  };
  collect(model.main);
  for (const Subgraph& graph : model.referenced) collect(graph);
  // Merge each pool's ranges first: the size of the copy is known before a byte is copied.
  uint64_t total = 0;
  for (size_t p = 0; p < ranges.size(); ++p) {
    if (!model.pools[p].valid() || !isShared(model.pools[p])) continue;
    std::vector<Range>& list = ranges[p];
    std::sort(list.begin(), list.end());
    uint64_t end = 0;
    for (const Range& range : list) {
      const uint64_t begin = std::max(range.first, end);
      if (range.second > begin) total += range.second - begin;
      end = std::max(end, range.second);
    }
  }
  if (maxBytes != 0 && total > maxBytes) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                "quota exceeded: the model's pools hold " + std::to_string(total) +
                    " bytes of constants, more than the " + std::to_string(maxBytes) + " allowed");
  }
  for (size_t p = 0; p < model.pools.size(); ++p) {
    const Memory& pool = model.pools[p];
    if (!pool.valid() || !isShared(pool) || isImmutable(pool)) continue;
    const std::vector<Range>& list = ranges[p];
    NNHAL_ASSIGN_OR_RETURN(Memory copy, lazyZeroPool(pool.size()));
    uint64_t begin = 0, end = 0;
    auto flush = [&]() -> Result<void> {
      if (end <= begin) return {};
      auto read = readPool(pool, begin, std::span<uint8_t>(copy.data() + begin, end - begin));
      if (!read) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "pools[" + std::to_string(p) + "]: " + read.error().message);
      }
      return {};
    };
    for (const Range& range : list) {
      if (range.first > end) {
        NNHAL_TRY(flush());
        begin = range.first;
      }
      end = std::max(end, range.second);
    }
    NNHAL_TRY(flush());
    model.pools[p] = std::move(copy);
  }
  return total;
}

}  // namespace nnhal::hal
