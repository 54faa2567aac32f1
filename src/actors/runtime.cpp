#include "actors/runtime.h"

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <mutex>
#include <thread>

#include "common/thread_reaper.h"

namespace nnhal::actors {

namespace {

uint32_t slotsOf(const RuntimeOptions& options) {
  if (options.threads != 0) return options.threads;
  return std::max(2u, std::thread::hardware_concurrency());
}

uint32_t preparationSlotsOf(const RuntimeOptions& options) {
  uint32_t wanted = options.preparationThreads;
  if (wanted == 0) wanted = std::max(1u, std::thread::hardware_concurrency() / 2);
  return std::clamp<uint32_t>(wanted, 1, slotsOf(options));
}

}  // namespace

struct Runtime::Watchdog : std::enable_shared_from_this<Runtime::Watchdog> {
  Watchdog(Executor executor, engine::ArenaBudget& budget)
      : timer(executor),
        budget(budget),
        period(std::max(budget.idleRelease() / 2, std::chrono::milliseconds(100))) {}
  void arm() {
    std::lock_guard lock(mutex);
    if (stopped) return;
    timer.expires_after(period);
    timer.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec) return;
      {
        // Under the lock: once stop() has returned, the budget (the runtime's) is not used.
        std::lock_guard lock(self->mutex);
        if (self->stopped) return;
        self->budget.trimIdle();
      }
      self->arm();
    });
  }
  /// Stops the timer; no handler uses the budget after this returns.
  void stop() {
    std::lock_guard lock(mutex);
    stopped = true;
    timer.cancel();
  }
  std::mutex mutex;
  boost::asio::steady_timer timer;
  engine::ArenaBudget& budget;
  std::chrono::milliseconds period;
  bool stopped = false;
};

Runtime::Runtime(const RuntimeOptions& options)
    : pool_(std::make_unique<boost::asio::thread_pool>(2 * slotsOf(options))),
      background_(std::make_unique<boost::asio::thread_pool>(slotsOf(options) +
                                                             preparationSlotsOf(options))),
      // Preparations that are their application's share of the machine: threads of normal
      // priority (none needed when every preparation runs as the process does anyway).
      fairBackground_(options.preparationPolicy == PreparationPolicy::kNormal
                          ? nullptr
                          : std::make_unique<boost::asio::thread_pool>(
                                slotsOf(options) + preparationSlotsOf(options))),
      scheduler_(std::make_shared<Scheduler>(
          pool_->get_executor(), background_->get_executor(),
          (fairBackground_ ? fairBackground_ : background_)->get_executor(), slotsOf(options),
          preparationSlotsOf(options), options.preparationPolicy)),
      arenaBudget_(options.maxArenaBytes, options.arenaIdleRelease),
      maxExecutionBytes_(options.maxExecutionBytes),
      maxQueuedExecutions_(options.maxQueuedExecutions),
      trace_(options.trace) {
  if (options.arenaIdleRelease.count() > 0) {
    watchdog_ = std::make_shared<Watchdog>(pool_->get_executor(), arenaBudget_);
    watchdog_->arm();
  }
}

Runtime::~Runtime() {
  if (watchdog_) watchdog_->stop();
  const bool onOwnThread =
      pool_->get_executor().running_in_this_thread() ||
      background_->get_executor().running_in_this_thread() ||
      (fairBackground_ && fairBackground_->get_executor().running_in_this_thread());
  // Everything the threads use, released in order once they have exited: the watchdog (its
  // timer lives on the pool), the scheduler (its queue), the pools with the handlers they
  // still hold; then stopped() becomes ready.
  auto stop = [pool = std::move(pool_), background = std::move(background_),
               fair = std::move(fairBackground_), watchdog = std::move(watchdog_),
               scheduler = std::move(scheduler_), stopped = std::move(stopped_)]() mutable {
    pool->join();
    background->join();
    if (fair) fair->join();
    watchdog.reset();
    scheduler.reset();
    pool.reset();
    background.reset();
    fair.reset();
    stopped.set_value();
  };
  if (onOwnThread) {
    // Released from inside one of our own handlers: joining here would join this thread.
    // Work still queued runs; a joiner thread owns the pools until their threads have exited,
    // and the process's thread reaper joins the joiner (common/thread_reaper.h).
    common::adoptThread(std::thread(std::move(stop)));
    return;
  }
  stop();
}

}  // namespace nnhal::actors
