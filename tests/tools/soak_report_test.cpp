// nnhal-soak's judgement and report (tools/nnhal-soak): the leak rule on series a healthy and
// a leaking daemon produce, the samples it reads from /proc, and a report that stands alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "nnhal-soak/leak_analysis.h"
#include "nnhal-soak/report.h"
#include "nnhal-soak/samples.h"

namespace nnhal::soak {
namespace {

struct Series {
  std::vector<double> t, v;
};

Series make(size_t n, const std::function<double(size_t, std::mt19937&)>& value) {
  std::mt19937 rng(3);
  Series s;
  for (size_t i = 0; i < n; ++i) {
    s.t.push_back(static_cast<double>(i) * 5);
    s.v.push_back(value(i, rng));
  }
  return s;
}

TEST(SoakLeakAnalysis, NoiseAroundALevelIsNotALeak) {
  const Series s = make(120, [](size_t, std::mt19937& rng) {
    return 200 + std::normal_distribution<double>(0, 5)(rng);
  });
  const TrendVerdict v = analyzeTrend("RSS", s.t, s.v, 16);
  EXPECT_TRUE(v.enoughData);
  EXPECT_FALSE(v.leaking);
  EXPECT_NEAR(v.noise, 5, 2);
}

// Clients joining and leaving: a saw-tooth of descriptors, wide but level.
TEST(SoakLeakAnalysis, ASawToothOfClientsComingAndGoingIsNotALeak) {
  const Series s = make(120, [](size_t i, std::mt19937&) { return 100.0 + (i % 10) * 15.0; });
  EXPECT_FALSE(analyzeTrend("fds", s.t, s.v, 16).leaking);
}

TEST(SoakLeakAnalysis, SteadyGrowthAboveTheNoiseIsALeak) {
  const Series s = make(60, [](size_t i, std::mt19937& rng) {
    return 300 + 2.0 * static_cast<double>(i) + std::normal_distribution<double>(0, 3)(rng);
  });
  const TrendVerdict v = analyzeTrend("maps", s.t, s.v, 16);
  EXPECT_TRUE(v.leaking);
  EXPECT_NEAR(v.slopePerHour, 2.0 / 5 * 3600, 100);
  EXPECT_GT(v.lastMedian, v.firstMedian);
}

// Growth that stays under the resource's floor (one more pool mapped) is not a leak, however
// clean the line.
TEST(SoakLeakAnalysis, GrowthUnderTheFloorIsNotALeak) {
  const Series s =
      make(60, [](size_t i, std::mt19937&) { return 30 + 0.1 * static_cast<double>(i); });
  EXPECT_FALSE(analyzeTrend("threads", s.t, s.v, 8).leaking);
}

// The warm-up (pools mapped, caches filled) is not judged: a rise there is no leak.
TEST(SoakLeakAnalysis, ARiseDuringTheWarmUpIsNotJudged) {
  const Series s =
      make(100, [](size_t i, std::mt19937&) { return i < 15 ? 50.0 + 10.0 * i : 200.0; });
  EXPECT_FALSE(analyzeTrend("RSS", s.t, s.v, 16).leaking);
}

// A warm-up longer than 20% of the run: the ramp of its first minute is not judged.
TEST(SoakLeakAnalysis, TheWarmUpLastsAtLeastTheGivenTime) {
  const Series s = make(24, [](size_t i, std::mt19937&) {
    return i < 12 ? 100.0 + 5.0 * static_cast<double>(i) : 160.0;  // 5 s apart: 60 s ramp
  });
  EXPECT_TRUE(analyzeTrend("RSS", s.t, s.v, 16).leaking);
  const TrendVerdict v = analyzeTrend("RSS", s.t, s.v, 16, 60);
  EXPECT_TRUE(v.enoughData);
  EXPECT_FALSE(v.leaking);
  EXPECT_DOUBLE_EQ(v.judgedFrom, 60);
}

TEST(SoakLeakAnalysis, TooFewSamplesGiveNoVerdict) {
  const Series s = make(8, [](size_t i, std::mt19937&) { return 1000.0 * static_cast<double>(i); });
  const TrendVerdict v = analyzeTrend("RSS", s.t, s.v, 16);
  EXPECT_FALSE(v.enoughData);
  EXPECT_FALSE(v.leaking);
}

TEST(SoakSamples, ReadsThisProcessFromProc) {
  std::jthread extra([] {});  // at least two threads while sampling
  auto r = readProcess(getpid());
  ASSERT_TRUE(r.has_value());
  EXPECT_GT(r->rssMiB, 0);
  EXPECT_GT(r->fds, 2u);
  EXPECT_GT(r->maps, 10u);
  EXPECT_GE(r->threads, 1u);
  EXPECT_FALSE(readProcess(999999999).has_value());
}

TEST(SoakSamples, TheRecorderGivesIntervalQuantilesAndResets) {
  Recorder recorder;
  for (int i = 1; i <= 100; ++i) recorder.success("m sync", i, false);
  recorder.success("m compile", 50, true);
  recorder.failure("GENERAL_FAILURE", "m sync: broken");
  const Sample s = recorder.take(5);
  EXPECT_EQ(s.executions, 100u);
  EXPECT_EQ(s.compilations, 1u);
  EXPECT_EQ(s.errors, 1u);
  EXPECT_EQ(s.latency.at("m sync").count, 100u);
  EXPECT_DOUBLE_EQ(s.latency.at("m sync").p50, 50);
  EXPECT_DOUBLE_EQ(s.latency.at("m sync").p99, 99);
  EXPECT_DOUBLE_EQ(s.latency.at("m sync").max, 100);
  const Sample next = recorder.take(10);
  EXPECT_EQ(next.executions, 0u);
  EXPECT_TRUE(next.latency.empty());
  EXPECT_EQ(recorder.totalExecutions(), 100u);
  EXPECT_EQ(recorder.errorsByKind().at("GENERAL_FAILURE"), 1u);
  // Whole-run quantiles from the histogram: within one bucket (12%) of the truth.
  const auto histogram = recorder.histograms().at("m sync");
  EXPECT_NEAR(histogramQuantile(histogram, 0.5), 50, 50 * 0.13);
  EXPECT_NEAR(histogramQuantile(histogram, 0.99), 99, 99 * 0.13);
}

RunSummary sampleRun() {
  RunSummary run;
  run.verdict = "LEAK";
  run.reasons = {"LEAK: memory mappings grew by 4000"};
  run.daemon = "nnhald pid 1 on /tmp/x.sock";
  run.seconds = 40;
  run.intervalSeconds = 1;
  run.clients = 2;
  run.models = {"model_a"};
  run.firstErrors = {"GENERAL_FAILURE: <script>alert(1)</script>"};
  run.errorsByKind = {{"GENERAL_FAILURE", 1}};
  Recorder recorder;
  for (int i = 0; i < 40; ++i) {
    recorder.success("model_a sync", 2 + i % 3, false);
    Sample s = recorder.take(i);
    s.daemon = {100, 50, static_cast<uint64_t>(300 + 100 * i), 30};
    run.samples.push_back(s);
  }
  run.histograms = recorder.histograms();
  std::vector<double> t, v;
  for (const Sample& s : run.samples) {
    t.push_back(s.seconds);
    v.push_back(static_cast<double>(s.daemon.maps));
  }
  run.trends = {analyzeTrend("RSS (MiB)", t, std::vector<double>(t.size(), 100), 16),
                analyzeTrend("open descriptors", t, std::vector<double>(t.size(), 50), 16),
                analyzeTrend("memory mappings", t, v, 64),
                analyzeTrend("threads", t, std::vector<double>(t.size(), 30), 8)};
  return run;
}

TEST(SoakReport, ThePageStandsAloneAndEscapesWhatTheDaemonSaid) {
  const RunSummary run = sampleRun();
  ASSERT_TRUE(run.trends[2].leaking);
  const std::string html = renderHtml(run, {{"resources", "<svg id=\"x\"></svg>"}});
  EXPECT_NE(html.find("<div class=\"verdict fail\">LEAK</div>"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
  EXPECT_NE(html.find("<svg id=\"x\"></svg>"), std::string::npos);
  EXPECT_NE(html.find("LEAK</td>"), std::string::npos);
}

TEST(SoakReport, WritesTheSamplesAndAPageWithItsPlots) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("soak-report-test-" + std::to_string(getpid()));
  const RunSummary run = sampleRun();
  ASSERT_TRUE(writeReport(run, dir).has_value());
  std::ifstream json(dir / "samples.json");
  const nlohmann::json samples = nlohmann::json::parse(json);
  EXPECT_EQ(samples["verdict"], "LEAK");
  EXPECT_EQ(samples["samples"].size(), 40u);
  EXPECT_EQ(samples["trends"][2]["leaking"], true);
  std::ifstream page(dir / "report.html");
  std::stringstream text;
  text << page.rdbuf();
  const std::string html = text.str();
  EXPECT_FALSE(std::filesystem::exists(dir / ".plots"));
  if (std::system("gnuplot --version >/dev/null 2>&1") == 0) {
    for (const char* plot : {"latency0", "histogram", "throughput", "resources"}) {
      EXPECT_NE(html.find(std::string("id=\"") + plot + "\"><svg"), std::string::npos) << plot;
    }
  } else {
    EXPECT_NE(html.find("No plots"), std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nnhal::soak
