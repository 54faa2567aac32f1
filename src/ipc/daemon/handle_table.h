// ipc/daemon/handle_table.h — the objects of one connection by handle (prepared models,
// bursts, fenced executions, driver-managed buffers, the daemon's own calls and waits).
//
// Handles are numbered per table from 1 and never reused while the table lives, so a stale
// handle finds nothing rather than a newer object, and a handle names an object of this
// connection only (another connection's numbers mean nothing here). Lookups are those of
// the underlying map.
//
// Thread safety: none; a table belongs to its connection's strand.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>

namespace nnhal::ipc {

template <typename T>
class HandleTable {
 public:
  using Map = std::unordered_map<uint64_t, T>;
  using iterator = typename Map::iterator;

  /// Keeps `value` under a new handle, which it returns.
  uint64_t add(T value) {
    const uint64_t handle = next_++;
    items_.emplace(handle, std::move(value));
    return handle;
  }
  iterator find(uint64_t handle) { return items_.find(handle); }
  iterator begin() { return items_.begin(); }
  iterator end() { return items_.end(); }
  void erase(iterator at) { items_.erase(at); }
  void erase(uint64_t handle) { items_.erase(handle); }
  template <typename Predicate>
  void eraseIf(Predicate predicate) {
    std::erase_if(items_, predicate);
  }
  void clear() { items_.clear(); }
  size_t size() const { return items_.size(); }
  bool contains(uint64_t handle) const { return items_.contains(handle); }

 private:
  uint64_t next_ = 1;
  Map items_;
};

}  // namespace nnhal::ipc
