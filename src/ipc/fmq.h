// ipc/fmq.h — a fast message queue: a bounded single-producer/single-consumer ring of
// fixed-size elements in shared memory, as the NN HAL's FMQ (kSynchronizedReadWrite).
//
// Layout of the shared segment (a sealed memfd; docs/BURST.md):
//   [0, 64)      geometry: magic "NNFQ", version, element size, capacity (informative)
//   [64, 128)    the producer's line: writeCount (u64, elements ever written)
//   [128, 192)   the consumer's line: readCount (u64, elements ever read)
//   [192, 256)   event flag of the consumer: notEmpty (u32 futex word), consumerWaiting (u32)
//   [256, 320)   event flag of the producer: notFull (u32 futex word), producerWaiting (u32)
//   [512, ...)   capacity x elementSize bytes of elements
// The counters only grow; element i lives at index i % capacity. The producer and consumer
// indices are on separate cache lines so that neither side's writes invalidate the other's.
//
// Trust: the peer shares the segment and may write anything into it at any time. Each side
// keeps its own counter in process memory and publishes it; it reads the peer's counter
// once per operation and treats an impossible value (more elements than the capacity
// written ahead, or read behind) as a broken queue (Status::kBroken), never as a size to
// copy. Geometry comes from the creator's descriptor, never from the segment. The creator
// seals the memfd (no shrinking or growing), so the mapping can never fault. A peer that
// scribbles over the event words only causes spurious wake-ups or late ones; every sleep is
// bounded by a slice (WaitPolicy::slice) after which the waiter checks its stop condition.
//
// Waiting: a receiver polls for WaitPolicy::pollWindow (checking, pausing and yielding the
// core with sched_yield, so two processes on one core still make progress), then sleeps on
// the futex of the event flag. Writers wake a sleeping peer with one FUTEX_WAKE; when the
// peer is polling, a write costs no system call.
//
// Thread safety: one producer thread and one consumer thread at a time per queue (the
// owner serializes its own calls); wake() may be called from any thread.
#pragma once

#include <atomic>
#include <boost/interprocess/mapped_region.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "common/unique_fd.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::ipc {

/// What crosses processes to name a queue: the descriptor travels beside it (SCM_RIGHTS).
struct FmqDescriptor {
  uint32_t elementSize = 0;  ///< bytes of one element
  uint32_t capacity = 0;     ///< elements the ring holds
  bool operator==(const FmqDescriptor&) const = default;
};

/// Default queue length of a burst channel (AOSP kExecutionBurstChannelLength).
inline constexpr uint32_t kDefaultFmqLength = 1024;
/// Longest queue accepted (elements) and largest element (bytes).
inline constexpr uint32_t kMaxFmqLength = 1u << 16;
inline constexpr uint32_t kMaxFmqElementSize = 4096;
/// Bytes before the first element.
inline constexpr size_t kFmqHeaderBytes = 512;

/// How a blocking call waits.
struct FmqWaitPolicy {
  /// Time spent polling before sleeping on the futex (0 = sleep at once).
  std::chrono::nanoseconds pollWindow{std::chrono::microseconds(50)};
  /// Longest single sleep; `keepWaiting` is asked after each.
  std::chrono::nanoseconds slice{std::chrono::milliseconds(50)};
  /// Steady-clock time after which the call gives up with kTimedOut (none = never).
  OptionalTimePoint deadline;
  /// Asked between sleeps (and while polling, now and then); false ends the wait with
  /// kStopped. Empty = always keep waiting.
  std::function<bool()> keepWaiting;
};

class Fmq {
 public:
  enum class Status {
    kOk,        ///< done
    kTimedOut,  ///< the deadline passed first
    kStopped,   ///< keepWaiting returned false, or wake() was called for teardown
    kBroken,    ///< the peer published an impossible counter; the queue is unusable
  };

  /// Creates a queue in a new sealed memfd. Errors: INVALID_ARGUMENT for a zero or too
  /// large geometry; RESOURCE_EXHAUSTED_PERSISTENT when the kernel refuses the memory.
  static Result<Fmq> create(FmqDescriptor geometry);
  /// Maps a queue another process created. The descriptor must be a memfd sealed against
  /// shrinking and at least as large as the geometry needs. Errors: INVALID_ARGUMENT.
  static Result<Fmq> attach(common::UniqueFd fd, FmqDescriptor geometry);

  Fmq() = default;
  Fmq(Fmq&&) noexcept;
  Fmq& operator=(Fmq&&) noexcept;
  Fmq(const Fmq&) = delete;
  Fmq& operator=(const Fmq&) = delete;
  ~Fmq();

  bool valid() const { return control_ != nullptr; }
  const FmqDescriptor& descriptor() const { return geometry_; }
  /// The memfd (owned; dup it to keep it).
  int fd() const { return fd_.get(); }
  /// Bytes of the whole segment for a geometry.
  static size_t segmentBytes(FmqDescriptor geometry);

  /// Elements ready to read (0 when the queue is broken).
  size_t availableToRead() const;
  /// Room in elements (0 when the queue is broken).
  size_t availableToWrite() const;
  bool broken() const { return broken_; }

  /// Writes all of `elements` (elementSize each, contiguous) at once, or nothing: kOk, or
  /// kTimedOut at once when there is no room (non-blocking), kBroken.
  Status write(std::span<const std::byte> elements);
  /// Waits for room for the whole packet, then writes it. A packet longer than the
  /// capacity can never be written: kBroken is not used for it, the caller checks first.
  Status writeBlocking(std::span<const std::byte> elements, const FmqWaitPolicy& policy);
  /// Reads exactly out.size() / elementSize elements when that many are ready (kOk), else
  /// nothing (kTimedOut, at once).
  Status read(std::span<std::byte> out);
  /// Waits until at least one element is ready, then reads every ready element (at most
  /// the capacity) into `out`, resized to the bytes read: a whole packet that the producer
  /// wrote with one write.
  Status readAvailableBlocking(std::vector<std::byte>& out, const FmqWaitPolicy& policy);

  /// Wakes whoever sleeps on this queue, in this process or the peer (teardown: a waiter
  /// then asks keepWaiting at once).
  void wake();

 private:
  struct Control;
  Fmq(common::UniqueFd fd, FmqDescriptor geometry, boost::interprocess::mapped_region region);
  /// Waits until `ready()` or the policy ends the wait, on the futex `word` whose
  /// `waiting` flag tells the peer to wake us.
  Status waitFor(const std::function<bool()>& ready, std::atomic<uint32_t>& word,
                 std::atomic<uint32_t>& waiting, const FmqWaitPolicy& policy);
  /// The peer's counter, validated; false marks the queue broken.
  bool peerWriteCount(uint64_t& count) const;
  bool peerReadCount(uint64_t& count) const;
  void copyIn(uint64_t at, std::span<const std::byte> elements);
  void copyOut(uint64_t at, std::span<std::byte> out) const;

  common::UniqueFd fd_;
  FmqDescriptor geometry_;
  boost::interprocess::mapped_region region_;
  Control* control_ = nullptr;
  std::byte* ring_ = nullptr;
  // Each side's own counters, kept in process memory (the shared copies are published).
  uint64_t written_ = 0;
  uint64_t read_ = 0;
  mutable bool broken_ = false;
};

}  // namespace nnhal::ipc
