// actors/request_binding.h — executions whose Request names driver-managed buffers
// (MemoryDomainToken pools, nnhal/buffer.h).
//
// bind() checks every token argument against its buffer (the token is alive on this device,
// the argument's location is {pool, 0, 0}, the buffer serves this prepared model in this
// role, a buffer written by the request plays no other role in it, an input buffer is
// initialized and its dimensions agree with the request's) and produces a Request the engine
// runs as it is: each token argument points to driver memory instead, an input to the
// buffer's current content (read in place, never copied), an output to fresh memory sized
// for it. finish() publishes those outputs when the execution succeeded, and marks the
// buffers uninitialized when it failed.
//
// Thread safety: one BoundRequest per execution; the buffers themselves are thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "actors/device_buffer.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::actors {

/// True when `request` names a driver-managed buffer in one of its pools.
bool usesDeviceBuffers(const Request& request);

class BoundRequest {
 public:
  /// Binds the token arguments of `request` (which passed hal::validateRequest) for an
  /// execution of prepared model `modelId`. `outputCapacity[k]` is the size in bytes the plan
  /// expects for output k (0 when unknown before running). Errors: INVALID_ARGUMENT (unknown
  /// token, location, role, a written buffer in two roles, dimensions), GENERAL_FAILURE (an
  /// uninitialized input buffer), RESOURCE_EXHAUSTED_TRANSIENT (no memory for an output).
  static Result<BoundRequest> bind(const Request& request, uint64_t modelId,
                                   const BufferTable& table,
                                   const std::vector<size_t>& outputCapacity);
  /// bind()'s checks alone, with nothing allocated: what an execution's launch reports.
  static Result<void> check(const Request& request, uint64_t modelId, const BufferTable& table);

  /// The request to execute.
  const Request& request() const { return request_; }

  /// After an OUTPUT_INSUFFICIENT_SIZE reporting `shapes`: true (run again) when only output
  /// buffers whose size was unknown got too little memory, now grown to the shapes reported;
  /// false when a client's own output buffer is too small (the client's error). Errors:
  /// GENERAL_FAILURE when a reported shape conflicts with its buffer's dimensions.
  Result<bool> growForRetry(const std::vector<OutputShape>& shapes);

  /// Publishes the written buffers (success) or marks them uninitialized (failure).
  /// Errors: GENERAL_FAILURE when an output's shape conflicts with its buffer's dimensions
  /// (the buffer is then uninitialized).
  Result<void> finish(bool succeeded, const std::vector<OutputShape>& shapes);

 private:
  struct Output {
    size_t index = 0;  ///< request output
    std::shared_ptr<DeviceBuffer> buffer;
    std::shared_ptr<BufferContent> content;  ///< where the execution writes
    uint32_t pool = UINT32_MAX;              ///< its pool in request_ (none yet)
  };
  Request request_;
  std::vector<std::shared_ptr<const BufferContent>> readContents_;  ///< inputs, kept alive
  std::vector<Output> outputs_;

  static Result<BoundRequest> bindImpl(const Request& request, uint64_t modelId,
                                       const BufferTable& table,
                                       const std::vector<size_t>& outputCapacity, bool allocate);
  Result<void> allocateOutput(Output& output, size_t capacity);
  /// GENERAL_FAILURE when `dims`, written to `output`, conflict with its buffer.
  static Result<void> checkWritten(const Output& output, const std::vector<uint32_t>& dims);
};

}  // namespace nnhal::actors
