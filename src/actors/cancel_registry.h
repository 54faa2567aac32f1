// actors/cancel_registry.h — cancellation hooks of pending work, called together on stop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "nnhal/status.h"

namespace nnhal::actors {

/// Work that may wait indefinitely (a fenced execution waiting for its fences) registers a
/// cancel hook here; closeAndCancelAll() refuses new registrations and calls every hook,
/// so that a stop never waits for an event that may never come. Hooks must be cheap and
/// must tolerate being called after their work finished (they run outside the lock, so a
/// hook may race with the work's own completion).
class CancelRegistry {
 public:
  using Cancel = std::function<void(const Error&)>;

  /// Registers `cancel`; its id for remove(), or nullopt once closed.
  std::optional<uint64_t> add(Cancel cancel) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return std::nullopt;
    const uint64_t id = next_++;
    hooks_.emplace(id, std::move(cancel));
    return id;
  }

  /// Forgets a hook (the work finished). Unknown ids are ignored.
  void remove(uint64_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    hooks_.erase(id);
  }

  /// Refuses further add()s, then calls every registered hook with `error`. Idempotent.
  void closeAndCancelAll(const Error& error) {
    std::vector<Cancel> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
      for (auto& [id, hook] : hooks_) pending.push_back(std::move(hook));
      hooks_.clear();
    }
    for (Cancel& hook : pending) hook(error);
  }

  bool closed() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return closed_;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return hooks_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::map<uint64_t, Cancel> hooks_;
  uint64_t next_ = 1;
  bool closed_ = false;
};

}  // namespace nnhal::actors
