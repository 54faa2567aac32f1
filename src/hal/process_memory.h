// hal/process_memory.h — Memory pools that exist only inside the driver's process.
//
// A Model rebuilt from a compilation cache needs pools for its CONSTANT_REFERENCE
// operands, but nothing ever passes those pools to another process. Creating them as
// shared memory (a memfd, a mapping and a page fault per page written) would cost more than
// the rest of the load, so the cache layer uses these instead:
//  - borrowedPool: a read-only view of bytes the driver already holds (the data cache read
//    into memory), kept alive by `owner`. No copy, no descriptor.
//  - writableBorrowedPool: the same over bytes the driver will write (an execution's output
//    into a driver-managed buffer, actors/request_binding.h).
//  - lazyZeroPool: `size` zero bytes in a private anonymous mapping (MAP_NORESERVE) that
//    takes memory only where it is written; it stands in for constants the cache left out.
// Both have fd() == -1 and kind() ASHMEM; they must never be sent to another process.
//
// Thread safety: as for any Memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "nnhal/memory.h"
#include "nnhal/status.h"

namespace nnhal::hal {

/// A read-only pool over `size` bytes at `data`, alive while the pool is (it holds `owner`).
Memory borrowedPool(const uint8_t* data, size_t size, std::shared_ptr<const void> owner);

/// A writable pool over `size` bytes at `data`, alive while the pool is (it holds `owner`).
Memory writableBorrowedPool(uint8_t* data, size_t size, std::shared_ptr<const void> owner);

/// A private pool of `size` zero bytes that costs memory only where written.
/// Errors: INVALID_ARGUMENT for size 0; RESOURCE_EXHAUSTED_TRANSIENT when mmap fails.
Result<Memory> lazyZeroPool(size_t size);

/// The pools the driver builds itself (in src/hal/memory.cpp, beside Memory::Impl): over
/// process-local bytes, lazily zeroed, and over the descriptors of client pools.
struct MemoryAccess {
  static Memory borrowed(const uint8_t* data, size_t size, std::shared_ptr<const void> owner);
  static Memory borrowedWritable(uint8_t* data, size_t size, std::shared_ptr<const void> owner);
  static Result<Memory> lazyZeros(size_t size);
  /// Takes ownership of `fd` (and of the mapping, when `mapBase` is not null): the pools of
  /// hal/pool_io.h. Null `mapBase`: a client file read and written with pread/pwrite.
  /// borrowed / borrowedWritable.
  static Memory borrowedAs(uint8_t* data, size_t size, bool writable,
                           std::shared_ptr<const void> owner);
  static Memory clientPool(int fd, MemoryKind kind, size_t size, size_t offset, bool writable,
                           uint8_t* mapBase, size_t mapLength);
};

}  // namespace nnhal::hal
