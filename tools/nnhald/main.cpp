// nnhald — the nnhal driver as a daemon: serves the embedded CPU driver to client processes
// on a Unix domain socket (docs/IPC_PROTOCOL.md; clients use nnhal::connect, nnhal/client.h).
//
//   nnhald --socket PATH [--socket-mode 0660] [--socket-group GROUP] [--admin-socket PATH]
//          [--cache-dir DIR] [--threads N] [--driver-threads N] [--kernel-threads N]
//          [--log-level LEVEL] [--check-config] [--dump-models DIR]
//          [quota options: nnhald --help]
//
// Under systemd (docs/DEPLOYMENT.md): the listening socket(s) may be passed (socket
// activation, LISTEN_FDS) instead of --socket, and readiness is notified (Type=notify).
// Every client is untrusted: its quotas (ipc/daemon/client_limits.h) have an option each.
// SIGTERM / SIGINT: stop accepting, let in-flight work finish and reply, exit 0.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <fmt/core.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "actors/runtime.h"
#include "hal/driver_control.h"
#include "ipc/daemon/server.h"
#include "nnhal/device.h"
#include "nnhal/version.h"
#include "nnhald/daemon_config.h"
#include "nnhald/model_dumper.h"
#include "nnhald/socket_activation.h"
#include "nnhald/test_device.h"

namespace {

/// nnhald --check-config: the settings on stdout, or every problem on stderr; exit code 0 or 1.
int checkConfig(const nnhal::daemon::DaemonConfig& c) {
  const bool passed = nnhal::daemon::socketsArePassed();
  const auto problems = nnhal::daemon::findConfigProblems(c, passed);
  for (const std::string& problem : problems) fmt::print(stderr, "nnhald: {}\n", problem);
  if (!problems.empty()) return 1;
  if (passed) {
    fmt::print("socket: passed by the service manager (LISTEN_FDS)\n");
  } else {
    fmt::print("socket: {} (mode {}, group {})\n", c.socketPath, c.socketMode,
               c.socketGroup.empty() ? "the daemon's" : c.socketGroup);
    if (!c.adminSocketPath.empty()) {
      fmt::print("admin socket: {} (mode {})\n", c.adminSocketPath, c.adminSocketMode);
    }
  }
  fmt::print("cache: {}\n", c.cacheDir.empty() ? "off (no --cache-dir)" : c.cacheDir);
  fmt::print("threads: {} io, {} driver, kernels {}\n", c.threads,
             c.driverThreads == 0 ? "one per core" : std::to_string(c.driverThreads),
             c.kernelThreads == 0 ? "all cores" : std::to_string(c.kernelThreads));
  fmt::print("configuration OK\n");
  return 0;
}

/// Whether two paths name one file (std::filesystem::equivalent refuses sockets).
bool sameFile(const std::string& a, const std::string& b) {
  struct stat first {
  }, second{};
  return a == b || (::stat(a.c_str(), &first) == 0 && ::stat(b.c_str(), &second) == 0 &&
                    first.st_dev == second.st_dev && first.st_ino == second.st_ino);
}

/// Waits, when destroyed, until the driver's runtime has stopped (actors/runtime.h,
/// Runtime::stopped()). Its last reference may be dropped on one of its own threads (an
/// execution finishing after its client left), and then its threads end later, on another
/// thread; their handlers may still hold sessions, whose strands and timers live on the
/// io_context destroyed right after this.
class RuntimeStopAwaiter {
 public:
  RuntimeStopAwaiter() = default;
  RuntimeStopAwaiter(const RuntimeStopAwaiter&) = delete;
  RuntimeStopAwaiter& operator=(const RuntimeStopAwaiter&) = delete;
  void watch(std::shared_future<void> stopped) { stopped_ = std::move(stopped); }
  ~RuntimeStopAwaiter() {
    if (!stopped_.valid()) return;
    if (stopped_.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
      // Destroying the io_context under running handlers would be undefined behaviour.
      spdlog::critical("the driver's threads did not stop within 30 s; exiting without them");
      std::_Exit(1);
    }
  }

 private:
  std::shared_future<void> stopped_;
};

}  // namespace

int main(int argc, char** argv) {
  nnhal::daemon::DaemonConfig config;
  CLI::App app{
      "nnhald: the nnhal Neural Networks HAL driver as a daemon. Serves the embedded CPU driver "
      "to client processes (nnhal::connect, `nnhal run --connect`) over a Unix domain socket; "
      "SIGTERM/SIGINT finish in-flight work and exit 0. Under systemd it takes its socket from "
      "socket activation and notifies readiness (docs/DEPLOYMENT.md)."};
  app.set_version_flag("--version", "nnhald " + std::string(nnhal::kVersion),
                       "Print the version (nnhal/version.h) and exit");
  nnhal::daemon::addDaemonOptions(app, config);
  CLI11_PARSE(app, argc, argv);
  if (config.checkConfig) return checkConfig(config);

  spdlog::set_default_logger(spdlog::stderr_color_mt("nnhald"));  // logs on stderr
  spdlog::set_level(spdlog::level::from_str(config.logLevel));
  std::signal(SIGPIPE, SIG_IGN);
  // Every client pool and connection holds a descriptor: use all the process may have.
  if (rlimit files{}; ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }

  auto inherited = nnhal::daemon::takeInheritedSockets();
  if (!inherited) {
    spdlog::critical("{}", inherited.error().message);
    return 1;
  }
  if (const auto problems = nnhal::daemon::findConfigProblems(config, inherited->any());
      !problems.empty()) {
    for (const std::string& problem : problems) spdlog::critical("{}", problem);
    return 1;
  }
  if (inherited->any() && !config.socketPath.empty() &&
      !sameFile(config.socketPath, inherited->clientPath)) {
    spdlog::critical("--socket '{}' is not the socket the service manager passed ('{}')",
                     config.socketPath, inherited->clientPath);
    return 1;
  }
  const std::string listeningOn = inherited->any() ? inherited->clientPath : config.socketPath;
  nnhal::DeviceOptions deviceOptions = nnhal::daemon::deviceOptions(config);
  // The trace file is opened at start, so a bad path fails before clients connect.
  std::ofstream traceFile;
  std::shared_ptr<nnhal::TraceRecorder> recorder;
  if (!config.tracePath.empty()) {
    traceFile.open(config.tracePath);
    if (!traceFile) {
      spdlog::critical("cannot write the trace to '{}'", config.tracePath);
      return 1;
    }
    recorder = std::make_shared<nnhal::TraceRecorder>();
  }
  deviceOptions.trace = recorder;
  std::unique_ptr<nnhal::daemon::ModelDumper> dumper;
  if (!config.dumpModelsDir.empty()) {
    auto opened = nnhal::daemon::ModelDumper::open(config.dumpModelsDir, config.dumpModelsLimit);
    if (!opened) {
      spdlog::critical("{}", opened.error().message);
      return 1;
    }
    dumper = std::move(*opened);
    spdlog::warn("--dump-models: every model clients prepare is written to {}",
                 config.dumpModelsDir);
  }
  // Before the runtime: the sessions' strands live on it, and the runtime's threads may hold
  // the last reference to a session (a preparation's reply) until they are joined.
  boost::asio::io_context io;
  RuntimeStopAwaiter runtimeStop;  // destroyed after everything below, before `io`
  auto runtime = nnhal::actors::makeRuntime(deviceOptions);
  if (!runtime) {
    spdlog::critical("cannot start the driver: {}", runtime.error().message);
    return 1;
  }
  runtimeStop.watch((*runtime)->stopped());
  // One CPU engine (one TBB arena) under every device.
  std::shared_ptr<const nnhal::backend::CpuBackend> cpu;
  try {
    cpu = std::make_shared<const nnhal::backend::CpuBackend>(deviceOptions);
  } catch (const std::exception& e) {
    spdlog::critical("cannot start the CPU engine: {}", e.what());
    return 1;
  }
  auto driver = nnhal::daemon::createCpuDevice(config, deviceOptions, cpu, *runtime);
  if (!driver) {
    spdlog::critical("cannot start the driver: {}", driver.error().message);
    return 1;
  }
  std::vector<nnhal::hal::EmbeddedDriver> drivers{*driver};
  if (!config.testDevice.empty()) {
    auto test = nnhal::daemon::createTestDevice(config, deviceOptions, cpu, *runtime);
    if (!test) {
      spdlog::critical("cannot start the test device: {}", test.error().message);
      return 1;
    }
    spdlog::warn("--test-device: also serving the fault-injecting test device '{}'",
                 config.testDevice);
    drivers.push_back(std::move(*test));
  }
  auto gpu = nnhal::daemon::createGpuDevice(config, deviceOptions, *runtime);
  if (!gpu) {
    spdlog::critical("cannot start the GPU device: {}", gpu.error().message);
    return 1;
  }
  if (*gpu) drivers.push_back(std::move(**gpu));

  nnhal::ipc::ServerOptions serverOptions = nnhal::daemon::serverOptions(config);
  serverOptions.listenFd = inherited->client;
  serverOptions.adminListenFd = inherited->admin;
  serverOptions.trace = recorder;
  if (dumper) {
    serverOptions.onModelReceived = [&dumper](const nnhal::Model& model, uint64_t application,
                                              uint64_t connection) {
      dumper->write(model, application, connection);
    };
  }
  {
    nnhal::ipc::Server server(io, drivers, serverOptions);
    if (auto listening = server.listen(); !listening) {
      spdlog::critical("{}", listening.error().message);
      return 1;
    }
    boost::asio::signal_set signals(io, SIGINT, SIGTERM);
    signals.async_wait([&](const boost::system::error_code& ec, int signal) {
      if (ec) return;
      spdlog::info("signal {}: shutting down", signal);
      nnhal::daemon::notifyStopping();
      server.stop();
    });
    spdlog::info("nnhald: {} {} listening on {}{}", driver->device->getName(),
                 driver->device->getVersionString(), listeningOn,
                 inherited->any() ? " (passed by the service manager)" : "");
    nnhal::daemon::notifyReady("listening on " + listeningOn);

    std::vector<std::thread> pool;
    for (unsigned i = 1; i < config.threads; ++i) pool.emplace_back([&io] { io.run(); });
    io.run();
    for (std::thread& t : pool) t.join();
  }
  *driver = {};  // the last references: waits for the driver's own work to drain
  if (recorder != nullptr) {
    traceFile << nnhal::chromeTraceJson(recorder->spans(), "nnhald") << "\n";
    traceFile.close();
    if (!traceFile) spdlog::error("cannot write the trace to '{}'", config.tracePath);
    if (recorder->dropped() > 0) {
      spdlog::warn("trace: {} spans beyond the first {} were not kept", recorder->dropped(),
                   recorder->spans().size());
    }
  }
  spdlog::info("nnhald: stopped");
  return 0;
}
