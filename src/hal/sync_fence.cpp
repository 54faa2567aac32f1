// Sync fences over eventfd: signal = add 1 to the counter (never read back, so the
// descriptor stays readable); state and wait = poll for POLLIN.
#include "nnhal/sync_fence.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#if defined(__SANITIZE_THREAD__)
#define NNHAL_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NNHAL_THREAD_SANITIZER 1
#endif
#endif

#ifdef NNHAL_THREAD_SANITIZER
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace nnhal {
namespace {

using Clock = std::chrono::steady_clock;

// ThreadSanitizer cannot see that a thread which saw a fence signalled (poll or epoll said
// readable) comes after the thread that signalled it (an eventfd write in the kernel). These
// annotations tell it, through one shared synchronization address; they compile to nothing
// in other builds.
#ifdef NNHAL_THREAD_SANITIZER
char fenceSynchronization;
void releaseFence() { __tsan_release(&fenceSynchronization); }
void acquireFence() { __tsan_acquire(&fenceSynchronization); }
#else
void releaseFence() {}
void acquireFence() {}
#endif

std::string errnoText(int error) { return std::strerror(error); }

/// Owns `fd`: closed with the last copy.
std::shared_ptr<const int> own(int fd) {
  return std::shared_ptr<const int>(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
}

bool outOfDescriptors(int error) { return error == EMFILE || error == ENFILE || error == ENOMEM; }

/// What poll's `revents` say about a fence.
SyncFence::State stateOf(short revents) {
  if ((revents & (POLLNVAL | POLLERR)) != 0) return SyncFence::State::kError;
  if ((revents & POLLIN) != 0) {
    acquireFence();
    return SyncFence::State::kSignaled;
  }
  // Hang-up without data (a pipe whose writer left): it can never signal.
  if ((revents & POLLHUP) != 0) return SyncFence::State::kError;
  return SyncFence::State::kActive;
}

}  // namespace

Result<SyncFence> SyncFence::create() {
  const int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    return fail(outOfDescriptors(error) ? ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT
                                        : ErrorStatus::GENERAL_FAILURE,
                "SyncFence::create: eventfd failed: " + errnoText(error));
  }
  return SyncFence(own(fd));
}

Result<SyncFence> SyncFence::fromFd(int fd) {
  if (fd < 0) return invalidArgument("sync fence: negative descriptor " + std::to_string(fd));
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    return invalidArgument("sync fence: descriptor " + std::to_string(fd) +
                           " is not open: " + errnoText(errno));
  }
  if (S_ISREG(info.st_mode) || S_ISDIR(info.st_mode)) {
    return invalidArgument("sync fence: descriptor " + std::to_string(fd) +
                           " is a regular file or directory, which cannot be waited on");
  }
  const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (copy < 0) {
    const int error = errno;
    return fail(
        outOfDescriptors(error) ? ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT
                                : ErrorStatus::INVALID_ARGUMENT,
        "sync fence: cannot duplicate descriptor " + std::to_string(fd) + ": " + errnoText(error));
  }
  return SyncFence(own(copy));
}

Result<void> SyncFence::signal() const {
  if (!valid()) return {};
  const uint64_t one = 1;
  releaseFence();  // before the write: a waiter may run as soon as it lands
  while (true) {
    if (::write(*fd_, &one, sizeof(one)) == static_cast<ssize_t>(sizeof(one))) return {};
    if (errno == EINTR) continue;
    // The counter is at its maximum: signalled many times over already.
    if (errno == EAGAIN) return {};
    return fail(ErrorStatus::GENERAL_FAILURE, "SyncFence::signal: cannot write descriptor " +
                                                  std::to_string(*fd_) + ": " + errnoText(errno));
  }
}

SyncFence::State SyncFence::state() const {
  if (!valid()) return State::kSignaled;
  pollfd entry{*fd_, POLLIN, 0};
  while (true) {
    const int ready = ::poll(&entry, 1, 0);
    if (ready > 0) return stateOf(entry.revents);
    if (ready == 0) return State::kActive;
    if (errno != EINTR) return State::kError;
  }
}

Result<void> SyncFence::wait(std::optional<std::chrono::nanoseconds> timeout) const {
  if (!valid()) return {};
  const std::optional<Clock::time_point> deadline =
      timeout ? std::optional(Clock::now() + std::max(*timeout, std::chrono::nanoseconds(0)))
              : std::nullopt;
  pollfd entry{*fd_, POLLIN, 0};
  while (true) {
    timespec remaining{};
    timespec* limit = nullptr;
    if (deadline) {
      const auto left = std::max(*deadline - Clock::now(), Clock::duration::zero());
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      remaining.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
      remaining.tv_nsec = static_cast<long>(ns % 1'000'000'000);
      limit = &remaining;
    }
    entry.revents = 0;
    const int ready = ::ppoll(&entry, 1, limit, nullptr);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "SyncFence::wait: poll failed: " + errnoText(errno));
    }
    if (ready == 0) {
      return fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                  "SyncFence::wait: the fence did not signal in time");
    }
    switch (stateOf(entry.revents)) {
      case State::kSignaled:
        return {};
      case State::kError:
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "SyncFence::wait: the fence is in an error state");
      case State::kActive:
        break;  // spurious: poll again
    }
  }
}

}  // namespace nnhal
