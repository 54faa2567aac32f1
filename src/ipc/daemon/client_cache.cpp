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

#include "hal/cache_file_set.h"
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
  NNHAL_ASSIGN_OR_RETURN(
      hal::CacheFileSet set,
      hal::openCacheFileSet((folder / hal::tokenHex(token)).string(), counts_, token));
  for (const fs::path& path : set.paths) touch(path);
  ClientCacheEntry entry;
  entry.written = set.anyWritten();
  entry.files = std::move(set.files);
  entry.fds = std::move(set.fds);
  if (set.created) evictBeyondLimit(folder);
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
