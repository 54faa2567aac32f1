#include "actors/runtime.h"

#include <thread>

#include "hal/thread_reaper.h"

namespace nnhal::actors {

Runtime::Runtime(unsigned threads, unsigned kernelThreads, uint64_t maxExecutionBytes,
                 uint32_t maxQueuedExecutions)
    : pool_(std::make_unique<boost::asio::thread_pool>(2 * (threads != 0 ? threads : 2))),
      scheduler_(std::make_shared<Scheduler>(pool_->get_executor(), threads != 0 ? threads : 2)),
      parallel_(kernelThreads),
      maxExecutionBytes_(maxExecutionBytes),
      maxQueuedExecutions_(maxQueuedExecutions) {}

Runtime::~Runtime() {
  if (pool_->get_executor().running_in_this_thread()) {
    // Released from inside one of our own handlers: joining here would join this thread.
    // Work still queued runs; a joiner thread owns the pool until its threads have exited,
    // and the process's thread reaper joins the joiner (hal/thread_reaper.h).
    hal::adoptThread(std::thread([pool = std::move(pool_)] { pool->join(); }));
    return;
  }
  pool_->join();
}

}  // namespace nnhal::actors
