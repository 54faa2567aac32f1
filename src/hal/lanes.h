// hal/lanes.h — one lane per application: where work whose cost or pace a client chooses
// runs, so that it delays only that client.
//
// Reading a model's pools and copying its constants, reading and writing compilation cache
// files, copying to and from a driver-managed buffer through a client's file, joining a
// burst listener that is finishing an execution: such work may take long (a model of a
// gigabyte of constants) or wait on the client (a file on a slow disk). On a shared pool or
// strand, a few such requests would queue seconds of work in front of everyone, and a
// stalled one would hold a thread everyone needs. So each application (hal/application.h)
// gets a lane: a thread of its own that runs its jobs in order. A lane starts with its first
// job and ends after kIdleTimeout without one; a stalled job delays only its application's
// later jobs. nnhald's intake (ipc/daemon) and the driver's cache I/O (actors/cache_actor.h)
// each have their Lanes.
//
// Thread safety: post() may be called from any thread. The destructor lets every lane finish
// its jobs and joins the threads; destroyed on one of its own lane threads (a job released
// the last owner), it hands them to the thread reaper (common/thread_reaper.h) instead.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "hal/application.h"

namespace nnhal::hal {

class Lanes {
 public:
  /// How long a lane's thread waits for a job before it ends.
  static constexpr std::chrono::seconds kIdleTimeout{10};

  Lanes();
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  /// Runs `job` on `application`'s lane, after the jobs posted there before it. After the
  /// destructor started, `job` runs on the caller's thread.
  void post(ApplicationId application, std::move_only_function<void()> job);
  /// Lanes with a thread now (for tests and statistics).
  size_t active() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  ///< shared with the lanes' threads
};

}  // namespace nnhal::hal
