#include "actors/fenced_execution.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/clock.h"
#include "hal/operand_utils.h"
#include "hal/validation.h"

namespace nnhal::actors {
namespace {

using Clock = std::chrono::steady_clock;

std::string dimensionsText(const std::vector<uint32_t>& dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i != 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

/// `start + duration`, saturated so that huge durations mean "no limit" instead of wrapping.
Clock::time_point addSaturated(Clock::time_point start, std::chrono::nanoseconds duration) {
  const auto room = Clock::time_point::max() - start;
  if (duration >= room) return Clock::time_point::max();
  return start + std::chrono::duration_cast<Clock::duration>(duration);
}

}  // namespace

Result<FencedExecutionInfo> FencedCompletion::getExecutionInfo() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [this] { return info_.has_value(); });
  return *info_;
}

void FencedCompletion::complete(const FencedExecutionInfo& info) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    info_ = info;
  }
  done_.notify_all();
}

Result<void> checkOutputsFullySpecified(const Request& request, const Model& model) {
  const Subgraph& main = model.main;
  for (size_t i = 0; i < request.outputs.size() && i < main.outputIndexes.size(); ++i) {
    const RequestArgument& argument = request.outputs[i];
    if (argument.hasNoValue) continue;
    const Operand& operand = main.operands.at(main.outputIndexes[i]);
    if (!hal::isTensorType(operand.type)) continue;
    const std::vector<uint32_t>& dims =
        argument.dimensions.empty() ? operand.dimensions : argument.dimensions;
    const bool unknown = dims.empty() || std::ranges::find(dims, 0u) != dims.end();
    if (unknown) {
      return invalidArgument(
          "outputs[" + std::to_string(i) + "]: dimensions " +
          (dims.empty() ? std::string("of unknown rank") : dimensionsText(dims)) +
          " are not fully specified; a fenced execution needs every output "
          "shape known at launch");
    }
  }
  return {};
}

FencedExecution::FencedExecution(ExecutionActor& actor, Request request,
                                 std::vector<SyncFence> waitFor, const ExecuteOptions& options,
                                 OptionalDuration timeoutAfterFence, Clock::time_point launched,
                                 SyncFence done, std::shared_ptr<FencedCompletion> completion)
    : actor_(actor),
      request_(std::move(request)),
      waitFor_(std::move(waitFor)),
      options_(options),
      timeoutAfterFence_(timeoutAfterFence),
      launched_(launched),
      done_(std::move(done)),
      completion_(std::move(completion)) {}

/// What a FencedStart holds: running it starts the execution; dropping it unused ends the
/// execution with DEVICE_UNAVAILABLE, so a queue that is cleared never strands a fence.
class FencedExecution::Ticket {
 public:
  explicit Ticket(std::shared_ptr<FencedExecution> execution) : execution_(std::move(execution)) {}
  Ticket(Ticket&& other) noexcept : execution_(std::move(other.execution_)) {}
  Ticket& operator=(Ticket&&) = delete;
  ~Ticket() {
    if (execution_ != nullptr) {
      execution_->abort({ErrorStatus::DEVICE_UNAVAILABLE,
                         "the fenced execution was dropped before it could run",
                         {}});
    }
  }
  void run(std::move_only_function<void()> finished) {
    std::shared_ptr<FencedExecution> execution = std::move(execution_);
    execution_ = nullptr;
    execution->admitted(std::move(finished));
  }

 private:
  std::shared_ptr<FencedExecution> execution_;
};

Result<FencedExecutionResult> FencedExecution::launch(
    ExecutionActor& actor, const Request& request, const std::vector<SyncFence>& waitFor,
    const ExecuteOptions& options, OptionalDuration timeoutAfterFence,
    hal::FencedAdmission admission, std::shared_ptr<const std::atomic<bool>> cancelled) {
  const auto launched = Clock::now();
  if (timeoutAfterFence && timeoutAfterFence->count() < 0) {
    return invalidArgument("timeoutAfterFence: must not be negative");
  }
  NNHAL_TRY(checkOutputsFullySpecified(request, actor.model()));
  for (size_t i = 0; i < waitFor.size(); ++i) {
    if (waitFor[i].state() == SyncFence::State::kError) {
      return invalidArgument("waitFor[" + std::to_string(i) + "]: the fence (descriptor " +
                             std::to_string(waitFor[i].fd()) +
                             ") is in an error state and can never signal");
    }
  }
  NNHAL_ASSIGN_OR_RETURN(SyncFence done, SyncFence::create());
  auto completion = std::make_shared<FencedCompletion>();
  auto execution = std::make_shared<FencedExecution>(actor, request, waitFor, options,
                                                     timeoutAfterFence, launched, done, completion);
  execution->admission_ = std::move(admission);
  execution->cancelled_ = std::move(cancelled);
  {
    std::lock_guard<std::mutex> lock(execution->mutex_);
    auto hold = ExecutionActor::FencedHold::acquire(
        actor, [weak = std::weak_ptr<FencedExecution>(execution)](const Error& error) {
          if (auto self = weak.lock()) self->abort(error);
        });
    if (!hold) {
      execution->phase_ = Phase::kDone;
      return std::unexpected(hold.error());
    }
    execution->hold_.emplace(std::move(*hold));
  }
  execution->start();
  return FencedExecutionResult{std::move(done), std::move(completion)};
}

void FencedExecution::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_ != Phase::kWaiting) return;  // already cancelled
  if (options_.deadline) {
    timer_.emplace(actor_.runtime()->executor());
    timer_->expires_at(*options_.deadline);
    timer_->async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec) return;  // cancelled: the fences signalled or the execution ended
      self->abort({ErrorStatus::MISSED_DEADLINE_TRANSIENT,
                   "the execution deadline passed while waiting for the fences",
                   {}});
    });
  }
  waitNextLocked();
}

void FencedExecution::abort(const Error& error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_ != Phase::kWaiting && phase_ != Phase::kAdmitting) return;
  // Finished here, on the caller's thread: a stop never depends on a free pool thread.
  // Destroying the watch and the timer cancels their waits; their handlers then find the
  // execution done and return.
  finishLocked(error);
}

void FencedExecution::waitNextLocked() {
  while (next_ < waitFor_.size()) {
    const SyncFence::State state = waitFor_[next_].state();
    if (state == SyncFence::State::kActive) break;
    if (state == SyncFence::State::kError) {
      finishLocked({ErrorStatus::GENERAL_FAILURE,
                    "waitFor[" + std::to_string(next_) + "]: the fence fell into an error state",
                    {}});
      return;
    }
    ++next_;
  }

  if (next_ == waitFor_.size()) {
    fenced_ = Clock::now();
    if (admission_) {
      // The admission may start the run at once, on its own thread: it is called outside
      // this lock. Until it does, the deadline and cancel hooks can still end the execution.
      phase_ = Phase::kAdmitting;
      postTo(actor_.runtime(), [self = shared_from_this(), admission = admission_]() mutable {
        admission([ticket = Ticket(self)](std::move_only_function<void()> finished) mutable {
          ticket.run(std::move(finished));
        });
      });
      return;
    }
    phase_ = Phase::kRunning;
    postRunLocked(nullptr);
    return;
  }

  // Watch a duplicate: the reactor owns (and closes) the descriptor it watches.
  const int fd = ::fcntl(waitFor_[next_].fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) {
    const int error = errno;
    finishLocked({error == EMFILE || error == ENFILE ? ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT
                                                     : ErrorStatus::GENERAL_FAILURE,
                  "waitFor[" + std::to_string(next_) +
                      "]: cannot duplicate the fence descriptor: " + std::strerror(error),
                  {}});
    return;
  }
  watch_.emplace(actor_.runtime()->executor());
  boost::system::error_code ec;
  watch_->assign(fd, ec);
  if (ec) {
    ::close(fd);
    watch_.reset();
    finishLocked({ErrorStatus::GENERAL_FAILURE,
                  "waitFor[" + std::to_string(next_) + "]: cannot watch the fence: " + ec.message(),
                  {}});
    return;
  }
  watch_->async_wait(
      boost::asio::posix::descriptor_base::wait_read,
      [self = shared_from_this()](const boost::system::error_code& ec) { self->onFenceReady(ec); });
}

void FencedExecution::onFenceReady(const boost::system::error_code& ec) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase_ != Phase::kWaiting) return;  // aborted: finished already
  watch_.reset();                         // closes the duplicate; the next wait makes a new one
  if (ec) {
    finishLocked({ErrorStatus::GENERAL_FAILURE,
                  "waitFor[" + std::to_string(next_) + "]: waiting failed: " + ec.message(),
                  {}});
    return;
  }
  waitNextLocked();  // polls the fence again: signalled, error, or (spuriously) still active
}

void FencedExecution::postRunLocked(std::move_only_function<void()> finished) {
  if (timer_) timer_->cancel();  // from here on the engine checks the deadline
  // Held until submit() returns: the job may run at once and release the last other
  // reference to the runtime (a callback dropping the model) while submit still posts.
  const std::shared_ptr<Runtime> runtime = actor_.runtime();
  runtime->scheduler().submit(
      actor_.application(), actor_.priority(), Work::kExecution,
      [self = shared_from_this(), finished = std::move(finished)](Lease lease) mutable {
        self->run(lease);
        lease = Lease();
        if (finished) finished();
      });
}

void FencedExecution::admitted(std::move_only_function<void()> finished) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (phase_ == Phase::kAdmitting) {
      phase_ = Phase::kRunning;
      postRunLocked(std::move(finished));
      return;
    }
  }
  if (finished) finished();  // ended already (deadline, cancelled): nothing to run
}

void FencedExecution::run(Lease& lease) {
  ExecuteOptions options = options_;
  if (timeoutAfterFence_) {
    const Clock::time_point limit = addSaturated(fenced_, *timeoutAfterFence_);
    if (!options.deadline || limit < *options.deadline) options.deadline = limit;
  }
  auto outcome = actor_.runAdmitted(request_, options, launched_, cancelled_.get(), lease);
  std::lock_guard<std::mutex> lock(mutex_);
  finishLocked(outcome);
}

void FencedExecution::finishLocked(const Result<ExecutionResult>& outcome) {
  phase_ = Phase::kDone;
  timer_.reset();
  watch_.reset();

  FencedExecutionInfo info;
  if (outcome) {
    if (options_.measure == MeasureTiming::YES) {
      // The computation lies inside both intervals, so timeOnDevice <= timeInDriver.
      const auto now = Clock::now();
      const uint64_t onDevice = outcome->timing.timeOnDevice;
      info.timingLaunched = {onDevice, microsecondsBetween(launched_, now)};
      info.timingFenced = {onDevice, microsecondsBetween(fenced_, now)};
    }
  } else {
    info.status = outcome.error().status;
    spdlog::debug("fenced execution failed: {}", outcome.error().message);
  }
  completion_->complete(info);
  if (auto signalled = done_.signal(); !signalled) {
    spdlog::error("fenced execution: {}", signalled.error().message);
  }
  // Last: once released, the actor may be destroyed.
  hold_->release();
}

}  // namespace nnhal::actors
