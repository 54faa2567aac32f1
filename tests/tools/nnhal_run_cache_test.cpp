// `nnhal run --cache-dir`: the first run compiles and saves, the second prepares from the
// cache and computes the same bytes; a damaged cache falls back to compiling.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "nnhal/device.h"
#include "tools/common/tensor_io.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;
const fs::path kModels = fs::path(NNHAL_SHARED_DIR) / "models";

// Runs `nnhal ARGS` (or, when `prefixed`, ARGS as a whole shell command line).
std::string runCli(const std::string& args, int* exitCode, bool prefixed = false) {
  const std::string command =
      (prefixed ? args : std::string(NNHAL_CLI_PATH) + " " + args) + " 2>&1";
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  *exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return output;
}

TEST(NnhalRunCacheTest, SecondRunIsACacheHitWithIdenticalOutput) {
  const fs::path dir = fs::temp_directory_path() / ("nnhal-cache-cli-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string common =
      "run --model " + (kModels / "mobilenet_v1_0.25_128_quant.tflite").string() + " --image " +
      (kModels / "resized_cat.bmp").string() + " --cache-dir " + (dir / "cache").string();
  int code = -1;
  const std::string first = runCli(common + " --output " + (dir / "first.bin").string(), &code);
  ASSERT_EQ(code, 0) << first;
  EXPECT_NE(first.find("cache: miss (compiled and saved in "), std::string::npos) << first;

  const std::string second = runCli(common + " --output " + (dir / "second.bin").string(), &code);
  ASSERT_EQ(code, 0) << second;
  EXPECT_NE(second.find("cache: hit (prepared from cache in "), std::string::npos) << second;
  EXPECT_EQ(*readFile(dir / "first.bin"), *readFile(dir / "second.bin"));

  // Damage every model cache file: the next run compiles (and saves) again.
  size_t damaged = 0;
  for (const auto& entry : fs::directory_iterator(dir / "cache")) {
    if (entry.path().extension() != ".model") continue;
    auto bytes = *readFile(entry.path());
    bytes[bytes.size() / 2] ^= 0x40;
    ASSERT_TRUE(writeFile(entry.path(), bytes));
    ++damaged;
  }
  EXPECT_EQ(damaged, 1u);
  const std::string third = runCli(common + " --output " + (dir / "third.bin").string(), &code);
  ASSERT_EQ(code, 0) << third;
  EXPECT_NE(third.find("cache: miss"), std::string::npos) << third;
  EXPECT_EQ(*readFile(dir / "first.bin"), *readFile(dir / "third.bin"));
  const std::string fourth = runCli(common, &code);
  EXPECT_NE(fourth.find("cache: hit"), std::string::npos) << fourth;
  fs::remove_all(dir);
}

// A cache records the kernels' instruction-set level: made at one level, it is not loaded at
// another (the packed depthwise filters differ); the entry saved at the new level is.
TEST(NnhalRunCacheTest, ACacheMadeAtAnotherInstructionSetLevelIsNotLoaded) {
  const fs::path dir = fs::temp_directory_path() / ("nnhal-cache-isa-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string common =
      "run --model " + (kModels / "mobilenet_v1_0.25_128_quant.tflite").string() + " --image " +
      (kModels / "resized_cat.bmp").string() + " --cache-dir " + (dir / "cache").string();
  int code = -1;
  const std::string scalar = runCli("NNHAL_ISA=scalar " + std::string(NNHAL_CLI_PATH) + " " +
                                        common + " --output " + (dir / "scalar.bin").string(),
                                    &code, /*prefixed=*/true);
  ASSERT_EQ(code, 0) << scalar;
  EXPECT_NE(scalar.find("cache: miss"), std::string::npos) << scalar;
  // The native level: NNHAL_ISA removed (CI runs this suite under NNHAL_ISA=scalar too).
  const std::string nativeCli = "env -u NNHAL_ISA " + std::string(NNHAL_CLI_PATH) + " ";
  const std::string native = runCli(
      nativeCli + common + " --output " + (dir / "native.bin").string(), &code, /*prefixed=*/true);
  ASSERT_EQ(code, 0) << native;
  if (kernelIsa().supported != "scalar") {
    EXPECT_NE(native.find("cache: miss"), std::string::npos) << native;
  }
  // Same result either way (the quantized kernels are bit-exact at every level).
  EXPECT_EQ(*readFile(dir / "scalar.bin"), *readFile(dir / "native.bin"));
  const std::string again = runCli(nativeCli + common, &code, /*prefixed=*/true);
  EXPECT_NE(again.find("cache: hit"), std::string::npos) << again;
  fs::remove_all(dir);
}

// `nnhal info` says how many cache files the device needs and, when none, why: (0, 0) without
// a state directory, (1, 1) with one (IDevice.hal 1.2: (0, 0) means no caching).
TEST(NnhalRunCacheTest, InfoReportsNoCacheFilesWithoutAStateDirectoryAndWhy) {
  int code = -1;
  const std::string without = runCli("info", &code);
  ASSERT_EQ(code, 0) << without;
  EXPECT_NE(without.find("cache files needed: 0 model, 0 data (compilation caching off: the "
                         "driver has no state directory"),
            std::string::npos)
      << without;
  const fs::path dir = fs::temp_directory_path() / ("nnhal-info-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string with = runCli("info --state-dir " + (dir / "state").string(), &code);
  ASSERT_EQ(code, 0) << with;
  EXPECT_NE(with.find("cache files needed: 1 model, 1 data\n"), std::string::npos) << with;
  const std::string json = runCli("info --json", &code);
  ASSERT_EQ(code, 0) << json;
  const auto facts = nlohmann::json::parse(json, nullptr, false);
  ASSERT_FALSE(facts.is_discarded()) << json;
  EXPECT_EQ(facts["numberOfCacheFilesNeeded"]["modelCache"], 0);
  EXPECT_EQ(facts["compilationCaching"]["available"], false);
  EXPECT_NE(facts["compilationCaching"]["reason"].get<std::string>().find("state directory"),
            std::string::npos);
  fs::remove_all(dir);
}

// A state directory the driver may not write is no cache either. Run as another user (root
// writes in any directory): a root-owned folder of mode 0755.
TEST(NnhalRunCacheTest, InfoReportsNoCacheFilesForAnUnwritableStateDirectory) {
  const fs::path dir = fs::temp_directory_path() / ("nnhal-info-ro-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "state");
  std::string prefix;
  if (::geteuid() == 0) {
    prefix = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
    int probe = -1;
    runCli(prefix + "test -x " + std::string(NNHAL_CLI_PATH), &probe, /*prefixed=*/true);
    if (probe != 0) {
      fs::remove_all(dir);
      GTEST_SKIP() << "setpriv missing, or nnhal not reachable by another user from here";
    }
    fs::permissions(dir, fs::perms::all);  // the user can reach the folder, not write in it
  } else {
    fs::permissions(dir / "state", fs::perms::owner_read | fs::perms::owner_exec);
  }
  int code = -1;
  const std::string out =
      runCli(prefix + NNHAL_CLI_PATH + " info --json --state-dir " + (dir / "state").string(),
             &code, /*prefixed=*/true);
  fs::permissions(dir / "state", fs::perms::owner_all);
  fs::remove_all(dir);
  ASSERT_EQ(code, 0) << out;
  const auto facts = nlohmann::json::parse(out.substr(out.find('{')), nullptr, false);
  ASSERT_FALSE(facts.is_discarded()) << out;
  EXPECT_EQ(facts["numberOfCacheFilesNeeded"]["modelCache"], 0) << out;
  EXPECT_EQ(facts["numberOfCacheFilesNeeded"]["dataCache"], 0) << out;
  EXPECT_EQ(facts["compilationCaching"]["available"], false) << out;
  EXPECT_NE(facts["compilationCaching"]["reason"].get<std::string>().find("not writable"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace nnhal::tools
