// ipc/daemon/internal/session_detail.h — what the three parts of Session (session.cpp,
// session_prepare.cpp, session_execute.cpp) share.
#pragma once

#include <boost/asio/executor_work_guard.hpp>
#include <mutex>
#include <new>
#include <optional>

#include "ipc/daemon/session.h"

namespace nnhal::ipc {

/// Result of an asynchronous driver call (prepareModel, execute) that may call its callback
/// before it returns: such an early result is kept here and handled after the return status
/// is known.
template <typename T>
struct LaunchState {
  std::mutex mutex;
  bool returned = false;
  std::optional<Result<T>> early;

  /// From the callback: true when the result was kept (the launch call has not returned).
  bool keepIfEarly(Result<T>& result) {
    std::lock_guard<std::mutex> lock(mutex);
    if (returned) return false;
    early = std::move(result);
    return true;
  }
  /// After the launch call returned: the early result, if any.
  std::optional<Result<T>> markReturned() {
    std::lock_guard<std::mutex> lock(mutex);
    returned = true;
    return std::move(early);
  }
};

/// What a preparation in progress holds: its prepared-model quota and, once its constants
/// were copied, their bytes; kept by its TrackedModel when it succeeds.
struct Session::PreparationCharges {
  Charge model;
  Charge constants;
};

/// A prepared model held by a session or an execution; counted while alive.
struct Session::TrackedModel {
  TrackedModel(std::shared_ptr<PreparedModel> m, std::shared_ptr<ServerCounters> c,
               PreparationCharges held)
      : model(std::move(m)), counters(std::move(c)), charges(std::move(held)) {
    ++counters->preparedModels;
  }
  ~TrackedModel() {
    model.reset();
    --counters->preparedModels;
  }
  std::shared_ptr<PreparedModel> model;
  /// The driver's control of `model` (DeviceControl::controlOf; never null: a model without
  /// one is refused when it is prepared). Every execution path goes through it.
  hal::PreparedModelControl* control = nullptr;
  std::shared_ptr<ServerCounters> counters;
  PreparationCharges charges;  ///< given back with the model
  bool lowPower = false;       ///< prepared for LOW_POWER: its bursts do not poll
};

/// A driver-managed buffer held by a session; counted while alive.
struct Session::TrackedBuffer {
  TrackedBuffer(std::shared_ptr<Buffer> b, uint32_t t, std::shared_ptr<ServerCounters> c,
                Charge held)
      : buffer(std::move(b)), token(t), counters(std::move(c)), charge(std::move(held)) {
    ++counters->buffers;
  }
  ~TrackedBuffer() {
    buffer.reset();
    --counters->buffers;
  }
  std::shared_ptr<Buffer> buffer;
  uint32_t token = 0;
  std::shared_ptr<ServerCounters> counters;
  Charge charge;  ///< the buffers quota
};

/// A request pool of a session: its mapping, or why it cannot be used; counted while alive.
struct Session::TrackedPool {
  TrackedPool(Result<Memory> m, std::shared_ptr<ServerCounters> c, Charge held)
      : memory(std::move(m)),
        bytes(memory ? memory->size() : 0),
        counters(std::move(c)),
        charge(std::move(held)) {
    ++counters->pools;
    counters->poolBytes += bytes;
  }
  ~TrackedPool() {
    memory = Memory();
    --counters->pools;
    counters->poolBytes -= bytes;
  }
  Result<Memory> memory;
  uint64_t bytes;
  std::shared_ptr<ServerCounters> counters;
  Charge charge;  ///< the pools quota
};

template <typename Handler>
void Session::onStrand(Handler&& handler) {
  boost::asio::post(strand_, std::forward<Handler>(handler));
}

template <typename Intake, typename Then>
void Session::offIoThread(Intake intake, Then then) {
  config_->runIntake(
      application_, [self = shared_from_this(), intake = std::move(intake), then = std::move(then),
                     work = boost::asio::make_work_guard(strand_)]() mutable {
        auto outcome = [&] {
          // Allocation failures and library exceptions end this request only.
          using Outcome = decltype(intake());
          try {
            return intake();
          } catch (const std::bad_alloc&) {
            return Outcome(
                fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT, "the daemon ran out of memory"));
          } catch (const std::exception& e) {
            return Outcome(
                fail(ErrorStatus::GENERAL_FAILURE, std::string("the request failed: ") + e.what()));
          }
        }();
        self->onStrand([self, then = std::move(then), outcome = std::move(outcome),
                        work = std::move(work)]() mutable { then(std::move(outcome)); });
      });
}

/// Adopts a pool a client sent (hal::adoptClientPool) after checking its kind and metadata.
/// `name` prefixes errors. Errors: GENERAL_FAILURE.
Result<Memory> mapClientPool(const WirePool& pool, const std::vector<UniqueFd>& fds,
                             const std::string& name);

/// Gives `model` its pools, replaced by private copies of the constants they hold
/// (hal::copyModelPoolsPrivately). Returns the model's constant bytes (operandValues and the
/// copies). `check` runs once the pools are attached and before anything is copied (checks
/// that read no constant value, such as hal::validateModel: a model they refuse costs no
/// copy). Errors: GENERAL_FAILURE for an unknown kind or a pool
/// that cannot be used safely or read (hal/pool_io.h); RESOURCE_EXHAUSTED_TRANSIENT, before
/// anything is copied, for a model with more than `maxConstantBytes` of constants; the
/// check's error.
Result<uint64_t> attachModelPools(Model& model, const std::vector<WirePool>& pools,
                                  const std::vector<UniqueFd>& fds, uint64_t maxConstantBytes,
                                  const std::function<Result<void>(const Model&)>& check = {});

}  // namespace nnhal::ipc
