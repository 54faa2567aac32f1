// nnhal/sync_fence.h — a sync fence: a pollable descriptor that is signalled once
// (NN HAL 1.3 executeFenced: the `waitFor` fences and the returned `syncFence`).
//
// The driver's own fences are Linux eventfds (EFD_CLOEXEC | EFD_NONBLOCK): signal() adds 1
// to the counter and nothing ever reads it, so the descriptor stays readable (POLLIN) for
// good. A fence received from a client may be any descriptor epoll can watch (an eventfd,
// a pipe's read end, an Android sync_file): it counts as signalled once it polls readable.
// Fences pass to other processes as plain descriptors (SCM_RIGHTS); signalling any
// duplicate, in any process, signals them all.
//
// Thread safety: a SyncFence is a value (copies share one descriptor); every method is
// const and may be called from any thread, concurrently.
#pragma once

#include <chrono>
#include <memory>
#include <optional>

#include "nnhal/status.h"

namespace nnhal {

class SyncFence {
 public:
  /// kActive: not signalled yet. kSignaled: signalled (stays so). kError: the descriptor
  /// reports an error condition (POLLERR, e.g. a pipe whose other end is gone) or is no
  /// longer a valid descriptor; it will never signal.
  enum class State { kActive, kSignaled, kError };

  /// The empty fence: already signalled (HAL 1.3: an empty handle). fd() is -1.
  SyncFence() = default;

  /// A new, unsignalled eventfd fence. Errors: RESOURCE_EXHAUSTED_TRANSIENT when the
  /// process or system is out of descriptors, GENERAL_FAILURE otherwise.
  static Result<SyncFence> create();

  /// Wraps a duplicate of `fd` (dup with FD_CLOEXEC; the caller keeps and closes its own).
  /// Errors: INVALID_ARGUMENT when `fd` is negative or not an open descriptor, or is a
  /// regular file or directory (those cannot be waited on: poll always reports them
  /// readable and epoll refuses them); RESOURCE_EXHAUSTED_TRANSIENT when dup fails for
  /// lack of descriptors.
  static Result<SyncFence> fromFd(int fd);

  /// False for the empty fence.
  bool valid() const { return fd_ != nullptr; }
  /// The descriptor, owned by this fence (and its copies); -1 when empty.
  int fd() const { return fd_ ? *fd_ : -1; }

  /// Signals the fence (eventfd write of 1). Idempotent. The empty fence is already
  /// signalled: a no-op. Errors: GENERAL_FAILURE when the descriptor cannot be written
  /// (not an eventfd, or a write error).
  Result<void> signal() const;

  /// Polls the descriptor without waiting. The empty fence is kSignaled.
  State state() const;

  /// Waits until the fence signalled, for at most `timeout` (none = forever). Errors:
  /// MISSED_DEADLINE_TRANSIENT on timeout; GENERAL_FAILURE when the fence is in error
  /// (State::kError) or poll fails. Blocks the calling thread: drivers use asynchronous
  /// waits instead (see actors/fenced_execution.h).
  Result<void> wait(std::optional<std::chrono::nanoseconds> timeout = std::nullopt) const;

 private:
  explicit SyncFence(std::shared_ptr<const int> fd) : fd_(std::move(fd)) {}

  /// The owned descriptor; closed when the last copy goes.
  std::shared_ptr<const int> fd_;
};

}  // namespace nnhal
