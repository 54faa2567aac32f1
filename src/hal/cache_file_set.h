// hal/cache_file_set.h — the cache files of one token in a folder, named and opened the same
// way for a host's CacheDirectory (nnhal/cache_directory.h) and nnhald's client cache
// (ipc/daemon/client_cache.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "common/unique_fd.h"
#include "nnhal/device.h"
#include "nnhal/status.h"

namespace nnhal::hal {

/// BASE.model, BASE.data, then BASE.model1, BASE.data1, ... as the device asks, open for
/// reading and writing (created with mode 0600, never through a symbolic link).
struct CacheFileSet {
  std::vector<common::UniqueFd> fds;         ///< model files first, then data files
  std::vector<std::filesystem::path> paths;  ///< in the order of `fds`
  size_t modelFiles = 0;                     ///< how many of them are model files
  CacheFiles files;                          ///< the handles to pass the driver, and the token
  bool created = false;                      ///< some file did not exist before

  /// Some file holds bytes (a load is worth trying).
  bool anyWritten() const;
  /// The driver saved: every model file holds bytes (every data file, when it asks for no
  /// model file).
  bool saved() const;
};

/// Opens (creating) the files of `token` at `base` (a path without extension), as many as
/// `counts` says. Errors: GENERAL_FAILURE naming the file that cannot be opened.
Result<CacheFileSet> openCacheFileSet(const std::string& base, NumberOfCacheFiles counts,
                                      const CacheToken& token);

}  // namespace nnhal::hal
