// ipc/daemon/client_cache.h — nnhald's compilation cache for clients that pass no cache
// files (nnhald --cache-dir): what a client that caches does itself (nnhal/cache_directory.h),
// done by the daemon, keyed by the model itself (hal/model_token.h).
//
// ROOT/<uid>/<token in hex>.model and .data, one folder per application (mode 0700, files
// 0600), at most `maxEntries` models per application: past it, the application's least
// recently used pairs are removed, never another application's. The driver's token map
// keys its entries by application too, so one application can neither load nor evict what
// another saved.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "common/unique_fd.h"
#include "hal/application.h"
#include "nnhal/device.h"
#include "nnhal/status.h"

namespace nnhal::ipc {

/// The cache files of one model of one application, open for reading and writing.
struct ClientCacheEntry {
  std::vector<common::UniqueFd> fds;
  CacheFiles files;
  /// The files hold something (a load is worth trying).
  bool written = false;
};

class ClientCache {
 public:
  /// `counts`: the files the driver asks for (getNumberOfCacheFilesNeeded, not (0, 0)).
  ClientCache(std::filesystem::path root, NumberOfCacheFiles counts, uint32_t maxEntries)
      : root_(std::move(root)), counts_(counts), maxEntries_(maxEntries) {}

  /// Opens (creating) the files of `token` for `application`, marks them used, and removes
  /// the application's least recently used models beyond the limit. Blocking file I/O on
  /// the daemon's own folder: call it on the application's lane. Errors: GENERAL_FAILURE
  /// naming the file.
  Result<ClientCacheEntry> open(hal::ApplicationId application, const CacheToken& token) const;

  /// The folder of `application`'s models.
  std::filesystem::path folderOf(hal::ApplicationId application) const;

 private:
  void evictBeyondLimit(const std::filesystem::path& folder) const;

  const std::filesystem::path root_;
  const NumberOfCacheFiles counts_;
  const uint32_t maxEntries_;
};

}  // namespace nnhal::ipc
