// A daemon that cannot cache compilations says so: getNumberOfCacheFilesNeeded is (0, 0)
// through the socket (IDevice.hal 1.2: a runtime that sees it passes no cache files), with
// the reason; a client that passes files anyway still gets its prepared model, and
// prepareModelFromCache fails with GENERAL_FAILURE. The soak and stress clients use caching
// only where the daemon asks for files, and pass against a daemon without a cache directory.
#include <sys/mman.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>

#include "common/unique_fd.h"
#include "ipc_test_util.h"

namespace nnhal::ipc::testing {
namespace {

struct Command {
  int exitCode = -1;
  std::string output;
};

Command run(const std::string& command) {
  Command result;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

/// Two empty memfd cache files (regular files, as the driver requires).
struct MemfdCache {
  common::UniqueFd model{::memfd_create("model-cache", MFD_CLOEXEC)};
  common::UniqueFd data{::memfd_create("data-cache", MFD_CLOEXEC)};
  CacheFiles files() const {
    CacheFiles f;
    f.modelCache = {{model.get()}};
    f.dataCache = {{data.get()}};
    f.token.fill(7);
    return f;
  }
  off_t modelBytes() const {
    struct stat st {};
    return ::fstat(model.get(), &st) == 0 ? st.st_size : -1;
  }
};

TEST(CachingOff, DaemonWithoutCacheDirReportsNoFilesAndStillPrepares) {
  Daemon daemon;  // no --cache-dir
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().modelCache, 0u);
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().dataCache, 0u);
  const CompilationCaching caching = (*device)->getCompilationCaching();
  EXPECT_FALSE(caching.available);
  EXPECT_EQ(caching.reason.rfind("nnhald: ", 0), 0u) << caching.reason;
  EXPECT_NE(caching.reason.find("no state directory"), std::string::npos) << caching.reason;

  // A client that ignores (0, 0): prepared, nothing saved.
  MemfdCache cache;
  PrepareOptions options;
  options.cache = cache.files();
  auto prepared = (*device)->prepareModel(addModel(), options);
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(cache.modelBytes(), 0);
  // Loading: GENERAL_FAILURE, at launch and in the callback, with the files it would have
  // asked for and with none.
  std::promise<Result<std::shared_ptr<PreparedModel>>> done;
  const ErrorStatus launched = (*device)->prepareModelFromCache(
      cache.files(), {}, [&](auto result) { done.set_value(std::move(result)); });
  auto loaded = done.get_future().get();
  EXPECT_EQ(launched, ErrorStatus::GENERAL_FAILURE);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE);
  CacheFiles none;
  auto fromNone = (*device)->prepareModelFromCache(none);
  ASSERT_FALSE(fromNone);
  EXPECT_EQ(fromNone.error().status, ErrorStatus::GENERAL_FAILURE) << fromNone.error().message;
}

TEST(CachingOff, DaemonWithCacheDirReportsOneAndOneAndCachingWorks) {
  TempDir dir;
  Daemon daemon({"--cache-dir", (dir.path() / "cache").string()});
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().modelCache, 1u);
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().dataCache, 1u);
  EXPECT_TRUE((*device)->getCompilationCaching().available);
  EXPECT_TRUE((*device)->getCompilationCaching().reason.empty());
  MemfdCache cache;
  PrepareOptions options;
  options.cache = cache.files();
  ASSERT_TRUE((*device)->prepareModel(addModel(), options));
  EXPECT_GT(cache.modelBytes(), 0);
  auto loaded = (*device)->prepareModelFromCache(cache.files());
  ASSERT_TRUE(loaded) << loaded.error().message;
}

// nnhal-soak against a daemon without a cache directory: no cache files, no errors.
TEST(CachingOff, SoakAgainstADaemonWithoutCacheDirPasses) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  TempDir dir;
  const Command soak = run(std::string(NNHAL_SOAK_PATH) + " --connect " + daemon.socket().string() +
                           " --duration 8s --interval 1s --warm-up 1s --clients 2 --report " +
                           (dir.path() / "report").string());
  EXPECT_EQ(soak.exitCode, 0) << soak.output;
  EXPECT_NE(soak.output.find("nnhal-soak: PASS"), std::string::npos) << soak.output;
  EXPECT_NE(soak.output.find("compilation caching: not used: nnhald: the driver has no state "
                             "directory"),
            std::string::npos)
      << soak.output;
  std::ifstream samples(dir.path() / "report" / "samples.json");
  const auto report = nlohmann::json::parse(samples, nullptr, false);
  ASSERT_FALSE(report.is_discarded());
  EXPECT_EQ(report["compilation_caching"].get<std::string>().rfind("not used", 0), 0u);
  EXPECT_GT(report["compilations"].get<uint64_t>(), 0u);
}

// nnhal-soak starting its own daemon gives it a cache directory of its own, or the one a
// --daemon-arg names (one --cache-dir on nnhald's command line either way).
TEST(CachingOff, SoakStartsItsDaemonWithOneCacheDirectory) {
  TempDir dir;
  const std::string soak = std::string(NNHAL_SOAK_PATH) + " --nnhald " + NNHALD_PATH +
                           " --duration 3s --interval 1s --warm-up 1s --clients 1 --report ";
  const Command own = run(soak + (dir.path() / "own").string());
  EXPECT_EQ(own.exitCode, 0) << own.output;
  EXPECT_NE(own.output.find("nnhal-soak: PASS"), std::string::npos) << own.output;
  EXPECT_NE(own.output.find("compilation caching: used"), std::string::npos) << own.output;

  const auto named = dir.path() / "named-cache";
  std::filesystem::create_directories(named);
  const Command chosen =
      run(soak + (dir.path() / "chosen").string() + " --daemon-arg=--cache-dir=" + named.string());
  EXPECT_EQ(chosen.exitCode, 0) << chosen.output;
  EXPECT_NE(chosen.output.find("nnhal-soak: PASS"), std::string::npos) << chosen.output;
  EXPECT_FALSE(std::filesystem::is_empty(named)) << "the named cache directory was not used";
}

// nnhal-stress's model-load clients use caching only where the daemon asks for cache files.
TEST(CachingOff, StressModelLoadUsesCachingOnlyWhereTheDaemonReportsFiles) {
  TempDir dir;
  const std::string stress = std::string(NNHAL_STRESS_PATH) +
                             " --test multi-process-model-load --duration 3s --processes 2";
  {
    Daemon daemon;
    ASSERT_TRUE(daemon.running());
    const Command off = run(stress + " --connect " + daemon.socket().string() + " --json " +
                            (dir.path() / "off.json").string());
    EXPECT_EQ(off.exitCode, 0) << off.output;
    std::ifstream file(dir.path() / "off.json");
    const auto json = nlohmann::json::parse(file, nullptr, false);
    ASSERT_FALSE(json.is_discarded()) << off.output;
    EXPECT_EQ(json["tests"][0]["metrics"]["compilation_caching"].get<std::string>().rfind(
                  "not used: nnhald:", 0),
              0u)
        << off.output;
  }
  // The daemon nnhal-stress starts has a cache directory of its own.
  const Command on = run(stress + " --json " + (dir.path() / "on.json").string());
  EXPECT_EQ(on.exitCode, 0) << on.output;
  std::ifstream file(dir.path() / "on.json");
  const auto json = nlohmann::json::parse(file, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << on.output;
  EXPECT_EQ(json["tests"][0]["metrics"]["compilation_caching"], "used") << on.output;
  EXPECT_EQ(json["tests"][0]["result"], "SUCCESS") << on.output;
}

}  // namespace
}  // namespace nnhal::ipc::testing
