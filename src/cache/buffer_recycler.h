// cache/buffer_recycler.h — keeps the large buffers of finished cache loads for later loads.
//
// A load reads its data cache (megabytes of packed weights) into a private buffer that lives
// as long as the prepared model. Whether malloc hands the next load warm pages or fresh
// ones (one page fault and one zeroed page per 4 KiB, more than the read itself) depends on
// its heap layout and trimming heuristics, which made load times bimodal. A BufferRecycler
// makes reuse deterministic: when the last owner of a buffer it made lets go, the buffer
// comes back here (if there is room) instead of going back to malloc, and the next
// allocation of a similar size gets it, pages already mapped.
//
// New buffers of at least `minBytes` are private anonymous mappings rounded up to 2 MiB and
// marked for transparent huge pages (MADV_HUGEPAGE, a hint): a first load in a fresh process
// then pays one page fault per 2 MiB instead of one per 4 KiB (cold loads of MobileNet v2's
// 3.7 MB data cache: ~1.0 ms instead of 1.7-3.0 ms here), and kernels reading packed weights
// in place need fewer TLB entries. Smaller buffers come from the heap.
//
// Bounds: only buffers of at least `minBytes` are recycled (smaller ones are cheap anyway);
// at most `maxBuffers` and `maxBytes` are kept at any time (a buffer that does not fit is
// unmapped at once); a kept buffer is reused for sizes in [capacity / 2, capacity]. Buffers
// still owned when the recycler is destroyed are freed normally when released. A reused
// buffer holds the bytes of an earlier load: callers must write before they read (the
// FillingBuffer protocol guarantees it).
//
// Thread safety: allocate() and the return of buffers may happen on any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "cache/file_io.h"
#include "nnhal/status.h"

namespace nnhal::cache {

class BufferRecycler : public std::enable_shared_from_this<BufferRecycler> {
 public:
  struct Limits {
    size_t minBytes = size_t{1} << 20;   ///< smaller buffers are not recycled
    size_t maxBuffers = 4;               ///< kept at most
    size_t maxBytes = size_t{64} << 20;  ///< capacity kept at most, in bytes
  };

  static std::shared_ptr<BufferRecycler> create(Limits limits);
  static std::shared_ptr<BufferRecycler> create() { return create(Limits{}); }
  ~BufferRecycler();
  BufferRecycler(const BufferRecycler&) = delete;
  BufferRecycler& operator=(const BufferRecycler&) = delete;

  /// A 64-byte aligned buffer of `size` bytes with unspecified contents: a kept one when
  /// one fits, otherwise a new one (of `size` rounded up to 2 MiB when at least minBytes).
  /// Errors: RESOURCE_EXHAUSTED_TRANSIENT.
  Result<AlignedBuffer> allocate(size_t size);

  /// Buffers kept for reuse now, and their capacity in bytes.
  size_t keptBuffers() const;
  size_t keptBytes() const;

 private:
  struct Kept {
    uint8_t* data = nullptr;
    size_t capacity = 0;
  };
  explicit BufferRecycler(Limits limits) : limits_(limits) {}
  /// Takes back a released buffer; false when there is no room (the caller frees it).
  bool keep(uint8_t* data, size_t capacity);

  Limits limits_;
  mutable std::mutex mutex_;
  std::vector<Kept> kept_;  // most recently returned last
  size_t keptBytes_ = 0;
};

}  // namespace nnhal::cache
