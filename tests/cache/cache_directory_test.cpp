// nnhal::CacheDirectory (nnhal/cache_directory.h): a host program's compilation caching.
// The second start loads what the first saved; damaged files are compiled and saved again;
// tokens separate models, options and driver builds; a device that cannot cache gets no
// files; a model another process is preparing is compiled without waiting for ever.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "cache_test_util.h"
#include "hal/model_token.h"
#include "nnhal/cache_directory.h"

namespace nnhal::cachetest {
namespace {

namespace fs = std::filesystem;

/// Stand-in for a model file's bytes (what a host hashes into the token).
std::vector<uint8_t> modelFileBytes(uint8_t seed) { return std::vector<uint8_t>(100, seed); }

class CacheDirectoryTest : public ::testing::Test {
 protected:
  std::shared_ptr<Device> device(std::string version = {}, bool withState = true) {
    DeviceOptions options;
    if (withState) options.stateDirectory = dir_.path() / "state";
    options.versionOverride = std::move(version);
    options.kernelThreads = 1;
    auto created = createDevice(options);
    EXPECT_TRUE(created) << created.error().message;
    return created ? *created : nullptr;
  }

  CacheDirectory open(std::shared_ptr<Device> on,
                      std::chrono::milliseconds lockWait = std::chrono::seconds(30)) {
    auto cache = CacheDirectory::open(folder_, std::move(on), lockWait);
    EXPECT_TRUE(cache) << cache.error().message;
    return std::move(*cache);
  }

  /// Every file of the folder with `extension`.
  std::vector<fs::path> filesWith(const std::string& extension) const {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(folder_)) {
      if (entry.path().extension() == extension) found.push_back(entry.path());
    }
    return found;
  }

  TempDir dir_;
  fs::path folder_ = dir_.path() / "host-cache";
  const OperandType type_ = OperandType::TENSOR_QUANT8_ASYMM;
};

TEST_F(CacheDirectoryTest, TheSecondStartLoadsWhatTheFirstSaved) {
  std::vector<uint8_t> expected;
  {
    const CacheDirectory cache = open(device());
    auto first = cache.prepare(buildModel(type_, 1), modelFileBytes(1));
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(first->outcome, CacheOutcome::kCompiledAndSaved) << first->why;
    EXPECT_TRUE(first->why.empty()) << first->why;
    expected = run(*first->preparedModel, type_);
  }
  EXPECT_EQ(fs::status(folder_).permissions() & fs::perms::all, fs::perms::owner_all);
  const auto models = filesWith(".model");
  const auto data = filesWith(".data");
  ASSERT_EQ(models.size(), 1u);
  ASSERT_EQ(data.size(), 1u);
  EXPECT_EQ(models[0].stem().string().size(), 64u);  // the token in hex
  EXPECT_GT(fs::file_size(models[0]), 0u);
  EXPECT_EQ(fs::status(models[0]).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  // A new process, in effect: a new device over the same state directory.
  const CacheDirectory again = open(device());
  auto second = again.prepare(buildModel(type_, 1), modelFileBytes(1));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->outcome, CacheOutcome::kLoaded) << second->why;
  EXPECT_EQ(run(*second->preparedModel, type_), expected);
  EXPECT_EQ(filesWith(".model").size(), 1u);
}

TEST_F(CacheDirectoryTest, DamagedFilesAreCompiledAndSavedAgain) {
  const CacheDirectory cache = open(device());
  ASSERT_TRUE(cache.prepare(buildModel(type_, 1), modelFileBytes(1)));
  const fs::path model = filesWith(".model").at(0);
  std::vector<uint8_t> bytes = readAll(model);
  bytes[bytes.size() / 2] ^= 0x20;
  writeAll(model, bytes);
  auto damaged = cache.prepare(buildModel(type_, 1), modelFileBytes(1));
  ASSERT_TRUE(damaged) << damaged.error().message;
  EXPECT_EQ(damaged->outcome, CacheOutcome::kCompiledAndSaved);
  EXPECT_NE(damaged->why.find("not loaded"), std::string::npos) << damaged->why;
  auto repaired = cache.prepare(buildModel(type_, 1), modelFileBytes(1));
  ASSERT_TRUE(repaired) << repaired.error().message;
  EXPECT_EQ(repaired->outcome, CacheOutcome::kLoaded) << repaired->why;
}

TEST_F(CacheDirectoryTest, TokensSeparateModelsOptionsAndDriverBuilds) {
  const CacheDirectory cache = open(device());
  PrepareOptions options;
  const CacheToken token = cache.tokenFor(modelFileBytes(1), options);
  EXPECT_EQ(cache.tokenFor(modelFileBytes(1), options), token);
  EXPECT_NE(cache.tokenFor(modelFileBytes(2), options), token);
  PrepareOptions sustained = options;
  sustained.preference = ExecutionPreference::SUSTAINED_SPEED;
  EXPECT_NE(cache.tokenFor(modelFileBytes(1), sustained), token);
  PrepareOptions high = options;
  high.priority = Priority::HIGH;
  EXPECT_NE(cache.tokenFor(modelFileBytes(1), high), token);
  const CacheDirectory otherBuild = open(device("nnhal-other-build"));
  EXPECT_NE(otherBuild.tokenFor(modelFileBytes(1), options), token);

  // Two models side by side: each loads its own.
  ASSERT_TRUE(cache.prepare(buildModel(type_, 1), modelFileBytes(1)));
  ASSERT_TRUE(cache.prepare(buildModel(type_, 2), modelFileBytes(2)));
  EXPECT_EQ(filesWith(".model").size(), 2u);
  auto one = cache.prepare(buildModel(type_, 1), modelFileBytes(1));
  auto two = cache.prepare(buildModel(type_, 2), modelFileBytes(2));
  ASSERT_TRUE(one && two);
  EXPECT_EQ(one->outcome, CacheOutcome::kLoaded);
  EXPECT_EQ(two->outcome, CacheOutcome::kLoaded);
  auto reference = device()->prepareModel(buildModel(type_, 2));
  ASSERT_TRUE(reference);
  EXPECT_EQ(run(*two->preparedModel, type_), run(**reference, type_));
}

TEST_F(CacheDirectoryTest, ADeviceThatCannotCacheGetsNoFiles) {
  const CacheDirectory cache = open(device({}, /*withState=*/false));
  auto prepared = cache.prepare(buildModel(type_, 1), modelFileBytes(1));
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(prepared->outcome, CacheOutcome::kCachingOff);
  EXPECT_NE(prepared->why.find("state directory"), std::string::npos) << prepared->why;
  EXPECT_TRUE(fs::is_empty(folder_));
  EXPECT_FALSE(run(*prepared->preparedModel, type_).empty());
}

TEST_F(CacheDirectoryTest, AModelAnotherProcessIsPreparingIsCompiledWithoutWaitingForEver) {
  const CacheDirectory cache = open(device(), std::chrono::milliseconds(200));
  PrepareOptions options;
  const CacheToken token = cache.tokenFor(modelFileBytes(1), options);
  const std::string hex = hal::tokenHex(token);
  // Another open file description holds the token's lock, as another process would.
  const int held = ::open((folder_ / (hex + ".lock")).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(held, 0);
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  const auto start = std::chrono::steady_clock::now();
  auto prepared = cache.prepare(buildModel(type_, 1), modelFileBytes(1), options);
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(prepared->outcome, CacheOutcome::kCompiled);
  EXPECT_NE(prepared->why.find("another process"), std::string::npos) << prepared->why;
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(200));
  EXPECT_TRUE(filesWith(".model").empty());
  ::close(held);  // released: the next start saves
  auto next = cache.prepare(buildModel(type_, 1), modelFileBytes(1));
  ASSERT_TRUE(next) << next.error().message;
  EXPECT_EQ(next->outcome, CacheOutcome::kCompiledAndSaved) << next->why;
}

TEST_F(CacheDirectoryTest, OpenRefusesANullDeviceAndAFileForAFolder) {
  auto none = CacheDirectory::open(folder_, nullptr);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().status, ErrorStatus::INVALID_ARGUMENT);
  const fs::path file = dir_.path() / "a-file";
  std::ofstream(file) << "x";
  auto notFolder = CacheDirectory::open(file, device());
  ASSERT_FALSE(notFolder);
  EXPECT_EQ(notFolder.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(notFolder.error().message.find(file.string()), std::string::npos)
      << notFolder.error().message;
}

TEST(CacheOutcomeNames, EachOutcomeHasAName) {
  EXPECT_EQ(toString(CacheOutcome::kLoaded), "loaded");
  EXPECT_EQ(toString(CacheOutcome::kCompiledAndSaved), "compiled and saved");
  EXPECT_EQ(toString(CacheOutcome::kCompiled), "compiled");
  EXPECT_EQ(toString(CacheOutcome::kCachingOff), "caching off");
}

}  // namespace
}  // namespace nnhal::cachetest
