// hal/pool_io.h — memory pools whose bytes another process can change, and the only ways
// the driver reads and writes them.
//
// A pool that arrives from another process (nnhald's clients) is untrusted: its owner can
// rewrite it at any moment and, for a plain file, shrink it (a read of a mapped page past
// the new end is SIGBUS). adoptClientPool accepts only descriptors that can be used safely:
//  - memfd pools sealed with F_SEAL_SHRINK (the ashmem and hardware_buffer_blob kinds must
//    be; Memory::create seals its pools that way): mapped once, since they can never shrink;
//  - regular files (mmap_fd), unsealed: never mapped. The driver reads and writes them with
//    pread/pwrite, so a file that shrank gives a short read (GENERAL_FAILURE), never a fault.
// Character and block devices, pipes, sockets, directories, FUSE files (whose reads a
// client-run file system could stall forever) and ranges past the end of the file are
// refused with GENERAL_FAILURE naming the pool.
//
// Every Memory backed by a descriptor counts as shared (isShared): the engine reads its
// inputs once into driver memory and writes outputs back at the end (engine/request_staging.h),
// so nothing a kernel uses as an index, size or shape is read twice from shared memory. Only
// arguments kernels use as plain values, in pools this process made (usableInPlace), are used
// where they lie.
//
// Thread safety: the functions are thread-safe; see nnhal/memory.h for Memory itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "nnhal/memory.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal {

/// Builds a Memory for `size` bytes at `offset` of a descriptor sent by another process
/// (the descriptor is duplicated; the caller keeps its own). `name` prefixes errors, e.g.
/// "request.pools[2]". Errors: GENERAL_FAILURE for a descriptor kind or file type that
/// cannot be used safely (see above), an unsealed ashmem or hardware_buffer_blob pool, a
/// range outside the file, a writable pool on a read-only or append-only descriptor, or a
/// failed mapping; INVALID_ARGUMENT for size 0.
Result<Memory> adoptClientPool(int fd, MemoryKind kind, uint64_t size, uint64_t offset,
                               bool writable, const std::string& name);

/// "regular file", "character device", "pipe"... for an st_mode.
std::string fileTypeName(unsigned mode);

/// True when the pool's bytes can be changed by another process (any pool backed by a
/// descriptor); false for the driver's process-local pools.
bool isShared(const Memory& pool);

/// True when the pool is mapped (data() is its bytes); false for client files that the
/// driver only reads and writes with pread/pwrite.
bool isMapped(const Memory& pool);

/// True when the embedded driver may let its kernels use request arguments in this pool where
/// they lie (engine/request_staging.h): the pool is mapped, cannot shrink under the mapping
/// (process-local bytes, or a memfd sealed with F_SEAL_SHRINK, as Memory::create makes it)
/// and was made in this process. False for every pool adoptClientPool made: through nnhald,
/// client memory is always staged. Defined in src/hal/memory.cpp, beside Memory::Impl.
bool usableInPlace(const Memory& pool);

/// Copies `out.size()` bytes from `offset` of the pool. Errors: GENERAL_FAILURE when the
/// range is outside the pool or the file shrank (short read) or cannot be read.
Result<void> readPool(const Memory& pool, size_t offset, std::span<uint8_t> out);

/// Copies `bytes` to `offset` of the pool. Errors: GENERAL_FAILURE when the range is outside
/// the pool, the pool is read-only, or the file cannot be written.
Result<void> writePool(const Memory& pool, size_t offset, std::span<const uint8_t> bytes);

/// True when nobody can change the pool's bytes any more: a mapped memfd sealed with
/// F_SEAL_WRITE and F_SEAL_SHRINK (Memory::createSealed makes such pools). The kernel refuses
/// F_SEAL_WRITE while any writable shared mapping exists, so the seal covers every process.
bool isImmutable(const Memory& pool);

/// Replaces every mutable shared pool of `model` by a process-local pool of the same size
/// holding a copy of the bytes its CONSTANT_REFERENCE operands (of every subgraph) name,
/// zeros elsewhere, so that the constants the driver validates are the ones it computes
/// with, whatever the pool's owner does afterwards. Immutable pools (isImmutable) are kept
/// as they are: there is nothing to protect against. Locations outside their pool are left
/// for validateModel to reject. Returns the constant bytes the shared pools hold, copied or
/// not (overlapping operands counted once). `maxBytes` (0 = no limit) bounds them: a model
/// naming more is refused before anything is copied. Errors: GENERAL_FAILURE when a pool cannot be
/// read (its file shrank); RESOURCE_EXHAUSTED_TRANSIENT beyond `maxBytes` or when no memory is left
/// for the copy.
Result<uint64_t> copyModelPoolsPrivately(Model& model, uint64_t maxBytes = 0);

}  // namespace nnhal::hal
