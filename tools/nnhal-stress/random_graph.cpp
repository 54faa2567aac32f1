// The random-graph test: valid random models (tools/common/random_graph.h) run by the daemon
// under test on every execution path, their outputs compared with those of a second nnhald
// that runs nnhal's scalar kernels (--reference-isa): bit for bit where the computation is
// exact, within the graph's tolerances elsewhere. A graph that differs, or that the
// reference refuses, fails the test and is written to --failures as a CTS JSON file that
// `nnhal cts FILE` replays. The daemon dying or hanging is decided by the runner, as for
// every test.
#include <atomic>
#include <mutex>
#include <thread>

#include "nnhal-stress/daemon_under_test.h"
#include "nnhal-stress/stress_tests.h"
#include "nnhal/client.h"
#include "tools/common/random_graph_check.h"

namespace nnhal::stress {
namespace {

/// The execution paths a graph runs on, one per graph in turn.
constexpr tools::CtsMode kModes[] = {tools::CtsMode::kSynchronous,
                                     tools::CtsMode::kAsync,
                                     tools::CtsMode::kBurst,
                                     tools::CtsMode::kFenced,
                                     tools::CtsMode::kDynamicOutputShape,
                                     tools::CtsMode::kDeviceBuffers};

/// The graphs that failed: counted, the first few written and described.
class FailedGraphs {
 public:
  static constexpr size_t kKept = 20;

  void add(const tools::RandomGraphCheck& check, const std::filesystem::path& folder) {
    std::lock_guard lock(mutex_);
    ++count_;
    if (described_.size() >= kKept) return;
    auto written = tools::writeFailedGraph(folder, check);
    described_.push_back(check.graph.name + " (" + tools::describeRandomGraph(check.graph) +
                         "): " + check.message +
                         (written ? "; replay: nnhal cts " + written->string()
                                  : "; not written: " + written.error().message));
  }
  uint64_t count() const {
    std::lock_guard lock(mutex_);
    return count_;
  }
  std::vector<std::string> described() const {
    std::lock_guard lock(mutex_);
    return described_;
  }

 private:
  mutable std::mutex mutex_;
  uint64_t count_ = 0;
  std::vector<std::string> described_;
};

}  // namespace

Outcome randomGraphs(TestContext& context) {
  const StressOptions& options = context.options();
  auto device = connectClient(context, "random graphs");
  if (!device) return {Verdict::kFailure, device.error().message, {}};
  auto referenceDaemon =
      DaemonUnderTest::start(options.nnhald, {}, {"NNHAL_ISA=" + options.referenceIsa});
  if (!referenceDaemon) {
    return {Verdict::kFailure, "the reference nnhald: " + referenceDaemon.error().message, {}};
  }
  ClientOptions referenceOptions;
  referenceOptions.clientName = "nnhal-stress random graphs (reference)";
  auto reference = connect((*referenceDaemon)->socket(), referenceOptions);
  if (!reference) return {Verdict::kFailure, "the reference: " + reference.error().message, {}};

  // Each graph's seed is derived from --seed and its number, so one graph can be made again.
  const uint64_t base = options.seed * 1'000'000'007ULL;
  std::atomic<uint64_t> next{0};
  std::atomic<uint64_t> passed{0};
  std::atomic<uint64_t> referenceFailed{0};
  FailedGraphs failed;
  auto more = [&](uint64_t index) {
    if (context.stopped()) return false;
    return options.graphs > 0 ? index < options.graphs : context.keepGoing();
  };
  std::vector<std::jthread> workers;
  const unsigned threads = std::max(1u, std::min(options.threads, 4u));
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (uint64_t index = next++; more(index); index = next++) {
        const tools::CtsMode mode = kModes[index % std::size(kModes)];
        tools::RandomGraphCheck check =
            tools::checkRandomGraph(**device, **reference, base + index, mode);
        if (check.verdict == tools::RandomGraphCheck::Verdict::kPassed) {
          ++passed;
        } else {
          if (check.verdict == tools::RandomGraphCheck::Verdict::kReferenceFailed) {
            ++referenceFailed;
          }
          failed.add(check, options.failures);
        }
        context.progressed();
        if (options.graphs > 0) {
          context.setFraction(static_cast<double>(index + 1) / static_cast<double>(options.graphs));
        }
      }
    });
  }
  workers.clear();  // joins
  const uint64_t checked = passed + failed.count();
  nlohmann::json metrics = {{"graphs", checked},
                            {"passed", passed.load()},
                            {"failed", failed.count()},
                            {"reference_failed", referenceFailed.load()},
                            {"reference_isa", options.referenceIsa},
                            {"failed_graphs", failed.described()}};
  if (failed.count() > 0) {
    for (const std::string& line : failed.described()) {
      std::fprintf(stderr, "random-graphs: %s\n", line.c_str());
    }
    return {Verdict::kFailure,
            std::to_string(failed.count()) + " of " + std::to_string(checked) +
                " graphs differ from the reference (" + std::to_string(referenceFailed.load()) +
                " failed there); the first: " + failed.described().front(),
            metrics};
  }
  return {Verdict::kSuccess,
          std::to_string(checked) + " graphs, results equal to the " + options.referenceIsa +
              " reference",
          metrics};
}

}  // namespace nnhal::stress
