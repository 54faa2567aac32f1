// The VTS CompilationCachingTests (1.2/1.3) as a client sees them, against four devices: the
// embedded driver with and without a state directory, and nnhald with and without
// --cache-dir. Like the VTS, the fixture asks the device how many cache files it needs and
// creates that many; a device that says (0, 0) cannot cache, and then every load must answer
// GENERAL_FAILURE with no model (IDevice.hal 1.2), while preparations given files anyway
// still succeed. The TOCTOU races and the driver-internal cases (versions, restarts) are in
// tests/cache, against the embedded driver.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cache/cache_test_util.h"
#include "vts_targets.h"

namespace nnhal::testing {
namespace {

using cachetest::buildModel;
using cachetest::Fds;
using cachetest::readAll;
using cachetest::TempDir;
using cachetest::writeAll;

enum class CachingTarget { kEmbedded, kEmbeddedWithoutState, kRemote, kRemoteWithoutCacheDir };

const char* cachingTargetName(CachingTarget target) {
  switch (target) {
    case CachingTarget::kEmbedded:
      return "Embedded";
    case CachingTarget::kEmbeddedWithoutState:
      return "EmbeddedWithoutStateDirectory";
    case CachingTarget::kRemote:
      return "Remote";
    case CachingTarget::kRemoteWithoutCacheDir:
      return "RemoteWithoutCacheDir";
  }
  return "?";
}

/// Whether `target` was set up to cache (a state directory, or nnhald's --cache-dir).
bool targetCaches(CachingTarget target) {
  return target == CachingTarget::kEmbedded || target == CachingTarget::kRemote;
}

/// The device of `target`, created once per test binary.
std::shared_ptr<Device> cachingDevice(CachingTarget target) {
  switch (target) {
    case CachingTarget::kEmbedded: {
      static TempDir state;
      static const std::shared_ptr<Device> device = [] {
        DeviceOptions options;
        options.stateDirectory = state.path() / "state";
        options.kernelThreads = 1;
        auto created = createDevice(options);
        return created ? *created : nullptr;
      }();
      EXPECT_NE(device, nullptr) << "createDevice with a state directory failed";
      return device;
    }
    case CachingTarget::kEmbeddedWithoutState:
      return deviceFor(Target::kEmbedded);  // no state directory
    case CachingTarget::kRemote: {
      static TempDir state;
      static ipc::testing::Daemon daemon({"--cache-dir", (state.path() / "cache").string()});
      static const std::shared_ptr<Device> device = [] {
        if (!daemon.running()) return std::shared_ptr<Device>();
        auto connected = connect(daemon.socket());
        return connected ? *connected : nullptr;
      }();
      EXPECT_TRUE(daemon.running()) << "nnhald --cache-dir did not start";
      EXPECT_NE(device, nullptr) << "connect to nnhald --cache-dir failed";
      return device;
    }
    case CachingTarget::kRemoteWithoutCacheDir:
      return deviceFor(Target::kRemote);  // nnhald without --cache-dir
  }
  return nullptr;
}

using CachingParam = std::tuple<CachingTarget, OperandType>;

std::string cachingParamName(const ::testing::TestParamInfo<CachingParam>& info) {
  const bool quant = std::get<1>(info.param) == OperandType::TENSOR_QUANT8_ASYMM;
  return std::string(cachingTargetName(std::get<0>(info.param))) +
         (quant ? "_QUANT8_ASYMM" : "_FLOAT32");
}

/// How a test opens one cache file.
enum class Access { kReadWrite, kReadOnly, kWriteOnly };

int openFlags(Access access) {
  switch (access) {
    case Access::kReadOnly:
      return O_RDONLY;
    case Access::kWriteOnly:
      return O_WRONLY;
    case Access::kReadWrite:
      break;
  }
  return O_RDWR;
}

class VtsCompilationCaching : public ::testing::TestWithParam<CachingParam> {
 protected:
  void SetUp() override {
    target_ = std::get<0>(GetParam());
    type_ = std::get<1>(GetParam());
    device_ = cachingDevice(target_);
    ASSERT_NE(device_, nullptr);
    counts_ = device_->getNumberOfCacheFilesNeeded();
    ASSERT_LE(counts_.modelCache, kMaxNumberOfCacheFiles);
    ASSERT_LE(counts_.dataCache, kMaxNumberOfCacheFiles);
    cachingSupported_ = counts_.modelCache > 0 || counts_.dataCache > 0;
    for (uint32_t i = 0; i < counts_.modelCache; ++i) {
      modelPaths_.push_back(dir_.path() / ("model" + std::to_string(i)));
    }
    for (uint32_t i = 0; i < counts_.dataCache; ++i) {
      dataPaths_.push_back(dir_.path() / ("data" + std::to_string(i)));
    }
    extraPath_ = dir_.path() / "extra";
    emptyAll();  // the VTS creates every file before the first save
    model_ = buildModel(type_, 1);
    auto reference = device_->prepareModel(model_);
    ASSERT_TRUE(reference) << reference.error().message;
    expected_ = cachetest::run(**reference, type_);
    ASSERT_FALSE(expected_.empty());
  }

  /// One handle per file of `paths`, all opened with `access` except file `odd` (when not
  /// negative), opened with `oddAccess`.
  std::vector<CacheHandle> handles(Fds& fds, const std::vector<std::filesystem::path>& paths,
                                   Access access = Access::kReadWrite, int odd = -1,
                                   Access oddAccess = Access::kReadWrite) {
    std::vector<CacheHandle> list;
    for (size_t i = 0; i < paths.size(); ++i) {
      const Access use = static_cast<int>(i) == odd ? oddAccess : access;
      list.push_back({fds.open(paths[i], openFlags(use))});
    }
    return list;
  }

  CacheFiles files(Fds& fds, CacheToken token = cachetest::tokenFor(1)) {
    CacheFiles cache;
    cache.modelCache = handles(fds, modelPaths_);
    cache.dataCache = handles(fds, dataPaths_);
    cache.token = token;
    return cache;
  }

  /// prepareModel with `cache`: whatever the files, the preparation succeeds and computes the
  /// model (VTS saveModelToCache).
  void save(const CacheFiles& cache, const Model* model = nullptr) {
    PrepareOptions options;
    options.cache = cache;
    auto prepared = device_->prepareModel(model ? *model : model_, options);
    ASSERT_TRUE(prepared) << prepared.error().message;
    if (model == nullptr) {
      EXPECT_EQ(cachetest::run(**prepared, type_), expected_);
    }
  }

  void saveDefault() {
    Fds fds;
    save(files(fds));
  }

  /// prepareModelFromCache: the launch status, when not NONE, is the callback's too; a model
  /// comes exactly with NONE.
  Result<std::shared_ptr<PreparedModel>> load(const CacheFiles& cache) {
    std::promise<Result<std::shared_ptr<PreparedModel>>> done;
    const ErrorStatus launched = device_->prepareModelFromCache(
        cache, {}, [&](auto result) { done.set_value(std::move(result)); });
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

  Result<std::shared_ptr<PreparedModel>> loadDefault(CacheToken token = cachetest::tokenFor(1)) {
    Fds fds;
    return load(files(fds, token));
  }

  /// The VTS check after a correct save: a caching device loads a model that computes what
  /// the uncached one does; a device at (0, 0) answers GENERAL_FAILURE.
  void expectLoadsOrCachingOff(const Result<std::shared_ptr<PreparedModel>>& loaded) {
    if (!cachingSupported_) {
      ASSERT_FALSE(loaded);
      EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE) << loaded.error().message;
      return;
    }
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(cachetest::run(**loaded, type_), expected_);
  }

  /// VTS accepts INVALID_ARGUMENT or GENERAL_FAILURE where handles are missing or extra.
  static void expectInvalidOrFailure(const Result<std::shared_ptr<PreparedModel>>& result) {
    ASSERT_FALSE(result);
    EXPECT_TRUE(result.error().status == ErrorStatus::INVALID_ARGUMENT ||
                result.error().status == ErrorStatus::GENERAL_FAILURE)
        << toString(result.error().status) << ": " << result.error().message;
  }

  /// Each way of giving one list a handle too many or too few.
  struct Mutation {
    bool model;  ///< the model cache list, else the data cache list
    bool extra;  ///< one handle added, else one removed
  };
  std::vector<Mutation> countMutations() const {
    std::vector<Mutation> all = {{true, true}, {false, true}};
    if (counts_.modelCache > 0) all.push_back({true, false});
    if (counts_.dataCache > 0) all.push_back({false, false});
    return all;
  }
  void mutateCount(CacheFiles& cache, Fds& fds, Mutation mutation) {
    auto& list = mutation.model ? cache.modelCache : cache.dataCache;
    if (mutation.extra) {
      list.push_back({fds.open(extraPath_, O_RDWR)});
    } else {
      list.pop_back();
    }
  }

  /// Creates or empties every cache file of the fixture.
  void emptyAll() {
    for (const auto& path : allPaths()) writeAll(path, {});
  }

  /// Every cache file of the fixture, model files first.
  std::vector<std::filesystem::path> allPaths() const {
    std::vector<std::filesystem::path> all = modelPaths_;
    all.insert(all.end(), dataPaths_.begin(), dataPaths_.end());
    return all;
  }

  /// Opens the fixture's files with file `index` (in allPaths() order) mutated by `mutate`.
  template <typename Mutate>
  CacheFiles filesWithOneHandle(Fds& fds, size_t index, Mutate mutate) {
    CacheFiles cache = files(fds);
    CacheHandle& handle = index < cache.modelCache.size()
                              ? cache.modelCache[index]
                              : cache.dataCache[index - cache.modelCache.size()];
    mutate(handle);
    return cache;
  }

  CachingTarget target_ = CachingTarget::kEmbedded;
  OperandType type_ = OperandType::TENSOR_FLOAT32;
  std::shared_ptr<Device> device_;
  NumberOfCacheFiles counts_{};
  bool cachingSupported_ = false;
  TempDir dir_;
  std::vector<std::filesystem::path> modelPaths_, dataPaths_;
  std::filesystem::path extraPath_;
  Model model_;
  std::vector<uint8_t> expected_;
};

// IDevice.hal 1.2 ties the counts to the ability: a device reports files exactly when it can
// cache, and says why it cannot.
TEST_P(VtsCompilationCaching, ReportsFilesExactlyWhenItCanCache) {
  EXPECT_EQ(cachingSupported_, targetCaches(target_));
  const CompilationCaching caching = device_->getCompilationCaching();
  EXPECT_EQ(caching.available, cachingSupported_);
  EXPECT_EQ(caching.reason.empty(), cachingSupported_) << caching.reason;
  if (!cachingSupported_) {
    EXPECT_NE(caching.reason.find("state directory"), std::string::npos) << caching.reason;
  }
}

TEST_P(VtsCompilationCaching, CacheSavingAndRetrieval) {
  saveDefault();
  for (const auto& path : allPaths()) EXPECT_GT(std::filesystem::file_size(path), 0u) << path;
  expectLoadsOrCachingOff(loadDefault());
}

TEST_P(VtsCompilationCaching, CacheSavingAndRetrievalNonZeroOffset) {
  const uint8_t junk[] = {0xAB, 0xCD, 0xEF, 0x01};
  {
    Fds fds;
    CacheFiles cache = files(fds);
    for (const auto& list : {cache.modelCache, cache.dataCache}) {
      for (const CacheHandle& handle : list) {
        ASSERT_EQ(::write(handle[0], junk, sizeof(junk)), static_cast<ssize_t>(sizeof(junk)));
      }
    }
    save(cache);
  }
  Fds fds;
  CacheFiles cache = files(fds);
  for (const auto& list : {cache.modelCache, cache.dataCache}) {
    for (const CacheHandle& handle : list) {
      uint8_t byte = 0;
      ASSERT_EQ(::read(handle[0], &byte, 1), 1);
    }
  }
  expectLoadsOrCachingOff(load(cache));
}

TEST_P(VtsCompilationCaching, SaveToCacheInvalidNumCache) {
  for (const Mutation mutation : countMutations()) {
    SCOPED_TRACE(::testing::Message()
                 << (mutation.model ? "model" : "data") << (mutation.extra ? " +1" : " -1"));
    emptyAll();
    {
      Fds fds;
      CacheFiles cache = files(fds);
      mutateCount(cache, fds, mutation);
      save(cache);
    }
    expectInvalidOrFailure(loadDefault());
  }
}

TEST_P(VtsCompilationCaching, PrepareModelFromCacheInvalidNumCache) {
  saveDefault();
  for (const Mutation mutation : countMutations()) {
    SCOPED_TRACE(::testing::Message()
                 << (mutation.model ? "model" : "data") << (mutation.extra ? " +1" : " -1"));
    Fds fds;
    CacheFiles cache = files(fds);
    mutateCount(cache, fds, mutation);
    expectInvalidOrFailure(load(cache));
  }
}

TEST_P(VtsCompilationCaching, SaveToCacheInvalidNumFd) {
  const auto paths = allPaths();
  for (size_t index = 0; index < paths.size(); ++index) {
    for (const bool twoFds : {true, false}) {
      SCOPED_TRACE(::testing::Message() << paths[index] << (twoFds ? " 2 fds" : " 0 fds"));
      emptyAll();
      {
        Fds fds;
        CacheFiles cache = filesWithOneHandle(fds, index, [&](CacheHandle& handle) {
          if (twoFds) {
            handle.push_back(fds.open(extraPath_, O_RDWR));
          } else {
            handle.clear();
          }
        });
        save(cache);
      }
      expectInvalidOrFailure(loadDefault());
    }
  }
}

TEST_P(VtsCompilationCaching, PrepareModelFromCacheInvalidNumFd) {
  saveDefault();
  const auto paths = allPaths();
  for (size_t index = 0; index < paths.size(); ++index) {
    for (const bool twoFds : {true, false}) {
      SCOPED_TRACE(::testing::Message() << paths[index] << (twoFds ? " 2 fds" : " 0 fds"));
      Fds fds;
      CacheFiles cache = filesWithOneHandle(fds, index, [&](CacheHandle& handle) {
        if (twoFds) {
          handle.push_back(fds.open(extraPath_, O_RDWR));
        } else {
          handle.clear();
        }
      });
      expectInvalidOrFailure(load(cache));
    }
  }
}

TEST_P(VtsCompilationCaching, SaveToCacheInvalidAccessMode) {
  const auto paths = allPaths();
  for (size_t index = 0; index < paths.size(); ++index) {
    SCOPED_TRACE(paths[index]);
    emptyAll();
    {
      Fds fds;
      CacheFiles cache = filesWithOneHandle(
          fds, index, [&](CacheHandle& handle) { handle = {fds.open(paths[index], O_RDONLY)}; });
      save(cache);
    }
    expectInvalidOrFailure(loadDefault());
  }
}

TEST_P(VtsCompilationCaching, PrepareModelFromCacheInvalidAccessMode) {
  saveDefault();
  const auto paths = allPaths();
  for (size_t index = 0; index < paths.size(); ++index) {
    SCOPED_TRACE(paths[index]);
    Fds fds;
    CacheFiles cache = filesWithOneHandle(
        fds, index, [&](CacheHandle& handle) { handle = {fds.open(paths[index], O_WRONLY)}; });
    auto loaded = load(cache);
    ASSERT_FALSE(loaded);
    EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE) << loaded.error().message;
  }
}

// With (0, 0) there are no files to open, and the load still fails as caching is off.
TEST_P(VtsCompilationCaching, LoadWithTheHandlesAskedForFailsWhenCachingIsOff) {
  if (cachingSupported_) GTEST_SKIP() << "the device caches";
  saveDefault();
  CacheFiles none;
  none.token = cachetest::tokenFor(1);
  auto loaded = load(none);
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE) << loaded.error().message;
}

// B's model cache replaced by A's (valid, but another model's) bytes: the token no longer
// matches what it was saved with, so the load fails.
TEST_P(VtsCompilationCaching, ReplaceSecuritySensitiveCache) {
  if (!cachingSupported_) GTEST_SKIP() << "the device cannot cache (0, 0)";
  const Model other = buildModel(type_, 2);
  {
    Fds fds;
    save(files(fds, cachetest::tokenFor(2)), &other);
  }
  std::vector<std::vector<uint8_t>> otherModelCache;
  for (const auto& path : modelPaths_) otherModelCache.push_back(readAll(path));
  saveDefault();  // token 1
  for (size_t i = 0; i < modelPaths_.size(); ++i) writeAll(modelPaths_[i], otherModelCache[i]);
  auto loaded = loadDefault();
  ASSERT_FALSE(loaded);
  EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE) << loaded.error().message;
}

// CompilationCachingSecurityTest, seeds 0..2 here (0..9 in the VTS; tests/cache takes more).
TEST_P(VtsCompilationCaching, CorruptedOrWrongLengthCacheIsRefusedOrHarmless) {
  if (!cachingSupported_) GTEST_SKIP() << "the device cannot cache (0, 0)";
  for (uint32_t seed = 0; seed < 3; ++seed) {
    std::mt19937 rng(seed);
    for (const auto& path : allPaths()) {
      const bool isModel =
          std::find(modelPaths_.begin(), modelPaths_.end(), path) != modelPaths_.end();
      for (const bool flip : {true, false}) {
        SCOPED_TRACE(::testing::Message()
                     << "seed " << seed << " " << path << (flip ? " bit flipped" : " appended"));
        saveDefault();
        std::vector<uint8_t> bytes = readAll(path);
        ASSERT_FALSE(bytes.empty());
        if (flip) {
          const size_t at = std::uniform_int_distribution<size_t>(0, bytes.size() - 1)(rng);
          bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        } else {
          const size_t extra = std::uniform_int_distribution<size_t>(1, 256)(rng);
          for (size_t i = 0; i < extra; ++i) bytes.push_back(static_cast<uint8_t>(rng()));
        }
        writeAll(path, bytes);
        auto loaded = loadDefault();
        if (isModel) {
          ASSERT_FALSE(loaded);
          EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE) << loaded.error().message;
        } else if (loaded) {
          // Damaged data (not authenticated by default) may load: it holds only values, so
          // the model runs, with values that may differ.
          EXPECT_EQ(cachetest::run(**loaded, type_).size(), expected_.size());
        } else {
          EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE) << loaded.error().message;
        }
      }
    }
  }
}

TEST_P(VtsCompilationCaching, WrongToken) {
  if (!cachingSupported_) GTEST_SKIP() << "the device cannot cache (0, 0)";
  saveDefault();
  for (uint32_t seed = 0; seed < 3; ++seed) {
    std::mt19937 rng(seed);
    CacheToken token = cachetest::tokenFor(1);
    const size_t bit = rng() % (token.size() * 8);
    token[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    auto loaded = loadDefault(token);
    ASSERT_FALSE(loaded) << "seed " << seed;
    EXPECT_EQ(loaded.error().status, ErrorStatus::GENERAL_FAILURE) << loaded.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Devices, VtsCompilationCaching,
    ::testing::Combine(
        ::testing::Values(CachingTarget::kEmbedded, CachingTarget::kEmbeddedWithoutState,
                          CachingTarget::kRemote, CachingTarget::kRemoteWithoutCacheDir),
        ::testing::Values(OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM)),
    cachingParamName);

}  // namespace
}  // namespace nnhal::testing
