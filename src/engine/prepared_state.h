// engine/prepared_state.h — per-step precomputed state saved and restored across
// compilations (the engine's side of compilation caching).
//
// Some operations do heavy work in prepare (packing weights for a GEMM, widening a filter)
// whose result depends only on constant operands. A compilation in *save* mode lets each
// such prepare record those bytes (PrepareContext::saveState); the cache layer writes them
// to the data cache. A later compilation in *restore* mode hands the bytes back
// (PrepareContext::restoredState) so that prepare skips the work.
//
// Entries are keyed by (subgraph index, step index): subgraph 0 = main, i + 1 =
// Model::referenced[i]; step = index of the operation in its subgraph. Compilation is
// deterministic, so the same Model yields the same steps.
//
// Trust: restored bytes come from a file anyone may have rewritten. Operations treat them as
// untrusted values (they check every value they rely on for memory safety, e.g. ranges that
// bound int32 accumulations) and reject a state of the wrong size. Rejected or absent state
// simply means "prepare as usual", except for *required* entries (whose replaced constant
// inputs the cache omitted): the compiler fails when one of them was not accepted.
//
// Thread safety: one store belongs to one compilation at a time (not thread-safe).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <vector>

namespace nnhal::engine {

/// Alignment of restored state bytes (the cache format aligns every state to this).
inline constexpr size_t kStateAlignment = 64;

/// Names one step of a compilation.
struct StateKey {
  uint32_t subgraph = 0;  ///< 0 = main, i + 1 = Model::referenced[i]
  uint32_t step = 0;      ///< operation index inside the subgraph
  auto operator<=>(const StateKey&) const = default;
};

class PreparedStateStore {
 public:
  enum class Mode : uint8_t {
    kSave,     ///< prepare functions record their state (saveState)
    kRestore,  ///< prepare functions get state back (restoredState)
  };

  /// A saved state: its bytes and the input positions (of the operation) whose constant
  /// bytes prepare does not read when it is given this state back.
  struct Entry {
    std::vector<uint8_t> bytes;
    std::vector<uint32_t> replacedInputs;
  };

  explicit PreparedStateStore(Mode mode) : mode_(mode) {}
  Mode mode() const { return mode_; }

  // --- save mode -------------------------------------------------------------------------

  /// Records `bytes` for `key`. A second save for the same key (an operation that runs
  /// several kernels through one context) drops the key for good: nothing ambiguous is
  /// ever cached. Ignored in restore mode.
  void save(StateKey key, std::vector<uint8_t> bytes, std::vector<uint32_t> replacedInputs);
  /// The states saved so far (keys saved twice are absent).
  const std::map<StateKey, Entry>& saved() const { return saved_; }

  // --- restore mode ----------------------------------------------------------------------

  /// Offers `bytes` (kStateAlignment-aligned, alive while the owners given to retain() are)
  /// for `key`; `required` marks a state whose replaced inputs are not available.
  void addRestored(StateKey key, std::span<const uint8_t> bytes, bool required);
  /// For offered bytes that may still be arriving (the cache layer reads the data cache
  /// while the model compiles): restored() first calls `ready(bytes)`, which blocks until
  /// those bytes may be read and returns false when they never will (the read failed);
  /// the state is then not offered. Without it, offered bytes are readable at once.
  void setAvailability(std::function<bool(std::span<const uint8_t>)> ready) {
    ready_ = std::move(ready);
  }
  /// The bytes offered for `key` when they are exactly `expectedBytes` long, aligned and
  /// available; an empty span otherwise, and for any key asked for a second time.
  std::span<const uint8_t> restored(StateKey key, size_t expectedBytes);
  /// Marks the state of `key` as used (prepare checked its values and relies on them);
  /// ignored unless restored() returned its bytes.
  void accept(StateKey key);
  /// Required states that were not accepted (empty after a successful restore).
  std::vector<StateKey> missingRequired() const;

  /// Keeps `owner` alive for as long as the plan compiled with this store.
  void retain(std::shared_ptr<const void> owner) { retained_.push_back(std::move(owner)); }
  std::vector<std::shared_ptr<const void>> takeRetained() { return std::move(retained_); }

 private:
  struct Offered {
    std::span<const uint8_t> bytes;
    bool required = false;
    bool handedOut = false;  ///< restored() was asked for it
    bool delivered = false;  ///< restored() returned its bytes
    bool accepted = false;
  };
  Mode mode_;
  std::map<StateKey, Entry> saved_;
  std::set<StateKey> ambiguous_;
  std::map<StateKey, Offered> offered_;
  std::function<bool(std::span<const uint8_t>)> ready_;
  std::vector<std::shared_ptr<const void>> retained_;
};

}  // namespace nnhal::engine
