// actors/give_way_watch.h — a preparation that gives way (PreparationPolicy) is not kept off
// the cores for ever.
//
// A preparation on a giving-way thread (SCHED_IDLE, or nice 10) runs only where nothing else
// wants the core. That protects the executions of its own application, which is the point;
// but other threads can keep it waiting without end: another application whose executions
// start after the preparation did (it gave way because nobody else had work then), or
// programs outside the driver on a busy machine. The watch bounds that: every kCheckInterval
// it reads each giving-way run's scheduler accounting (common/thread_priority.h), and a run
// that was ready to run at each look but ran for less than a quarter of each interval, for
// kGiveWayBound in a row, with no execution of its own application active at any time
// meanwhile, gets the process's priority back for the rest of its run. Giving way
// bounds how much a preparation slows others, never whether it finishes. A run paused by
// the scheduler or waiting for a file (asleep, not ready to run) is not kept off the cores.
//
// Not an actor: a monitor with one thread of its own (joined by the destructor) that sleeps
// while no run gives way. Only built where this process may take giving way back
// (common::canRestoreProcessPriority).
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <thread>

#include "hal/application.h"

namespace nnhal::actors {

class GiveWayWatch {
 public:
  /// How often runs are looked at.
  static constexpr std::chrono::milliseconds kCheckInterval{100};
  /// How long a run may be kept off the cores before it stops giving way.
  static constexpr std::chrono::milliseconds kGiveWayBound{500};

  /// `ownExecutionsSince(application, sinceNs)`: true when executions of that application
  /// were active at any time since `sinceNs` (steady clock, ns since its epoch); its
  /// preparation then keeps giving way, to its own application's work. Called from the
  /// watch's thread; it must not call back into the watch.
  using OwnExecutionsSince = std::function<bool(hal::ApplicationId, int64_t)>;
  explicit GiveWayWatch(OwnExecutionsSince ownExecutionsSince);
  ~GiveWayWatch();
  GiveWayWatch(const GiveWayWatch&) = delete;
  GiveWayWatch& operator=(const GiveWayWatch&) = delete;

  struct Run;
  /// The calling thread's giving-way run, watched while this lives.
  class Registration {
   public:
    Registration() = default;
    Registration(Registration&& other) noexcept;
    Registration& operator=(Registration&& other) noexcept;
    ~Registration();

   private:
    friend class GiveWayWatch;
    GiveWayWatch* watch_ = nullptr;
    std::list<Run>::iterator run_;
  };

  /// Watches the calling thread's run for `application` until the Registration ends.
  [[nodiscard]] Registration enter(hal::ApplicationId application);
  /// Runs given the process's priority back so far.
  uint64_t promotions() const;

 private:
  void leave(std::list<Run>::iterator run);
  void watch(std::stop_token stop);
  /// One look at every run (mutex_ held).
  void checkLocked(int64_t now);

  OwnExecutionsSince ownExecutionsSince_;
  mutable std::mutex mutex_;
  std::condition_variable_any wake_;
  std::list<Run> runs_;
  uint64_t promotions_ = 0;
  bool refused_ = false;  ///< the OS refused once: stop trying
  std::jthread thread_;   ///< last: stopped and joined before the state above goes
};

}  // namespace nnhal::actors
