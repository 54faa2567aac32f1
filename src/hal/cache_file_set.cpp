// Cache file sets (hal/cache_file_set.h).
#include "hal/cache_file_set.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace nnhal::hal {
namespace {

off_t sizeOf(const common::UniqueFd& fd) {
  struct stat st {};
  return ::fstat(fd.get(), &st) == 0 ? st.st_size : 0;
}

}  // namespace

bool CacheFileSet::anyWritten() const {
  for (const common::UniqueFd& fd : fds) {
    if (sizeOf(fd) > 0) return true;
  }
  return false;
}

bool CacheFileSet::saved() const {
  if (fds.empty()) return false;
  const size_t end = modelFiles > 0 ? modelFiles : fds.size();
  for (size_t i = 0; i < end; ++i) {
    if (sizeOf(fds[i]) == 0) return false;
  }
  return true;
}

Result<CacheFileSet> openCacheFileSet(const std::string& base, NumberOfCacheFiles counts,
                                      const CacheToken& token) {
  CacheFileSet set;
  auto add = [&](const char* kind, uint32_t count,
                 std::vector<CacheHandle>& handles) -> Result<void> {
    for (uint32_t i = 0; i < count; ++i) {
      const std::string path = base + kind + (i == 0 ? std::string() : std::to_string(i));
      common::UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
      if (!fd.valid() && errno == ENOENT) {
        fd =
            common::UniqueFd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
        set.created = true;
      }
      if (!fd.valid()) {
        return fail(ErrorStatus::GENERAL_FAILURE,
                    "cannot open the cache file " + path + ": " + std::strerror(errno));
      }
      handles.push_back({fd.get()});
      set.paths.push_back(path);
      set.fds.push_back(std::move(fd));
    }
    return {};
  };
  NNHAL_TRY(add(".model", counts.modelCache, set.files.modelCache));
  set.modelFiles = set.fds.size();
  NNHAL_TRY(add(".data", counts.dataCache, set.files.dataCache));
  set.files.token = token;
  return set;
}

}  // namespace nnhal::hal
