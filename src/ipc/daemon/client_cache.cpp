// nnhald's client cache (ipc/daemon/client_cache.h).
#include "ipc/daemon/client_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "hal/model_token.h"

namespace nnhal::ipc {
namespace {

namespace fs = std::filesystem;

/// Marks `path` used now (its modification time orders the least recently used).
void touch(const fs::path& path) { ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0); }

}  // namespace

fs::path ClientCache::folderOf(hal::ApplicationId application) const {
  return root_ / std::to_string(application);
}

Result<ClientCacheEntry> ClientCache::open(hal::ApplicationId application,
                                           const CacheToken& token) const {
  const fs::path folder = folderOf(application);
  std::error_code error;
  fs::create_directories(folder, error);
  if (error) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot create " + folder.string() + ": " + error.message());
  }
  ::chmod(root_.c_str(), 0700);
  ::chmod(folder.c_str(), 0700);
  const std::string base = (folder / hal::tokenHex(token)).string();
  ClientCacheEntry entry;
  bool created = false;
  auto add = [&](const char* kind, uint32_t count,
                 std::vector<CacheHandle>& handles) -> Result<void> {
    for (uint32_t i = 0; i < count; ++i) {
      const std::string path = base + kind + (i == 0 ? std::string() : std::to_string(i));
      hal::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
      if (!fd.valid() && errno == ENOENT) {
        fd = hal::UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
        created = true;
      }
      if (!fd.valid()) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "cannot open the cache file " + path + ": " + std::strerror(errno));
      }
      struct stat st {};
      if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) entry.written = true;
      touch(path);
      handles.push_back({fd.get()});
      entry.fds.push_back(std::move(fd));
    }
    return {};
  };
  NNHAL_TRY(add(".model", counts_.modelCache, entry.files.modelCache));
  NNHAL_TRY(add(".data", counts_.dataCache, entry.files.dataCache));
  entry.files.token = token;
  if (created) evictBeyondLimit(folder);
  return entry;
}

void ClientCache::evictBeyondLimit(const fs::path& folder) const {
  // One model is its ".model" file (or ".data" when the driver asks for no model file).
  const std::string key = counts_.modelCache > 0 ? ".model" : ".data";
  std::vector<std::pair<fs::file_time_type, fs::path>> models;
  std::error_code error;
  for (const auto& file : fs::directory_iterator(folder, error)) {
    if (file.path().extension() != key) continue;
    models.emplace_back(fs::last_write_time(file.path(), error), file.path());
  }
  if (models.size() <= maxEntries_) return;
  std::sort(models.begin(), models.end());
  for (size_t i = 0; i + maxEntries_ < models.size(); ++i) {
    const fs::path stem = models[i].second.parent_path() / models[i].second.stem();
    for (const auto& file : fs::directory_iterator(folder, error)) {
      if (file.path().stem() == stem.filename()) fs::remove(file.path(), error);
    }
  }
}

}  // namespace nnhal::ipc
