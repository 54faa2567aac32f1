#include "hal/lanes.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/thread_reaper.h"

namespace nnhal::hal {

struct Lanes::State {
  struct Lane {
    std::deque<std::move_only_function<void()>> jobs;
    bool running = false;  ///< its thread is in run()
    std::thread thread;
  };
  std::mutex mutex;
  std::condition_variable wake;
  bool stopping = false;
  std::unordered_map<ApplicationId, std::unique_ptr<Lane>> lanes;

  static void run(const std::shared_ptr<State>& state, Lane* lane);
};

namespace {
/// The Lanes state whose lane the calling thread runs, if any.
thread_local const void* tCurrentLanes = nullptr;
}  // namespace

void Lanes::State::run(const std::shared_ptr<State>& state, Lane* lane) {
  tCurrentLanes = state.get();
  std::unique_lock lock(state->mutex);
  for (;;) {
    if (lane->jobs.empty()) {
      const bool woken = state->wake.wait_for(
          lock, kIdleTimeout, [&] { return !lane->jobs.empty() || state->stopping; });
      if (!woken || lane->jobs.empty()) {
        // Idle, or stopping with nothing left: the lane's thread ends; post() starts another
        // when the application comes back (and joins this one).
        lane->running = false;
        state->wake.notify_all();
        return;
      }
    }
    std::move_only_function<void()> job = std::move(lane->jobs.front());
    lane->jobs.pop_front();
    lock.unlock();
    job();
    job = nullptr;  // what it captured is released on this lane, outside the lock
    lock.lock();
  }
}

Lanes::Lanes() : state_(std::make_shared<State>()) {}

Lanes::~Lanes() {
  std::vector<std::thread> threads;
  const bool onOwnLane = tCurrentLanes == state_.get();
  {
    std::unique_lock lock(state_->mutex);
    state_->stopping = true;
    state_->wake.notify_all();
    if (!onOwnLane) {
      // Every lane drains its queue, then ends.
      state_->wake.wait(lock, [&] {
        for (const auto& [id, lane] : state_->lanes) {
          if (lane->running) return false;
        }
        return true;
      });
    }
    for (auto& [id, lane] : state_->lanes) {
      if (lane->thread.joinable()) threads.push_back(std::move(lane->thread));
    }
  }
  for (std::thread& thread : threads) {
    if (onOwnLane) {
      common::adoptThread(std::move(thread));  // they hold the state; the reaper joins them
    } else {
      thread.join();
    }
  }
}

size_t Lanes::active() const {
  std::lock_guard lock(state_->mutex);
  size_t running = 0;
  for (const auto& [id, lane] : state_->lanes) running += lane->running ? 1 : 0;
  return running;
}

void Lanes::post(ApplicationId application, std::move_only_function<void()> job) {
  std::thread ended;  // the lane's previous thread, which ended when idle
  {
    std::lock_guard lock(state_->mutex);
    if (!state_->stopping) {
      std::unique_ptr<State::Lane>& lane = state_->lanes[application];
      if (!lane) lane = std::make_unique<State::Lane>();
      lane->jobs.push_back(std::move(job));
      if (!lane->running) {
        ended = std::move(lane->thread);
        lane->running = true;
        lane->thread = std::thread([state = state_, raw = lane.get()] { State::run(state, raw); });
      } else {
        state_->wake.notify_all();
      }
      job = nullptr;
    }
  }
  if (ended.joinable()) ended.join();
  if (job) job();  // stopping: no lane takes it
}

}  // namespace nnhal::hal
