// actors/embedded_burst.h — the embedded driver's Burst (nnhal/burst.h).
//
// Runs each execution inline on the caller's thread, with an arena and staging memory of
// its own (ExecutionActor::BurstResources) reserved for the burst's lifetime, so a stream
// of executions allocates nothing after the first. Memory objects are already mapped in
// this process, so the burst keeps no per-memory state and freeMemory has nothing to
// release. Holds its prepared model alive.
#pragma once

#include <memory>
#include <mutex>

#include "actors/execution_actor.h"
#include "nnhal/burst.h"

namespace nnhal::actors {

class EmbeddedBurst final : public Burst {
 public:
  /// `owner` keeps `actor` alive.
  EmbeddedBurst(std::shared_ptr<const void> owner, ExecutionActor& actor,
                ExecutionActor::BurstResources resources);

  Result<ExecutionResult> execute(const Request& request, MeasureTiming measure,
                                  OptionalTimePoint deadline) override;
  void freeMemory(const Memory& memory) override;

 private:
  std::shared_ptr<const void> owner_;
  ExecutionActor& actor_;
  std::mutex mutex_;  // one execution at a time
  ExecutionActor::BurstResources resources_;
};

}  // namespace nnhal::actors
