#include "cache/file_io.h"

#include <sys/statfs.h>

#include "hal/pool_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <thread>

namespace nnhal::cache {
namespace {

std::unexpected<Error> failure(const std::string& what) {
  return fail(ErrorStatus::GENERAL_FAILURE, errnoText(what));
}

/// pread until `buffer` is full or EOF; returns the bytes read or -1.
ssize_t preadFully(int fd, uint8_t* buffer, size_t size, off_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, buffer + done, size - done, offset + static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(done);
}

Result<void> pwriteFully(int fd, std::span<const uint8_t> bytes, const std::string& what) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n =
        pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0) {
      if (errno == EINTR) continue;
      return failure(what);
    }
    done += static_cast<size_t>(n);
  }
  return {};
}

}  // namespace

std::string errnoText(const std::string& what) {
  const int error = errno;
  return what + ": " + std::strerror(error);
}

Result<UniqueFd> duplicate(int fd) {
  const int copy = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return failure("dup of descriptor " + std::to_string(fd));
  return UniqueFd(copy);
}

Result<FdAccess> accessOf(int fd) {
  if (fd < 0) return fail(ErrorStatus::GENERAL_FAILURE, "descriptor " + std::to_string(fd));
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0) return failure("descriptor " + std::to_string(fd));
  const int mode = flags & O_ACCMODE;
  return FdAccess{mode == O_RDONLY || mode == O_RDWR, mode == O_WRONLY || mode == O_RDWR};
}

Result<AlignedBuffer> AlignedBuffer::allocate(size_t size) {
  AlignedBuffer buffer;
  if (size == 0) return buffer;
  // The C++ heap rather than a fresh mapping: memory freed by an earlier load is reused
  // without the kernel zeroing it again, which is most of the cost of reading a data cache.
  void* memory = ::operator new (size, std::align_val_t{kAlignment}, std::nothrow);
  if (memory == nullptr) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                "cannot allocate " + std::to_string(size) + " bytes");
  }
  buffer.data_ = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(memory), [](uint8_t* p) {
    ::operator delete (p, std::align_val_t{kAlignment});
  });
  buffer.size_ = size;
  return buffer;
}

FileLock::~FileLock() {
  if (fd_ >= 0) flock(fd_, LOCK_UN);
}

FileLock& FileLock::operator=(FileLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) flock(fd_, LOCK_UN);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

Result<FileLock> FileLock::acquire(int fd, bool exclusive, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    bool busy = false;
    auto lock = tryAcquire(fd, exclusive, busy);
    if (lock || !busy) return lock;
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "timed out waiting for the lock of a cache file (another reader or writer)");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
}

Result<FileLock> FileLock::tryAcquire(int fd, bool exclusive, bool& busy) {
  busy = false;
  for (;;) {
    if (flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0) {
      FileLock lock;
      lock.fd_ = fd;
      return lock;
    }
    if (errno == EINTR) continue;
    if (errno != EWOULDBLOCK) return failure("flock");
    busy = true;
    return fail(ErrorStatus::GENERAL_FAILURE, "locked by another reader or writer");
  }
}

Result<void> checkRegularFile(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return failure("fstat");
  if (!S_ISREG(st.st_mode)) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "the descriptor is a " + hal::fileTypeName(st.st_mode) + ", not a regular file");
  }
  constexpr long kFuseSuperMagic = 0x65735546;
  struct statfs fs {};
  if (fstatfs(fd, &fs) == 0 && static_cast<long>(fs.f_type) == kFuseSuperMagic) {
    return fail(ErrorStatus::GENERAL_FAILURE, "files on FUSE file systems are not accepted");
  }
  return {};
}

Result<size_t> sizeWithin(int fd, size_t limit) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return failure("fstat");
  if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > limit) {
    return fail(ErrorStatus::GENERAL_FAILURE, "file of " + std::to_string(st.st_size) +
                                                  " bytes exceeds the limit of " +
                                                  std::to_string(limit));
  }
  return static_cast<size_t>(st.st_size);
}

Result<void> readExactlyAt(int fd, std::span<uint8_t> buffer, uint64_t offset) {
  const ssize_t got = preadFully(fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
  if (got < 0) return failure("read");
  if (static_cast<size_t>(got) != buffer.size()) {
    return fail(ErrorStatus::GENERAL_FAILURE, "file shrank while being read");
  }
  return {};
}

Result<void> expectEndAt(int fd, uint64_t size) {
  uint8_t extra = 0;
  const ssize_t more = preadFully(fd, &extra, 1, static_cast<off_t>(size));
  if (more < 0) return failure("read");
  if (more != 0) return fail(ErrorStatus::GENERAL_FAILURE, "file grew while being read");
  return {};
}

Result<AlignedBuffer> readWhole(int fd, size_t limit) {
  NNHAL_ASSIGN_OR_RETURN(const size_t size, sizeWithin(fd, limit));
  NNHAL_ASSIGN_OR_RETURN(AlignedBuffer buffer, AlignedBuffer::allocate(size));
  NNHAL_TRY(readExactlyAt(fd, buffer.mutableBytes(), 0));
  NNHAL_TRY(expectEndAt(fd, size));
  return buffer;
}

Result<void> rewriteWhole(int fd, std::span<const uint8_t> bytes) {
  while (ftruncate(fd, 0) != 0) {
    if (errno != EINTR) return failure("ftruncate");
  }
  return pwriteFully(fd, bytes, "write");
}

Result<void> replaceFileAtomically(const std::filesystem::path& target,
                                   const std::filesystem::path& temporary,
                                   std::span<const uint8_t> bytes) {
  UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd.valid()) return failure("create " + temporary.string());
  NNHAL_TRY(pwriteFully(fd.get(), bytes, "write " + temporary.string()));
  if (fsync(fd.get()) != 0) return failure("fsync " + temporary.string());
  fd.reset();
  if (std::rename(temporary.c_str(), target.c_str()) != 0) {
    return failure("rename " + temporary.string() + " to " + target.string());
  }
  const std::filesystem::path directory =
      target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  UniqueFd dir(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return failure("open directory " + directory.string());
  if (fsync(dir.get()) != 0) return failure("fsync directory " + directory.string());
  return {};
}

Result<std::vector<uint8_t>> readFile(const std::filesystem::path& path, size_t limit) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return fail(ErrorStatus::GENERAL_FAILURE, "missing " + path.string());
    return failure("open " + path.string());
  }
  NNHAL_ASSIGN_OR_RETURN(AlignedBuffer buffer, readWhole(fd.get(), limit));
  return std::vector<uint8_t>(buffer.data(), buffer.data() + buffer.size());
}

}  // namespace nnhal::cache
