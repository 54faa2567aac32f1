// nnhald/daemon_config.h — nnhald's settings: the command-line options (nnhald --help), the
// checks made on them before the daemon starts, and the driver and server options they give.
#pragma once

#include <sys/types.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ipc/daemon/server.h"
#include "nnhal/device.h"

namespace nnhal::daemon {

struct DaemonConfig {
  std::string socketPath;
  std::string adminSocketPath;
  /// Octal permission bits of the sockets nnhald creates ("0660": owner and group connect).
  std::string socketMode = "0660";
  std::string adminSocketMode = "0600";
  /// Group name or number the client socket is given; empty: the daemon's own group.
  std::string socketGroup;
  std::string cacheDir;
  /// Models cached per application for clients that pass no cache files (0: none).
  uint32_t clientCacheEntries = 64;
  std::string tracePath;
  /// --dump-models: the folder each received model is written to (empty: none), and how many.
  std::string dumpModelsDir;
  uint32_t dumpModelsLimit = 1000;
  std::string logLevel = "info";
  std::string preparationPolicy;
  unsigned threads = 2;
  unsigned driverThreads = 0;
  unsigned preparationThreads = 0;
  unsigned kernelThreads = 0;
  uint32_t maxQueuedPerModel = 0;
  uint32_t maxFrameBytes = 0;
  ipc::ClientLimits limits;
  /// "NAME=N" quotas per application and of the whole daemon (--application-limit,
  /// --daemon-limit), and "UID=W" weights of applications (--application-weight).
  std::vector<std::string> applicationLimits;
  std::vector<std::string> daemonLimits;
  std::vector<std::string> applicationWeights;
  uint64_t frameTimeoutMs = 0;
  uint64_t maxLoopTimeoutMs = 0;
  uint64_t burstPollUs = 0;
  uint64_t maxDataCacheBytes = uint64_t{1} << 30;
  uint64_t maxExecutionBytes = uint64_t{2} << 30;
  uint64_t maxArenaBytes = uint64_t{8} << 30;
  uint64_t arenaIdleMs = 30'000;
  bool checkConfig = false;
  bool testLeakMapping = false;
  uint64_t testHangAfter = 0;
  /// --gpu: serve the GPU device nnhal-vulkan: "auto" (on a real GPU, not on a CPU-emulated
  /// Vulkan device), "on" (any Vulkan device, lavapipe included) or "off"; --gpu-device picks
  /// the Vulkan device (index or part of its name; NNHAL_VULKAN_DEVICE).
  std::string gpu = "auto";
  std::string gpuDevice;
  /// --test-device: the name of a second, fault-injecting device to serve (empty: none), and
  /// its faults (tools/nnhald/test_device.h).
  std::string testDevice;
  std::vector<std::string> testDeviceRefuse;
  uint32_t testDeviceFailCompileEvery = 0;
  uint32_t testDeviceFailExecuteEvery = 0;
  uint64_t testDeviceDelayUs = 0;

  DaemonConfig();
};

/// Registers every option of nnhald on `app`, writing into `config`.
void addDaemonOptions(CLI::App& app, DaemonConfig& config);

/// "0660" or "660" -> 0660. Errors: INVALID_ARGUMENT for anything but 1-4 octal digits up to
/// 0777 (setuid, setgid and sticky bits mean nothing on a socket).
Result<mode_t> parseSocketMode(const std::string& text);
/// A group name ("nnhal") or number ("4242") -> gid. A number need not name a group in
/// /etc/group. Errors: INVALID_ARGUMENT for an unknown name.
Result<gid_t> resolveGroup(const std::string& text);

/// Everything wrong with `config` that can be found without starting: socket paths (length,
/// parent folder, another daemon listening, a file in the way), modes, group, cache folder,
/// trace file. Empty: nothing found. `inheritedSockets`: the service manager passes the
/// listening socket(s), so --socket may be absent.
std::vector<std::string> findConfigProblems(const DaemonConfig& config, bool inheritedSockets);

/// Applies "NAME=N" to `limits` (names: connections, prepared-models, constant-bytes, pools,
/// requests, bursts, buffers, fenced-executions, reply-bytes). Errors: INVALID_ARGUMENT naming what
/// is wrong.
Result<void> applySharedLimit(ipc::SharedLimits& limits, const std::string& text);
/// "UID=W" -> {uid, weight}, W in 1..1000. Errors: INVALID_ARGUMENT.
Result<std::pair<uint32_t, uint32_t>> parseApplicationWeight(const std::string& text);

DeviceOptions deviceOptions(const DaemonConfig& config);
/// Server options with modes and group resolved (call after findConfigProblems found none).
ipc::ServerOptions serverOptions(const DaemonConfig& config);

}  // namespace nnhal::daemon
