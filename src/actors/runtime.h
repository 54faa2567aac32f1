// actors/runtime.h — the actor runtime: an Asio thread pool, strands, and the kernel
// thread arena.
//
// Actors are objects that own state and receive messages on their own strand (an Asio
// strand over the runtime's thread pool): handlers of one actor never run concurrently,
// handlers of different actors do. Heavy work goes through the Scheduler, not a strand, so
// that many run at once: executions on the pool, compilations on a background pool whose
// threads have a lower OS priority; results come back as messages.
//
// Thread safety: all methods are thread-safe. The Runtime outlives every actor using it
// (actors hold a shared_ptr to it). When the last reference is dropped on one of the
// runtime's own threads (a callback that released the last PreparedModel), the pool cannot
// join itself: a short-lived thread joins it, and is joined in turn by the process's thread
// reaper (common/thread_reaper.h). No thread is ever detached. stopped() tells when that
// has happened, whichever thread released the runtime.
#pragma once

#include <utility>  // before Asio (Boost 1.74 + g++ 12 needs std::exchange declared)

#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <future>
#include <memory>

#include "actors/scheduler.h"
#include "engine/arena_budget.h"
#include "nnhal/trace.h"

namespace nnhal::actors {

using Executor = boost::asio::thread_pool::executor_type;
using Strand = boost::asio::strand<Executor>;

/// How a Runtime runs work (from DeviceOptions).
struct RuntimeOptions {
  /// Slots of the scheduler, the preparations and executions that run at once (0 = one per
  /// hardware thread, at least 2; the pool has twice as many threads, for paused runs).
  unsigned threads = 0;
  /// Of the slots, those preparations may hold at once (0 = half the hardware threads, at
  /// least 1; at most `threads`).
  unsigned preparationThreads = 0;
  /// OS policy of the threads that run preparations.
  PreparationPolicy preparationPolicy = PreparationPolicy::kNormal;
  /// DeviceOptions::maxExecutionBytes.
  uint64_t maxExecutionBytes = 0;
  /// DeviceOptions::maxQueuedExecutions.
  uint32_t maxQueuedExecutions = 1024;
  /// DeviceOptions::trace.
  std::shared_ptr<TraceRecorder> trace{};
  /// DeviceOptions::maxArenaBytes and arenaIdleRelease (engine/arena_budget.h).
  uint64_t maxArenaBytes = 0;
  std::chrono::milliseconds arenaIdleRelease{0};
};

class Runtime {
 public:
  explicit Runtime(const RuntimeOptions& options);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Executor executor() { return pool_->get_executor(); }
  Strand makeStrand() { return boost::asio::make_strand(pool_->get_executor()); }
  /// The run queue of every device on this runtime (fair share, priorities, starvation bound).
  Scheduler& scheduler() { return *scheduler_; }
  /// Fenced executions of every prepared model of the device that are still waiting for
  /// their fences; the device cancels them all when it is released.

  /// Memory one execution may use (0 = no limit): the arena of a plan and what it allocates.
  uint64_t maxExecutionBytes() const { return maxExecutionBytes_; }
  /// Executions of one prepared model that may wait on the scheduler (DeviceOptions).
  uint32_t maxQueuedExecutions() const { return maxQueuedExecutions_; }
  /// Where the device records its spans (nnhal/trace.h); null = no tracing.
  TraceRecorder* trace() const { return trace_.get(); }
  /// The memory every execution arena of the device may hold; an idle watchdog on the pool
  /// frees arenas unused for its idleRelease.
  engine::ArenaBudget& arenaBudget() { return arenaBudget_; }
  /// Ready once the runtime is gone: its threads joined, its pools destroyed with every
  /// handler they still held, its scheduler's queue released. When the last reference is
  /// dropped on one of the runtime's own threads, that happens later, on another thread; an
  /// embedder whose objects those handlers may hold (a session on its io_context) waits for
  /// this before destroying what they use.
  std::shared_future<void> stopped() const { return stoppedFuture_; }

 private:
  std::unique_ptr<boost::asio::thread_pool> pool_;
  /// Preparations that give way (Scheduler: at the PreparationPolicy's lower OS priority).
  std::unique_ptr<boost::asio::thread_pool> background_;
  /// Preparations that are their application's share (normal priority); null with
  /// PreparationPolicy::kNormal, where background_ serves both.
  std::unique_ptr<boost::asio::thread_pool> fairBackground_;
  std::shared_ptr<Scheduler> scheduler_;
  engine::ArenaBudget arenaBudget_;
  /// The idle watchdog: trims the arena budget every half idleRelease (until stopped).
  struct Watchdog;
  std::shared_ptr<Watchdog> watchdog_;
  uint64_t maxExecutionBytes_;
  uint32_t maxQueuedExecutions_;
  std::shared_ptr<TraceRecorder> trace_;
  std::promise<void> stopped_;
  std::shared_future<void> stoppedFuture_{stopped_.get_future().share()};
};

/// Posts `handler` to the runtime's pool. `runtime` is held until post() returns: the handler
/// may run at once and drop the last other reference to the runtime (a callback releasing
/// the prepared model or the device) while post() is still signalling the pool.
template <typename Handler>
void postTo(std::shared_ptr<Runtime> runtime, Handler&& handler) {
  boost::asio::post(runtime->executor(), std::forward<Handler>(handler));
}

}  // namespace nnhal::actors
