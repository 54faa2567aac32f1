// `nnhal info --json`, `nnhal cts --json` and `nnhal cts --junit FILE`, run as a user runs
// them: the JSON parses and agrees with the text output and with the models run; the JUnit
// file is well-formed XML with a testcase per model; an unwritable report path is refused
// before any model runs.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "tools/cli_test_util.h"
#include "tools/common/cts_model.h"

namespace nnhal::tools {
namespace {

using cli_test::runNnhal;
using cli_test::runShell;
using cli_test::TempDir;

const std::string kCtsV1_0 = std::string(NNHAL_SHARED_DIR) + "/cts/V1_0";

/// The names of the test models under `path` whose name contains `filter`.
std::multiset<std::string> modelNames(const std::filesystem::path& path,
                                      const std::string& filter) {
  std::multiset<std::string> names;
  for (const auto& file : ctsFiles(path)) {
    auto models = loadCtsFile(file);
    EXPECT_TRUE(models) << file;
    if (!models) continue;
    for (const CtsModel& model : *models) {
      if (model.name.find(filter) != std::string::npos) names.insert(model.name);
    }
  }
  return names;
}

std::string readAll(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

bool haveXmllint() { return runShell("command -v xmllint >/dev/null 2>&1").exitCode == 0; }

TEST(NnhalInfoJsonTest, HoldsTheFactsOfTheTextOutput) {
  const auto text = runNnhal("info", "2>/dev/null");
  ASSERT_EQ(text.exitCode, 0) << text.output;
  const auto json = runNnhal("info --json", "2>/dev/null");
  ASSERT_EQ(json.exitCode, 0) << json.output;
  const auto info = nlohmann::json::parse(json.output, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(info.is_object()) << json.output;

  const std::string name = info.value("name", "");
  ASSERT_FALSE(name.empty());
  EXPECT_NE(text.output.find("name: " + name + "\n"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("version: " + info.value("versionString", "") + "\n"),
            std::string::npos);
  EXPECT_NE(text.output.find("type: " + info.value("type", "") + "\n"), std::string::npos);
  EXPECT_NE(text.output.find("kernels: " + info["kernelIsa"].value("active", "") + " "),
            std::string::npos);
  const auto& cacheFiles = info["numberOfCacheFilesNeeded"];
  EXPECT_NE(text.output.find("cache files needed: " + cacheFiles["modelCache"].dump() + " model, " +
                             cacheFiles["dataCache"].dump() + " data"),
            std::string::npos);
  EXPECT_NE(text.output.find("extensions: " + std::to_string(info["extensions"].size())),
            std::string::npos);
  EXPECT_TRUE(info["capabilitiesSource"].contains("measured"));

  const auto& caps = info["capabilities"];
  for (const char* field :
       {"relaxedFloat32toFloat16PerformanceScalar", "relaxedFloat32toFloat16PerformanceTensor",
        "ifPerformance", "whilePerformance"}) {
    EXPECT_TRUE(caps[field]["execTime"].is_number()) << field;
    EXPECT_TRUE(caps[field]["powerUsage"].is_number()) << field;
  }
  const auto& operandPerformance = caps["operandPerformance"];
  ASSERT_TRUE(operandPerformance.is_array());
  ASSERT_FALSE(operandPerformance.empty());
  for (const auto& p : operandPerformance) {
    const std::string type = p.value("type", "");
    EXPECT_NE(text.output.find("  " + type + " "), std::string::npos) << type;
    EXPECT_TRUE(p["info"]["execTime"].is_number()) << type;
  }
  const std::string header = "operand performance";
  const std::string table = text.output.substr(text.output.find(header));
  EXPECT_EQ(occurrences(table, "\n  "), operandPerformance.size());
}

TEST(NnhalCtsJsonTest, CountsAgreeWithTheModelsRun) {
  const auto expected = modelNames(kCtsV1_0, "relu6");
  ASSERT_GE(expected.size(), 4u);
  const auto run =
      runNnhal("cts " + kCtsV1_0 + " --filter relu6 --mode sync --json", "2>/dev/null");
  EXPECT_EQ(run.exitCode, 0) << run.output;
  const auto report = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.output;  // nothing but the JSON on stdout
  const auto& totals = report["totals"];
  EXPECT_EQ(totals["models"], expected.size());
  EXPECT_EQ(totals["passed"], expected.size());
  EXPECT_EQ(totals["failed"], 0);
  EXPECT_EQ(totals["skipped"], 0);
  EXPECT_EQ(totals["loadErrors"], 0);
  EXPECT_GT(totals["durationMs"].get<double>(), 0.0);
  EXPECT_EQ(report["modes"], nlohmann::json::array({"sync"}));
  std::multiset<std::string> names;
  for (const auto& model : report["models"]) {
    names.insert(model.value("name", ""));
    EXPECT_EQ(model["version"], "V1_0");
    EXPECT_EQ(model["outcome"], "passed");
    EXPECT_FALSE(model.contains("message"));
    EXPECT_GE(model["timeMs"].get<double>(), 0.0);
    ASSERT_EQ(model["modes"].size(), 1u);
    EXPECT_EQ(model["modes"][0]["mode"], "sync");
  }
  EXPECT_EQ(names, expected);
}

/// A copy of relu6_float_1.json whose first model expects wrong values and has XML's special
/// characters and a control character in its name.
std::filesystem::path writeFailingCtsFile(const TempDir& dir) {
  std::ifstream in(kCtsV1_0 + "/relu6_float_1.json");
  nlohmann::json file = nlohmann::json::parse(in);
  auto& test = file["tests"][0];
  test["name"] = "relu6 <&\"'>\x01 wrong";
  for (auto& operand : test["model"]["main"]["operands"]) {
    if (operand["lifetime"] == "SUBGRAPH_OUTPUT") {
      operand["data"] = "AACAPwAAgD8AAIA/AACAPw==";  // four 1.0f
    }
  }
  const auto path = dir / "relu6_wrong.json";
  std::ofstream(path) << file.dump();
  return path;
}

TEST(NnhalCtsJsonTest, ReportsAFailedModelWithItsMessage) {
  TempDir dir;
  const auto file = writeFailingCtsFile(dir);
  const auto run = runNnhal("cts " + file.string() + " --mode sync --json", "2>/dev/null");
  EXPECT_EQ(run.exitCode, 1) << run.output;
  const auto report = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.output;
  EXPECT_EQ(report["totals"]["models"], 2);
  EXPECT_EQ(report["totals"]["passed"], 1);
  EXPECT_EQ(report["totals"]["failed"], 1);
  const auto& failed = report["models"][0];
  EXPECT_EQ(failed["outcome"], "failed");
  EXPECT_NE(failed.value("message", "").find("[sync] "), std::string::npos) << failed;
  EXPECT_EQ(failed["modes"][0]["outcome"], "failed");
  EXPECT_EQ(report["models"][1]["outcome"], "passed");
}

TEST(NnhalCtsJunitTest, WritesATestcasePerModelAndTheFailure) {
  TempDir dir;
  const auto file = writeFailingCtsFile(dir);
  const auto xml = dir / "report.xml";
  const auto run = runNnhal("cts " + file.string() + " " + kCtsV1_0 +
                            " --filter relu6 --mode sync --quiet --junit " + xml.string());
  EXPECT_EQ(run.exitCode, 1) << run.output;
  // The human output is unchanged by --junit.
  EXPECT_NE(run.output.find("FAIL V1_0/relu6 <&\"'>"), std::string::npos) << run.output;
  const size_t models = modelNames(kCtsV1_0, "relu6").size() + 2;
  const std::string text = readAll(xml);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(occurrences(text, "<testcase "), models) << text;
  EXPECT_EQ(occurrences(text, "<failure message=\"[sync] "), 1u) << text;
  EXPECT_NE(text.find("name=\"relu6 &lt;&amp;&quot;&apos;&gt;\xEF\xBF\xBD wrong\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("<testsuites name=\"nnhal cts\" tests=\"" + std::to_string(models) +
                      "\" failures=\"1\" errors=\"0\" skipped=\"0\""),
            std::string::npos)
      << text;
  if (!haveXmllint()) GTEST_SKIP() << "xmllint is not installed: well-formedness not checked";
  const auto lint = runShell("xmllint --noout " + xml.string() + " 2>&1");
  EXPECT_EQ(lint.exitCode, 0) << lint.output;
  const auto count = runShell("xmllint --xpath 'count(//testsuites/testsuite/testcase)' " +
                              xml.string() + " 2>&1");
  EXPECT_EQ(count.output, std::to_string(models) + "\n");
  const auto failures =
      runShell("xmllint --xpath 'count(//testcase/failure)' " + xml.string() + " 2>&1");
  EXPECT_EQ(failures.output, "1\n");
}

TEST(NnhalCtsJunitTest, AnUnwritableReportIsAUsageErrorBeforeTheRun) {
  TempDir dir;
  for (const std::string& path : {(dir / "missing" / "report.xml").string(), dir.path().string()}) {
    const auto run = runNnhal("cts " + kCtsV1_0 + " --filter relu6 --mode sync --junit " + path);
    EXPECT_EQ(run.exitCode, 2) << run.output;
    EXPECT_NE(run.output.find("cannot write the JUnit report " + path), std::string::npos)
        << run.output;
    EXPECT_EQ(run.output.find("PASS"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("passed"), std::string::npos) << run.output;
  }
}

}  // namespace
}  // namespace nnhal::tools
