// nnhal/memory.h — shared-memory pools (the HAL's `hidl_memory` / `Memory`).
//
// A Memory is a reference-counted handle to a region of shared memory backed by a file
// descriptor and mapped once, read-write, into this process. Copies share the same
// mapping; the mapping and the descriptor are released when the last copy goes away
// (RAII). Memory objects are what Model.pools (CONSTANT_REFERENCE operands) and
// Request.pools (inputs and outputs) refer to.
//
// Kinds follow the names the NN HAL uses for `hidl_memory`:
//  - "ashmem": anonymous shared memory. Here a Linux memfd (memfd_create): anonymous,
//    sealed against shrinking, passable to other processes by descriptor, gone when the
//    last descriptor and mapping are gone — the properties ashmem has on Android.
//  - "mmap_fd": any mappable file descriptor with an offset and a length, as the NDK's
//    ANeuralNetworksMemory_createFromFd produces.
//  - "hardware_buffer_blob": emulated AHardwareBuffer of format BLOB: a memfd whose
//    metadata (width = size in bytes, height = layers = 1) travels with the handle.
//
// Thread safety: a Memory handle may be copied and used from any thread. Concurrent
// writes to the same bytes are the caller's business, as with any shared memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "nnhal/status.h"

namespace nnhal {

/// The kind of a shared-memory pool, named as the HAL names hidl_memory kinds.
enum class MemoryKind : int32_t {
  ASHMEM = 0,
  MMAP_FD = 1,
  HARDWARE_BUFFER_BLOB = 2,
};

/// "ashmem", "mmap_fd", "hardware_buffer_blob".
std::string_view toString(MemoryKind kind);

/// Metadata of an emulated AHardwareBuffer of format BLOB (AHardwareBuffer_Desc subset).
struct HardwareBufferDesc {
  uint32_t width = 0;   ///< size in bytes (BLOB buffers are width x 1 x 1)
  uint32_t height = 1;  ///< always 1 for BLOB
  uint32_t layers = 1;  ///< always 1 for BLOB
  uint64_t usage = 0;   ///< usage flags; informational
};

/// A shared-memory pool: an owned file descriptor plus its mapping.
class Memory {
 public:
  /// An empty handle (no memory). `valid()` is false.
  Memory() = default;

  /// Creates a new anonymous pool of `size` bytes, zero-filled, of the given kind
  /// (ASHMEM or HARDWARE_BUFFER_BLOB).
  /// Errors: INVALID_ARGUMENT for size 0 or MMAP_FD kind; RESOURCE_EXHAUSTED_PERSISTENT
  /// when the kernel refuses the memfd or the mapping.
  static Result<Memory> create(size_t size, MemoryKind kind = MemoryKind::ASHMEM);

  /// Creates an immutable pool of `size` bytes (ASHMEM or HARDWARE_BUFFER_BLOB): `fill`
  /// writes its content once, then the memfd is sealed against writes (F_SEAL_WRITE,
  /// F_SEAL_SHRINK, F_SEAL_GROW, F_SEAL_SEAL) and mapped read-only; writable() is false.
  /// nnhald uses such a pool of model constants in place, where it must copy the constants
  /// of any other pool (hal/pool_io.h): the TFLite import puts its weights in one.
  /// Errors: as create(); RESOURCE_EXHAUSTED_PERSISTENT when the kernel refuses the seals.
  static Result<Memory> createSealed(size_t size,
                                     const std::function<void(std::span<uint8_t>)>& fill,
                                     MemoryKind kind = MemoryKind::ASHMEM);

  /// Wraps a descriptor the caller owns: the descriptor is duplicated (the caller keeps
  /// its own), then `size` bytes from `offset` are mapped (`offset` need not be page
  /// aligned). `writable` selects PROT_READ|PROT_WRITE or PROT_READ.
  /// Errors: INVALID_ARGUMENT for a bad descriptor, size 0, offset+size overflow or past
  /// the end of a regular file; GENERAL_FAILURE when mmap fails.
  static Result<Memory> fromFd(int fd, size_t size, size_t offset = 0,
                               MemoryKind kind = MemoryKind::MMAP_FD, bool writable = true);

  bool valid() const { return impl_ != nullptr; }
  MemoryKind kind() const;
  /// Size in bytes of the usable region.
  size_t size() const;
  /// Offset in bytes of the region inside the descriptor (0 for created pools).
  size_t offset() const;
  /// The owned descriptor (still owned by this Memory; dup it to keep it). -1 for the
  /// driver's process-local pools (never handed to clients).
  int fd() const;
  bool writable() const;
  /// Metadata for HARDWARE_BUFFER_BLOB pools; width == size().
  HardwareBufferDesc hardwareBufferDesc() const;

  /// The mapped bytes. Valid while any copy of this handle is alive.
  uint8_t* data() const;
  std::span<uint8_t> bytes() const { return {data(), size()}; }

  /// A process-unique identity of the underlying pool (equal for copies of one handle).
  /// Used to cache per-pool state such as mappings on the other side of IPC.
  uint64_t id() const;

  /// A token that expires when the last copy of this handle is gone (empty for an empty
  /// handle). Lets a holder of per-pool state (the IPC client's table of pools it has sent)
  /// learn that a pool was released without keeping it alive.
  std::weak_ptr<const void> lifetimeToken() const { return impl_; }

  bool operator==(const Memory& other) const { return impl_ == other.impl_; }

  /// The pool's state: opaque, defined where the factories above are (and where the
  /// driver's own process-local pools are made, src/hal/process_memory.h). A Memory can be
  /// built from one only there; null gives an empty handle.
  struct Impl;
  explicit Memory(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

}  // namespace nnhal
