// nnhal-stress/stress_test.h — what every stress test gets and returns.
//
// A test runs until its deadline (--duration) or until the run stops it, reports progress as
// it goes (the watchdog calls a test that makes no progress for --hang-timeout a HANG), and
// ends with a verdict as the MLTS crash suite reports them. CRASH and HANG are decided by the
// runner (the daemon died; no progress); a test itself returns SUCCESS or FAILURE.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

namespace nnhal::stress {

enum class Verdict { kSuccess, kFailure, kHang, kCrash };

/// "SUCCESS", "FAILURE", "HANG", "CRASH".
const char* toString(Verdict verdict);

struct Outcome {
  Verdict verdict = Verdict::kSuccess;
  std::string message;     ///< why it failed, or a one-line summary
  nlohmann::json metrics;  ///< counts and figures for --json and the summary
};

struct StressOptions {
  std::filesystem::path socket;                ///< the daemon under test
  std::filesystem::path self;                  ///< this program, for child processes
  std::filesystem::path models;                ///< folder of .tflite models (and inputs/)
  std::chrono::milliseconds duration{60'000};  ///< per test
  unsigned threads = 10;                       ///< parallel inference threads
  unsigned processes = 4;                      ///< client processes of the multi-process tests
  unsigned compileThreads = 5;                 ///< performance degradation: threads compiling
  double maxDegradation = 1.3;  ///< performance degradation: highest latency ratio allowed
  uint64_t seed = 1;
  std::filesystem::path nnhald;  ///< the daemon binary, for the random-graph reference
  /// random-graphs: check this many graphs (0: as many as --duration allows)
  uint64_t graphs = 0;
  /// random-graphs: where a graph whose results differ is written (CTS JSON)
  std::filesystem::path failures = "random-graph-failures";
  /// random-graphs: NNHAL_ISA of the reference nnhald the results are compared with
  std::string referenceIsa = "scalar";
};

class TestContext {
 public:
  TestContext(const StressOptions& options, const std::atomic<bool>& stop)
      : options_(options),
        stop_(stop),
        start_(std::chrono::steady_clock::now()),
        deadline_(start_ + options.duration) {}

  const StressOptions& options() const { return options_; }
  /// False once the deadline passed or the runner stopped the test.
  bool keepGoing() const { return !stop_.load() && std::chrono::steady_clock::now() < deadline_; }
  /// Overrides fraction(): the share of a counted task (random-graphs --graphs) done.
  void setFraction(double fraction) { fraction_ = fraction; }
  bool stopped() const { return stop_.load(); }
  std::chrono::steady_clock::time_point deadline() const { return deadline_; }
  /// Counts `n` operations done (the watchdog's sign of life).
  void progressed(uint64_t n = 1) { operations_ += n; }
  uint64_t operations() const { return operations_.load(); }
  /// Elapsed share of the duration, in [0, 1].
  double fraction() const {
    if (fraction_ >= 0) return fraction_;
    const double done =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() /
        std::chrono::duration<double>(options_.duration).count();
    return done < 0 ? 0 : done > 1 ? 1 : done;
  }
  /// A generator seeded from --seed and `salt` (a thread or process number).
  std::mt19937_64 random(uint64_t salt) const {
    return std::mt19937_64(options_.seed * 7919 + salt);
  }

 private:
  const StressOptions& options_;
  const std::atomic<bool>& stop_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point deadline_;
  std::atomic<uint64_t> operations_{0};
  std::atomic<double> fraction_{-1.0};
};

struct StressTestInfo {
  const char* name;
  const char* description;
  std::function<Outcome(TestContext&)> run;
};

/// Every test, in the order --all runs them.
const std::vector<StressTestInfo>& allStressTests();

/// The child-process side of the multi-process tests (`nnhal-stress --child ROLE`): runs
/// `role` against `socket` until `deadline` (or until killed) and returns the process's exit
/// status (0: every call behaved).
int runChild(const std::string& role, const StressOptions& options);

}  // namespace nnhal::stress
