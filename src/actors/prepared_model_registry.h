// actors/prepared_model_registry.h — the prepared models one device made, found again from
// their public PreparedModel face.
//
// IDevice::allocate takes prepared models and must refuse any that another driver made, and
// nnhald needs the driver-side control (hal::PreparedModelControl) of the models it prepared.
// Both look the model up here instead of casting the public interface down: a model is
// registered while it lives (an Entry, held by the model itself, removes it on destruction),
// so a PreparedModel that is not in the table belongs to someone else.
//
// Thread safety: any thread. A pointer find() returns stays valid while the caller holds the
// PreparedModel it looked up (it is the same object).
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "nnhal/prepared_model.h"

namespace nnhal::actors {

class PreparedModelImpl;

class PreparedModelRegistry : public std::enable_shared_from_this<PreparedModelRegistry> {
 public:
  /// Keeps one model registered; removes it when destroyed (moved-from: nothing).
  class Entry {
   public:
    Entry() = default;
    Entry(std::shared_ptr<PreparedModelRegistry> registry, const PreparedModel* key)
        : registry_(std::move(registry)), key_(key) {}
    Entry(Entry&& other) noexcept
        : registry_(std::move(other.registry_)), key_(std::exchange(other.key_, nullptr)) {}
    Entry& operator=(Entry&&) = delete;
    Entry(const Entry&) = delete;
    Entry& operator=(const Entry&) = delete;
    ~Entry() {
      if (registry_ != nullptr) registry_->remove(key_);
    }

   private:
    std::shared_ptr<PreparedModelRegistry> registry_;
    const PreparedModel* key_ = nullptr;
  };

  /// Registers `model` until the returned Entry is destroyed.
  [[nodiscard]] Entry add(PreparedModelImpl* model, const PreparedModel* key) {
    std::lock_guard lock(mutex_);
    models_[key] = model;
    return Entry(shared_from_this(), key);
  }

  /// The device's own model behind `model`, or null for one this device did not make.
  PreparedModelImpl* find(const PreparedModel* model) const {
    std::lock_guard lock(mutex_);
    const auto found = models_.find(model);
    return found == models_.end() ? nullptr : found->second;
  }

 private:
  void remove(const PreparedModel* key) {
    std::lock_guard lock(mutex_);
    models_.erase(key);
  }

  mutable std::mutex mutex_;
  std::unordered_map<const PreparedModel*, PreparedModelImpl*> models_;
};

}  // namespace nnhal::actors
