// common/unique_fd.h — the owner of one file descriptor, closed on destruction.
//
// Shared by the cache layer (cache files, state files, locks) and the IPC layer (sockets and
// the descriptors a frame carries).
//
// Thread safety: a plain object, owned by one thread at a time.
#pragma once

namespace nnhal::common {

/// Owns a file descriptor (closed on destruction).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

 private:
  int fd_ = -1;
};

}  // namespace nnhal::common
