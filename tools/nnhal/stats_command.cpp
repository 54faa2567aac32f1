#include "tools/nnhal/stats_command.h"

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "nnhal/client.h"

namespace nnhal::cli {
namespace {

std::string mebibytes(uint64_t bytes) {
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string duration(std::chrono::milliseconds time) {
  const auto seconds = static_cast<uint64_t>(time.count() / 1000);
  return fmt::format("{}h {:02}m {:02}s", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

}  // namespace

Result<void> runStats(const StatsArgs& args) {
  ClientOptions options;
  options.clientName = "nnhal-stats";
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, connect(args.connect, options));
  NNHAL_ASSIGN_OR_RETURN(DaemonStats stats, getDaemonStats(*device));
  if (args.json) {
    nlohmann::ordered_json out;
    out["socket"] = args.connect;
    out["scope"] = stats.wholeDaemon ? "daemon" : "connection";
    out["clients"] = stats.clients;
    out["preparedModels"] = stats.preparedModels;
    out["mappedPools"] = stats.mappedPools;
    out["mappedPoolBytes"] = stats.mappedPoolBytes;
    out["callsInFlight"] = stats.callsInFlight;
    out["bursts"] = stats.bursts;
    out["burstListeners"] = stats.burstListeners;
    out["burstMemories"] = stats.burstMemories;
    out["buffers"] = stats.buffers;
    out["residentBytes"] = stats.residentBytes;
    out["uptimeMs"] = stats.uptime.count();
    nlohmann::ordered_json applications = nlohmann::ordered_json::array();
    for (const DaemonStats::Application& a : stats.applications) {
      applications.push_back({{"uid", a.uid},
                              {"weight", a.weight},
                              {"connections", a.connections},
                              {"preparedModels", a.preparedModels},
                              {"constantBytes", a.constantBytes},
                              {"pools", a.pools},
                              {"requests", a.requests},
                              {"bursts", a.bursts},
                              {"buffers", a.buffers},
                              {"arenaBytes", a.arenaBytes},
                              {"driverTimeUs", a.driverTime.count()}});
    }
    out["applications"] = applications;
    fmt::print("{}\n", out.dump(2));
    return {};
  }
  if (stats.wholeDaemon) {
    fmt::print("scope: the whole daemon (admin socket)\n");
  } else {
    fmt::print(
        "scope: this connection only (connect to nnhald's --admin-socket for every client)\n");
  }
  fmt::print("clients: {}\n", stats.clients);
  fmt::print("prepared models: {}\n", stats.preparedModels);
  fmt::print("mapped pools: {} ({})\n", stats.mappedPools, mebibytes(stats.mappedPoolBytes));
  fmt::print("calls in flight: {}\n", stats.callsInFlight);
  fmt::print("bursts: {} ({} listeners, {} slot memories)\n", stats.bursts, stats.burstListeners,
             stats.burstMemories);
  fmt::print("buffers: {}\n", stats.buffers);
  if (stats.wholeDaemon) {
    fmt::print("resident memory: {}\n", mebibytes(stats.residentBytes));
    fmt::print("uptime: {}\n", duration(stats.uptime));
  }
  fmt::print("{}:\n", stats.wholeDaemon ? "applications (uid)" : "this application (uid)");
  for (const DaemonStats::Application& a : stats.applications) {
    fmt::print(
        "  uid {}: weight {}, {} connections, {} prepared models ({} of constants), {} pools, "
        "{} requests, {} bursts, {} buffers, arenas {}, driver time {:.1f} s\n",
        a.uid, a.weight, a.connections, a.preparedModels, mebibytes(a.constantBytes), a.pools,
        a.requests, a.bursts, a.buffers, mebibytes(a.arenaBytes),
        static_cast<double>(a.driverTime.count()) / 1e6);
  }
  return {};
}

}  // namespace nnhal::cli
