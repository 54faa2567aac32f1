#include "nnhald/daemon_config.h"

#include <grp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace nnhal::daemon {
namespace fs = std::filesystem;
namespace {

/// Whether this process may chown a file it owns to `group`: as root, or as a member.
bool mayGiveGroup(gid_t group) {
  if (::geteuid() == 0 || ::getegid() == group) return true;
  const int count = ::getgroups(0, nullptr);
  std::vector<gid_t> groups(static_cast<size_t>(std::max(count, 0)));
  if (count <= 0 || ::getgroups(count, groups.data()) < 0) return false;
  return std::ranges::find(groups, group) != groups.end();
}

/// Problems with a socket path nnhald is to create: `what` names the option.
void checkSocketPath(const std::string& what, const fs::path& path,
                     std::vector<std::string>& problems) {
  if (path.native().size() >= sizeof(sockaddr_un{}.sun_path)) {
    problems.push_back(what + " '" + path.string() + "' is longer than " +
                       std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) + " bytes");
    return;
  }
  const fs::path folder = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) {
    problems.push_back(what + " '" + path.string() + "': folder '" + folder.string() +
                       "' does not exist");
    return;
  }
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    problems.push_back(what + " '" + path.string() + "': cannot create files in '" +
                       folder.string() + "': " + std::strerror(errno));
  }
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) {
      problems.push_back(what + " '" + path.string() + "' exists and is not a socket");
    } else if (ipc::someoneListens(path)) {
      problems.push_back(what + " '" + path.string() + "': another daemon is listening there");
    }
  }
}

/// Why `option`'s folder (created when the daemon starts, so it need not exist yet) cannot
/// be used: its nearest existing ancestor is not a folder or cannot be written; none for an
/// empty option.
std::optional<std::string> folderProblem(std::string_view option, const std::string& folder) {
  if (folder.empty()) return std::nullopt;
  std::error_code ec;
  fs::path existing = folder;
  while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
  if (existing.empty()) existing = ".";
  const std::string named = std::string(option) + " '" + folder + "': ";
  if (!fs::is_directory(existing, ec)) return named + "'" + existing.string() + "' is not a folder";
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return named + "cannot write in '" + existing.string() + "': " + std::strerror(errno);
  }
  return std::nullopt;
}

}  // namespace

DaemonConfig::DaemonConfig()
    : preparationPolicy(toString(DeviceOptions{}.preparationPolicy)),
      maxQueuedPerModel(DeviceOptions{}.maxQueuedExecutions),
      maxFrameBytes(ipc::kDefaultMaxPayloadBytes),
      frameTimeoutMs(static_cast<uint64_t>(limits.frameTimeout.count())),
      maxLoopTimeoutMs(static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(limits.maxLoopTimeout).count())),
      burstPollUs(static_cast<uint64_t>(limits.burstPollWindow.count())) {}

namespace {

/// The sockets, who may connect, the state directory and the admin socket.
void addServiceOptions(CLI::App& app, DaemonConfig& c) {
  app.add_option("--socket", c.socketPath,
                 "Unix domain socket path to listen on (not needed when systemd passes the "
                 "listening socket: socket activation, docs/DEPLOYMENT.md)");
  app.add_option("--socket-mode", c.socketMode,
                 "Permission bits of the socket, octal: who may connect (connecting needs write "
                 "permission). 0660: the daemon's user and --socket-group")
      ->capture_default_str();
  app.add_option("--socket-group", c.socketGroup,
                 "Group (name or number) given the socket, so that its members connect with "
                 "--socket-mode 0660 (default: the daemon's own group)");
  app.add_option("--admin-socket-mode", c.adminSocketMode,
                 "Permission bits of --admin-socket, octal (it shows every client's counts)")
      ->capture_default_str();
  app.add_flag("--check-config", c.checkConfig,
               "Check the options (socket paths and their folders, modes, group, cache folder, "
               "trace file, sockets passed by systemd) without starting; print the settings "
               "and exit 0, or every problem found and exit 1");
  app.add_option("--cache-dir", c.cacheDir,
                 "State directory for compilation caching (token map; created if missing). "
                 "Without it, caching is disabled");
  app.add_option(
      "--admin-socket", c.adminSocketPath,
      "A second socket whose clients see the statistics of the whole daemon "
      "(created with --admin-socket-mode, 0600: the daemon's user only); other clients see "
      "only their own");
}

/// The driver's threads and scheduling, tracing, model dumps, logging and frame size.
void addDriverOptions(CLI::App& app, DaemonConfig& c) {
  app.add_option("--threads", c.threads,
                 "Threads serving clients' sockets (and synchronous executions known to take "
                 "under 200 us)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  app.add_option("--driver-threads", c.driverThreads,
                 "Preparations and executions the driver runs at once (0 = one per core, at "
                 "least 2); queued work beyond them starts by fair share between applications "
                 "and by priority within one (docs/QOS.md)")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  app.add_option("--preparation-threads", c.preparationThreads,
                 "Of the driver threads, those compilations may hold at once (0 = half the "
                 "cores, at least 1): an execution always finds a free core")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  app.add_option("--preparation-policy", c.preparationPolicy,
                 "How compiling threads share the CPU: idle (SCHED_IDLE: only on cores nothing "
                 "else wants; executions never slow down; a compilation kept off the cores for "
                 "0.5 s while its application runs no execution gets normal priority back, "
                 "which needs LimitNICE=20 or CAP_SYS_NICE, else nice is used), nice (nice 10; "
                 "compilations also progress on a machine busy with other programs) or normal")
      ->capture_default_str()
      ->check(CLI::IsMember({"idle", "nice", "normal"}));
  app.add_option("--max-queued-per-model", c.maxQueuedPerModel,
                 "Executions of one prepared model waiting for the driver; more get "
                 "RESOURCE_EXHAUSTED_TRANSIENT")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--kernel-threads", c.kernelThreads, "Threads inside kernels (0 = all cores)")
      ->capture_default_str();
  app.add_option("--trace", c.tracePath,
                 "Record the daemon's work (each client frame handled, preparations, "
                 "compilations, cache I/O, executions and their operations) and write it as "
                 "Chrome trace JSON to this file when nnhald stops (SIGTERM / SIGINT)");
  app.add_option("--client-cache-entries", c.clientCacheEntries,
                 "With --cache-dir: the compilations of clients that pass no cache files are "
                 "cached by the daemon, in CACHE-DIR/clients/UID/, at most this many models per "
                 "client application (uid; its least recently used go first); 0 turns it off")
      ->capture_default_str();
  app.add_option("--dump-models", c.dumpModelsDir,
                 "For bug reports: write each model a client asks to prepare to this folder "
                 "(created, mode 0700), as CTS JSON (the model and its constants, which "
                 "`nnhal cts` loads) and as a Graphviz .dot, named model-N-uidU-connC; the "
                 "clients' models are then on disk: use it only while debugging");
  app.add_option("--dump-models-limit", c.dumpModelsLimit,
                 "Models --dump-models writes at most (then it logs once and stops)")
      ->capture_default_str();
  app.add_option("--log-level", c.logLevel, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--max-frame-bytes", c.maxFrameBytes,
                 "Largest message payload accepted; a bigger frame closes that client's "
                 "connection")
      ->capture_default_str()
      ->check(CLI::Range(uint32_t{1024}, nnhal::ipc::kDefaultMaxPayloadBytes));
}

/// The per-connection quotas and the daemon's time and memory limits.
void addQuotaOptions(CLI::App& app, DaemonConfig& c) {
  auto* quotas = app.add_option_group("Quotas", "What one client (connection) may hold and do");
  quotas->add_option("--max-connections", c.limits.maxConnections, "Connections of all clients")
      ->capture_default_str();
  quotas
      ->add_option("--max-connections-per-process", c.limits.maxConnectionsPerProcess,
                   "Connections from one client process")
      ->capture_default_str();
  quotas
      ->add_option("--max-prepared-models", c.limits.maxPreparedModels,
                   "Prepared models of a client, preparations in progress included")
      ->capture_default_str();
  quotas
      ->add_option("--max-constant-bytes", c.limits.maxConstantBytes,
                   "Bytes of constants of a client's models")
      ->capture_default_str();
  quotas->add_option("--max-pools", c.limits.maxPools, "Request pools a client keeps mapped")
      ->capture_default_str();
  quotas
      ->add_option("--max-running", c.limits.maxRunning,
                   "Preparations and executions of a client running at once")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  quotas
      ->add_option("--max-queued", c.limits.maxQueued,
                   "Requests of a client waiting for --max-running; more get "
                   "RESOURCE_EXHAUSTED_TRANSIENT")
      ->capture_default_str();
  quotas
      ->add_option("--max-fenced-executions", c.limits.maxFencedExecutions,
                   "Fenced executions of a client not yet released")
      ->capture_default_str();
  quotas
      ->add_option("--max-bursts", c.limits.maxBursts,
                   "Bursts a client holds at once (each has a listener thread and two "
                   "message queues)")
      ->capture_default_str();
  quotas
      ->add_option("--max-buffers", c.limits.maxBuffers,
                   "Driver-managed buffers (memory domains) a client holds at once")
      ->capture_default_str();
  quotas
      ->add_option("--burst-poll-us", c.burstPollUs,
                   "How long an idle burst listener polls its queue before sleeping, µs "
                   "(0 = never poll; bursts of LOW_POWER models never poll)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{10'000}));
  quotas
      ->add_option("--max-unread-reply-bytes", c.limits.maxUnreadReplyBytes,
                   "Replies queued for a client that does not read them before its "
                   "connection is closed (its requests stop being read at a quarter)")
      ->capture_default_str();
  quotas
      ->add_option("--frame-timeout-ms", c.frameTimeoutMs,
                   "Time a started frame may take to arrive whole")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{3'600'000}));
  quotas
      ->add_option("--max-loop-timeout-ms", c.maxLoopTimeoutMs,
                   "Longest WHILE loop timeout granted to an execution (HAL maximum 15000)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{15'000}));
  quotas
      ->add_option("--max-execution-bytes", c.maxExecutionBytes,
                   "Memory one execution may use (its arena, dynamic operands, staged request "
                   "memory); larger models fail to prepare, larger executions fail")
      ->capture_default_str();
  quotas
      ->add_option("--max-arena-bytes", c.maxArenaBytes,
                   "Memory the execution arenas of every prepared model and burst may hold "
                   "together (idle ones are freed first, the heaviest application's first; 0 = "
                   "no limit)")
      ->capture_default_str();
  quotas
      ->add_option("--arena-idle-ms", c.arenaIdleMs,
                   "Free the execution arenas of prepared models and bursts idle this long "
                   "(0 = never)")
      ->capture_default_str();
  quotas
      ->add_option("--max-data-cache-bytes", c.maxDataCacheBytes,
                   "Largest compilation data cache file the driver loads")
      ->capture_default_str();
}

/// The applications' limits and weights, and the hidden test-only faults.
void addApplicationOptions(CLI::App& app, DaemonConfig& c) {
  auto* shares = app.add_option_group(
      "Applications",
      "Clients of one uid are one application (docs/QOS.md): the quotas of all "
      "its connections together, those of the whole daemon, and its share of the "
      "driver");
  shares->add_option(
      "--application-limit", c.applicationLimits,
      "NAME=N: what one application may hold, all its processes and connections together "
      "(repeatable; names: connections, prepared-models, constant-bytes, pools (request pools "
      "and burst memory slots), requests (running or waiting), bursts, buffers, "
      "fenced-executions, reply-bytes (replies queued for connections that do not read "
      "them); defaults 64, 256, 4 GiB, 1024, 512, 64, 1024, 64, 256 MiB; 0 = no limit)");
  shares->add_option(
      "--daemon-limit", c.daemonLimits,
      "NAME=N: what all applications together may hold (repeatable; the same names; defaults: "
      "connections --max-connections, prepared-models 4096, constant-bytes 16 GiB, pools from "
      "the descriptor limit, requests 8192, bursts 512, buffers 4096, fenced-executions 1024, "
      "reply-bytes 1 GiB)");
  shares->add_option("--application-weight", c.applicationWeights,
                     "UID=W: the share of the driver the application of that uid gets relative "
                     "to the others (repeatable; 1..1000, default 1)");
  // Test only (hidden): the faults nnhal-soak's own tests must find (docs/TESTING.md).
  app.add_flag("--test-leak-mapping-per-execution", c.testLeakMapping,
               "(test only) leak one memory mapping per execution")
      ->group("");
  app.add_option("--test-hang-after-executions", c.testHangAfter,
                 "(test only) stop answering executions after this many")
      ->group("");
}

void addGpuOptions(CLI::App& app, DaemonConfig& c) {
  auto* gpu = app.add_option_group(
      "GPU device", "nnhal-vulkan, the GPU device (docs/GPU.md), served beside the CPU device");
  gpu->add_option("--gpu", c.gpu,
                  "auto: serve it on a real GPU (not on a CPU-emulated Vulkan device such as "
                  "lavapipe); on: on any Vulkan device; off: never")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  gpu->add_option("--gpu-device", c.gpuDevice,
                  "the Vulkan device: an index or part of its name (nnhal info lists them; "
                  "default: NNHAL_VULKAN_DEVICE, else the first discrete GPU)");
}

void addTestDeviceOptions(CLI::App& app, DaemonConfig& c) {
  auto* test = app.add_option_group(
      "Test device",
      "A second device for tests of clients and of the daemon: the CPU engine behind the "
      "fault-injecting test backend (docs/TESTING.md); clients choose it by name");
  test->add_option("--test-device", c.testDevice,
                   "also serve a test device of this name (e.g. nnhal-test)");
  test->add_option("--test-device-refuse", c.testDeviceRefuse,
                   "OPERATION: an operation type the test device does not support, e.g. CONV_2D "
                   "(repeatable)");
  test->add_option("--test-device-fail-compile-every", c.testDeviceFailCompileEvery,
                   "N: every Nth compilation on the test device fails (0: never)");
  test->add_option("--test-device-fail-execute-every", c.testDeviceFailExecuteEvery,
                   "N: every Nth execution on the test device fails (0: never)");
  test->add_option("--test-device-delay-us", c.testDeviceDelayUs,
                   "each execution on the test device lasts at least this long (µs)");
}

}  // namespace

void addDaemonOptions(CLI::App& app, DaemonConfig& c) {
  addServiceOptions(app, c);
  addDriverOptions(app, c);
  addQuotaOptions(app, c);
  addApplicationOptions(app, c);
  addGpuOptions(app, c);
  addTestDeviceOptions(app, c);
}

Result<void> applySharedLimit(ipc::SharedLimits& limits, const std::string& text) {
  const size_t equals = text.find('=');
  const std::string name = text.substr(0, equals);
  uint64_t value = 0;
  const char* begin = text.data() + (equals == std::string::npos ? text.size() : equals + 1);
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(begin, end, value);
  if (equals == std::string::npos || parsed.ec != std::errc() || parsed.ptr != end ||
      begin == end) {
    return fail(ErrorStatus::INVALID_ARGUMENT,
                "'" + text + "' is not NAME=N (e.g. prepared-models=128)");
  }
  auto narrow = [&](uint32_t& field) -> Result<void> {
    if (value > UINT32_MAX) {
      return fail(ErrorStatus::INVALID_ARGUMENT, "'" + text + "': at most 4294967295");
    }
    field = static_cast<uint32_t>(value);
    return {};
  };
  if (name == "connections") return narrow(limits.connections);
  if (name == "prepared-models") return narrow(limits.preparedModels);
  if (name == "constant-bytes") {
    limits.constantBytes = value;
    return {};
  }
  if (name == "pools") return narrow(limits.pools);
  if (name == "requests") return narrow(limits.requests);
  if (name == "bursts") return narrow(limits.bursts);
  if (name == "buffers") return narrow(limits.buffers);
  if (name == "fenced-executions") return narrow(limits.fencedExecutions);
  if (name == "reply-bytes") {
    limits.replyBytes = value;
    return {};
  }
  return fail(ErrorStatus::INVALID_ARGUMENT,
              "'" + name +
                  "' is not a quota (connections, prepared-models, constant-bytes, pools, "
                  "requests, bursts, buffers, fenced-executions, reply-bytes)");
}

Result<std::pair<uint32_t, uint32_t>> parseApplicationWeight(const std::string& text) {
  const size_t equals = text.find('=');
  uint32_t uid = 0, weight = 0;
  const char* end = text.data() + text.size();
  const auto uidParsed =
      std::from_chars(text.data(), text.data() + std::min(equals, text.size()), uid);
  const bool uidOk = equals != std::string::npos && equals > 0 && uidParsed.ec == std::errc() &&
                     uidParsed.ptr == text.data() + equals;
  const auto weightParsed =
      uidOk ? std::from_chars(text.data() + equals + 1, end, weight) : std::from_chars_result{};
  if (!uidOk || weightParsed.ec != std::errc() || weightParsed.ptr != end || weight < 1 ||
      weight > 1000) {
    return fail(ErrorStatus::INVALID_ARGUMENT,
                "'" + text + "' is not UID=W with a weight from 1 to 1000 (e.g. 1000=4)");
  }
  return std::pair{uid, weight};
}

Result<mode_t> parseSocketMode(const std::string& text) {
  unsigned value = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, value, 8);
  if (text.empty() || text.size() > 4 || parsed.ec != std::errc() || parsed.ptr != end ||
      value > 0777) {
    return fail(ErrorStatus::INVALID_ARGUMENT,
                "'" + text + "' is not a socket mode: octal permission bits 0000-0777, e.g. 0660");
  }
  return static_cast<mode_t>(value);
}

Result<gid_t> resolveGroup(const std::string& text) {
  gid_t number = 0;
  const char* end = text.data() + text.size();
  const auto parsed = std::from_chars(text.data(), end, number);
  if (!text.empty() && parsed.ec == std::errc() && parsed.ptr == end) return number;
  std::vector<char> buffer(16384);
  group entry{};
  group* found = nullptr;
  const int error = ::getgrnam_r(text.c_str(), &entry, buffer.data(), buffer.size(), &found);
  if (error != 0 || found == nullptr) {
    return fail(ErrorStatus::INVALID_ARGUMENT,
                "no group named '" + text + "'" +
                    (error != 0 ? std::string(": ") + std::strerror(error) : std::string()));
  }
  return found->gr_gid;
}

std::vector<std::string> findConfigProblems(const DaemonConfig& c, bool inheritedSockets) {
  std::vector<std::string> problems;
  ipc::SharedLimits scratch;
  for (const std::string& text : c.applicationLimits) {
    if (auto applied = applySharedLimit(scratch, text); !applied) {
      problems.push_back("--application-limit " + applied.error().message);
    }
  }
  for (const std::string& text : c.daemonLimits) {
    if (auto applied = applySharedLimit(scratch, text); !applied) {
      problems.push_back("--daemon-limit " + applied.error().message);
    }
  }
  for (const std::string& text : c.applicationWeights) {
    if (auto weight = parseApplicationWeight(text); !weight) {
      problems.push_back("--application-weight " + weight.error().message);
    }
  }
  if (c.socketPath.empty() && !inheritedSockets) {
    problems.push_back(
        "--socket is required (or a listening socket passed by systemd: LISTEN_FDS)");
  } else if (!c.socketPath.empty() && !inheritedSockets) {
    checkSocketPath("--socket", c.socketPath, problems);
  }
  if (!c.adminSocketPath.empty() && !inheritedSockets) {
    checkSocketPath("--admin-socket", c.adminSocketPath, problems);
    if (c.adminSocketPath == c.socketPath) {
      problems.push_back("--admin-socket and --socket name the same file");
    }
  }
  for (const auto& [option, text] : {std::pair{"--socket-mode", c.socketMode},
                                     std::pair{"--admin-socket-mode", c.adminSocketMode}}) {
    if (auto mode = parseSocketMode(text); !mode) {
      problems.push_back(std::string(option) + ": " + mode.error().message);
    }
  }
  if (!c.socketGroup.empty()) {
    if (auto group = resolveGroup(c.socketGroup); !group) {
      problems.push_back("--socket-group: " + group.error().message);
    } else if (!inheritedSockets && !mayGiveGroup(*group)) {
      problems.push_back("--socket-group " + c.socketGroup + ": nnhald runs as user " +
                         std::to_string(::geteuid()) +
                         ", not root and not a member of that group, so it cannot give its "
                         "socket to it");
    }
  }
  for (const auto& [option, folder] :
       {std::pair<std::string_view, const std::string&>{"--cache-dir", c.cacheDir},
        {"--dump-models", c.dumpModelsDir}}) {
    if (auto problem = folderProblem(option, folder)) problems.push_back(std::move(*problem));
  }
  if (!c.tracePath.empty()) {
    const fs::path trace = c.tracePath;
    const fs::path folder = trace.has_parent_path() ? trace.parent_path() : fs::path(".");
    std::error_code ec;
    if (fs::is_directory(trace, ec)) {
      problems.push_back("--trace '" + c.tracePath + "' is a folder");
    } else if (::access(folder.c_str(), W_OK | X_OK) != 0) {
      problems.push_back("--trace '" + c.tracePath + "': cannot write in '" + folder.string() +
                         "': " + std::strerror(errno));
    }
  }
  return problems;
}

DeviceOptions deviceOptions(const DaemonConfig& c) {
  DeviceOptions options;
  options.runtimeThreads = c.driverThreads;
  options.preparationThreads = c.preparationThreads;
  options.preparationPolicy = c.preparationPolicy == "nice"     ? PreparationPolicy::kNice
                              : c.preparationPolicy == "normal" ? PreparationPolicy::kNormal
                                                                : PreparationPolicy::kIdle;
  options.maxQueuedExecutions = c.maxQueuedPerModel;
  options.maxDataCacheBytes = c.maxDataCacheBytes;
  options.maxExecutionBytes = c.maxExecutionBytes;
  options.maxArenaBytes = c.maxArenaBytes;
  options.arenaIdleRelease = std::chrono::milliseconds(c.arenaIdleMs);
  options.kernelThreads = c.kernelThreads;
  options.stateDirectory = c.cacheDir;
  return options;
}

ipc::ServerOptions serverOptions(const DaemonConfig& c) {
  ipc::ServerOptions options;
  options.socketPath = c.socketPath;
  options.adminSocketPath = c.adminSocketPath;
  options.socketMode = parseSocketMode(c.socketMode).value_or(0600);
  options.adminSocketMode = parseSocketMode(c.adminSocketMode).value_or(0600);
  if (!c.socketGroup.empty()) {
    if (auto group = resolveGroup(c.socketGroup)) options.socketGroup = *group;
  }
  options.maxPayloadBytes = c.maxFrameBytes;
  options.limits = c.limits;
  options.limits.frameTimeout = std::chrono::milliseconds(c.frameTimeoutMs);
  options.limits.maxLoopTimeout = std::chrono::milliseconds(c.maxLoopTimeoutMs);
  options.limits.burstPollWindow = std::chrono::microseconds(c.burstPollUs);
  // Checked by findConfigProblems: what does not parse is left as it was.
  for (const std::string& text : c.applicationLimits) {
    (void)applySharedLimit(options.limits.perApplication, text);
  }
  for (const std::string& text : c.daemonLimits)
    (void)applySharedLimit(options.limits.daemon, text);
  for (const std::string& text : c.applicationWeights) {
    if (auto weight = parseApplicationWeight(text))
      options.applicationWeights[weight->first] = weight->second;
  }
  if (!c.cacheDir.empty()) options.clientCacheRoot = std::filesystem::path(c.cacheDir) / "clients";
  options.clientCacheEntries = c.clientCacheEntries;
  return options;
}

}  // namespace nnhal::daemon
