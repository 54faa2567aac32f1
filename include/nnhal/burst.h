// nnhal/burst.h — burst executions (NN HAL 1.2 IBurstContext, driven the way the
// runtime's ExecutionBurstController drives it).
//
// A Burst is a channel for a stream of executions of one PreparedModel, for callers that
// run the same model again and again (camera frames, audio buffers). It keeps what the
// executions share alive between them, so each one costs as little as the driver can make
// it:
//  - embedded, the burst reserves one arena of the prepared model for itself and runs
//    every execution inline, on the calling thread;
//  - through nnhald, requests and results travel over two fast message queues in shared
//    memory (docs/BURST.md) instead of the socket, and each Memory is sent to the daemon
//    once: the burst names it by a slot from then on, and the daemon keeps it mapped until
//    freeMemory or the end of the burst.
//
// execute() gives exactly what executeSynchronously gives for the same request and
// options: the same output shapes and statuses (INVALID_ARGUMENT naming the argument,
// OUTPUT_INSUFFICIENT_SIZE with Error::outputShapes, MISSED_DEADLINE_TRANSIENT,
// GENERAL_FAILURE, DEVICE_UNAVAILABLE once the driver or the daemon is gone). A burst
// execution uses the default loop timeout (kDefaultLoopTimeout): the HAL's burst request
// has no field for it. Through nnhald, a request naming a MemoryDomainToken pool, or one
// too large for the request queue, is executed over the socket instead (the HAL runtime's
// fallback), with the same result.
//
// Liveness (nnhal goes beyond the HAL's FMQ here): when nnhald dies, an execute() waiting
// for its result returns DEVICE_UNAVAILABLE within a second; when the client dies, the
// daemon releases the burst's memory and listener within a second.
//
// Thread safety: every method may be called from any thread; calls on one Burst are
// serialized (one execution at a time, as on the HAL's burst). Use one Burst per thread
// to run executions concurrently. Destroying the Burst waits for an execution in progress
// on it; the PreparedModel stays usable.
#pragma once

#include "nnhal/memory.h"
#include "nnhal/prepared_model.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal {

class Burst {
 public:
  virtual ~Burst() = default;

  /// Runs `request` and returns when the outputs are written (the burst's
  /// executeSynchronously). Timing is measured from the moment the driver received the
  /// request to the moment it sent the result, µs, when `measure` is YES and the execution
  /// succeeded; kNoTiming otherwise. `deadline`: as ExecuteOptions::deadline.
  virtual Result<ExecutionResult> execute(const Request& request, MeasureTiming measure,
                                          OptionalTimePoint deadline = {}) = 0;

  /// Tells the driver that `memory` will not be used by this burst again
  /// (IBurstContext::freeMemory): its slot is released and the daemon unmaps it. A memory
  /// the burst never saw, or freed already, is ignored.
  virtual void freeMemory(const Memory& memory) = 0;
};

}  // namespace nnhal
