#include "actors/embedded_burst.h"

namespace nnhal::actors {

EmbeddedBurst::EmbeddedBurst(std::shared_ptr<const void> owner, ExecutionActor& actor,
                             ExecutionActor::BurstResources resources)
    : owner_(std::move(owner)), actor_(actor), resources_(std::move(resources)) {}

Result<ExecutionResult> EmbeddedBurst::execute(const Request& request, MeasureTiming measure,
                                               OptionalTimePoint deadline) {
  ExecuteOptions options;
  options.measure = measure;
  options.deadline = deadline;
  std::lock_guard<std::mutex> lock(mutex_);
  return actor_.runInBurst(request, options, resources_);
}

void EmbeddedBurst::freeMemory(const Memory&) {}

}  // namespace nnhal::actors
