// nnhald — the nnhal driver as a daemon: serves the embedded CPU driver to client processes
// on a Unix domain socket (docs/IPC_PROTOCOL.md; clients use nnhal::connect, nnhal/client.h).
//
//   nnhald --socket PATH [--cache-dir DIR] [--threads N] [--kernel-threads N]
//          [--log-level LEVEL] [--max-frame-bytes N]
//
// SIGTERM / SIGINT: stop accepting, let in-flight work finish and reply, exit 0.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "ipc/server.h"
#include "nnhal/device.h"

int main(int argc, char** argv) {
  std::string socketPath;
  std::string cacheDir;
  unsigned threads = 2;
  unsigned kernelThreads = 0;
  std::string logLevel = "info";
  uint32_t maxFrameBytes = nnhal::ipc::kDefaultMaxPayloadBytes;

  CLI::App app{
      "nnhald: the nnhal Neural Networks HAL driver as a daemon. Serves the embedded CPU driver "
      "to client processes (nnhal::connect, `nnhal run --connect`) over a Unix domain socket; "
      "SIGTERM/SIGINT finish in-flight work and exit 0."};
  app.add_option("--socket", socketPath, "Unix domain socket path to listen on")->required();
  app.add_option("--cache-dir", cacheDir,
                 "State directory for compilation caching (token map; created if missing). "
                 "Without it, caching is disabled");
  app.add_option("--threads", threads,
                 "Threads serving clients (socket I/O and small synchronous executions); the "
                 "driver runtime gets as many")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  app.add_option("--kernel-threads", kernelThreads, "Threads inside kernels (0 = all cores)")
      ->capture_default_str();
  app.add_option("--log-level", logLevel, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str()
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--max-frame-bytes", maxFrameBytes,
                 "Largest message payload accepted; a bigger frame closes that client's "
                 "connection")
      ->capture_default_str()
      ->check(CLI::Range(uint32_t{1024}, nnhal::ipc::kDefaultMaxPayloadBytes));
  CLI11_PARSE(app, argc, argv);

  spdlog::set_level(spdlog::level::from_str(logLevel));
  std::signal(SIGPIPE, SIG_IGN);

  nnhal::DeviceOptions deviceOptions;
  deviceOptions.runtimeThreads = threads;
  deviceOptions.kernelThreads = kernelThreads;
  deviceOptions.stateDirectory = cacheDir;
  auto device = nnhal::createDevice(deviceOptions);
  if (!device) {
    spdlog::critical("cannot start the driver: {}", device.error().message);
    return 1;
  }

  boost::asio::io_context io;
  nnhal::ipc::ServerOptions serverOptions;
  serverOptions.socketPath = socketPath;
  serverOptions.maxPayloadBytes = maxFrameBytes;
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
  spdlog::info("nnhald: stopped");
  return 0;
}
