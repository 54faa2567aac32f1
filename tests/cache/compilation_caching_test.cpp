// The NN HAL VTS CompilationCachingTests, for this driver, with a float32 and a quant8
// model: saving and retrieving, invalid numbers of files and descriptors, access modes,
// corrupted files and tokens, another model's cache under a token; plus what the VTS does not
// cover: no state directory, a driver version change, caches surviving a driver restart, and
// rewriting the cache later through the prepared model's own descriptors.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <future>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "actors/prepared_model_impl.h"
#include "cache/cache_format.h"
#include "cache/token_map.h"
#include "cache_test_util.h"
#include "nnhal/device.h"

namespace nnhal::cachetest {
namespace {

class CompilationCachingTest : public ::testing::TestWithParam<OperandType> {
 protected:
  void SetUp() override {
    type_ = GetParam();
    stateDir_ = dir_.path() / "state";
    device_ = makeDevice();
    ASSERT_NE(device_, nullptr);
    model_ = buildModel(type_, 1);
    auto reference = device_->prepareModel(model_);
    ASSERT_TRUE(reference) << reference.error().message;
    expected_ = run(**reference, type_);
    ASSERT_EQ(expected_.size(), kOutputUnits * (type_ == OperandType::TENSOR_FLOAT32 ? 4u : 1u));
    modelPath_ = dir_.path() / "model0";
    dataPath_ = dir_.path() / "data0";
    tmpPath_ = dir_.path() / "tmp";
  }

  std::shared_ptr<Device> makeDevice(std::string version = {}, bool withState = true,
                                     bool authenticateData = false) {
    DeviceOptions options;
    if (withState) options.stateDirectory = stateDir_;
    options.authenticateDataCache = authenticateData;
    options.versionOverride = std::move(version);
    options.kernelThreads = 1;
    auto device = createDevice(options);
    EXPECT_TRUE(device) << device.error().message;
    return device ? *device : nullptr;
  }

  /// Handles of the model and data cache files (one each), opened with `modelFlags` and
  /// `dataFlags`.
  CacheFiles files(Fds& fds, int modelFlags = O_RDWR, int dataFlags = O_RDWR,
                   CacheToken token = tokenFor(1)) {
    CacheFiles files;
    files.modelCache = {{fds.open(modelPath_, modelFlags)}};
    files.dataCache = {{fds.open(dataPath_, dataFlags)}};
    files.token = token;
    return files;
  }

  /// prepareModel with caching; the preparation itself must succeed and compute the model.
  void save(const CacheFiles& cache, Device* device = nullptr, const Model* model = nullptr) {
    PrepareOptions options;
    options.cache = cache;
    auto prepared =
        (device ? device : device_.get())->prepareModel(model ? *model : model_, options);
    ASSERT_TRUE(prepared) << prepared.error().message;
    if (model == nullptr) {
      EXPECT_EQ(run(**prepared, type_), expected_);
    }
  }

  void saveDefault() {
    Fds fds;
    save(files(fds));
  }

  Result<std::shared_ptr<PreparedModel>> load(const CacheFiles& cache, Device* device = nullptr) {
    std::promise<Result<std::shared_ptr<PreparedModel>>> done;
    const ErrorStatus launched =
        (device ? device : device_.get())->prepareModelFromCache(cache, {}, [&](auto result) {
          done.set_value(std::move(result));
        });
    auto result = done.get_future().get();
    if (launched != ErrorStatus::NONE) {
      EXPECT_FALSE(result);
      if (!result) {
        EXPECT_EQ(result.error().status, launched);
      }
    }
    if (result) {
      EXPECT_NE(*result, nullptr);
    }
    return result;
  }

  Result<std::shared_ptr<PreparedModel>> loadDefault(Device* device = nullptr) {
    Fds fds;
    return load(files(fds), device);
  }

  /// Loading succeeds and computes exactly what the uncached model computes.
  void expectLoadsCorrectly(Device* device = nullptr) {
    auto prepared = loadDefault(device);
    ASSERT_TRUE(prepared) << prepared.error().message;
    EXPECT_EQ(run(**prepared, type_), expected_);
  }

  void expectLoadFails(ErrorStatus status, Device* device = nullptr) {
    auto prepared = loadDefault(device);
    ASSERT_FALSE(prepared);
    EXPECT_EQ(prepared.error().status, status) << prepared.error().message;
  }

  /// VTS accepts INVALID_ARGUMENT or GENERAL_FAILURE for a wrong number of files or fds.
  static void expectInvalidOrFailure(const Result<std::shared_ptr<PreparedModel>>& result) {
    ASSERT_FALSE(result);
    EXPECT_TRUE(result.error().status == ErrorStatus::INVALID_ARGUMENT ||
                result.error().status == ErrorStatus::GENERAL_FAILURE)
        << toString(result.error().status);
  }

  OperandType type_ = OperandType::TENSOR_FLOAT32;
  TempDir dir_;
  std::filesystem::path stateDir_, modelPath_, dataPath_, tmpPath_;
  std::shared_ptr<Device> device_;
  Model model_;
  std::vector<uint8_t> expected_;
};

TEST_P(CompilationCachingTest, ReportsOneModelAndOneDataFile) {
  const NumberOfCacheFiles counts = device_->getNumberOfCacheFilesNeeded();
  EXPECT_EQ(counts.modelCache, 1u);
  EXPECT_EQ(counts.dataCache, 1u);
  // Constant across restarts.
  auto again = makeDevice();
  EXPECT_EQ(again->getNumberOfCacheFilesNeeded().modelCache, 1u);
  EXPECT_EQ(again->getNumberOfCacheFilesNeeded().dataCache, 1u);
}

TEST_P(CompilationCachingTest, CacheSavingAndRetrieval) {
  saveDefault();
  EXPECT_GT(std::filesystem::file_size(modelPath_), 0u);
  EXPECT_GT(std::filesystem::file_size(dataPath_), 0u);
  expectLoadsCorrectly();
}

TEST_P(CompilationCachingTest, CacheSavingAndRetrievalNonZeroOffset) {
  {
    Fds fds;
    CacheFiles cache = files(fds);
    // Non-empty files at a non-zero offset: the driver truncates and writes from byte 0.
    const uint8_t junk[] = {0xAB, 0xCD};
    ASSERT_EQ(::write(cache.modelCache[0][0], junk, 2), 2);
    ASSERT_EQ(::write(cache.dataCache[0][0], junk, 2), 2);
    save(cache);
  }
  Fds fds;
  CacheFiles cache = files(fds);
  uint8_t byte = 0;
  ASSERT_EQ(::read(cache.modelCache[0][0], &byte, 1), 1);
  ASSERT_EQ(::read(cache.dataCache[0][0], &byte, 1), 1);
  auto prepared = load(cache);
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(run(**prepared, type_), expected_);
  // The client's offsets are not moved by the driver.
  EXPECT_EQ(::lseek(cache.modelCache[0][0], 0, SEEK_CUR), 1);
  EXPECT_EQ(::lseek(cache.dataCache[0][0], 0, SEEK_CUR), 1);
}

TEST_P(CompilationCachingTest, SaveToCacheInvalidNumCache) {
  // One extra / one missing model or data file at save: preparation succeeds, nothing is
  // saved, and loading fails (with the same handles and with the right ones).
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    Fds fds;
    CacheFiles cache = files(fds);
    auto& list = variant < 2 ? cache.modelCache : cache.dataCache;
    if (variant % 2 == 0) {
      list.push_back({fds.open(tmpPath_, O_RDWR)});
    } else {
      list.clear();
    }
    save(cache);
    EXPECT_EQ(std::filesystem::file_size(modelPath_), 0u);
    EXPECT_EQ(std::filesystem::file_size(dataPath_), 0u);
    EXPECT_EQ(std::filesystem::file_size(tmpPath_), 0u);
    expectInvalidOrFailure(load(cache));
    expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  }
}

TEST_P(CompilationCachingTest, PrepareModelFromCacheInvalidNumCache) {
  saveDefault();
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    Fds fds;
    CacheFiles cache = files(fds);
    auto& list = variant < 2 ? cache.modelCache : cache.dataCache;
    if (variant % 2 == 0) {
      list.push_back({fds.open(tmpPath_, O_RDWR)});
    } else {
      list.clear();
    }
    auto result = load(cache);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << result.error().message;
  }
  expectLoadsCorrectly();  // the right files still load
}

TEST_P(CompilationCachingTest, SaveToCacheInvalidNumFd) {
  // Each handle in turn with 0 or 2 descriptors at save: nothing saved, loading fails.
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    Fds fds;
    CacheFiles cache = files(fds);
    CacheHandle& handle = variant < 2 ? cache.modelCache[0] : cache.dataCache[0];
    if (variant % 2 == 0) {
      handle.push_back(fds.open(tmpPath_, O_RDWR));
    } else {
      handle.clear();
    }
    save(cache);
    EXPECT_EQ(std::filesystem::file_size(modelPath_), 0u);
    EXPECT_EQ(std::filesystem::file_size(dataPath_), 0u);
    expectInvalidOrFailure(load(cache));
    expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  }
}

TEST_P(CompilationCachingTest, PrepareModelFromCacheInvalidNumFd) {
  saveDefault();
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE(variant);
    Fds fds;
    CacheFiles cache = files(fds);
    CacheHandle& handle = variant < 2 ? cache.modelCache[0] : cache.dataCache[0];
    if (variant % 2 == 0) {
      handle.push_back(fds.open(tmpPath_, O_RDWR));
    } else {
      handle.clear();
    }
    auto result = load(cache);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << result.error().message;
  }
  expectLoadsCorrectly();
}

TEST_P(CompilationCachingTest, SaveToCacheInvalidAccessMode) {
  // Each file in turn read-only at save: nothing is saved at all.
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which);
    Fds fds;
    CacheFiles cache = files(fds, which == 0 ? O_RDONLY : O_RDWR, which == 1 ? O_RDONLY : O_RDWR);
    save(cache);
    EXPECT_EQ(std::filesystem::file_size(modelPath_), 0u);
    EXPECT_EQ(std::filesystem::file_size(dataPath_), 0u);
    expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  }
}

TEST_P(CompilationCachingTest, PrepareModelFromCacheInvalidAccessMode) {
  saveDefault();
  for (int which = 0; which < 2; ++which) {
    SCOPED_TRACE(which);
    Fds fds;
    CacheFiles cache = files(fds, which == 0 ? O_WRONLY : O_RDWR, which == 1 ? O_WRONLY : O_RDWR);
    auto result = load(cache);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE) << result.error().message;
  }
  expectLoadsCorrectly();
}

TEST_P(CompilationCachingTest, ReadOnlyFilesLoad) {
  saveDefault();
  Fds fds;
  auto prepared = load(files(fds, O_RDONLY, O_RDONLY));
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(run(**prepared, type_), expected_);
}

TEST_P(CompilationCachingTest, CorruptedModelCacheOneBitFlipped) {
  saveDefault();
  const std::vector<uint8_t> good = readAll(modelPath_);
  ASSERT_FALSE(good.empty());
  for (uint32_t seed = 0; seed < 10; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::vector<uint8_t> bad = good;
    const size_t bit = rng() % (bad.size() * 8);
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    writeAll(modelPath_, bad);
    expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  }
  writeAll(modelPath_, good);
  expectLoadsCorrectly();
}

TEST_P(CompilationCachingTest, CorruptedModelCacheAppendedBytes) {
  saveDefault();
  const std::vector<uint8_t> good = readAll(modelPath_);
  std::mt19937 rng(3);
  for (size_t extra = 1; extra <= 256; ++extra) {
    std::vector<uint8_t> bad = good;
    for (size_t i = 0; i < extra; ++i) bad.push_back(static_cast<uint8_t>(rng()));
    writeAll(modelPath_, bad);
    auto result = loadDefault();
    ASSERT_FALSE(result) << extra;
    ASSERT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE) << extra;
  }
}

TEST_P(CompilationCachingTest, CorruptedModelCacheTruncated) {
  saveDefault();
  const std::vector<uint8_t> good = readAll(modelPath_);
  for (size_t keep : {size_t{0}, size_t{1}, size_t{8}, good.size() / 2, good.size() - 1}) {
    writeAll(modelPath_, std::vector<uint8_t>(good.begin(), good.begin() + keep));
    SCOPED_TRACE(keep);
    expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  }
}

TEST_P(CompilationCachingTest, OversizedDataCacheIsRejectedBeforeAnythingIsAllocated) {
  saveDefault();
  // A sparse file past the 16 GiB limit: refused from its size, nothing is read or allocated.
  {
    Fds fds;
    const int fd = fds.open(dataPath_, O_RDWR);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(cache::kMaxDataCacheBytes + 1)), 0);
  }
  auto prepared = loadDefault();
  ASSERT_FALSE(prepared);
  EXPECT_EQ(prepared.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(prepared.error().message.find("data cache: file of"), std::string::npos)
      << prepared.error().message;
}

TEST_P(CompilationCachingTest, CorruptedDataCacheNeverCrashes) {
  saveDefault();
  const std::vector<uint8_t> good = readAll(dataPath_);
  ASSERT_FALSE(good.empty());
  size_t loaded = 0;
  for (uint32_t seed = 0; seed < 40; ++seed) {
    SCOPED_TRACE(seed);
    std::mt19937 rng(seed);
    std::vector<uint8_t> bad = good;
    // Half in the header, half anywhere.
    const size_t span = seed % 2 == 0 ? std::min<size_t>(bad.size(), 64) : bad.size();
    const size_t bit = rng() % (span * 8);
    bad[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    writeAll(dataPath_, bad);
    auto result = loadDefault();
    if (result) {
      ++loaded;
      ASSERT_NE(*result, nullptr);
      EXPECT_EQ(run(**result, type_).size(), expected_.size());  // runs; values may differ
    } else {
      EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE) << result.error().message;
    }
  }
  // Appended and truncated data caches fail.
  for (size_t extra = 1; extra <= 256; extra += 15) {
    std::vector<uint8_t> bad = good;
    bad.resize(bad.size() + extra, 0x5A);
    writeAll(dataPath_, bad);
    expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  }
  writeAll(dataPath_, std::vector<uint8_t>(good.begin(), good.end() - 1));
  expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  writeAll(dataPath_, {});
  expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  writeAll(dataPath_, good);
  expectLoadsCorrectly();
  RecordProperty("data_corruptions_loaded", static_cast<int>(loaded));
}

TEST_P(CompilationCachingTest, CorruptedDataCacheWeightsChangeOnlyValues) {
  // A damaged payload byte (inside the packed weights) loads: the data cache is not
  // authenticated, and that is safe because it only holds values.
  saveDefault();
  std::vector<uint8_t> bad = readAll(dataPath_);
  bad[bad.size() - 100] ^= 0x10;
  writeAll(dataPath_, bad);
  auto prepared = loadDefault();
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(run(**prepared, type_).size(), expected_.size());
}

TEST_P(CompilationCachingTest, AuthenticatedDataCacheRejectsTamperedPayload) {
  auto device = makeDevice({}, true, true);
  {
    Fds fds;
    save(files(fds), device.get());
  }
  expectLoadsCorrectly(device.get());
  const std::vector<uint8_t> good = readAll(dataPath_);
  std::vector<uint8_t> bad = good;
  bad[bad.size() - 100] ^= 0x10;
  writeAll(dataPath_, bad);
  expectLoadFails(ErrorStatus::GENERAL_FAILURE, device.get());
  // The default device does not check the payload, but still loads the untampered cache.
  writeAll(dataPath_, good);
  expectLoadsCorrectly();
}

TEST_P(CompilationCachingTest, AuthenticatedDataCacheNeedsADigest) {
  saveDefault();  // saved without a data digest
  auto device = makeDevice({}, true, true);
  expectLoadFails(ErrorStatus::GENERAL_FAILURE, device.get());
}

TEST_P(CompilationCachingTest, CorruptedToken) {
  saveDefault();
  for (size_t bit = 0; bit < 256; bit += 37) {
    Fds fds;
    CacheToken token = tokenFor(1);
    token[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    auto result = load(files(fds, O_RDWR, O_RDWR, token));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
  }
  expectLoadsCorrectly();
}

TEST_P(CompilationCachingTest, ValidCacheOfAnotherModelUnderThisToken) {
  saveDefault();
  // Model 2 saved under token 2 into other files: a perfectly valid cache.
  const Model other = buildModel(type_, 2);
  const auto otherModel = dir_.path() / "model_other";
  const auto otherData = dir_.path() / "data_other";
  {
    Fds fds;
    CacheFiles cache;
    cache.modelCache = {{fds.open(otherModel, O_RDWR)}};
    cache.dataCache = {{fds.open(otherData, O_RDWR)}};
    cache.token = tokenFor(2);
    save(cache, nullptr, &other);
  }
  // Its files put where token 1's cache lives: only the token -> hash check can tell.
  writeAll(modelPath_, readAll(otherModel));
  writeAll(dataPath_, readAll(otherData));
  expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  // Only the data cache swapped: also rejected (it names the model cache it belongs to).
  {
    Fds fds;
    save(files(fds));
  }
  writeAll(dataPath_, readAll(otherData));
  expectLoadFails(ErrorStatus::GENERAL_FAILURE);
}

// Another process (here another open file description) holds the token map's lock while
// this driver saves: the save waits for it on a timer, not on the application's cache lane,
// so the application's other cache work is answered meanwhile; once the lock is free the save
// completes and loads.
TEST_P(CompilationCachingTest, ASaveWaitingForTheTokenMapLeavesTheLaneFree) {
  const std::filesystem::path lockPath = stateDir_ / cache::TokenMap::kLockName;
  const int held = ::open(lockPath.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(held, 0) << lockPath;
  ASSERT_EQ(::flock(held, LOCK_EX), 0);
  Fds saveFds;
  const CacheFiles saving = files(saveFds);
  std::thread saver([&] { save(saving); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the save is waiting now

  // A load of a token never saved, on the same application's lane.
  Fds otherFds;
  const auto start = std::chrono::steady_clock::now();
  auto other = load(files(otherFds, O_RDWR, O_RDWR, tokenFor(2)));
  const auto answeredAfter = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().status, ErrorStatus::GENERAL_FAILURE);
  // Before, the lane slept until the lock was free (1.5 s below); now it answers at once.
  EXPECT_LT(answeredAfter, std::chrono::milliseconds(1000));

  std::this_thread::sleep_for(std::chrono::milliseconds(1500) - answeredAfter);
  ::flock(held, LOCK_UN);
  ::close(held);
  saver.join();
  expectLoadsCorrectly();
}

// IDevice.hal 1.2: a driver that cannot cache reports (0, 0), and a client that passes files
// anyway still gets its prepared model (nothing saved) and GENERAL_FAILURE from the cache.
TEST_P(CompilationCachingTest, NoStateDirectoryDisablesCaching) {
  auto device = makeDevice({}, false);
  EXPECT_EQ(device->getNumberOfCacheFilesNeeded().modelCache, 0u);
  EXPECT_EQ(device->getNumberOfCacheFilesNeeded().dataCache, 0u);
  const CompilationCaching caching = device->getCompilationCaching();
  EXPECT_FALSE(caching.available);
  EXPECT_NE(caching.reason.find("no state directory"), std::string::npos) << caching.reason;
  EXPECT_TRUE(device_->getCompilationCaching().available);
  EXPECT_TRUE(device_->getCompilationCaching().reason.empty());
  {
    Fds fds;
    save(files(fds), device.get());  // prepares fine, saves nothing
  }
  EXPECT_EQ(std::filesystem::file_size(modelPath_), 0u);
  auto result = loadDefault(device.get());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
  EXPECT_NE(result.error().message.find("state directory"), std::string::npos);
  // Also with the (0, 0) handles the driver asked for: caching is off, not an argument error.
  CacheFiles none;
  none.token = tokenFor(1);
  auto empty = load(none, device.get());
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().status, ErrorStatus::GENERAL_FAILURE) << empty.error().message;
  // And a cache saved by a driver that had a state directory does not load without one.
  saveDefault();
  expectLoadsCorrectly();
  auto other = loadDefault(device.get());
  ASSERT_FALSE(other);
  EXPECT_EQ(other.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST_P(CompilationCachingTest, CachingTurnedOffReportsNoFiles) {
  DeviceOptions options;
  options.stateDirectory = stateDir_;
  options.compilationCaching = false;
  options.kernelThreads = 1;
  auto device = createDevice(options);
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().modelCache, 0u);
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().dataCache, 0u);
  EXPECT_FALSE((*device)->getCompilationCaching().available);
  EXPECT_NE((*device)->getCompilationCaching().reason.find("turned off"), std::string::npos);
  {
    Fds fds;
    save(files(fds), device->get());  // prepares fine, saves nothing
  }
  EXPECT_EQ(std::filesystem::file_size(modelPath_), 0u);
  auto result = loadDefault(device->get());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
}

// A state directory the driver cannot write (it could never record a token) is no cache.
// Root writes everywhere, so as root this runs in `nnhal info` as another user instead
// (tests/tools/nnhal_run_cache_test.cpp).
TEST_P(CompilationCachingTest, UnwritableStateDirectoryReportsNoFiles) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes in any directory";
  std::filesystem::create_directories(stateDir_);
  std::filesystem::permissions(
      stateDir_, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  auto device = makeDevice();
  std::filesystem::permissions(stateDir_, std::filesystem::perms::owner_all);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->getNumberOfCacheFilesNeeded().modelCache, 0u);
  EXPECT_EQ(device->getNumberOfCacheFilesNeeded().dataCache, 0u);
  EXPECT_NE(device->getCompilationCaching().reason.find("not writable"), std::string::npos)
      << device->getCompilationCaching().reason;
}

TEST_P(CompilationCachingTest, UnusableStateDirectoryDisablesCaching) {
  writeAll(dir_.path() / "not_a_directory", {1});
  DeviceOptions options;
  options.stateDirectory = dir_.path() / "not_a_directory";
  auto device = createDevice(options);
  ASSERT_TRUE(device) << device.error().message;  // the driver still works, without caching
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().modelCache, 0u);
  EXPECT_EQ((*device)->getNumberOfCacheFilesNeeded().dataCache, 0u);
  EXPECT_NE((*device)->getCompilationCaching().reason.find("not_a_directory"), std::string::npos)
      << (*device)->getCompilationCaching().reason;
  {
    Fds fds;
    save(files(fds), device->get());
  }
  EXPECT_EQ(std::filesystem::file_size(modelPath_), 0u);
  auto result = loadDefault(device->get());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST_P(CompilationCachingTest, CacheSurvivesDriverRestart) {
  saveDefault();
  device_.reset();
  auto restarted = makeDevice();
  expectLoadsCorrectly(restarted.get());
}

TEST_P(CompilationCachingTest, DriverVersionChangeInvalidatesCaches) {
  auto v1 = makeDevice("nnhal-test-1");
  {
    Fds fds;
    save(files(fds), v1.get());
  }
  expectLoadsCorrectly(v1.get());
  v1.reset();
  device_.reset();
  auto v2 = makeDevice("nnhal-test-2");
  EXPECT_EQ(v2->getVersionString(), "nnhal-test-2");
  expectLoadFails(ErrorStatus::GENERAL_FAILURE, v2.get());
  // Going back does not resurrect the old mapping either: it was reset.
  v2.reset();
  auto v1again = makeDevice("nnhal-test-1");
  expectLoadFails(ErrorStatus::GENERAL_FAILURE, v1again.get());
}

TEST_P(CompilationCachingTest, PreparedModelRewritesItsCacheLater) {
  std::shared_ptr<PreparedModel> prepared;
  {
    Fds fds;
    PrepareOptions options;
    options.cache = files(fds);
    auto result = device_->prepareModel(model_, options);
    ASSERT_TRUE(result) << result.error().message;
    prepared = *result;
  }  // the client's descriptors are closed; the driver kept its own
  auto* impl = dynamic_cast<actors::PreparedModelImpl*>(prepared.get());
  ASSERT_NE(impl, nullptr);
  EXPECT_TRUE(impl->hasCacheFiles());
  writeAll(modelPath_, {1, 2, 3});
  writeAll(dataPath_, {4, 5, 6});
  expectLoadFails(ErrorStatus::GENERAL_FAILURE);
  ASSERT_TRUE(impl->updateCache());
  expectLoadsCorrectly();

  // A model loaded from the cache can write it back as well.
  auto loaded = loadDefault();
  ASSERT_TRUE(loaded);
  writeAll(modelPath_, {});
  auto* loadedImpl = dynamic_cast<actors::PreparedModelImpl*>(loaded->get());
  ASSERT_NE(loadedImpl, nullptr);
  ASSERT_TRUE(loadedImpl->updateCache());
  expectLoadsCorrectly();
}

TEST_P(CompilationCachingTest, UpdateCacheFailsOnReadOnlyDescriptors) {
  saveDefault();
  Fds fds;
  auto loaded = load(files(fds, O_RDONLY, O_RDONLY));
  ASSERT_TRUE(loaded);
  auto* impl = dynamic_cast<actors::PreparedModelImpl*>(loaded->get());
  ASSERT_NE(impl, nullptr);
  auto updated = impl->updateCache();
  ASSERT_FALSE(updated);
  EXPECT_EQ(updated.error().status, ErrorStatus::GENERAL_FAILURE);
  expectLoadsCorrectly();  // the cache is untouched
}

TEST_P(CompilationCachingTest, UncachedPreparedModelHasNoCacheFiles) {
  auto prepared = device_->prepareModel(model_);
  ASSERT_TRUE(prepared);
  auto* impl = dynamic_cast<actors::PreparedModelImpl*>(prepared->get());
  ASSERT_NE(impl, nullptr);
  EXPECT_FALSE(impl->hasCacheFiles());
  EXPECT_FALSE(impl->updateCache());
}

TEST_P(CompilationCachingTest, SameFileForModelAndDataIsNotUsed) {
  Fds fds;
  CacheFiles cache;
  cache.modelCache = {{fds.open(modelPath_, O_RDWR)}};
  cache.dataCache = {{fds.open(modelPath_, O_RDWR)}};
  cache.token = tokenFor(1);
  save(cache);
  auto result = load(cache);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST_P(CompilationCachingTest, BadDescriptorsAtSaveOnlySkipSaving) {
  for (int bad : {-1, 1 << 20}) {
    Fds fds;
    CacheFiles cache = files(fds);
    cache.dataCache[0][0] = bad;
    save(cache);
    EXPECT_EQ(std::filesystem::file_size(modelPath_), 0u);
  }
  int pipeFds[2];
  ASSERT_EQ(::pipe(pipeFds), 0);
  Fds fds;
  CacheFiles cache = files(fds);
  cache.modelCache[0][0] = pipeFds[1];  // writable, but not a file
  save(cache);
  auto result = load(cache);
  EXPECT_FALSE(result);
  ::close(pipeFds[0]);
  ::close(pipeFds[1]);
}

TEST_P(CompilationCachingTest, BadDescriptorsAtLoadFail) {
  saveDefault();
  Fds fds;
  CacheFiles cache = files(fds);
  cache.modelCache[0][0] = 1 << 20;  // not an open descriptor
  auto result = load(cache);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST_P(CompilationCachingTest, MissedDeadlineFromCache) {
  saveDefault();
  Fds fds;
  auto result = device_->prepareModelFromCache(
      files(fds), std::chrono::steady_clock::now() - std::chrono::seconds(1));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
}

INSTANTIATE_TEST_SUITE_P(Types, CompilationCachingTest,
                         ::testing::Values(OperandType::TENSOR_FLOAT32,
                                           OperandType::TENSOR_QUANT8_ASYMM),
                         [](const auto& info) {
                           return info.param == OperandType::TENSOR_FLOAT32 ? "Float32" : "Quant8";
                         });

}  // namespace
}  // namespace nnhal::cachetest
