// nnhal-stress — the MLTS crash tests against nnhald (docs/TESTING.md).
//
//   nnhal-stress --all --duration 60s              starts its own nnhald, runs every test
//   nnhal-stress --connect /run/nnhald.sock --test parallel-inference --threads 16
//   nnhal-stress --list
//
// Each test ends SUCCESS, FAILURE, HANG (no progress for --hang-timeout) or CRASH (the daemon
// died: checked every 100 ms, whether or not a call failed). A CRASH or HANG ends the run:
// the remaining tests are reported as not run. Progress bars on stderr (when it is a
// terminal), a summary table on stdout, --json FILE for machines; the exit status is 0 only
// when every test succeeded.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "nnhal-stress/daemon_under_test.h"
#include "nnhal-stress/stress_test.h"

namespace {

using namespace nnhal::stress;
using Clock = std::chrono::steady_clock;

struct Result {
  std::string name;
  Outcome outcome;
  double seconds = 0;
  uint64_t operations = 0;
  bool ran = true;
};

std::string bar(double fraction, int width) {
  const int filled = static_cast<int>(fraction * width + 0.5);
  return std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(width - filled), '.');
}

/// Runs one test in a thread while this thread draws its progress and watches the daemon.
/// Returns false when the run must end (CRASH, or HANG: a test thread that may never return
/// is then left to the process's exit).
bool runOne(const StressTestInfo& test, const StressOptions& options, DaemonUnderTest& daemon,
            std::chrono::milliseconds hangTimeout, Result& result,
            std::vector<std::thread>& stuck) {
  std::atomic<bool> stop{false};
  TestContext context(options, stop);
  std::packaged_task<Outcome()> task([&] {
    try {
      return test.run(context);
    } catch (const std::exception& e) {
      return Outcome{Verdict::kFailure, std::string("exception: ") + e.what(), {}};
    }
  });
  auto future = task.get_future();
  std::thread worker(std::move(task));
  const bool tty = ::isatty(STDERR_FILENO) != 0;
  const auto start = Clock::now();
  uint64_t lastOperations = 0;
  auto lastProgress = start;
  auto lastLine = start - std::chrono::seconds(10);
  std::optional<Outcome> decided;  // CRASH or HANG, decided here
  while (future.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    const auto now = Clock::now();
    if (context.operations() != lastOperations) {
      lastOperations = context.operations();
      lastProgress = now;
    }
    if (!daemon.alive()) {
      decided = Outcome{Verdict::kCrash,
                        "the daemon died" + (daemon.exitDescription().empty()
                                                 ? std::string()
                                                 : " (" + daemon.exitDescription() + ")"),
                        {}};
    } else if (now - lastProgress > hangTimeout) {
      decided =
          Outcome{Verdict::kHang,
                  "no progress for " +
                      std::to_string(
                          std::chrono::duration_cast<std::chrono::seconds>(hangTimeout).count()) +
                      " s",
                  {}};
    }
    if (decided) break;
    if (tty) {
      std::fprintf(stderr, "\r%-26s [%s] %3.0f%% %8llu ops", test.name,
                   bar(context.fraction(), 30).c_str(), 100 * context.fraction(),
                   static_cast<unsigned long long>(context.operations()));
      std::fflush(stderr);
    } else if (now - lastLine > std::chrono::seconds(10)) {
      std::fprintf(stderr, "%s: %.0f%%, %llu operations\n", test.name, 100 * context.fraction(),
                   static_cast<unsigned long long>(context.operations()));
      lastLine = now;
    }
  }
  result.name = test.name;
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  result.operations = context.operations();
  if (decided) {
    stop = true;
    // A test whose calls fail now (the daemon is gone) ends soon; one stuck in a call may
    // never: it is left running and the process exits without joining it.
    const bool ended = future.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    result.outcome = *decided;
    if (ended) {
      worker.join();
    } else {
      stuck.push_back(std::move(worker));  // main ends the process with _Exit, never joining
    }
  } else {
    worker.join();
    result.outcome = future.get();
  }
  if (tty)
    std::fprintf(stderr, "\r%-26s [%s] %s\n", test.name, bar(1.0, 30).c_str(),
                 toString(result.outcome.verdict));
  return result.outcome.verdict != Verdict::kCrash && result.outcome.verdict != Verdict::kHang;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "nnhal-stress: the MLTS crash tests against nnhald. Each test ends SUCCESS, FAILURE, HANG "
      "or CRASH; the exit status is 0 only when all succeed."};
  StressOptions options;
  std::string connectSocket;
  std::string nnhald = NNHALD_PATH;
  std::vector<std::string> tests;
  bool all = false;
  bool list = false;
  double durationSeconds = 60;
  double hangSeconds = 30;
  std::string json;
  std::string childRole;
  std::string models = std::string(NNHAL_SHARED_DIR) + "/models";
  const auto seconds = CLI::AsNumberWithUnit(
      std::map<std::string, double>{{"ms", 0.001}, {"s", 1}, {"m", 60}, {"min", 60}, {"h", 3600}},
      CLI::AsNumberWithUnit::CASE_SENSITIVE);
  app.add_flag("--all", all, "Run every test");
  app.add_option("--test", tests, "Run this test (repeatable); --list names them");
  app.add_flag("--list", list, "List the tests and exit");
  app.add_option("--connect", connectSocket,
                 "Hammer the nnhald listening on this socket (default: start one)");
  app.add_option("--nnhald", nnhald, "The nnhald to start when --connect is not given")
      ->capture_default_str();
  app.add_option("--duration", durationSeconds, "Duration of each test (e.g. 90s, 10m, 2h)")
      ->transform(seconds)
      ->capture_default_str();
  app.add_option("--hang-timeout", hangSeconds, "No progress for this long is a HANG")
      ->transform(seconds)
      ->capture_default_str();
  app.add_option("--threads", options.threads, "Threads of parallel-inference")
      ->capture_default_str()
      ->check(CLI::Range(1u, 256u));
  app.add_option("--processes", options.processes, "Client processes of the multi-process tests")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  app.add_option("--compile-threads", options.compileThreads,
                 "Threads compiling during performance-degradation")
      ->capture_default_str()
      ->check(CLI::Range(1u, 64u));
  app.add_option("--max-degradation", options.maxDegradation,
                 "Highest latency ratio performance-degradation accepts (MLTS: 2)")
      ->capture_default_str();
  app.add_option("--models", models, "Folder of .tflite models (and inputs/)")
      ->capture_default_str();
  app.add_option("--seed", options.seed, "Seed of every random choice")->capture_default_str();
  app.add_option("--graphs", options.graphs,
                 "random-graphs: check this many graphs, however long it takes (0: as many as "
                 "--duration allows)")
      ->capture_default_str();
  app.add_option("--failures", options.failures,
                 "random-graphs: write each graph whose results differ here, as a CTS JSON file "
                 "`nnhal cts FILE` replays")
      ->capture_default_str();
  app.add_option("--reference-isa", options.referenceIsa,
                 "random-graphs: kernel level (NNHAL_ISA) of the reference nnhald")
      ->capture_default_str()
      ->check(CLI::IsMember({"scalar", "avx2", "avx512", "vnni"}));
  app.add_option("--json", json, "Also write the results as JSON to this file");
  app.add_option("--child", childRole, "(internal) run as a client process of a test")->group("");
  CLI11_PARSE(app, argc, argv);
  spdlog::set_default_logger(spdlog::stderr_color_mt("nnhal-stress"));  // logs on stderr
  spdlog::set_level(spdlog::level::warn);
  options.models = models;
  options.duration = std::chrono::milliseconds(static_cast<int64_t>(durationSeconds * 1000));
  options.self = std::filesystem::canonical("/proc/self/exe");
  options.nnhald = nnhald;

  if (!childRole.empty()) {
    options.socket = connectSocket;
    return runChild(childRole, options);
  }
  if (list) {
    for (const auto& test : allStressTests())
      std::printf("%-26s %s\n", test.name, test.description);
    return 0;
  }
  std::vector<const StressTestInfo*> chosen;
  for (const auto& test : allStressTests()) {
    if (all || std::find(tests.begin(), tests.end(), test.name) != tests.end()) {
      chosen.push_back(&test);
    }
  }
  for (const std::string& name : tests) {
    const auto& known = allStressTests();
    if (std::none_of(known.begin(), known.end(), [&](const auto& t) { return name == t.name; })) {
      std::fprintf(stderr, "nnhal-stress: unknown test %s (--list names them)\n", name.c_str());
      return 2;
    }
  }
  if (chosen.empty()) {
    std::fprintf(stderr, "nnhal-stress: nothing to run: give --all or --test NAME\n");
    return 2;
  }
  auto daemon = connectSocket.empty() ? DaemonUnderTest::start(nnhald, {})
                                      : DaemonUnderTest::attach(connectSocket);
  if (!daemon) {
    std::fprintf(stderr, "nnhal-stress: %s\n", daemon.error().message.c_str());
    return 2;
  }
  options.socket = (*daemon)->socket();
  const auto hangTimeout = std::chrono::milliseconds(static_cast<int64_t>(hangSeconds * 1000));

  std::vector<Result> results;
  std::vector<std::thread> stuck;  // test threads a HANG left in a call
  bool goOn = true;
  for (const StressTestInfo* test : chosen) {
    Result result;
    if (!goOn) {
      result.name = test->name;
      result.ran = false;
      results.push_back(result);
      continue;
    }
    goOn = runOne(*test, options, **daemon, hangTimeout, result, stuck);
    results.push_back(std::move(result));
  }

  bool allPassed = true;
  std::printf("\n%-26s %-8s %9s %10s  %s\n", "TEST", "RESULT", "SECONDS", "OPS", "DETAILS");
  nlohmann::json report = nlohmann::json::array();
  for (const Result& r : results) {
    const char* verdict = r.ran ? toString(r.outcome.verdict) : "NOT RUN";
    allPassed &= r.ran && r.outcome.verdict == Verdict::kSuccess;
    std::printf("%-26s %-8s %9.1f %10llu  %s\n", r.name.c_str(), verdict, r.seconds,
                static_cast<unsigned long long>(r.operations), r.outcome.message.c_str());
    report.push_back({{"test", r.name},
                      {"result", verdict},
                      {"seconds", r.seconds},
                      {"operations", r.operations},
                      {"message", r.outcome.message},
                      {"metrics", r.outcome.metrics}});
  }
  if (!json.empty()) {
    std::ofstream out(json);
    out << nlohmann::json{{"daemon", options.socket.string()},
                          {"duration_s", durationSeconds},
                          {"seed", options.seed},
                          {"tests", report}}
               .dump(2)
        << "\n";
    if (!out) std::fprintf(stderr, "nnhal-stress: cannot write %s\n", json.c_str());
  }
  std::fflush(stdout);
  if (!goOn) std::_Exit(1);  // a HANG may have left a test thread stuck in a call
  return allPassed ? 0 : 1;
}
