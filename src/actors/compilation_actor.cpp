#include "actors/compilation_actor.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <new>
#include <string>

#include "common/clock.h"

namespace nnhal::actors {

CompilationActor::CompilationActor(std::shared_ptr<Runtime> runtime)
    : runtime_(std::move(runtime)) {}

CompilationActor::~CompilationActor() { stop(); }

void CompilationActor::post(Compile message) {
  if (!gate_.enter()) {
    message.reply(fail(ErrorStatus::DEVICE_UNAVAILABLE, "the driver is shutting down"));
    return;
  }
  const RunAs runAs = message.runAs;
  // Held until submit() returns: the job may run at once and release the last other
  // reference to the runtime (a callback dropping the model) while submit still posts.
  const std::shared_ptr<Runtime> runtime = runtime_;
  runtime->scheduler().submit(
      runAs.application, runAs.priority, Work::kPreparation,
      [this, m = std::move(message)](Lease lease) mutable { handle(std::move(m), lease); });
}

void CompilationActor::handle(Compile m, Lease& lease) {
  Result<Plan> outcome;
  if (m.deadline && std::chrono::steady_clock::now() > *m.deadline) {
    outcome = fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                   "the preparation deadline passed before compilation started");
  } else {
    const auto start = std::chrono::steady_clock::now();
    Result<Plan> plan;
    try {
      const ScopedTraceSpan span(runtime_->trace(), "compilation", "compile");
      plan = m.job(m.deadline, &lease);
    } catch (const std::bad_alloc&) {
      plan = fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "out of memory while compiling");
    } catch (const std::exception& e) {
      plan = fail(ErrorStatus::GENERAL_FAILURE, std::string("compilation failed: ") + e.what());
    }
    const uint64_t limit = runtime_->maxExecutionBytes();
    if (plan && *plan != nullptr && limit != 0 && (*plan)->executionBytes() > limit) {
      plan = fail(ErrorStatus::RESOURCE_EXHAUSTED_PERSISTENT,
                  "the model's temporaries need " + std::to_string((*plan)->executionBytes()) +
                      " bytes, more than the " + std::to_string(limit) +
                      " bytes this driver lets an execution use");
    }
    if (!plan) {
      outcome = std::unexpected(std::move(plan).error());
    } else if (m.deadline && std::chrono::steady_clock::now() > *m.deadline) {
      outcome = fail(ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                     "the preparation deadline passed during compilation");
    } else {
      outcome = std::move(*plan);
      spdlog::debug("compiled a model in {} us", microsecondsSince(start));
    }
  }
  lease = Lease();  // the next job may start while this one replies
  gate_.leave();
  m.reply(std::move(outcome));
}

void CompilationActor::stop() { gate_.closeAndDrain(); }

}  // namespace nnhal::actors
