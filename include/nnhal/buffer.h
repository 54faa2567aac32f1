// nnhal/buffer.h — driver-managed buffers of a memory domain (NN HAL 1.3 IDevice::allocate,
// IBuffer).
//
// Device::allocate creates a Buffer for a set of roles: inputs or outputs of prepared models
// of the same device. Executions of those models name the buffer in Request.pools by its
// MemoryDomainToken instead of shared memory, so that the bytes stay in the driver between
// executions (the output of one model feeding the input of the next costs no copy through
// the client). The client moves data in and out with copyFrom and copyTo.
//
// Rules the driver enforces (MemoryDomainTests):
//  - A request argument in a token pool must match one of the buffer's roles (the prepared
//    model executing it, input or output, and the index); its location must be {pool, 0, 0}.
//    Anything else is INVALID_ARGUMENT. A buffer may appear in several input roles of one
//    request, but not as an output together with any other role (INVALID_ARGUMENT).
//  - The buffer starts uninitialized. A successful copyFrom, or a successful execution that
//    writes it as an output, initializes it; a failed execution that was to write it makes it
//    uninitialized again. Reading an uninitialized buffer (as an execution input, or with
//    copyTo) is GENERAL_FAILURE.
//  - Dimensions: the buffer's dimensions combine the BufferDesc and every role's operand;
//    0 (or an empty list for a tensor of unknown rank) means unknown. copyFrom and an
//    execution's output fix the unknown ones for the data they write; the next write may give
//    them other values. A request's dimensions for a token argument must agree with them.
//  - Concurrency: any number of executions may read a buffer at once. A write (copyFrom, an
//    execution output) while others read or write it leaves the content unspecified (one
//    write or the other), never torn memory, a crash or a wait that does not end.
//
// Thread safety: every method may be called from any thread, concurrently. The buffer (and
// its token) lives as long as the Buffer object; destroying it while executions use it is
// safe (they keep the content they already read).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nnhal/memory.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal {

/// Dimensions the client gives a buffer at allocation (types.hal 1.3 BufferDesc); 0 or an
/// empty list = unknown, to be fixed by the roles, copyFrom or the writing execution.
struct BufferDesc {
  std::vector<uint32_t> dimensions;
};

/// One input or output of a prepared model that the buffer will serve (types.hal 1.3
/// BufferRole).
struct BufferRole {
  uint32_t modelIndex = 0;  ///< index into Device::allocate's preparedModels
  uint32_t ioIndex = 0;     ///< index of the model's input (inputRoles) or output (outputRoles)
  /// How often the buffer is used in this role, in (0, 1]; a hint, validated only.
  float frequency = 1.0f;
};

/// A driver-managed buffer (IBuffer).
class Buffer {
 public:
  virtual ~Buffer() = default;

  /// Copies the buffer's content to `dst` (IBuffer::copyTo). Errors: GENERAL_FAILURE when the
  /// buffer is uninitialized or `dst` cannot be written; INVALID_ARGUMENT when `dst` is not a
  /// valid writable Memory of exactly the content's size in bytes.
  virtual Result<void> copyTo(const Memory& dst) = 0;

  /// Replaces the content with `src` (IBuffer::copyFrom) and initializes the buffer.
  /// `dimensions` (empty = the buffer's own) must agree with the buffer's known dimensions
  /// and, combined with them, give a fully specified shape whose size in bytes is exactly
  /// `src.size()`. Errors: INVALID_ARGUMENT for a bad memory, dimensions or size;
  /// GENERAL_FAILURE when `src` cannot be read.
  virtual Result<void> copyFrom(const Memory& src, const std::vector<uint32_t>& dimensions) = 0;
};

/// What Device::allocate returns: the buffer and the token naming it in Request pools
/// (> 0, unique among the device's live buffers).
struct AllocatedBuffer {
  std::shared_ptr<Buffer> buffer;
  uint32_t token = 0;
};

}  // namespace nnhal
