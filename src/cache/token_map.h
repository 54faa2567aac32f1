// cache/token_map.h — the driver's persistent {(owner, cache token) -> SHA-256 of the model
// cache}.
//
// This map is what makes compilation caches trustworthy: a model cache is used only if its
// bytes hash to the digest recorded for its token when the driver itself wrote it. Cache
// files live wherever the client keeps them and anyone may rewrite them; this file lives in
// the driver's own state directory.
//
// Entries belong to an owner (the application that saved them, hal/application.h): an owner
// finds and replaces only its own tokens, so one application learns nothing of another's
// tokens and cannot overwrite them. When the map is full, the owner holding the most entries
// loses its oldest one: an application saving more than the others evicts only its own
// entries, never those of one that holds fewer.
//
// File (docs/CACHE_FORMAT.md): `<directory>/cache_token_map.bin`, little-endian:
//   "NNHALTKM" | u32 format version (2) | u32 length + driver version | u32 count |
//   count x (u64 owner, 32-byte token, 32-byte digest, u8 priority, u8 preference), oldest
//   first | SHA-256 of everything before.
// Updates are crash-safe: under an exclusive flock() of `cache_token_map.lock` the map is
// re-read (other processes may have added tokens), changed, written to a temporary file,
// fsync()ed, renamed over the map and the directory fsync()ed. A crash at any point leaves
// the old or the new map, never a torn one. A map written by another driver version, or one
// that fails its checksum, is replaced by an empty map (every old cache then misses).
//
// Thread safety: all methods are thread-safe; several TokenMaps (threads, processes) may use
// one directory at once.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cache/digest.h"
#include "cache/file_io.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::cache {

/// A 32-byte compilation cache token (types.hal 1.2 CacheToken).
using Token = std::array<uint8_t, kByteSizeOfCacheToken>;

/// Who saved an entry (an application, hal/application.h); 0 for a single-owner map.
using TokenOwner = uint64_t;

struct TokenEntry {
  TokenOwner owner = 0;
  Token token{};
  Digest digest{};
  /// The PrepareOptions of the preparation that saved it (Priority, ExecutionPreference
  /// codes): a model prepared from the cache runs with them (prepareModelFromCache_1_3 has no
  /// priority of its own).
  uint8_t priority = 1;    ///< MEDIUM
  uint8_t preference = 1;  ///< FAST_SINGLE_ANSWER
};

class TokenMap {
 public:
  static constexpr const char* kFileName = "cache_token_map.bin";
  static constexpr const char* kLockName = "cache_token_map.lock";
  static constexpr const char* kTemporaryName = "cache_token_map.tmp";
  /// Most tokens remembered; the oldest are forgotten first (their caches then miss).
  static constexpr size_t kDefaultMaxEntries = 4096;

  /// How open() found the map file.
  enum class Opened : uint8_t {
    kCreated,       ///< there was none
    kLoaded,        ///< read and verified
    kResetVersion,  ///< written by another driver version: replaced by an empty map
    kResetCorrupt,  ///< failed to parse or verify: replaced by an empty map
  };

  /// Opens (creating `directory` if needed) the map for `driverVersion`.
  /// Errors: GENERAL_FAILURE when the directory or lock file cannot be created or used.
  static Result<std::unique_ptr<TokenMap>> open(const std::filesystem::path& directory,
                                                std::string driverVersion,
                                                size_t maxEntries = kDefaultMaxEntries);
  ~TokenMap();

  Opened opened() const { return opened_; }
  const std::string& driverVersion() const { return driverVersion_; }

  /// Records (owner, token) -> digest and makes it durable before returning.
  /// Errors: GENERAL_FAILURE when the map cannot be written (the caller must not write the
  /// cache files then).
  Result<void> put(const Token& token, const Digest& digest, TokenOwner owner = 0);
  /// put() of a whole entry (with the options of the preparation that saved it).
  Result<void> put(const TokenEntry& entry);
  /// put() without waiting for another process: when the map's lock is held elsewhere it
  /// changes nothing, sets `busy` and returns GENERAL_FAILURE, so that an actor can try
  /// again on a timer instead of sleeping on its strand. Errors otherwise: as put.
  Result<void> tryPut(const TokenEntry& entry, bool& busy);
  /// Forgets (owner, token) (durably). Errors: as put.
  Result<void> erase(const Token& token, TokenOwner owner = 0);
  /// The digest `owner` recorded for `token`, if any (re-reading the file when another
  /// process or TokenMap changed it).
  std::optional<Digest> find(const Token& token, TokenOwner owner = 0);
  /// The whole entry `owner` recorded for `token`, if any.
  std::optional<TokenEntry> findEntry(const Token& token, TokenOwner owner = 0);
  /// Number of entries, of every owner (after re-reading a changed file).
  size_t size();
  /// Every entry, oldest first (after re-reading a changed file).
  std::vector<TokenEntry> entries();

  /// The serialized form of `entries` (exposed for tests that damage files on purpose).
  static std::vector<uint8_t> encode(const std::string& driverVersion,
                                     const std::vector<TokenEntry>& entries);

 private:
  TokenMap(std::filesystem::path directory, std::string driverVersion, size_t maxEntries,
           UniqueFd lockFd);
  struct FileStamp {
    ino_t inode = 0;
    off_t size = -1;
    int64_t mtimeNs = 0;
    int64_t ctimeNs = 0;
    bool operator==(const FileStamp&) const = default;
  };
  enum class LoadOutcome : uint8_t { kMissing, kLoaded, kOtherVersion, kCorrupt };

  LoadOutcome reload();    // reads the file into entries_ (empty unless kLoaded)
  void reloadIfChanged();  // reload() when the file's stamp changed
  std::optional<FileStamp> stamp() const;
  Result<void> persist();  // writes entries_ (caller holds the flock)
  /// Replaces (owner, token) by `entry` (or removes it when `entry` is empty), waiting up to
  /// kLockTimeout for the flock.
  Result<void> update(TokenOwner owner, const Token& token, const std::optional<TokenEntry>& entry);
  /// update() once the flock is held (and mutex_).
  Result<void> updateLocked(TokenOwner owner, const Token& token,
                            const std::optional<TokenEntry>& entry);
  /// Drops the oldest entry of the owner holding the most (mutex_ held).
  void evictOneLocked(TokenOwner inserting);

  const std::filesystem::path directory_;
  const std::filesystem::path file_;
  const std::string driverVersion_;
  const size_t maxEntries_;
  UniqueFd lockFd_;
  Opened opened_ = Opened::kCreated;

  std::mutex mutex_;  // guards everything below
  std::vector<TokenEntry> entries_;
  std::optional<FileStamp> stamp_;
};

}  // namespace nnhal::cache
