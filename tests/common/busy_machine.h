// tests/common/busy_machine.h — other programs keeping every core busy: threads of normal
// priority that spin until stopped. Tests of what gives way to them (a preparation on a
// SCHED_IDLE thread, actors/give_way_watch.h) start one beside the work they watch.
#pragma once

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace nnhal::testing {

class BusyMachine {
 public:
  /// Starts `threads` spinning threads (default: one per hardware thread).
  explicit BusyMachine(unsigned threads = std::max(1u, std::thread::hardware_concurrency())) {
    for (unsigned i = 0; i < threads; ++i) {
      spinners_.emplace_back([this] {
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
    }
  }
  ~BusyMachine() { stop(); }
  BusyMachine(const BusyMachine&) = delete;
  BusyMachine& operator=(const BusyMachine&) = delete;

  /// Lets the spinners end (they are joined when the BusyMachine goes).
  void stop() { stop_ = true; }
  size_t threads() const { return spinners_.size(); }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::jthread> spinners_;  // last: joined before stop_ goes
};

}  // namespace nnhal::testing
