#include "actors/runtime.h"

#include <algorithm>
#include <thread>

#include "hal/thread_reaper.h"

namespace nnhal::actors {

namespace {

uint32_t slotsOf(const RuntimeOptions& options) {
  return options.threads != 0 ? options.threads : 2;
}

uint32_t preparationSlotsOf(const RuntimeOptions& options) {
  uint32_t wanted = options.preparationThreads;
  if (wanted == 0) wanted = std::max(1u, std::thread::hardware_concurrency() / 2);
  return std::clamp<uint32_t>(wanted, 1, slotsOf(options));
}

}  // namespace

Runtime::Runtime(const RuntimeOptions& options)
    : pool_(std::make_unique<boost::asio::thread_pool>(2 * slotsOf(options))),
      background_(std::make_unique<boost::asio::thread_pool>(slotsOf(options) +
                                                             preparationSlotsOf(options))),
      scheduler_(std::make_shared<Scheduler>(pool_->get_executor(), background_->get_executor(),
                                             slotsOf(options), preparationSlotsOf(options),
                                             options.preparationPolicy)),
      parallel_(options.kernelThreads),
      maxExecutionBytes_(options.maxExecutionBytes),
      maxQueuedExecutions_(options.maxQueuedExecutions),
      trace_(options.trace) {}

Runtime::~Runtime() {
  if (pool_->get_executor().running_in_this_thread() ||
      background_->get_executor().running_in_this_thread()) {
    // Released from inside one of our own handlers: joining here would join this thread.
    // Work still queued runs; a joiner thread owns the pools until their threads have exited,
    // and the process's thread reaper joins the joiner (hal/thread_reaper.h).
    hal::adoptThread(std::thread([pool = std::move(pool_), background = std::move(background_)] {
      pool->join();
      background->join();
    }));
    return;
  }
  pool_->join();
  background_->join();
}

}  // namespace nnhal::actors
