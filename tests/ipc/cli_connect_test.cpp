// `nnhal run --connect SOCKET` runs the main job (MobileNet v2 quant on an image) through
// nnhald and prints exactly what the embedded run prints, apart from the timing lines; the
// raw output tensor is byte-identical. Compilation caching works through the daemon too.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ipc_test_util.h"
#include "tools/common/cts_model.h"
#include "tools/common/litert_reference.h"

namespace nnhal::ipc {
namespace {

using namespace testing;

struct CliRun {
  int exitCode = -1;
  std::string output;
};

/// Runs the CLI; its output is stdout and stderr together unless `redirect` sends stderr
/// elsewhere.
CliRun runCli(const std::string& arguments, const std::string& redirect = "2>&1") {
  CliRun run;
  const std::string command = std::string(NNHAL_CLI_PATH) + " " + arguments + " " + redirect;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) run.output += buffer;
  const int status = ::pclose(pipe);
  run.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

/// The output without the lines that report times.
std::string withoutTimings(const std::string& text) {
  std::istringstream in(text);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.starts_with("preparation:") || line.starts_with("execution:") ||
        line.starts_with("cache:")) {
      continue;
    }
    kept += line + "\n";
  }
  return kept;
}

std::string readAll(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
}

TEST(CliConnect, MainJobGivesIdenticalOutputThroughTheDaemon) {
  TempDir dir;
  Daemon daemon({"--cache-dir", (dir.path() / "state").string()});
  ASSERT_TRUE(daemon.running());
  const std::string models = std::string(NNHAL_SHARED_DIR) + "/models/";
  const std::string job = "run --model " + models + "mobilenet_v2_1.0_224_quant.tflite --image " +
                          models + "grace_hopper.bmp --labels " + models +
                          "imagenet_labels.txt --threads 1";
  const CliRun embedded = runCli(job + " --output " + (dir.path() / "embedded.bin").string());
  ASSERT_EQ(embedded.exitCode, 0) << embedded.output;
  const CliRun remote = runCli(job + " --output " + (dir.path() / "remote.bin").string() +
                               " --connect " + daemon.socket().string());
  ASSERT_EQ(remote.exitCode, 0) << remote.output;
  EXPECT_NE(embedded.output.find("top 5 classes"), std::string::npos) << embedded.output;
  EXPECT_EQ(withoutTimings(remote.output), withoutTimings(embedded.output));
  const std::string embeddedBytes = readAll(dir.path() / "embedded.bin");
  EXPECT_FALSE(embeddedBytes.empty());
  EXPECT_EQ(readAll(dir.path() / "remote.bin"), embeddedBytes);

  // Compilation caching through the daemon (it reports (1, 1)): the client's cache files
  // travel as descriptors.
  const CliRun info = runCli("info --connect " + daemon.socket().string());
  EXPECT_NE(info.output.find("cache files needed: 1 model, 1 data\n"), std::string::npos)
      << info.output;
  const std::string cached = job + " --connect " + daemon.socket().string() + " --cache-dir " +
                             (dir.path() / "cache").string();
  const CliRun first = runCli(cached);
  ASSERT_EQ(first.exitCode, 0) << first.output;
  EXPECT_NE(first.output.find("cache: miss"), std::string::npos) << first.output;
  const CliRun second = runCli(cached);
  ASSERT_EQ(second.exitCode, 0) << second.output;
  EXPECT_NE(second.output.find("cache: hit"), std::string::npos) << second.output;
  EXPECT_EQ(withoutTimings(second.output), withoutTimings(embedded.output));
}

/// The (category, name) pairs of a Chrome trace file's complete events.
std::set<std::pair<std::string, std::string>> traceSpans(const fs::path& path) {
  const nlohmann::json trace = nlohmann::json::parse(readAll(path), nullptr, false);
  std::set<std::pair<std::string, std::string>> spans;
  if (trace.is_discarded()) return spans;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X")
      spans.insert({event["cat"].get<std::string>(), event["name"].get<std::string>()});
  }
  return spans;
}

// `nnhal run --connect --trace` records each call to the daemon; `nnhald --trace` records the
// frames it handled and the driver's work, and writes them when it stops.
TEST(CliConnect, TracesBothSidesOfTheSocket) {
  TempDir dir;
  const fs::path daemonTrace = dir.path() / "nnhald.json";
  const fs::path clientTrace = dir.path() / "client.json";
  Daemon daemon({"--trace", daemonTrace.string()});
  ASSERT_TRUE(daemon.running());
  const std::string models = std::string(NNHAL_SHARED_DIR) + "/models/";
  const CliRun run =
      runCli("run --model " + models + "mobilenet_v1_0.25_128_quant.tflite" + " --image " + models +
             "cat.bmp --connect " + daemon.socket().string() + " --trace " + clientTrace.string());
  ASSERT_EQ(run.exitCode, 0) << run.output;
  const auto client = traceSpans(clientTrace);
  EXPECT_TRUE(client.contains({"ipc", "PrepareModel"}));
  EXPECT_TRUE(client.contains({"ipc", "ExecuteSynchronously"}));
  EXPECT_EQ(daemon.stop(), 0);
  const auto served = traceSpans(daemonTrace);
  EXPECT_TRUE(served.contains({"ipc", "handle PrepareModel"}));
  EXPECT_TRUE(served.contains({"preparation", "prepareModel"}));
  EXPECT_TRUE(served.contains({"compilation", "compile"}));
  EXPECT_TRUE(served.contains({"execution", "execute"}));
  EXPECT_TRUE(served.contains({"execution", "CONV_2D"}));
}

// A daemon started without --cache-dir reports no cache files; the CLI passes none and says
// why, `nnhal info` too.
TEST(CliConnect, SaysWhenTheDaemonDoesNotCache) {
  TempDir dir;
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  const std::string models = std::string(NNHAL_SHARED_DIR) + "/models/";
  const CliRun run =
      runCli("run --model " + models + "mobilenet_v1_0.25_128_quant.tflite" + " --image " + models +
             "cat.bmp --num_runs 1 --connect " + daemon.socket().string() + " --cache-dir " +
             (dir.path() / "cache").string());
  ASSERT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("cache: off (compiled in "), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("the device does not cache compilations: nnhald: the driver has no "
                            "state directory"),
            std::string::npos)
      << run.output;
  EXPECT_EQ(run.output.find("compiled and saved"), std::string::npos) << run.output;
  EXPECT_TRUE(!fs::exists(dir.path() / "cache") || fs::is_empty(dir.path() / "cache"));
  const CliRun info = runCli("info --connect " + daemon.socket().string());
  ASSERT_EQ(info.exitCode, 0) << info.output;
  EXPECT_NE(info.output.find("cache files needed: 0 model, 0 data (compilation caching off: "
                             "nnhald: the driver has no state directory"),
            std::string::npos)
      << info.output;
}

TEST(CliConnect, CtsInBurstModeThroughTheDaemon) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  const std::string folder = std::string(NNHAL_SHARED_DIR) + "/cts/V1_0";
  const CliRun run =
      runCli("cts " + folder + " --mode burst --quiet --connect " + daemon.socket().string());
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find(" 0 failed"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("x 1 modes"), std::string::npos) << run.output;
}

// --json and --junit through the daemon: every mode (sync, async, dynamic output shapes,
// burst, device buffers, fenced) of a filtered subset runs on nnhald, the counts agree with the
// models of the folder, and `info --json` reports the daemon's device.
TEST(CliConnect, CtsJsonAndJunitThroughTheDaemon) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  TempDir dir;
  const fs::path folder = fs::path(NNHAL_SHARED_DIR) / "cts" / "V1_0";
  size_t expected = 0;
  for (const fs::path& file : tools::ctsFiles(folder)) {
    auto models = tools::loadCtsFile(file);
    ASSERT_TRUE(models) << models.error().message;
    for (const tools::CtsModel& cts : *models)
      expected += cts.name.find("relu") != std::string::npos;
  }
  ASSERT_GT(expected, 0u);
  const fs::path xml = dir.path() / "cts.xml";
  const fs::path log = dir.path() / "stderr";
  const std::string command = "env NNHAL_VLOG=ipc " + std::string(NNHAL_CLI_PATH) + " cts " +
                              folder.string() + " --filter relu --json --junit " + xml.string() +
                              " --connect " + daemon.socket().string() + " 2>" + log.string();
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  EXPECT_EQ(::pclose(pipe), 0) << output;
  const auto report = nlohmann::json::parse(output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << output;
  EXPECT_EQ(report["totals"]["models"], expected);
  EXPECT_EQ(report["totals"]["passed"], expected);
  EXPECT_EQ(report["totals"]["failed"], 0);
  EXPECT_EQ(report["modes"].size(), 6u);  // sync, async, dynamic, burst, device buffers, fenced
  for (const auto& model : report["models"]) EXPECT_EQ(model["modes"].size(), 6u) << model;
  EXPECT_NE(readAll(log).find("[ipc] sent PrepareModel"), std::string::npos);  // on nnhald
  const std::string junit = readAll(xml);
  size_t testcases = 0;
  for (size_t at = junit.find("<testcase "); at != std::string::npos;
       at = junit.find("<testcase ", at + 1)) {
    ++testcases;
  }
  EXPECT_EQ(testcases, expected) << junit;

  const CliRun info = runCli("info --json --connect " + daemon.socket().string());
  EXPECT_EQ(info.exitCode, 0) << info.output;
  const auto facts = nlohmann::json::parse(info.output, nullptr, false);
  ASSERT_TRUE(facts.is_object()) << info.output;
  EXPECT_EQ(facts["name"], connect(daemon.socket()).value()->getName());
  EXPECT_FALSE(facts["capabilities"]["operandPerformance"].empty());
  EXPECT_FALSE(facts.contains("kernelIsa"));  // the daemon's kernels are not this process's
}

// NNHAL_VLOG=ipc,burst on the client: its connection, its requests and its burst's memory
// slots are logged on stderr; stdout holds the results only.
TEST(CliConnect, VlogIpcAndBurstTagsLogTheClientSide) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  TempDir dir;
  const std::string args = "cts " + std::string(NNHAL_SHARED_DIR) +
                           "/cts/V1_0 --mode burst --quiet --connect " + daemon.socket().string();
  const fs::path outFile = dir.path() / "out", errFile = dir.path() / "err";
  const std::string command = "env NNHAL_VLOG=ipc,burst " + std::string(NNHAL_CLI_PATH) + " " +
                              args + " >" + outFile.string() + " 2>" + errFile.string();
  ASSERT_EQ(std::system(command.c_str()), 0) << readAll(errFile);
  const std::string out = readAll(outFile);
  EXPECT_NE(out.find(" 0 failed"), std::string::npos) << out;
  EXPECT_EQ(out.find("] [ipc] "), std::string::npos) << out;
  EXPECT_EQ(out.find("] [burst] "), std::string::npos) << out;
  const std::string err = readAll(errFile);
  EXPECT_NE(err.find("[ipc] connected to nnhald at"), std::string::npos) << err;
  EXPECT_NE(err.find("[ipc] sent PrepareModel"), std::string::npos) << err;
  EXPECT_NE(err.find("[burst] burst "), std::string::npos) << err;
  EXPECT_NE(err.find("memory slot 0 assigned"), std::string::npos) << err;
  EXPECT_EQ(err.find("] [execution] "), std::string::npos) << err;
}

TEST(CliConnect, ReportsAnUnreachableDaemon) {
  TempDir dir;
  const CliRun run = runCli("info --connect " + (dir.path() / "none.sock").string());
  EXPECT_EQ(run.exitCode, 1);
  EXPECT_NE(run.output.find("DEVICE_UNAVAILABLE"), std::string::npos) << run.output;
}

// The comparison with TFLite (LiteRT) through nnhald: for models of each kind (uint8,
// int8, hybrid float), `nnhal run --connect --compare-tflite` reports exactly the
// differences the embedded run reports (docs/TESTING.md, "Against TFLite"): the daemon
// computes what the embedded driver computes.
TEST(CliConnect, ComparisonWithTfliteIsTheSameThroughTheDaemon) {
  if (auto litert = tools::findLitert(); !litert) {
    GTEST_SKIP() << "not compared with TFLite: " << litert.error().message;
  }
  if (kUnderThreadSanitizer) GTEST_SKIP() << "LiteRT's runs are slow beside a TSan daemon";
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  const std::string models = std::string(NNHAL_SHARED_DIR) + "/models/";
  for (const char* model : {"mobilenet_v1_0.25_128_quant.tflite", "mlperftiny_vww_96_int8.tflite",
                            "mlperftiny_model_ToyCar_quant.tflite"}) {
    SCOPED_TRACE(model);
    const std::string job =
        "run " + models + model + " --compare-tflite --json --num_runs 1 --warmup_runs 0";
    const CliRun embedded = runCli(job, "2>/dev/null");
    const CliRun remote = runCli(job + " --connect " + daemon.socket().string(), "2>/dev/null");
    ASSERT_EQ(embedded.exitCode, 0) << embedded.output;
    ASSERT_EQ(remote.exitCode, 0) << remote.output;
    const auto e = nlohmann::json::parse(embedded.output, nullptr, false);
    const auto r = nlohmann::json::parse(remote.output, nullptr, false);
    ASSERT_FALSE(e.is_discarded() || r.is_discarded()) << embedded.output << remote.output;
    ASSERT_TRUE(e.contains("tflite") && r.contains("tflite"));
    ASSERT_FALSE(e["tflite"].empty());
    EXPECT_EQ(r["tflite"], e["tflite"]);
  }
}

}  // namespace
}  // namespace nnhal::ipc
