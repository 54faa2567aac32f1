// NNHAL_VLOG in a real process: the nnhal binary with one tag on logs that tag's lines, and
// no other tag's, on stderr; stdout holds only the results.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tools/cli_test_util.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;
const fs::path kShared = fs::path(NNHAL_SHARED_DIR);
const std::vector<std::string> kTags = {"compilation", "cpuexe", "driver", "execution", "manager",
                                        "model",       "ipc",    "cache",  "burst"};

struct Outputs {
  int exitCode = -1;
  std::string out;
  std::string err;
};

/// Runs `nnhal ARGS` with NNHAL_VLOG=`vlog` (unset when null), stdout and stderr apart.
Outputs runCli(const char* vlog, const std::string& args) {
  static int counter = 0;
  const fs::path errFile = fs::temp_directory_path() / ("nnhal-vlog-" + std::to_string(getpid()) +
                                                        "-" + std::to_string(counter++) + ".err");
  std::string command =
      vlog == nullptr ? "env -u NNHAL_VLOG " : "env NNHAL_VLOG='" + std::string(vlog) + "' ";
  command += std::string(NNHAL_CLI_PATH) + " " + args + " 2>" + errFile.string();
  const cli_test::CommandResult run = cli_test::runShell(command);
  Outputs result;
  result.exitCode = run.exitCode;
  result.out = run.output;
  std::ifstream err(errFile);
  std::stringstream text;
  text << err.rdbuf();
  result.err = text.str();
  fs::remove(errFile);
  return result;
}

bool hasTag(const std::string& text, const std::string& tag) {
  return text.find("] [" + tag + "] ") != std::string::npos;
}

/// MobileNet through the embedded driver with a compilation cache: every tag but ipc and
/// burst logs something.
std::string runArgs(const fs::path& cacheDir) {
  const fs::path models = kShared / "models";
  return "run --model " + (models / "mobilenet_v1_0.25_128_quant.tflite").string() + " --image " +
         (models / "grace_hopper.bmp").string() + " --threads 1 --cache-dir " + cacheDir.string();
}

fs::path freshDir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("nnhal-vlog-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir;
}

class VlogTagSwitch : public testing::TestWithParam<std::string> {};

TEST_P(VlogTagSwitch, OnlyThisTagLogsAndOnlyOnStderr) {
  const std::string& tag = GetParam();
  const fs::path cacheDir = freshDir(tag);
  Outputs run;
  if (tag == "burst") {  // an embedded burst: the CTS runner's burst mode
    run = runCli(tag.c_str(), "cts " + (kShared / "cts" / "V1_0" / "add.json").string() +
                                  " --mode burst --threads 1");
  } else if (tag == "ipc") {  // no daemon here: the client logs its failed connection
    run = runCli(tag.c_str(), runArgs(cacheDir) + " --connect " + (cacheDir / "none").string());
  } else {
    run = runCli(tag.c_str(), runArgs(cacheDir));
  }
  fs::remove_all(cacheDir);
  if (tag == "ipc") {
    EXPECT_NE(run.err.find("[ipc] cannot connect to"), std::string::npos) << run.err;
  } else {
    ASSERT_EQ(run.exitCode, 0) << run.err;
  }
  for (const std::string& other : kTags) {
    if (other == tag) continue;
    EXPECT_FALSE(hasTag(run.err, other)) << other << " logged with NNHAL_VLOG=" << tag << ":\n"
                                         << run.err;
  }
  for (const std::string& any : kTags) EXPECT_FALSE(hasTag(run.out, any)) << run.out;
  EXPECT_TRUE(hasTag(run.err, tag)) << "NNHAL_VLOG=" << tag << " logged nothing:\n" << run.err;
}

INSTANTIATE_TEST_SUITE_P(EveryTag, VlogTagSwitch, testing::ValuesIn(kTags),
                         [](const auto& info) { return info.param; });

TEST(Vlog, UnsetOrEmptyLogsNothing) {
  for (const char* value : {static_cast<const char*>(nullptr), ""}) {
    const fs::path cacheDir = freshDir("off");
    const Outputs run = runCli(value, runArgs(cacheDir));
    fs::remove_all(cacheDir);
    ASSERT_EQ(run.exitCode, 0) << run.err;
    EXPECT_NE(run.out.find("cache: miss"), std::string::npos) << run.out;
    for (const std::string& tag : kTags) EXPECT_FALSE(hasTag(run.err, tag)) << run.err;
  }
}

TEST(Vlog, AllLogsEveryEmbeddedTagAndResultsStayOnStdout) {
  for (const char* value : {"1", "all"}) {
    const fs::path cacheDir = freshDir("all");
    const Outputs miss = runCli(value, runArgs(cacheDir));
    const Outputs hit = runCli(value, runArgs(cacheDir));
    fs::remove_all(cacheDir);
    ASSERT_EQ(miss.exitCode, 0) << miss.err;
    ASSERT_EQ(hit.exitCode, 0) << hit.err;
    for (const std::string tag :
         {"compilation", "cpuexe", "driver", "execution", "manager", "model", "cache"}) {
      EXPECT_TRUE(hasTag(miss.err, tag)) << tag << ":\n" << miss.err;
    }
    EXPECT_NE(miss.err.find("[cache] cache saved"), std::string::npos) << miss.err;
    EXPECT_NE(hit.err.find("[cache] cache hit"), std::string::npos) << hit.err;
    // stdout is exactly the results: every line is one the plain run prints.
    EXPECT_NE(miss.out.find("top 5 classes:"), std::string::npos);
    EXPECT_EQ(miss.out.find("[compilation]"), std::string::npos) << miss.out;
    EXPECT_EQ(miss.out.find("vlog"), std::string::npos) << miss.out;
  }
}

TEST(Vlog, UnknownTagsAreWarnedAboutOnceAndTheRestApply) {
  const fs::path cacheDir = freshDir("unknown");
  const Outputs run = runCli("bogus,model:bogus", runArgs(cacheDir));
  fs::remove_all(cacheDir);
  ASSERT_EQ(run.exitCode, 0) << run.err;
  // Once, although the word is given twice and every layer checks its tags many times.
  const std::string warning = "NNHAL_VLOG: unknown tag 'bogus'";
  const size_t first = run.err.find(warning);
  ASSERT_NE(first, std::string::npos) << run.err;
  EXPECT_EQ(run.err.find(warning, first + 1), std::string::npos) << run.err;
  EXPECT_TRUE(hasTag(run.err, "model")) << run.err;
  EXPECT_FALSE(hasTag(run.err, "execution")) << run.err;
}

}  // namespace
}  // namespace nnhal::tools
