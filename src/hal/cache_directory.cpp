// CacheDirectory (nnhal/cache_directory.h): tokens, file names, the per-token lock, and the
// load-else-compile order of the NNAPI runtime's compilation caching.
#include "nnhal/cache_directory.h"

#include <cryptopp/sha.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "common/unique_fd.h"
#include "hal/cache_file_set.h"
#include "hal/model_token.h"

namespace nnhal {
namespace {

using Clock = std::chrono::steady_clock;

std::string errnoText() { return std::strerror(errno); }

/// The cache files of one token, open, and the lock that makes them this process's.
struct OpenFiles {
  common::UniqueFd lock;
  hal::CacheFileSet set;
};

/// Takes the token's lock (flock on FOLDER/<hex>.lock), waiting until `until`.
Result<common::UniqueFd> lockToken(const std::filesystem::path& path, Clock::time_point until) {
  common::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
  if (!fd.valid()) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot open the lock file " + path.string() + ": " + errnoText());
  }
  while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "cannot lock " + path.string() + ": " + errnoText());
    }
    if (Clock::now() >= until) {
      return fail(ErrorStatus::GENERAL_FAILURE,
                  "the cache files are held by another process preparing the same model (" +
                      path.string() + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return fd;
}

Result<OpenFiles> openFiles(const std::filesystem::path& folder, const CacheToken& token,
                            NumberOfCacheFiles counts, Clock::time_point until) {
  const std::string base = (folder / hal::tokenHex(token)).string();
  OpenFiles open;
  NNHAL_ASSIGN_OR_RETURN(open.lock, lockToken(base + ".lock", until));
  NNHAL_ASSIGN_OR_RETURN(open.set, hal::openCacheFileSet(base, counts, token));
  return open;
}

}  // namespace

Result<CacheDirectory> CacheDirectory::open(const std::filesystem::path& folder,
                                            std::shared_ptr<Device> device,
                                            std::chrono::milliseconds lockWait) {
  if (device == nullptr) return invalidArgument("CacheDirectory: no device");
  std::error_code error;
  const bool created = std::filesystem::create_directories(folder, error);
  if (error || !std::filesystem::is_directory(folder, error)) {
    return fail(ErrorStatus::GENERAL_FAILURE, "cache folder " + folder.string() +
                                                  ": cannot create it or it is not a folder" +
                                                  (error ? ": " + error.message() : std::string()));
  }
  if (created) ::chmod(folder.c_str(), 0700);
  if (::access(folder.c_str(), W_OK | X_OK) != 0) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cache folder " + folder.string() + ": cannot write in it: " + errnoText());
  }
  return CacheDirectory(folder, std::move(device), lockWait);
}

CacheToken CacheDirectory::tokenFor(std::span<const uint8_t> modelBytes,
                                    const PrepareOptions& options) const {
  CryptoPP::SHA256 hash;
  auto field = [&](const void* bytes, uint64_t length) {
    hash.Update(reinterpret_cast<const CryptoPP::byte*>(&length), sizeof(length));
    hash.Update(static_cast<const CryptoPP::byte*>(bytes), length);
  };
  field(modelBytes.data(), modelBytes.size());
  const std::string name = device_->getName();
  const std::string version = device_->getVersionString();
  field(name.data(), name.size());
  field(version.data(), version.size());
  const auto preference = static_cast<int32_t>(options.preference);
  const auto priority = static_cast<int32_t>(options.priority);
  field(&preference, sizeof(preference));
  field(&priority, sizeof(priority));
  CacheToken token{};
  static_assert(sizeof(token) == CryptoPP::SHA256::DIGESTSIZE);
  hash.Final(token.data());
  return token;
}

Result<CachedPreparation> CacheDirectory::prepare(Model model, std::span<const uint8_t> modelBytes,
                                                  PrepareOptions options) const {
  CachedPreparation result;
  options.cache.reset();
  const NumberOfCacheFiles counts = device_->getNumberOfCacheFilesNeeded();
  auto compile = [&](CacheOutcome outcome, std::string why) -> Result<CachedPreparation> {
    NNHAL_ASSIGN_OR_RETURN(result.preparedModel, device_->prepareModel(std::move(model), options));
    result.outcome = outcome;
    result.why = std::move(why);
    return std::move(result);
  };
  if (counts.modelCache == 0 && counts.dataCache == 0) {
    return compile(CacheOutcome::kCachingOff, device_->getCompilationCaching().reason);
  }
  Clock::time_point until = Clock::now() + lockWait_;
  if (options.deadline) until = std::min(until, *options.deadline);
  auto opened = openFiles(folder_, tokenFor(modelBytes, options), counts, until);
  if (!opened) return compile(CacheOutcome::kCompiled, opened.error().message);
  if (opened->set.anyWritten()) {
    auto loaded = device_->prepareModelFromCache(opened->set.files, options.deadline);
    if (loaded) {
      result.preparedModel = std::move(*loaded);
      result.outcome = CacheOutcome::kLoaded;
      return result;
    }
    result.why = "not loaded: " + loaded.error().message;
    // Nothing stale stays behind should the driver save nothing this time.
    for (const common::UniqueFd& fd : opened->set.fds) {
      if (::ftruncate(fd.get(), 0) != 0) break;
    }
  }
  options.cache = opened->set.files;
  NNHAL_ASSIGN_OR_RETURN(result.preparedModel, device_->prepareModel(std::move(model), options));
  if (opened->set.saved()) {
    result.outcome = CacheOutcome::kCompiledAndSaved;
  } else {
    result.outcome = CacheOutcome::kCompiled;
    if (!result.why.empty()) result.why += "; ";
    result.why += "the driver saved nothing";
  }
  return result;
}

}  // namespace nnhal
