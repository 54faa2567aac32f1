// engine/memory_budget.h — the memory one execution may hold at once.
//
// A plan's arena is sized at compile time (the driver refuses plans whose arena is larger
// than its limit); what an execution allocates as it goes — the interpreter's dynamic
// operands, invocation arenas and scratch, the staging of shared request memory — is taken
// from a MemoryBudget first, and given back when freed. An allocation that would exceed the
// budget fails the execution with RESOURCE_EXHAUSTED_TRANSIENT instead of asking the kernel
// for memory it may only pretend to have (overcommit), which would end with the OOM killer.
//
// Thread safety: take/give may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "nnhal/status.h"

namespace nnhal::engine {

class MemoryBudget {
 public:
  /// `limit` bytes at once; 0 = no limit.
  explicit MemoryBudget(uint64_t limit) : limit_(limit) {}

  /// Takes `bytes` for `what` ("an operand", "scratch"...). Errors:
  /// RESOURCE_EXHAUSTED_TRANSIENT naming the sizes.
  Result<void> take(uint64_t bytes, const std::string& what) {
    const uint64_t before = used_.fetch_add(bytes, std::memory_order_relaxed);
    if (limit_ != 0 && (bytes > limit_ || before > limit_ - bytes)) {
      used_.fetch_sub(bytes, std::memory_order_relaxed);
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  what + " of " + std::to_string(bytes) + " bytes would take the execution past " +
                      std::to_string(limit_) + " bytes of memory (" + std::to_string(before) +
                      " in use)");
    }
    return {};
  }
  void give(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

 private:
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
};

}  // namespace nnhal::engine
