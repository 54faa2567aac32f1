#include "engine/prepared_state.h"

#include <utility>

namespace nnhal::engine {

void PreparedStateStore::save(StateKey key, std::vector<uint8_t> bytes,
                              std::vector<uint32_t> replacedInputs) {
  if (mode_ != Mode::kSave || ambiguous_.contains(key)) return;
  if (saved_.contains(key)) {
    saved_.erase(key);
    ambiguous_.insert(key);
    return;
  }
  saved_.emplace(key, Entry{std::move(bytes), std::move(replacedInputs)});
}

void PreparedStateStore::addRestored(StateKey key, std::span<const uint8_t> bytes, bool required) {
  offered_[key] = Offered{bytes, required};
}

std::span<const uint8_t> PreparedStateStore::restored(StateKey key, size_t expectedBytes) {
  if (mode_ != Mode::kRestore) return {};
  auto it = offered_.find(key);
  if (it == offered_.end() || it->second.handedOut) return {};
  it->second.handedOut = true;
  const std::span<const uint8_t> bytes = it->second.bytes;
  if (bytes.size() != expectedBytes || expectedBytes == 0) return {};
  if (reinterpret_cast<uintptr_t>(bytes.data()) % kStateAlignment != 0) return {};
  if (ready_ && !ready_(bytes)) return {};
  it->second.delivered = true;
  return bytes;
}

void PreparedStateStore::accept(StateKey key) {
  auto it = offered_.find(key);
  if (it != offered_.end() && it->second.delivered) it->second.accepted = true;
}

std::vector<StateKey> PreparedStateStore::missingRequired() const {
  std::vector<StateKey> missing;
  for (const auto& [key, offered] : offered_) {
    if (offered.required && !offered.accepted) missing.push_back(key);
  }
  return missing;
}

}  // namespace nnhal::engine
