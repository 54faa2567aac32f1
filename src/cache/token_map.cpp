#include "cache/token_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <system_error>
#include <unordered_map>

#include "hal/serialization.h"

namespace nnhal::cache {

using hal::ByteReader;
using hal::ByteWriter;

namespace {

constexpr char kMagic[8] = {'N', 'N', 'H', 'A', 'L', 'T', 'K', 'M'};
constexpr uint32_t kFormatVersion = 2;  // 2: entries have an owner
constexpr uint32_t kMaxVersionLength = 1024;
constexpr size_t kEntryBytes = 74;
// The largest map file accepted (a generous multiple of the default entry limit).
constexpr size_t kMaxFileBytes = size_t{64} << 20;
constexpr auto kLockTimeout = std::chrono::seconds(10);

}  // namespace

std::vector<uint8_t> TokenMap::encode(const std::string& driverVersion,
                                      const std::vector<TokenEntry>& entries) {
  ByteWriter out;
  out.reserve(64 + driverVersion.size() + entries.size() * kEntryBytes);
  out.putBytes({reinterpret_cast<const uint8_t*>(kMagic), sizeof(kMagic)});
  out.putU32(kFormatVersion);
  out.putString(driverVersion);
  out.putU32(static_cast<uint32_t>(entries.size()));
  for (const TokenEntry& entry : entries) {
    out.putU64(entry.owner);
    out.putBytes(entry.token);
    out.putBytes(entry.digest);
    out.putU8(entry.priority);
    out.putU8(entry.preference);
  }
  const Digest checksum = sha256(out.buffer());
  out.putBytes(checksum);
  return out.take();
}

TokenMap::TokenMap(std::filesystem::path directory, std::string driverVersion, size_t maxEntries,
                   UniqueFd lockFd)
    : directory_(std::move(directory)),
      file_(directory_ / kFileName),
      driverVersion_(std::move(driverVersion)),
      maxEntries_(std::max<size_t>(maxEntries, 1)),
      lockFd_(std::move(lockFd)) {}

TokenMap::~TokenMap() = default;

Result<std::unique_ptr<TokenMap>> TokenMap::open(const std::filesystem::path& directory,
                                                 std::string driverVersion, size_t maxEntries) {
  std::error_code ec;
  const bool created = std::filesystem::create_directories(directory, ec);
  if (ec) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot create the state directory " + directory.string() + ": " + ec.message());
  }
  if (created) {
    // Whoever can write the token map can make the driver trust a cache: keep it private.
    std::filesystem::permissions(directory, std::filesystem::perms::owner_all,
                                 std::filesystem::perm_options::replace, ec);
  }
  // Saving renames a new map into the directory: one the driver cannot write is no cache
  // (checked now, so that the device reports no cache files instead of failing every save).
  if (::faccessat(AT_FDCWD, directory.c_str(), W_OK | X_OK, AT_EACCESS) != 0) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                errnoText("the state directory " + directory.string() + " is not writable"));
  }
  const std::filesystem::path lockPath = directory / kLockName;
  UniqueFd lockFd(::open(lockPath.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
  if (!lockFd.valid())
    return fail(ErrorStatus::GENERAL_FAILURE, errnoText("open " + lockPath.string()));
  std::unique_ptr<TokenMap> map(
      new TokenMap(directory, std::move(driverVersion), maxEntries, std::move(lockFd)));

  NNHAL_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(map->lockFd_.get(), true, kLockTimeout));
  std::error_code ignored;
  std::filesystem::remove(directory / kTemporaryName, ignored);  // left by a crash
  std::lock_guard<std::mutex> guard(map->mutex_);
  switch (map->reload()) {
    case LoadOutcome::kMissing:
      map->opened_ = Opened::kCreated;
      break;
    case LoadOutcome::kLoaded:
      map->opened_ = Opened::kLoaded;
      break;
    case LoadOutcome::kOtherVersion:
      map->opened_ = Opened::kResetVersion;
      NNHAL_TRY(map->persist());
      break;
    case LoadOutcome::kCorrupt:
      map->opened_ = Opened::kResetCorrupt;
      NNHAL_TRY(map->persist());
      break;
  }
  return map;
}

std::optional<TokenMap::FileStamp> TokenMap::stamp() const {
  struct stat st {};
  if (::stat(file_.c_str(), &st) != 0) return std::nullopt;
  FileStamp s;
  s.inode = st.st_ino;
  s.size = st.st_size;
  s.mtimeNs = int64_t{st.st_mtim.tv_sec} * 1'000'000'000 + st.st_mtim.tv_nsec;
  s.ctimeNs = int64_t{st.st_ctim.tv_sec} * 1'000'000'000 + st.st_ctim.tv_nsec;
  return s;
}

TokenMap::LoadOutcome TokenMap::reload() {
  entries_.clear();
  stamp_ = stamp();
  auto bytes = readFile(file_, kMaxFileBytes);
  if (!bytes) {
    if (!stamp_) return LoadOutcome::kMissing;
    return LoadOutcome::kCorrupt;  // exists but unreadable or oversized
  }
  const std::vector<uint8_t>& data = *bytes;
  if (data.size() < sizeof(Digest)) return LoadOutcome::kCorrupt;
  const std::span<const uint8_t> body(data.data(), data.size() - sizeof(Digest));
  Digest stored{};
  std::memcpy(stored.data(), data.data() + body.size(), sizeof(Digest));
  if (!digestsEqual(sha256(body), stored)) return LoadOutcome::kCorrupt;

  ByteReader in(body);
  const std::span<const uint8_t> magic = in.getBytes(sizeof(kMagic));
  if (!in.ok() || std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0) {
    return LoadOutcome::kCorrupt;
  }
  if (in.getU32() != kFormatVersion) return LoadOutcome::kCorrupt;
  const std::string version = in.getString(kMaxVersionLength);
  if (!in.ok()) return LoadOutcome::kCorrupt;
  if (version != driverVersion_) return LoadOutcome::kOtherVersion;
  const uint32_t count = in.readCount(UINT32_MAX, kEntryBytes);
  std::vector<TokenEntry> entries(count);
  for (TokenEntry& entry : entries) {
    entry.owner = in.getU64();
    const std::span<const uint8_t> t = in.getBytes(entry.token.size());
    const std::span<const uint8_t> d = in.getBytes(entry.digest.size());
    if (!in.ok()) return LoadOutcome::kCorrupt;
    std::memcpy(entry.token.data(), t.data(), entry.token.size());
    std::memcpy(entry.digest.data(), d.data(), entry.digest.size());
    entry.priority = in.getU8();
    entry.preference = in.getU8();
    if (!in.ok()) return LoadOutcome::kCorrupt;
  }
  if (!in.ok() || !in.atEnd()) return LoadOutcome::kCorrupt;
  if (entries.size() > maxEntries_) {
    entries.erase(entries.begin(), entries.end() - static_cast<ptrdiff_t>(maxEntries_));
  }
  entries_ = std::move(entries);
  return LoadOutcome::kLoaded;
}

void TokenMap::reloadIfChanged() {
  const std::optional<FileStamp> now = stamp();
  if (now == stamp_) return;
  reload();
}

Result<void> TokenMap::persist() {
  const std::vector<uint8_t> bytes = encode(driverVersion_, entries_);
  NNHAL_TRY(replaceFileAtomically(file_, directory_ / kTemporaryName, bytes));
  stamp_ = stamp();
  return {};
}

Result<void> TokenMap::update(TokenOwner owner, const Token& token,
                              const std::optional<TokenEntry>& entry) {
  std::lock_guard<std::mutex> guard(mutex_);
  NNHAL_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(lockFd_.get(), true, kLockTimeout));
  return updateLocked(owner, token, entry);
}

Result<void> TokenMap::tryPut(const TokenEntry& entry, bool& busy) {
  std::lock_guard<std::mutex> guard(mutex_);
  NNHAL_ASSIGN_OR_RETURN(FileLock lock, FileLock::tryAcquire(lockFd_.get(), true, busy));
  return updateLocked(entry.owner, entry.token, entry);
}

Result<void> TokenMap::updateLocked(TokenOwner owner, const Token& token,
                                    const std::optional<TokenEntry>& entry) {
  reloadIfChanged();
  std::erase_if(entries_, [&](const TokenEntry& entry) {
    return entry.owner == owner && entry.token == token;
  });
  if (entry) {
    entries_.push_back(*entry);
    while (entries_.size() > maxEntries_) evictOneLocked(owner);
  }
  auto written = persist();
  if (!written) {
    stamp_.reset();  // unknown state on disk: re-read next time
    return written;
  }
  return {};
}

void TokenMap::evictOneLocked(TokenOwner inserting) {
  // The owner holding the most entries (the inserting one on a tie) loses its oldest.
  std::unordered_map<TokenOwner, size_t> held;
  for (const TokenEntry& entry : entries_) ++held[entry.owner];
  TokenOwner heaviest = inserting;
  for (const auto& [owner, count] : held) {
    if (count > held[heaviest]) heaviest = owner;
  }
  auto oldest = std::find_if(entries_.begin(), entries_.end(),
                             [&](const TokenEntry& entry) { return entry.owner == heaviest; });
  entries_.erase(oldest);
}

Result<void> TokenMap::put(const Token& token, const Digest& digest, TokenOwner owner) {
  return put(TokenEntry{owner, token, digest});
}

Result<void> TokenMap::put(const TokenEntry& entry) {
  return update(entry.owner, entry.token, entry);
}

Result<void> TokenMap::erase(const Token& token, TokenOwner owner) {
  return update(owner, token, std::nullopt);
}

std::optional<Digest> TokenMap::find(const Token& token, TokenOwner owner) {
  const std::optional<TokenEntry> entry = findEntry(token, owner);
  if (!entry) return std::nullopt;
  return entry->digest;
}

std::optional<TokenEntry> TokenMap::findEntry(const Token& token, TokenOwner owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  reloadIfChanged();
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->owner == owner && it->token == token) return *it;
  }
  return std::nullopt;
}

std::vector<TokenEntry> TokenMap::entries() {
  std::lock_guard<std::mutex> guard(mutex_);
  reloadIfChanged();
  return entries_;
}

size_t TokenMap::size() {
  std::lock_guard<std::mutex> guard(mutex_);
  reloadIfChanged();
  return entries_.size();
}

}  // namespace nnhal::cache
