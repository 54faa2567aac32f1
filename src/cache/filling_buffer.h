// cache/filling_buffer.h — a buffer that one thread fills front to back while others
// already read the part that is filled.
//
// Loading a compilation cache reads the data cache (megabytes of packed weights) into
// memory. Instead of reading everything before compiling, the CacheActor fills a
// FillingBuffer chunk by chunk while the compilation runs on another thread and waits only
// for the bytes it is about to use (a header, then each operation's precomputed state, in
// file order). The bytes are read exactly once; readers only ever see bytes the producer
// has published, so nothing is read twice from the file (no time-of-check to time-of-use
// gap) and nothing is read before it was written (no data race).
//
// Protocol: the producer writes into unfilled(), calls publish(n) after the first n bytes
// are final, and ends with exactly one finish() (all size() bytes published) or fail(why).
// Consumers call waitFor(end) before touching bytes [0, end) and waitDone() before relying
// on the whole buffer. A producer that cannot go on must fail() the buffer: waiters block
// until it does. Waiting spins briefly (the producer is usually a chunk away) and then
// sleeps on the atomic (futex).
//
// Thread safety: one producer thread; any number of consumer threads.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "cache/file_io.h"
#include "nnhal/status.h"

namespace nnhal::cache {

class FillingBuffer {
 public:
  /// An empty buffer of `size` bytes (64-byte aligned) for a producer to fill.
  /// Errors: RESOURCE_EXHAUSTED_TRANSIENT when memory is short.
  static Result<std::shared_ptr<FillingBuffer>> allocate(size_t size);
  /// A buffer over `bytes` (whatever they hold: consumers only see what the producer
  /// publishes) for a producer to fill.
  static std::shared_ptr<FillingBuffer> toFill(AlignedBuffer bytes);
  /// A buffer that is already complete: `bytes` (shared, not copied).
  static std::shared_ptr<FillingBuffer> complete(AlignedBuffer bytes);

  FillingBuffer(const FillingBuffer&) = delete;
  FillingBuffer& operator=(const FillingBuffer&) = delete;

  size_t size() const { return bytes_.size(); }
  const uint8_t* data() const { return bytes_.data(); }
  /// Keeps the bytes alive (for spans handed to a compiled plan).
  std::shared_ptr<const void> owner() const { return bytes_.owner(); }

  // --- consumers -----------------------------------------------------------------------

  /// Blocks until bytes [0, end) are published (`end` is clamped to size()).
  /// Errors: GENERAL_FAILURE with the producer's reason when it failed before `end`.
  Result<void> waitFor(size_t end) const;
  /// Blocks until the producer finished or failed. Errors: GENERAL_FAILURE (its reason).
  Result<void> waitDone() const;
  /// All bytes; only meaningful after waitDone() succeeded.
  std::span<const uint8_t> bytes() const { return bytes_.bytes(); }

  // --- the producer --------------------------------------------------------------------

  /// Where the producer writes (all size() bytes; it must not change published ones).
  uint8_t* unfilled() const { return bytes_.data(); }
  /// The first `filled` bytes are final (monotonic: a smaller value is ignored).
  void publish(size_t filled);
  /// Every byte is published; wakes all waiters.
  void finish();
  /// The rest never comes: waiters for unpublished bytes get `why` (GENERAL_FAILURE).
  /// Ignored after finish() or a first fail().
  void fail(std::string why);

 private:
  explicit FillingBuffer(AlignedBuffer bytes) : bytes_(std::move(bytes)) {}

  // state_ = published byte count | kDone or kFailed in the top bits (sizes are < 2^62).
  static constexpr uint64_t kDone = uint64_t{1} << 63;
  static constexpr uint64_t kFailed = uint64_t{1} << 62;
  static constexpr uint64_t kCountMask = kFailed - 1;

  void store(uint64_t state);
  uint64_t await(uint64_t seen) const;

  AlignedBuffer bytes_;
  std::atomic<uint64_t> state_{0};
  std::string failure_;  ///< written once, before kFailed is published
};

/// Fills `buffer` from the file behind `fd` (from byte 0, in chunks of `chunkBytes`,
/// publishing each), then finishes it; or fails it and returns GENERAL_FAILURE when the
/// file cannot be read, is shorter than the buffer (it shrank since it was measured), or
/// longer (it grew). Always finishes or fails the buffer.
Result<void> fillFromFile(int fd, FillingBuffer& buffer, size_t chunkBytes);

}  // namespace nnhal::cache
