// nnhal/cache_directory.h — compilation caching for a host program, done the way the NNAPI
// runtime does it for an application: a token per model and options, a set of cache files
// per token in one folder, loading first and compiling (and saving) when there is nothing
// usable to load. It works with any Device: the embedded driver (createDevice) and nnhald
// (connect), which both ask for one model and one data cache file when they can cache.
//
//   auto cache = nnhal::CacheDirectory::open("/var/cache/myapp/nnhal", device);
//   auto prepared = cache->prepare(std::move(model), modelFileBytes);
//   // prepared->outcome: kLoaded on the second start
//
// The files: FOLDER/<64 hex digits of the token>.model and .data (then .model1, .data1, ...
// when the device asks for more files), created with mode 0600, and a .lock file per token
// that serializes the processes preparing the same model. The folder is created with mode
// 0700. Damaged, truncated or foreign files are never an error: the driver refuses to load
// them (IDevice.hal 1.2: it checks them), and the model is compiled and saved again.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "nnhal/device.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal {

/// What CacheDirectory::prepare did.
enum class CacheOutcome {
  kLoaded,            ///< prepared from the cache files (prepareModelFromCache)
  kCompiledAndSaved,  ///< compiled, and the driver wrote the cache files
  kCompiled,          ///< compiled; nothing is saved (CachedPreparation::why says why)
  kCachingOff,        ///< compiled without files: the device reports (0, 0) cache files
};

/// "loaded", "compiled and saved", "compiled", "caching off".
std::string_view toString(CacheOutcome outcome);

struct CachedPreparation {
  std::shared_ptr<PreparedModel> preparedModel;
  CacheOutcome outcome = CacheOutcome::kCompiled;
  /// Why the cache files were not loaded (empty when nothing was there to load, e.g. the
  /// first start), and for kCompiled or kCachingOff why nothing was saved.
  std::string why;
};

class CacheDirectory {
 public:
  /// Keeps the cache files of models prepared on `device` in `folder`, created (mode 0700)
  /// when missing. `lockWait`: how long prepare waits for another process preparing the
  /// same model before it compiles without the files. Errors: INVALID_ARGUMENT for a null
  /// device; GENERAL_FAILURE when the folder cannot be created, is not a folder or cannot
  /// be written.
  static Result<CacheDirectory> open(const std::filesystem::path& folder,
                                     std::shared_ptr<Device> device,
                                     std::chrono::milliseconds lockWait = std::chrono::seconds(30));

  /// The token of a model: SHA-256 over `modelBytes` (whatever identifies the model: its
  /// .tflite file, say), the device's name and version string, and the preference and
  /// priority of `options`, each length-prefixed; the NNAPI runtime's TokenHasher mixes in
  /// the same. Another model, device, driver build or option gives another token.
  CacheToken tokenFor(std::span<const uint8_t> modelBytes, const PrepareOptions& options) const;

  /// Prepares `model` on the device, identified by `modelBytes` (tokenFor): from the cache
  /// files when they load, else by compiling it with the files so that the driver saves it.
  /// `options.cache` is replaced. A device that asks for no cache files compiles without
  /// any (kCachingOff). Files that cannot be opened, or held by another process preparing
  /// the same model for longer than the lock wait (or past `options.deadline`), only mean
  /// compiling without saving (kCompiled, with the reason). Errors: those of the
  /// preparation itself (prepareModel's, MISSED_DEADLINE_* included), never the cache's.
  Result<CachedPreparation> prepare(Model model, std::span<const uint8_t> modelBytes,
                                    PrepareOptions options = {}) const;

  const std::filesystem::path& folder() const { return folder_; }

 private:
  CacheDirectory(std::filesystem::path folder, std::shared_ptr<Device> device,
                 std::chrono::milliseconds lockWait)
      : folder_(std::move(folder)), device_(std::move(device)), lockWait_(lockWait) {}

  std::filesystem::path folder_;
  std::shared_ptr<Device> device_;
  std::chrono::milliseconds lockWait_;
};

}  // namespace nnhal
