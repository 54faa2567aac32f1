// hal/file_pool_staging.h — a request's client files read before it runs and written back
// after it, where a stall costs only their client.
//
// A pool that is a client's regular file (mmap_fd, hal/pool_io.h: never mapped, read and
// written with pread/pwrite) can be slow, or stall, at the client's choosing: a file on a slow
// or remote file system, a write large enough for the kernel to throttle. Done by a driver
// slot or an io thread, that I/O would hold a thread every client needs. So nnhald stages such
// pools where only their client waits (its application's lane, a burst's own listener
// thread): the ranges the request's arguments name are read into one compact process-local
// pool per file, the request is rewritten to use it, and after a successful execution the
// output ranges are written back to the file. The driver then never touches the file.
//
// Thread safety: a FilePoolStaging belongs to one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "nnhal/memory.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::hal {

/// True when one of `request`'s pools is a client file (not mapped).
bool hasFilePools(const Request& request);

class FilePoolStaging {
 public:
  /// Replaces every file pool of `request` by a process-local pool holding the bytes of the
  /// ranges its arguments name (inputs and outputs, packed; argument locations rewritten).
  /// Call after the request was validated. `maxBytes` bounds the copies (0 = no limit).
  /// Errors: GENERAL_FAILURE when a file cannot be read (it shrank); RESOURCE_EXHAUSTED_TRANSIENT
  /// beyond `maxBytes` or without memory.
  static Result<FilePoolStaging> stage(Request& request, uint64_t maxBytes = 0);
  /// stage() in two steps, for a run that must not read its inputs yet (a fenced execution
  /// whose fences have not signalled): plan() rewrites `request` to local pools whose bytes
  /// are undefined until readInputs() filled them from the files. plan() does no I/O.
  static Result<FilePoolStaging> plan(Request& request, uint64_t maxBytes = 0);
  Result<void> readInputs() const;

  /// Whether anything was staged.
  bool empty() const { return ranges_.empty() && holders_.empty(); }
  /// Writes the outputs back to their files (after a successful execution). Errors:
  /// GENERAL_FAILURE when a file cannot be written.
  Result<void> writeBack() const;

 private:
  /// An argument's bytes: where they lie in the client's file and in the local copy.
  struct Range {
    Memory file;
    uint64_t fileOffset = 0;
    uint8_t* local = nullptr;
    uint32_t length = 0;
  };
  std::vector<Range> ranges_;   ///< every argument in a file (read before the run)
  std::vector<Range> outputs_;  ///< the outputs among them (written back after it)
  std::vector<std::shared_ptr<uint8_t[]>> holders_;  ///< the local bytes
};

}  // namespace nnhal::hal
