// actors/compilation_actor.h — compiles models (prepareModel, prepareModelFromCache) off the
// caller's thread.
//
// Messages:
//   Compile{job, deadline, reply}: run `job` (the backend compiling a Model, or a loaded
//   compilation cache) into a backend::CompiledModel; reply once with it or an error
//   (DEVICE_UNAVAILABLE once stopped, MISSED_DEADLINE_TRANSIENT when the deadline passed,
//   RESOURCE_EXHAUSTED_PERSISTENT for a model whose executions need more memory than the
//   runtime's maxExecutionBytes, RESOURCE_EXHAUSTED_TRANSIENT when memory ran out while compiling,
//   the job's error otherwise).
// Compilations of different models run in parallel on the runtime's pool, queued by priority
// on the device's scheduler (actors/scheduler.h) with the executions. The actor owns no state
// a compilation touches, so a message goes straight to the scheduler (no strand hop:
// preparation from a cache is fast enough for a hop to show); a drain gate admits it.
#pragma once

#include <functional>
#include <memory>

#include "actors/drain_gate.h"
#include "actors/runtime.h"
#include "actors/scheduler.h"
#include "backend/backend.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::actors {

class CompilationActor {
 public:
  using Plan = std::shared_ptr<const backend::CompiledModel>;
  using Reply = std::move_only_function<void(Result<Plan>)>;
  /// The work of one compilation; runs once, on a pool thread, given the preparation's
  /// deadline and its yield point (a job that compiles checks both between operations).
  using Job =
      std::move_only_function<Result<Plan>(OptionalTimePoint deadline, engine::YieldPoint* yield)>;
  struct Compile {
    Job job;
    OptionalTimePoint deadline;
    Reply reply;
    RunAs runAs{};  ///< the application and PrepareOptions::priority
  };

  explicit CompilationActor(std::shared_ptr<Runtime> runtime);
  ~CompilationActor();

  void post(Compile message);
  /// Refuses new compilations (they reply DEVICE_UNAVAILABLE) and waits for in-flight ones.
  void stop();

 private:
  void handle(Compile message, Lease& lease);
  std::shared_ptr<Runtime> runtime_;
  DrainGate gate_;
};

}  // namespace nnhal::actors
