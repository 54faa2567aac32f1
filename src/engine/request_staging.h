// engine/request_staging.h — where one execution's kernels read the Request inputs and write
// its outputs.
//
// An argument in a process-local pool is used in place, and so is one in a pool this process
// made that cannot shrink (hal::usableInPlace: the embedded driver's Memory::create pools)
// when the plan says its kernels use it as plain values only (InPlaceArguments) and it starts
// on a kArenaAlignment boundary, as staged arguments do. Any other
// argument in a shared pool (hal::isShared: any pool backed by a descriptor, which another
// process, or another thread, may rewrite or shrink at any moment; every client pool of
// nnhald) is staged: inputs are copied once into driver memory before the
// first kernel runs, so every value a kernel uses as an index, size or shape is read from
// shared memory exactly once and validated where it lies; outputs are computed into driver
// memory and copied to their pools only when the execution succeeded (commitOutput), so a
// later step that reads an output reads what the driver wrote. Pools the driver does not map
// (client files, hal/pool_io.h) are read and written with pread/pwrite.
//
// Thread safety: one StagedRequest per execution, used by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine {

/// Staging buffers kept between the executions of one plan: its requests stage about the same
/// bytes each time, and a reused buffer costs a copy where a fresh one would also cost a page
/// fault per 4 KiB (large allocations are fresh mappings). Keeps at most kKept buffers.
class StagingPool {
 public:
  static constexpr size_t kKept = 4;
  StagingPool() = default;
  StagingPool(const StagingPool&) = delete;
  StagingPool& operator=(const StagingPool&) = delete;
  ~StagingPool();

  /// A 64-byte aligned buffer of at least `bytes` (its capacity in `capacity`), or null.
  uint8_t* acquire(size_t bytes, size_t& capacity);
  void release(uint8_t* buffer, size_t capacity);

 private:
  struct Kept {
    uint8_t* bytes;
    size_t capacity;
  };
  std::mutex mutex_;
  std::vector<Kept> kept_;
};

/// Which request arguments of a plan its kernels use only as plain values (computed at
/// compile time from engine/operation_registry.h's plainDataInputs): input k when every step
/// that reads it reads it at a plain-data slot; output k when such an operation writes it and
/// no step reads it. Bytes that change under such an argument change the results only.
struct InPlaceArguments {
  std::vector<bool> inputs;
  std::vector<bool> outputs;
};

class StagedRequest {
 public:
  /// Resolves every argument of `request` (validated by hal::validateRequest) and copies
  /// the staged inputs. Errors: INVALID_ARGUMENT for an argument in a memory domain token
  /// pool (the actors bind those to driver memory first, actors/request_binding.h);
  /// GENERAL_FAILURE when a shared pool cannot be read (its file shrank);
  /// RESOURCE_EXHAUSTED_TRANSIENT when the staging memory cannot be allocated.
  /// `maxBytes` (0 = no limit) bounds the staging memory: RESOURCE_EXHAUSTED_TRANSIENT beyond.
  /// `pool` (may be null) lends the staging memory. `inPlace` (may be null: none) names the
  /// arguments that may be used where they lie when their pool is hal::usableInPlace.
  static Result<StagedRequest> stage(const Request& request, uint64_t maxBytes = 0,
                                     StagingPool* pool = nullptr,
                                     const InPlaceArguments* inPlace = nullptr);

  /// Bytes of driver memory holding staged arguments.
  size_t stagedBytes() const { return stagedBytes_; }

  /// Where the kernels read input `k` / write output `k` (null for omitted arguments).
  const std::vector<uint8_t*>& inputs() const { return inputs_; }
  const std::vector<uint8_t*>& outputs() const { return outputs_; }

  /// Makes the first `bytes` bytes written at outputs()[k] visible in the output's pool
  /// (nothing to do when the output is used in place). Errors: GENERAL_FAILURE when the
  /// pool cannot be written (its file shrank or failed).
  Result<void> commitOutput(size_t k, size_t bytes) const;

 private:
  struct Staged {
    const Memory* pool = nullptr;  ///< null: used in place
    size_t offset = 0;
  };
  const Request* request_ = nullptr;
  std::vector<uint8_t*> inputs_;
  std::vector<uint8_t*> outputs_;
  std::vector<Staged> stagedOutputs_;
  struct Free {
    Free() noexcept : pool(nullptr), capacity(0) {}
    Free(StagingPool* p, size_t c) noexcept : pool(p), capacity(c) {}
    StagingPool* pool;
    size_t capacity;
    void operator()(uint8_t* bytes) const;
  };
  std::unique_ptr<uint8_t, Free> storage_;
  size_t stagedBytes_ = 0;
};

}  // namespace nnhal::engine
