// common/clock.h — durations in the units the driver reports them in: microseconds, the unit
// of the HAL's Timing (timeOnDevice, timeInDriver) and of the logs' "in N us".
//
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstdint>

namespace nnhal {

/// Whole microseconds from `from` to `to` on the steady clock, truncated; 0 when `to` is
/// earlier (a steady clock never goes back, so only a caller's mix-up gets there).
inline uint64_t microsecondsBetween(std::chrono::steady_clock::time_point from,
                                    std::chrono::steady_clock::time_point to) {
  if (to <= from) return 0;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(to - from).count());
}

/// Whole microseconds from `from` to now.
inline uint64_t microsecondsSince(std::chrono::steady_clock::time_point from) {
  return microsecondsBetween(from, std::chrono::steady_clock::now());
}

}  // namespace nnhal
