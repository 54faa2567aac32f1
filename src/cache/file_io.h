// cache/file_io.h — descriptor-level file I/O for cache files and driver state files.
//
// Cache files arrive as descriptors owned by the client: any size, any offset, maybe
// without read or write access. Everything here ignores the descriptor's offset (pread /
// pwrite from byte 0), truncates before writing, bounds every read by a size limit, and
// reports failures as GENERAL_FAILURE with the operation and errno text. Nothing here
// throws or crashes on a bad descriptor.
//
// Thread safety: the functions are thread-safe; FileLock and UniqueFd are owned by one thread
// at a time. Locks are flock() locks: shared ones exclude exclusive ones across processes and
// across separately opened descriptions of the same file (descriptors dup()ed from one
// another share one lock).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "nnhal/status.h"

namespace nnhal::cache {

/// The descriptor owner of common/unique_fd.h, under the name cache code has always used.
using common::UniqueFd;

/// dup()s `fd` (close-on-exec). Errors: GENERAL_FAILURE for a bad descriptor.
Result<UniqueFd> duplicate(int fd);

/// Access of an open descriptor. Errors: GENERAL_FAILURE for a bad descriptor.
struct FdAccess {
  bool readable = false;
  bool writable = false;
};
Result<FdAccess> accessOf(int fd);

/// 64-byte aligned, uninitialized bytes, shareable (the owner keeps them alive).
class AlignedBuffer {
 public:
  static constexpr size_t kAlignment = 64;
  AlignedBuffer() = default;
  /// Allocates `size` bytes. Errors: RESOURCE_EXHAUSTED_TRANSIENT when memory is short.
  static Result<AlignedBuffer> allocate(size_t size);
  /// Wraps `size` bytes at `data` (kAlignment-aligned), released by `data`'s deleter.
  static AlignedBuffer adopt(std::shared_ptr<uint8_t> data, size_t size) {
    AlignedBuffer buffer;
    buffer.data_ = std::move(data);
    buffer.size_ = size;
    return buffer;
  }

  uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_.get(), size_}; }
  std::span<uint8_t> mutableBytes() const { return {data_.get(), size_}; }
  /// Keeps the bytes alive (for ExecutionPlan::retained).
  std::shared_ptr<const void> owner() const { return data_; }
  /// Shrinks the visible size (the allocation stays).
  void truncate(size_t size) {
    if (size < size_) size_ = size;
  }

 private:
  std::shared_ptr<uint8_t> data_;
  size_t size_ = 0;
};

/// Holds a flock() lock; released on destruction.
class FileLock {
 public:
  FileLock() = default;
  ~FileLock();
  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

  /// Locks `fd` (shared or exclusive), retrying for at most `timeout`.
  /// Errors: GENERAL_FAILURE on timeout or a bad descriptor.
  static Result<FileLock> acquire(int fd, bool exclusive, std::chrono::milliseconds timeout);
  /// One non-blocking attempt; `busy` is set when another holder has the lock (the error
  /// is then GENERAL_FAILURE "locked by another reader or writer").
  static Result<FileLock> tryAcquire(int fd, bool exclusive, bool& busy);

 private:
  int fd_ = -1;
};

/// Succeeds when `fd` is a regular file on a file system other than FUSE. Errors:
/// GENERAL_FAILURE naming the file type ("the descriptor is a pipe, not a regular file").
Result<void> checkRegularFile(int fd);

/// The size of the file behind `fd`. Errors: GENERAL_FAILURE when it cannot be measured or
/// is larger than `limit` bytes.
Result<size_t> sizeWithin(int fd, size_t limit);

/// Fills `buffer` from byte `offset` of the file behind `fd` (retrying short reads and
/// EINTR; the descriptor's offset is ignored and unchanged). Errors: GENERAL_FAILURE when
/// unreadable, or when the file ends first ("file shrank while being read").
Result<void> readExactlyAt(int fd, std::span<uint8_t> buffer, uint64_t offset);

/// Checks that the file behind `fd` ends at byte `size`. Errors: GENERAL_FAILURE when
/// unreadable or longer ("file grew while being read").
Result<void> expectEndAt(int fd, uint64_t size);

/// Reads the whole file behind `fd` from byte 0 (its offset is ignored and unchanged).
/// Errors: GENERAL_FAILURE when unreadable, larger than `limit`, or changing size while read.
Result<AlignedBuffer> readWhole(int fd, size_t limit);

/// Replaces the contents of the file behind `fd` with `bytes`: truncates to 0, then writes
/// from byte 0 (its offset is ignored and unchanged). Errors: GENERAL_FAILURE.
Result<void> rewriteWhole(int fd, std::span<const uint8_t> bytes);

/// Replaces `target` crash-safely: writes `temporary`, fsyncs it, renames it over `target`,
/// fsyncs the directory. A crash at any point leaves either the old or the new file.
/// Errors: GENERAL_FAILURE naming the step that failed.
Result<void> replaceFileAtomically(const std::filesystem::path& target,
                                   const std::filesystem::path& temporary,
                                   std::span<const uint8_t> bytes);

/// Reads the file at `path` (at most `limit` bytes). Errors: GENERAL_FAILURE; the message
/// starts with "missing" when the file does not exist.
Result<std::vector<uint8_t>> readFile(const std::filesystem::path& path, size_t limit);

/// "<what>: <strerror(errno)>".
std::string errnoText(const std::string& what);

}  // namespace nnhal::cache
