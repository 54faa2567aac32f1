// nnhal-soak — hours of mixed load against nnhald, watching it for leaks, hangs and crashes
// (docs/TESTING.md).
//
//   nnhal-soak --duration 2h --report soak/                 starts its own nnhald
//   nnhal-soak --connect /run/nnhald.sock --duration 8h --clients 8 --report soak/
//
// Every --interval it samples the daemon's RSS, open descriptors, memory mappings and threads
// (/proc) and the load's latency per model and path, throughput and errors; progress goes to
// stderr. At the end (or at the first CRASH or HANG) it judges every resource for a leak
// (leak_analysis.h) and writes --report DIR/samples.json and DIR/report.html. Exit status:
// 0 PASS; 1 LEAK, HANG, CRASH or ERRORS; 2 when the run could not start.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

#include "nnhal-soak/leak_analysis.h"
#include "nnhal-soak/load.h"
#include "nnhal-soak/report.h"
#include "nnhal-stress/daemon_under_test.h"
#include "nnhal/client.h"

namespace {

using namespace nnhal;
using namespace nnhal::soak;
using Clock = std::chrono::steady_clock;

std::string isoNow() {
  const std::time_t now = std::time(nullptr);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return text;
}

/// What a healthy daemon may grow by over a run, per resource (leak_analysis.h).
constexpr double kFloors[] = {16 /* MiB */, 16 /* fds */, 64 /* maps */, 8 /* threads */};
const char* const kResourceNames[] = {"RSS (MiB)", "open descriptors", "memory mappings",
                                      "threads"};

}  // namespace

/// The command line.
struct SoakArgs {
  std::string connectSocket;
  std::string nnhald = NNHALD_PATH;
  std::vector<std::string> daemonArgs;
  std::string models = std::string(NNHAL_SHARED_DIR) + "/models";
  std::string reportDir = "soak-report";
  double durationSeconds = 600;
  double intervalSeconds = 5;
  double hangSeconds = 60;
  double warmUpSeconds = 60;
  LoadOptions load;
};

void addSoakOptions(CLI::App& app, SoakArgs& a) {
  const auto seconds = CLI::AsNumberWithUnit(
      std::map<std::string, double>{{"ms", 0.001}, {"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}},
      CLI::AsNumberWithUnit::CASE_SENSITIVE);
  app.add_option("--connect", a.connectSocket,
                 "Soak the nnhald listening on this socket (default: start one, with a cache "
                 "directory of its own unless a --daemon-arg names one)");
  app.add_option("--nnhald", a.nnhald, "The nnhald to start when --connect is not given")
      ->capture_default_str();
  app.add_option(
      "--daemon-arg", a.daemonArgs,
      "An argument for the nnhald it starts (repeatable), e.g. --daemon-arg=--threads=4");
  app.add_option("--duration", a.durationSeconds, "How long to soak (e.g. 10m, 2h)")
      ->transform(seconds)
      ->capture_default_str();
  app.add_option("--interval", a.intervalSeconds, "Time between two samples")
      ->transform(seconds)
      ->capture_default_str();
  app.add_option("--hang-timeout", a.hangSeconds, "A call running this long is a HANG")
      ->transform(seconds)
      ->capture_default_str();
  app.add_option("--warm-up", a.warmUpSeconds,
                 "Samples of the run's start that the leak analysis does not judge (also at "
                 "least the first 20%)")
      ->transform(seconds)
      ->capture_default_str();
  app.add_option("--clients", a.load.clients, "Clients executing at once (each joins and leaves)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  app.add_option("--models", a.models, "Folder of .tflite models (and inputs/)")
      ->capture_default_str();
  app.add_option("--report", a.reportDir, "Directory for samples.json and report.html")
      ->capture_default_str();
  app.add_option("--seed", a.load.seed, "Seed of every random choice")->capture_default_str();
}

/// The verdict of a run and its reasons: CRASH, HANG, LEAK (a resource's trend after the
/// warm-up), ERRORS, or PASS.
void judge(RunSummary& run, const Recorder& recorder, const std::string& crash,
           const std::string& hang, double warmUpSeconds) {
  for (int r = 0; r < 4; ++r) {
    std::vector<double> t, v;
    for (const Sample& s : run.samples) {
      t.push_back(s.seconds);
      v.push_back(r == 0   ? s.daemon.rssMiB
                  : r == 1 ? static_cast<double>(s.daemon.fds)
                  : r == 2 ? static_cast<double>(s.daemon.maps)
                           : static_cast<double>(s.daemon.threads));
    }
    run.trends.push_back(analyzeTrend(kResourceNames[r], t, v, kFloors[r], warmUpSeconds));
  }
  run.executions = recorder.totalExecutions();
  run.compilations = recorder.totalCompilations();
  run.errorsByKind = recorder.errorsByKind();
  run.firstErrors = recorder.firstErrors();
  run.histograms = recorder.histograms();
  if (!crash.empty()) run.reasons.push_back("CRASH: " + crash);
  if (!hang.empty()) run.reasons.push_back("HANG: " + hang);
  for (const TrendVerdict& t : run.trends) {
    if (t.leaking) {
      char text[200];
      std::snprintf(text, sizeof text,
                    "LEAK: %s grew by %.1f over the run (%.1f per hour; "
                    "noise %.1f, threshold %.1f)",
                    t.resource.c_str(), t.growth, t.slopePerHour, t.noise, t.threshold);
      run.reasons.push_back(text);
    }
  }
  uint64_t errors = 0;
  for (const auto& [kind, count] : run.errorsByKind) errors += count;
  if (errors > 0)
    run.reasons.push_back("ERRORS: " + std::to_string(errors) +
                          " calls failed or gave a wrong output");
  const bool leaked =
      std::any_of(run.trends.begin(), run.trends.end(), [](const auto& t) { return t.leaking; });
  run.verdict = !crash.empty()  ? "CRASH"
                : !hang.empty() ? "HANG"
                : leaked        ? "LEAK"
                : errors > 0    ? "ERRORS"
                                : "PASS";
  if (run.reasons.empty()) {
    run.reasons.push_back("no leak, hang, crash or error in " + std::to_string(run.executions) +
                          " executions and " + std::to_string(run.compilations) + " preparations");
  }
}

int main(int argc, char** argv) {
  CLI::App app{
      "nnhal-soak: hours of mixed load against nnhald (real models, every execution path, "
      "compilations with and without cache, clients joining and leaving), sampling the "
      "daemon's latency, throughput, errors, RSS, descriptors, mappings and threads; flags "
      "leaks, hangs and crashes and writes a JSON + HTML report. Exit status 0 only for PASS."};
  SoakArgs a;
  addSoakOptions(app, a);
  CLI11_PARSE(app, argc, argv);
  const std::string& connectSocket = a.connectSocket;
  const double durationSeconds = a.durationSeconds;
  const double intervalSeconds = a.intervalSeconds;
  LoadOptions& load = a.load;
  spdlog::set_default_logger(spdlog::stderr_color_mt("nnhal-soak"));  // logs on stderr
  spdlog::set_level(spdlog::level::warn);
  if (intervalSeconds < 0.1 || durationSeconds < intervalSeconds) {
    std::fprintf(stderr, "nnhal-soak: --interval must be at least 0.1 s and at most --duration\n");
    return 2;
  }

  // The daemon, the clients' cache files, the models and their reference outputs.
  std::error_code ec;
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("nnhal-soak-" + std::to_string(getpid()));
  std::filesystem::create_directories(scratch / "client-cache", ec);
  if (ec) {
    std::fprintf(stderr, "nnhal-soak: cannot create %s: %s\n", scratch.c_str(),
                 ec.message().c_str());
    return 2;
  }
  struct Cleanup {
    std::filesystem::path path;
    ~Cleanup() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  } cleanup{scratch};
  // The daemon it starts has a cache directory of its own unless --daemon-arg names one.
  auto daemon = connectSocket.empty() ? stress::DaemonUnderTest::start(a.nnhald, a.daemonArgs)
                                      : stress::DaemonUnderTest::attach(connectSocket);
  if (!daemon) {
    std::fprintf(stderr, "nnhal-soak: %s\n", daemon.error().message.c_str());
    return 2;
  }
  load.socket = (*daemon)->socket();
  load.cacheDirectory = scratch / "client-cache";
  auto workloads = stress::loadWorkloads(a.models, load.seed);
  if (!workloads) {
    std::fprintf(stderr, "nnhal-soak: %s\n", workloads.error().message.c_str());
    return 2;
  }
  std::string cachingNote;
  {
    auto device = connect(load.socket, ClientOptions{.clientName = "nnhal-soak reference"});
    if (!device) {
      std::fprintf(stderr, "nnhal-soak: %s\n", device.error().message.c_str());
      return 2;
    }
    // Cache files only for a daemon that asks for them (IDevice.hal 1.2: (0, 0) = none).
    const CompilationCaching caching = (*device)->getCompilationCaching();
    load.useCache = caching.available;
    cachingNote = caching.available ? "used" : "not used: " + caching.reason;
    if (auto refs = stress::computeReferences(**device, *workloads); !refs) {
      std::fprintf(stderr, "nnhal-soak: reference run: %s\n", refs.error().message.c_str());
      return 2;
    }
  }

  RunSummary run;
  run.daemon = "nnhald pid " + std::to_string((*daemon)->pid()) + " on " + load.socket.string() +
               (connectSocket.empty() ? " (started by nnhal-soak)" : "");
  run.caching = cachingNote;
  run.started = isoNow();
  run.intervalSeconds = intervalSeconds;
  run.clients = load.clients;
  for (const stress::Workload& w : *workloads) run.models.push_back(w.name);
  std::fprintf(stderr,
               "nnhal-soak: %s, %zu models, %u clients, %.0f s, a sample every %.1f s; "
               "compilation caching %s\n",
               run.daemon.c_str(), run.models.size(), load.clients, durationSeconds,
               intervalSeconds, run.caching.c_str());

  // Soak and sample.
  Recorder recorder;
  Load loader(load, std::move(*workloads), recorder);
  const auto start = Clock::now();
  const auto end = start + std::chrono::duration<double>(durationSeconds);
  const auto interval = std::chrono::duration<double>(intervalSeconds);
  const auto hangTimeout = std::chrono::milliseconds(static_cast<int64_t>(a.hangSeconds * 1000));
  auto nextSample = start + interval;
  loader.start();
  std::string crash, hang;
  while (Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (!(*daemon)->alive()) {
      crash = (*daemon)->exitDescription().empty()
                  ? "the daemon is gone"
                  : "the daemon is gone: " + (*daemon)->exitDescription();
      break;
    }
    if (auto stuck = loader.stuckCall(hangTimeout)) {
      hang = *stuck;
      break;
    }
    if (Clock::now() < nextSample) continue;
    nextSample += std::chrono::duration_cast<Clock::duration>(interval);
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    Sample sample = recorder.take(t);
    auto resources = readProcess((*daemon)->pid());
    if (!resources) {
      crash = "the daemon's /proc entry is gone";
      break;
    }
    sample.daemon = *resources;
    run.samples.push_back(sample);
    std::fprintf(
        stderr,
        "[%6.0f/%.0f s] %7.1f exec/s %5.1f prep/s  errors %-4llu RSS %7.1f MiB  fds %-4llu "
        "maps %-5llu threads %llu\n",
        t, durationSeconds, static_cast<double>(sample.executions) / intervalSeconds,
        static_cast<double>(sample.compilations) / intervalSeconds,
        static_cast<unsigned long long>(sample.errors), sample.daemon.rssMiB,
        static_cast<unsigned long long>(sample.daemon.fds),
        static_cast<unsigned long long>(sample.daemon.maps),
        static_cast<unsigned long long>(sample.daemon.threads));
  }
  const bool joined = crash.empty() && hang.empty() ? loader.stop() : false;
  if (!joined && hang.empty() && crash.empty()) hang = "a call did not return when the run ended";
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();

  judge(run, recorder, crash, hang, a.warmUpSeconds);

  const auto written = writeReport(run, a.reportDir);
  std::printf("nnhal-soak: %s\n", run.verdict.c_str());
  for (const std::string& reason : run.reasons) std::printf("  %s\n", reason.c_str());
  std::printf("compilation caching: %s\n", run.caching.c_str());
  if (written) {
    std::printf("report: %s\n", (std::filesystem::absolute(a.reportDir) / "report.html").c_str());
  } else {
    std::fprintf(stderr, "nnhal-soak: %s\n", written.error().message.c_str());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  // A HANG or CRASH may leave load threads in calls that never return: end the process
  // without waiting for them (the daemon we started goes with us: PR_SET_PDEATHSIG).
  if (!joined) std::_Exit(1);
  return run.verdict == "PASS" ? 0 : 1;
}
