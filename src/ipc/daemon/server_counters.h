// ipc/daemon/server_counters.h — object counts of the whole daemon, shared by the server,
// its sessions and their burst listeners; only administrators (the admin socket) see them.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include "ipc/messages.h"

namespace nnhal::ipc {

struct ServerCounters {
  std::atomic<uint64_t> sessions{0};
  std::atomic<uint64_t> preparedModels{0};
  std::atomic<uint64_t> pools{0};
  std::atomic<uint64_t> callsInFlight{0};
  std::atomic<uint64_t> bursts{0};
  std::atomic<uint64_t> burstListeners{0};
  std::atomic<uint64_t> burstMemories{0};
  std::atomic<uint64_t> buffers{0};
  std::atomic<uint64_t> poolBytes{0};
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  Stats snapshot() const {
    return {sessions.load(), preparedModels.load(), pools.load(),         callsInFlight.load(),
            bursts.load(),   burstListeners.load(), burstMemories.load(), buffers.load()};
  }
};

}  // namespace nnhal::ipc
