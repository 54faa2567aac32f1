#include "cache/token_map.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <system_error>

#include "hal/serialization.h"

namespace nnhal::cache {

using hal::ByteReader;
using hal::ByteWriter;

namespace {

constexpr char kMagic[8] = {'N', 'N', 'H', 'A', 'L', 'T', 'K', 'M'};
constexpr uint32_t kFormatVersion = 1;
constexpr uint32_t kMaxVersionLength = 1024;
constexpr size_t kEntryBytes = 64;
// The largest map file accepted (a generous multiple of the default entry limit).
constexpr size_t kMaxFileBytes = size_t{64} << 20;
constexpr auto kLockTimeout = std::chrono::seconds(10);

}  // namespace

std::vector<uint8_t> TokenMap::encode(const std::string& driverVersion,
                                      const std::vector<std::pair<Token, Digest>>& entries) {
  ByteWriter out;
  out.reserve(64 + driverVersion.size() + entries.size() * kEntryBytes);
  out.putBytes({reinterpret_cast<const uint8_t*>(kMagic), sizeof(kMagic)});
  out.putU32(kFormatVersion);
  out.putString(driverVersion);
  out.putU32(static_cast<uint32_t>(entries.size()));
  for (const auto& [token, digest] : entries) {
    out.putBytes(token);
    out.putBytes(digest);
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
  std::vector<std::pair<Token, Digest>> entries(count);
  for (auto& [token, digest] : entries) {
    const std::span<const uint8_t> t = in.getBytes(token.size());
    const std::span<const uint8_t> d = in.getBytes(digest.size());
    if (!in.ok()) return LoadOutcome::kCorrupt;
    std::memcpy(token.data(), t.data(), token.size());
    std::memcpy(digest.data(), d.data(), digest.size());
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

Result<void> TokenMap::update(const Token& token, const std::optional<Digest>& digest) {
  std::lock_guard<std::mutex> guard(mutex_);
  NNHAL_ASSIGN_OR_RETURN(FileLock lock, FileLock::acquire(lockFd_.get(), true, kLockTimeout));
  reloadIfChanged();
  std::erase_if(entries_, [&](const auto& entry) { return entry.first == token; });
  if (digest) {
    entries_.emplace_back(token, *digest);
    if (entries_.size() > maxEntries_) {
      entries_.erase(entries_.begin(), entries_.end() - static_cast<ptrdiff_t>(maxEntries_));
    }
  }
  auto written = persist();
  if (!written) {
    stamp_.reset();  // unknown state on disk: re-read next time
    return written;
  }
  return {};
}

Result<void> TokenMap::put(const Token& token, const Digest& digest) {
  return update(token, digest);
}

Result<void> TokenMap::erase(const Token& token) { return update(token, std::nullopt); }

std::optional<Digest> TokenMap::find(const Token& token) {
  std::lock_guard<std::mutex> guard(mutex_);
  reloadIfChanged();
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->first == token) return it->second;
  }
  return std::nullopt;
}

std::vector<std::pair<Token, Digest>> TokenMap::entries() {
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
