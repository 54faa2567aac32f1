#include "ipc/fmq.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <boost/interprocess/detail/os_file_functions.hpp>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>

namespace nnhal::ipc {

struct Fmq::Control {
  alignas(64) uint32_t magic;
  uint32_t version;
  uint32_t elementSize;
  uint32_t capacity;
  alignas(64) std::atomic<uint64_t> writeCount;
  alignas(64) std::atomic<uint64_t> readCount;
  alignas(64) std::atomic<uint32_t> notEmpty;
  std::atomic<uint32_t> consumerWaiting;
  alignas(64) std::atomic<uint32_t> notFull;
  std::atomic<uint32_t> producerWaiting;
};

namespace {

constexpr uint32_t kMagic = 0x5146'4e4e;  // "NNFQ" little-endian
constexpr uint32_t kVersion = 1;
static_assert(sizeof(std::atomic<uint64_t>) == 8 && std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

/// Boost.Interprocess maps "memory mappable" objects; a memfd we own is one.
class FdMappable {
 public:
  explicit FdMappable(int fd) : fd_(fd) {}
  boost::interprocess::mapping_handle_t get_mapping_handle() const {
    return boost::interprocess::ipcdetail::mapping_handle_from_file_handle(fd_);
  }

 private:
  int fd_;
};

void futexWait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::nanoseconds timeout) {
  if (timeout <= std::chrono::nanoseconds::zero()) return;
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000'000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000'000);
  // Shared between processes: not FUTEX_PRIVATE_FLAG. EAGAIN (word changed), EINTR and
  // ETIMEDOUT all mean "look again".
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futexWake(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, INT32_MAX, nullptr, nullptr,
          0);
}

/// Publishes an event: bumps the futex word and wakes the peer if it said it sleeps.
void signalEvent(std::atomic<uint32_t>& word, std::atomic<uint32_t>& waiting) {
  word.fetch_add(1, std::memory_order_seq_cst);
  if (waiting.load(std::memory_order_seq_cst) != 0) futexWake(word);
}

inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

}  // namespace

size_t Fmq::segmentBytes(FmqDescriptor geometry) {
  const size_t bytes = kFmqHeaderBytes + size_t{geometry.capacity} * geometry.elementSize;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

namespace {

Result<void> checkGeometry(FmqDescriptor geometry) {
  if (geometry.capacity == 0 || geometry.capacity > kMaxFmqLength) {
    return invalidArgument("queue length " + std::to_string(geometry.capacity) +
                           " must be in [1, " + std::to_string(kMaxFmqLength) + "]");
  }
  if (geometry.elementSize == 0 || geometry.elementSize > kMaxFmqElementSize) {
    return invalidArgument("queue element size " + std::to_string(geometry.elementSize) +
                           " must be in [1, " + std::to_string(kMaxFmqElementSize) + "]");
  }
  return {};
}

}  // namespace

Fmq::Fmq(common::UniqueFd fd, FmqDescriptor geometry, boost::interprocess::mapped_region region)
    : fd_(std::move(fd)), geometry_(geometry), region_(std::move(region)) {
  control_ = static_cast<Control*>(region_.get_address());
  ring_ = static_cast<std::byte*>(region_.get_address()) + kFmqHeaderBytes;
}

Fmq::Fmq(Fmq&& other) noexcept { *this = std::move(other); }

Fmq& Fmq::operator=(Fmq&& other) noexcept {
  fd_ = std::move(other.fd_);
  geometry_ = other.geometry_;
  region_.swap(other.region_);
  control_ = std::exchange(other.control_, nullptr);
  ring_ = std::exchange(other.ring_, nullptr);
  written_ = other.written_;
  read_ = other.read_;
  broken_ = other.broken_;
  return *this;
}

Fmq::~Fmq() = default;

Result<Fmq> Fmq::create(FmqDescriptor geometry) {
  NNHAL_TRY(checkGeometry(geometry));
  common::UniqueFd fd(memfd_create("nnhal-fmq", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!fd.valid()) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT,
                std::string("memfd_create for a message queue: ") + std::strerror(errno));
  }
  const size_t bytes = segmentBytes(geometry);
  if (ftruncate(fd.get(), static_cast<off_t>(bytes)) != 0 ||
      fcntl(fd.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT,
                std::string("sizing a message queue: ") + std::strerror(errno));
  }
  try {
    boost::interprocess::mapped_region region(FdMappable(fd.get()), boost::interprocess::read_write,
                                              0, bytes);
    Fmq queue(std::move(fd), geometry, std::move(region));
    // The memfd is zero-filled: counters and event words start at 0.
    queue.control_->magic = kMagic;
    queue.control_->version = kVersion;
    queue.control_->elementSize = geometry.elementSize;
    queue.control_->capacity = geometry.capacity;
    return queue;
  } catch (const boost::interprocess::interprocess_exception& e) {
    return fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT,
                std::string("mapping a message queue: ") + e.what());
  }
}

Result<Fmq> Fmq::attach(common::UniqueFd fd, FmqDescriptor geometry) {
  NNHAL_TRY(checkGeometry(geometry));
  if (!fd.valid()) return invalidArgument("message queue: no descriptor");
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return invalidArgument("message queue: the descriptor is not a memfd");
  }
  const int seals = fcntl(fd.get(), F_GET_SEALS);
  if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
    return invalidArgument("message queue: the memfd is not sealed against shrinking");
  }
  const size_t bytes = segmentBytes(geometry);
  if (static_cast<uint64_t>(st.st_size) < bytes) {
    return invalidArgument("message queue: " + std::to_string(st.st_size) +
                           " bytes, the geometry needs " + std::to_string(bytes));
  }
  try {
    boost::interprocess::mapped_region region(FdMappable(fd.get()), boost::interprocess::read_write,
                                              0, bytes);
    return Fmq(std::move(fd), geometry, std::move(region));
  } catch (const boost::interprocess::interprocess_exception& e) {
    return invalidArgument(std::string("message queue: cannot map it: ") + e.what());
  }
}

bool Fmq::peerWriteCount(uint64_t& count) const {
  count = control_->writeCount.load(std::memory_order_acquire);
  if (count - read_ > geometry_.capacity) broken_ = true;
  return !broken_;
}

bool Fmq::peerReadCount(uint64_t& count) const {
  count = control_->readCount.load(std::memory_order_acquire);
  if (count > written_ || written_ - count > geometry_.capacity) broken_ = true;
  return !broken_;
}

size_t Fmq::availableToRead() const {
  uint64_t written = 0;
  if (!valid() || !peerWriteCount(written)) return 0;
  return static_cast<size_t>(written - read_);
}

size_t Fmq::availableToWrite() const {
  uint64_t read = 0;
  if (!valid() || !peerReadCount(read)) return 0;
  return static_cast<size_t>(geometry_.capacity - (written_ - read));
}

void Fmq::copyIn(uint64_t at, std::span<const std::byte> elements) {
  const size_t size = geometry_.elementSize;
  const size_t count = elements.size() / size;
  const size_t first = static_cast<size_t>(at % geometry_.capacity);
  const size_t head = std::min(count, geometry_.capacity - first);
  std::memcpy(ring_ + first * size, elements.data(), head * size);
  std::memcpy(ring_, elements.data() + head * size, (count - head) * size);
}

void Fmq::copyOut(uint64_t at, std::span<std::byte> out) const {
  const size_t size = geometry_.elementSize;
  const size_t count = out.size() / size;
  const size_t first = static_cast<size_t>(at % geometry_.capacity);
  const size_t head = std::min(count, geometry_.capacity - first);
  std::memcpy(out.data(), ring_ + first * size, head * size);
  std::memcpy(out.data() + head * size, ring_, (count - head) * size);
}

Fmq::Status Fmq::write(std::span<const std::byte> elements) {
  if (!valid() || broken_) return Status::kBroken;
  const size_t count = elements.size() / geometry_.elementSize;
  if (count * geometry_.elementSize != elements.size() || count > availableToWrite()) {
    return broken_ ? Status::kBroken : Status::kTimedOut;
  }
  copyIn(written_, elements);
  written_ += count;
  control_->writeCount.store(written_, std::memory_order_release);
  signalEvent(control_->notEmpty, control_->consumerWaiting);
  return Status::kOk;
}

Fmq::Status Fmq::read(std::span<std::byte> out) {
  if (!valid() || broken_) return Status::kBroken;
  const size_t count = out.size() / geometry_.elementSize;
  if (count * geometry_.elementSize != out.size() || count > availableToRead()) {
    return broken_ ? Status::kBroken : Status::kTimedOut;
  }
  copyOut(read_, out);
  read_ += count;
  control_->readCount.store(read_, std::memory_order_release);
  signalEvent(control_->notFull, control_->producerWaiting);
  return Status::kOk;
}

Fmq::Status Fmq::waitFor(const std::function<bool()>& ready, std::atomic<uint32_t>& word,
                         std::atomic<uint32_t>& waiting, const FmqWaitPolicy& policy) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto pollEnd = start + policy.pollWindow;
  // Polling: check, pause, and every few rounds give the core away.
  for (uint32_t round = 0;; ++round) {
    if (ready()) return Status::kOk;
    if (broken_) return Status::kBroken;
    if ((round & 63) == 63) {
      const auto now = Clock::now();
      if (now >= pollEnd) break;
      if (policy.deadline && now >= *policy.deadline) return Status::kTimedOut;
      if (policy.keepWaiting && !policy.keepWaiting()) return Status::kStopped;
    }
    if ((round & 7) == 7) {
      sched_yield();
    } else {
      cpuRelax();
    }
    if (policy.pollWindow <= std::chrono::nanoseconds::zero()) break;
  }
  // Sleeping on the futex, one bounded slice at a time.
  for (;;) {
    waiting.store(1, std::memory_order_seq_cst);
    const uint32_t seen = word.load(std::memory_order_seq_cst);
    if (ready() || broken_) {
      waiting.store(0, std::memory_order_relaxed);
      return broken_ ? Status::kBroken : Status::kOk;
    }
    if (policy.keepWaiting && !policy.keepWaiting()) {
      waiting.store(0, std::memory_order_relaxed);
      return Status::kStopped;
    }
    auto sleep = policy.slice;
    if (policy.deadline) {
      const auto left = *policy.deadline - Clock::now();
      if (left <= Clock::duration::zero()) {
        waiting.store(0, std::memory_order_relaxed);
        return Status::kTimedOut;
      }
      sleep = std::min(sleep, std::chrono::duration_cast<std::chrono::nanoseconds>(left));
    }
    futexWait(word, seen, sleep);
  }
}

Fmq::Status Fmq::writeBlocking(std::span<const std::byte> elements, const FmqWaitPolicy& policy) {
  if (!valid() || broken_) return Status::kBroken;
  const size_t count = elements.size() / geometry_.elementSize;
  if (count > geometry_.capacity) return Status::kTimedOut;
  const Status room = waitFor([&] { return availableToWrite() >= count; }, control_->notFull,
                              control_->producerWaiting, policy);
  if (room != Status::kOk) return room;
  return write(elements);
}

Fmq::Status Fmq::readAvailableBlocking(std::vector<std::byte>& out, const FmqWaitPolicy& policy) {
  if (!valid() || broken_) return Status::kBroken;
  const Status ready = waitFor([&] { return availableToRead() > 0; }, control_->notEmpty,
                               control_->consumerWaiting, policy);
  if (ready != Status::kOk) return ready;
  const size_t count = availableToRead();
  if (broken_) return Status::kBroken;
  out.resize(count * geometry_.elementSize);
  return read(out);
}

void Fmq::wake() {
  if (!valid()) return;
  control_->notEmpty.fetch_add(1, std::memory_order_seq_cst);
  control_->notFull.fetch_add(1, std::memory_order_seq_cst);
  futexWake(control_->notEmpty);
  futexWake(control_->notFull);
}

}  // namespace nnhal::ipc
