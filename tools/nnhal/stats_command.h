// tools/nnhal/stats_command.h — `nnhal stats --connect SOCKET [--json]`: the counters of a
// running nnhald (nnhal::getDaemonStats, nnhal/client.h). Through the daemon's admin socket
// they cover every client; through its client socket, only this connection's own objects.
#pragma once

#include <string>

#include "nnhal/status.h"

namespace nnhal::cli {

struct StatsArgs {
  std::string connect;  ///< the daemon's socket (its --admin-socket for the whole daemon)
  bool json = false;    ///< one JSON object instead of lines
};

/// Connects, asks for the counters and prints them on stdout. Errors: DEVICE_UNAVAILABLE
/// when the daemon cannot be reached.
Result<void> runStats(const StatsArgs& args);

}  // namespace nnhal::cli
