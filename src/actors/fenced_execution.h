// actors/fenced_execution.h — one fenced execution (IPreparedModel::executeFenced) of an
// ExecutionActor.
//
// Life of a fenced execution:
//   launch (caller's thread, for a request that passed ExecutionActor::validate): check the
//     fenced options and the fences (the returned errors), admit it through the actor's DrainGate,
//     create the fence to return, register cancel hooks with the actor (stop()) and with the
//     runtime (device released).
//   waiting: the fences are watched one at a time. A fence that already polls signalled is
//     skipped; for the next pending one, a dup() of its descriptor goes into an Asio
//     posix::stream_descriptor on the runtime's pool and async_wait(wait_read) resumes the
//     execution when it becomes readable. No thread is blocked. With a deadline, a
//     steady_timer ends the wait with MISSED_DEADLINE_TRANSIENT; a cancel hook ends it with
//     DEVICE_UNAVAILABLE. Both finish the execution on the thread that fires them, so a stop
//     never needs a free pool thread.
//   running: once every fence signalled, the request runs on a pool thread through the
//     actor's ordinary path, with the deadline min(options.deadline, fences signalled +
//     timeoutAfterFence).
//   done: the outcome and timings go to the callback object, then the returned fence is
//     signalled, then the DrainGate is left (the actor may be destroyed after that).
//
// State changes happen under the execution's mutex; the Asio objects (descriptor, timer)
// are only touched under it and are destroyed when the execution finishes, while the actor
// (and so the runtime and its reactor) still exists.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "actors/execution_actor.h"
#include "nnhal/prepared_model.h"
#include "nnhal/sync_fence.h"

namespace nnhal::actors {

/// The FencedExecutionCallback of one fenced execution: filled once when it finishes.
class FencedCompletion final : public FencedExecutionCallback {
 public:
  /// Blocks until complete() ran; always a value.
  Result<FencedExecutionInfo> getExecutionInfo() override;
  /// Records the outcome and wakes the waiters. Called exactly once.
  void complete(const FencedExecutionInfo& info);

 private:
  std::mutex mutex_;
  std::condition_variable done_;
  std::optional<FencedExecutionInfo> info_;
};

/// Checks that every output of `request` has fully specified dimensions (from the request
/// or the model operand), as HAL 1.3 requires of fenced executions. Omitted outputs and
/// scalars pass. Errors: INVALID_ARGUMENT naming the output. `request` must already have
/// passed hal::validateRequest against `model`.
Result<void> checkOutputsFullySpecified(const Request& request, const Model& model);

class FencedExecution : public std::enable_shared_from_this<FencedExecution> {
 public:
  using Clock = std::chrono::steady_clock;

  /// PreparedModel::executeFenced for `actor` (see nnhal/prepared_model.h for the
  /// contract), for a request and options that passed actor.validate().
  /// `admission` (may be empty): once the fences signalled, the run waits for it.
  static Result<FencedExecutionResult> launch(
      ExecutionActor& actor, const Request& request, const std::vector<SyncFence>& waitFor,
      const ExecuteOptions& options, OptionalDuration timeoutAfterFence,
      hal::FencedAdmission admission = nullptr,
      std::shared_ptr<const std::atomic<bool>> cancelled = nullptr);

  /// Use launch(); public for make_shared.
  FencedExecution(ExecutionActor& actor, Request request, std::vector<SyncFence> waitFor,
                  const ExecuteOptions& options, OptionalDuration timeoutAfterFence,
                  Clock::time_point launched, SyncFence done,
                  std::shared_ptr<FencedCompletion> completion);

 private:
  /// kAdmitting: the fences signalled, the admission has not let it run yet (it can still be
  /// aborted, by a cancel hook, the deadline, or a FencedStart dropped unused).
  enum class Phase { kWaiting, kAdmitting, kRunning, kDone };
  class Ticket;
  /// Starts the run (phase kAdmitting -> kRunning) and calls `finished` after it; when the
  /// execution already ended, calls `finished` at once.
  void admitted(std::move_only_function<void()> finished);

  /// Starts the deadline timer and the first wait.
  void start();
  /// Finishes the execution with `error` if it is still waiting for fences (cancel hooks,
  /// the deadline timer).
  void abort(const Error& error);
  /// Skips signalled fences and waits for the next pending one, or posts the run.
  void waitNextLocked();
  void onFenceReady(const boost::system::error_code& ec);
  /// Runs the request on the calling (pool) thread, then finishes.
  void run(Lease& lease);
  /// Cancels the deadline timer and posts run() (and then `finished`, when given).
  void postRunLocked(std::move_only_function<void()> finished);
  /// Reports the outcome: callback info, then the fence, then the DrainGate.
  void finishLocked(const Result<ExecutionResult>& outcome);
  void finishLocked(Error error) { finishLocked(Result<ExecutionResult>(std::unexpected(error))); }

  ExecutionActor& actor_;
  const Request request_;
  const std::vector<SyncFence> waitFor_;
  const ExecuteOptions options_;
  const OptionalDuration timeoutAfterFence_;
  const Clock::time_point launched_;
  const SyncFence done_;
  const std::shared_ptr<FencedCompletion> completion_;
  hal::FencedAdmission admission_;
  std::shared_ptr<const std::atomic<bool>> cancelled_;

  std::mutex mutex_;
  Phase phase_ = Phase::kWaiting;
  size_t next_ = 0;             ///< first fence not known to be signalled
  Clock::time_point fenced_{};  ///< when the last fence was seen signalled
  /// The actor's gate and cancel hooks, from launch until finishLocked() (set by launch()).
  std::optional<ExecutionActor::FencedHold> hold_;
  std::optional<boost::asio::posix::stream_descriptor> watch_;
  std::optional<boost::asio::steady_timer> timer_;
};

}  // namespace nnhal::actors
