// nnhald — the nnhal driver as a daemon: serves the embedded CPU driver to client processes
// on a Unix domain socket (docs/IPC_PROTOCOL.md; clients use nnhal::connect, nnhal/client.h).
//
//   nnhald --socket PATH [--admin-socket PATH] [--cache-dir DIR] [--threads N]
//          [--driver-threads N] [--kernel-threads N] [--log-level LEVEL]
//          [--max-frame-bytes N] [quota options: nnhald --help]
//
// Every client is untrusted: its quotas (ipc/daemon/client_limits.h) have an option each.
// SIGTERM / SIGINT: stop accepting, let in-flight work finish and reply, exit 0.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <sys/resource.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "ipc/daemon/server.h"
#include "nnhal/device.h"
#include "nnhal/version.h"

int main(int argc, char** argv) {
  std::string socketPath;
  std::string adminSocketPath;
  std::string cacheDir;
  unsigned threads = 2;
  unsigned driverThreads = 8;
  uint32_t maxQueuedPerModel = nnhal::DeviceOptions{}.maxQueuedExecutions;
  nnhal::ipc::ClientLimits limits;
  uint64_t frameTimeoutMs = static_cast<uint64_t>(limits.frameTimeout.count());
  uint64_t maxLoopTimeoutMs = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::milliseconds>(limits.maxLoopTimeout).count());
  uint64_t maxDataCacheBytes = uint64_t{1} << 30;
  uint64_t maxExecutionBytes = uint64_t{2} << 30;
  unsigned kernelThreads = 0;
  std::string logLevel = "info";
  uint32_t maxFrameBytes = nnhal::ipc::kDefaultMaxPayloadBytes;
  unsigned preparationThreads = 0;

  CLI::App app{
      "nnhald: the nnhal Neural Networks HAL driver as a daemon. Serves the embedded CPU driver "
      "to client processes (nnhal::connect, `nnhal run --connect`) over a Unix domain socket; "
      "SIGTERM/SIGINT finish in-flight work and exit 0."};
  app.set_version_flag("--version", "nnhald " + std::string(nnhal::kVersion),
                       "Print the version (nnhal/version.h) and exit");
  app.add_option("--socket", socketPath, "Unix domain socket path to listen on")->required();
  app.add_option("--cache-dir", cacheDir,
                 "State directory for compilation caching (token map; created if missing). "
                 "Without it, caching is disabled");
  app.add_option("--admin-socket", adminSocketPath,
                 "A second socket whose clients see the statistics of the whole daemon "
                 "(protect it with file permissions); other clients see only their own");
  app.add_option("--threads", threads,
                 "Threads serving clients' sockets (and synchronous executions known to take "
                 "under 200 us)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  app.add_option("--driver-threads", driverThreads,
                 "Preparations and executions the driver runs at once (queued work beyond them "
                 "starts by priority, docs/QOS.md); each client uses at most --max-running")
      ->capture_default_str()
      ->check(CLI::Range(2u, 256u));
  app.add_option("--preparation-threads", preparationThreads,
                 "Of the driver threads, those compilations may hold at once (0 = half the "
                 "cores, at least 1): an execution always finds a free core")
      ->capture_default_str()
      ->check(CLI::Range(0u, 256u));
  std::string preparationPolicy(nnhal::toString(nnhal::DeviceOptions{}.preparationPolicy));
  app.add_option("--preparation-policy", preparationPolicy,
                 "How compiling threads share the CPU: idle (SCHED_IDLE: only on cores nothing "
                 "else wants; executions never slow down), nice (nice 10; compilations also "
                 "progress on a machine busy with other programs) or normal")
      ->capture_default_str()
      ->check(CLI::IsMember({"idle", "nice", "normal"}));
  app.add_option("--max-queued-per-model", maxQueuedPerModel,
                 "Executions of one prepared model waiting for the driver; more get "
                 "RESOURCE_EXHAUSTED_TRANSIENT")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1u << 20));
  app.add_option("--kernel-threads", kernelThreads, "Threads inside kernels (0 = all cores)")
      ->capture_default_str();
  std::string tracePath;
  app.add_option("--trace", tracePath,
                 "Record the daemon's work (each client frame handled, preparations, "
                 "compilations, cache I/O, executions and their operations) and write it as "
                 "Chrome trace JSON to this file when nnhald stops (SIGTERM / SIGINT)");
  app.add_option("--log-level", logLevel, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--max-frame-bytes", maxFrameBytes,
                 "Largest message payload accepted; a bigger frame closes that client's "
                 "connection")
      ->capture_default_str()
      ->check(CLI::Range(uint32_t{1024}, nnhal::ipc::kDefaultMaxPayloadBytes));
  auto* quotas = app.add_option_group("Quotas", "What one client (connection) may hold and do");
  quotas->add_option("--max-connections", limits.maxConnections, "Connections of all clients")
      ->capture_default_str();
  quotas
      ->add_option("--max-connections-per-process", limits.maxConnectionsPerProcess,
                   "Connections from one client process")
      ->capture_default_str();
  quotas
      ->add_option("--max-prepared-models", limits.maxPreparedModels,
                   "Prepared models of a client, preparations in progress included")
      ->capture_default_str();
  quotas
      ->add_option("--max-constant-bytes", limits.maxConstantBytes,
                   "Bytes of constants of a client's models")
      ->capture_default_str();
  quotas->add_option("--max-pools", limits.maxPools, "Request pools a client keeps mapped")
      ->capture_default_str();
  quotas
      ->add_option("--max-running", limits.maxRunning,
                   "Preparations and executions of a client running at once")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1024u));
  quotas
      ->add_option("--max-queued", limits.maxQueued,
                   "Requests of a client waiting for --max-running; more get "
                   "RESOURCE_EXHAUSTED_TRANSIENT")
      ->capture_default_str();
  quotas
      ->add_option("--max-fenced-executions", limits.maxFencedExecutions,
                   "Fenced executions of a client not yet released")
      ->capture_default_str();
  quotas
      ->add_option("--max-bursts", limits.maxBursts,
                   "Bursts a client holds at once (each has a listener thread and two "
                   "message queues)")
      ->capture_default_str();
  quotas
      ->add_option("--max-buffers", limits.maxBuffers,
                   "Driver-managed buffers (memory domains) a client holds at once")
      ->capture_default_str();
  uint64_t burstPollUs = static_cast<uint64_t>(limits.burstPollWindow.count());
  quotas
      ->add_option("--burst-poll-us", burstPollUs,
                   "How long an idle burst listener polls its queue before sleeping, µs "
                   "(0 = never poll; bursts of LOW_POWER models never poll)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{0}, uint64_t{10'000}));
  quotas
      ->add_option("--max-unread-reply-bytes", limits.maxUnreadReplyBytes,
                   "Replies queued for a client that does not read them before its "
                   "connection is closed (its requests stop being read at a quarter)")
      ->capture_default_str();
  quotas
      ->add_option("--frame-timeout-ms", frameTimeoutMs,
                   "Time a started frame may take to arrive whole")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{3'600'000}));
  quotas
      ->add_option("--max-loop-timeout-ms", maxLoopTimeoutMs,
                   "Longest WHILE loop timeout granted to an execution (HAL maximum 15000)")
      ->capture_default_str()
      ->check(CLI::Range(uint64_t{1}, uint64_t{15'000}));
  quotas
      ->add_option("--max-execution-bytes", maxExecutionBytes,
                   "Memory one execution may use (its arena, dynamic operands, staged request "
                   "memory); larger models fail to prepare, larger executions fail")
      ->capture_default_str();
  quotas
      ->add_option("--max-data-cache-bytes", maxDataCacheBytes,
                   "Largest compilation data cache file the driver loads")
      ->capture_default_str();
  // Test only (hidden): the faults nnhal-soak's own tests must find (docs/TESTING.md).
  bool testLeakMapping = false;
  uint64_t testHangAfter = 0;
  app.add_flag("--test-leak-mapping-per-execution", testLeakMapping,
               "(test only) leak one memory mapping per execution")
      ->group("");
  app.add_option("--test-hang-after-executions", testHangAfter,
                 "(test only) stop answering executions after this many")
      ->group("");
  CLI11_PARSE(app, argc, argv);
  limits.frameTimeout = std::chrono::milliseconds(frameTimeoutMs);
  limits.maxLoopTimeout = std::chrono::milliseconds(maxLoopTimeoutMs);
  limits.burstPollWindow = std::chrono::microseconds(burstPollUs);

  spdlog::set_default_logger(spdlog::stderr_color_mt("nnhald"));  // logs on stderr
  spdlog::set_level(spdlog::level::from_str(logLevel));
  std::signal(SIGPIPE, SIG_IGN);
  // Every client pool and connection holds a descriptor: use all the process may have.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }

  nnhal::DeviceOptions deviceOptions;
  deviceOptions.runtimeThreads = driverThreads;
  deviceOptions.preparationThreads = preparationThreads;
  deviceOptions.preparationPolicy = preparationPolicy == "nice" ? nnhal::PreparationPolicy::kNice
                                    : preparationPolicy == "normal"
                                        ? nnhal::PreparationPolicy::kNormal
                                        : nnhal::PreparationPolicy::kIdle;
  deviceOptions.maxQueuedExecutions = maxQueuedPerModel;
  deviceOptions.maxDataCacheBytes = maxDataCacheBytes;
  deviceOptions.maxExecutionBytes = maxExecutionBytes;
  deviceOptions.kernelThreads = kernelThreads;
  deviceOptions.stateDirectory = cacheDir;
  // The trace file is opened at start, so a bad path fails before clients connect.
  std::ofstream traceFile;
  std::shared_ptr<nnhal::TraceRecorder> recorder;
  if (!tracePath.empty()) {
    traceFile.open(tracePath);
    if (!traceFile) {
      spdlog::critical("cannot write the trace to '{}'", tracePath);
      return 1;
    }
    recorder = std::make_shared<nnhal::TraceRecorder>();
  }
  deviceOptions.trace = recorder;
  auto device = nnhal::createDevice(deviceOptions);
  if (!device) {
    spdlog::critical("cannot start the driver: {}", device.error().message);
    return 1;
  }

  boost::asio::io_context io;
  nnhal::ipc::ServerOptions serverOptions;
  serverOptions.socketPath = socketPath;
  serverOptions.adminSocketPath = adminSocketPath;
  serverOptions.maxPayloadBytes = maxFrameBytes;
  serverOptions.limits = limits;
  serverOptions.faults.leakMappingPerExecution = testLeakMapping;
  serverOptions.faults.hangAfterExecutions = testHangAfter;
  serverOptions.trace = recorder;
  {
    nnhal::ipc::Server server(io, *device, serverOptions);
    if (auto listening = server.listen(); !listening) {
      spdlog::critical("{}", listening.error().message);
      return 1;
    }
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int signal) {
      if (ec) return;
      spdlog::info("signal {}: shutting down", signal);
      server.stop();
    });
    spdlog::info("nnhald: {} {} listening on {}", (*device)->getName(),
                 (*device)->getVersionString(), socketPath);

    std::vector<std::thread> pool;
    for (unsigned i = 1; i < threads; ++i) pool.emplace_back([&io] { io.run(); });
    io.run();
    for (std::thread& t : pool) t.join();
  }
  device->reset();  // waits for the driver's own work to drain
  if (recorder != nullptr) {
    traceFile << nnhal::chromeTraceJson(recorder->spans(), "nnhald") << "\n";
    traceFile.close();
    if (!traceFile) spdlog::error("cannot write the trace to '{}'", tracePath);
    if (recorder->dropped() > 0) {
      spdlog::warn("trace: {} spans beyond the first {} were not kept", recorder->dropped(),
                   recorder->spans().size());
    }
  }
  spdlog::info("nnhald: stopped");
  return 0;
}
