#include "cache/blob_cache.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cryptopp/crc.h>
#include <cstring>
#include <utility>

#include "cache/file_io.h"
#include "hal/serialization.h"

namespace nnhal::cache {

using hal::ByteReader;
using hal::ByteWriter;

namespace {

constexpr char kMagic[8] = {'N', 'N', 'H', 'A', 'L', 'B', 'L', 'B'};
constexpr uint32_t kFormatVersion = 1;
constexpr size_t kEntryOverhead = 12;  // two lengths and the CRC

uint32_t crc32c(uint32_t keyLength, uint32_t valueLength, std::span<const uint8_t> key,
                std::span<const uint8_t> value) {
  CryptoPP::CRC32C crc;
  crc.Update(reinterpret_cast<const uint8_t*>(&keyLength), sizeof(keyLength));
  crc.Update(reinterpret_cast<const uint8_t*>(&valueLength), sizeof(valueLength));
  crc.Update(key.data(), key.size());
  crc.Update(value.data(), value.size());
  uint32_t out = 0;
  crc.Final(reinterpret_cast<uint8_t*>(&out));
  return out;
}

std::string keyOf(std::span<const uint8_t> key) { return std::string(key.begin(), key.end()); }

}  // namespace

BlobCache::BlobCache(std::filesystem::path file, BlobCacheLimits limits)
    : file_(std::move(file)), limits_(limits) {}

Result<std::unique_ptr<BlobCache>> BlobCache::open(std::filesystem::path file,
                                                   BlobCacheLimits limits) {
  if (limits.maxKeyBytes == 0 || limits.maxValueBytes == 0 || limits.maxKeyBytes > UINT32_MAX ||
      limits.maxValueBytes > UINT32_MAX ||
      limits.maxKeyBytes + limits.maxValueBytes > limits.maxTotalBytes) {
    return invalidArgument(
        "BlobCacheLimits: a key and a value of the maximal sizes must fit in "
        "maxTotalBytes, and each maximum must be in [1, 2^32)");
  }
  std::unique_ptr<BlobCache> cache(new BlobCache(std::move(file), limits));
  cache->load();
  return cache;
}

BlobCache::~BlobCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirty_) return;
  if (auto flushed = flushLocked(); !flushed) {
    spdlog::warn("blob cache {}: {}", file_.string(), flushed.error().message);
  }
}

void BlobCache::load() {
  const size_t limit = limits_.maxTotalBytes * 2 + (size_t{1} << 20);
  auto bytes = readFile(file_, limit);
  if (!bytes) {
    report_.missing = bytes.error().message.starts_with("missing");
    report_.damaged = !report_.missing;
    return;
  }
  ByteReader in(*bytes);
  const std::span<const uint8_t> magic = in.getBytes(sizeof(kMagic));
  const uint32_t version = in.getU32();
  const uint32_t count = in.getU32();
  if (!in.ok() || std::memcmp(magic.data(), kMagic, sizeof(kMagic)) != 0 ||
      version != kFormatVersion) {
    report_.damaged = true;
    return;
  }
  // Entries are stored least recently used first; inserting each as the most recent keeps
  // the order.
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t keyLength = in.getU32();
    const uint32_t valueLength = in.getU32();
    if (!in.ok() || keyLength == 0 || keyLength > in.remaining() ||
        valueLength > in.remaining() - keyLength ||
        in.remaining() - keyLength - valueLength < sizeof(uint32_t)) {
      report_.damaged = true;  // lengths are damaged: nothing after this can be trusted
      report_.dropped += count - i;
      return;
    }
    const std::span<const uint8_t> key = in.getBytes(keyLength);
    const std::span<const uint8_t> value = in.getBytes(valueLength);
    const uint32_t stored = in.getU32();
    if (stored != crc32c(keyLength, valueLength, key, value)) {
      report_.damaged = true;
      ++report_.dropped;
      continue;
    }
    if (keyLength > limits_.maxKeyBytes || valueLength > limits_.maxValueBytes) {
      ++report_.dropped;
      continue;
    }
    insertLocked(keyOf(key), std::vector<uint8_t>(value.begin(), value.end()));
  }
  if (!in.atEnd()) report_.damaged = true;
  report_.loaded = lru_.size();
  report_.dropped += evictions_;
  evictions_ = 0;
  dirty_ = report_.damaged || report_.dropped > 0;
}

void BlobCache::evictUntilFits(size_t incoming) {
  while (!lru_.empty() && total_ + incoming > limits_.maxTotalBytes) {
    Entry& victim = lru_.back();
    total_ -= victim.key.size() + victim.value.size();
    index_.erase(victim.key);
    lru_.pop_back();  // frees the entry's memory now
    ++evictions_;
  }
}

void BlobCache::insertLocked(std::string key, std::vector<uint8_t> value) {
  if (auto it = index_.find(key); it != index_.end()) {
    total_ -= it->second->key.size() + it->second->value.size();
    lru_.erase(it->second);
    index_.erase(it);
  }
  const size_t bytes = key.size() + value.size();
  evictUntilFits(bytes);
  lru_.push_front(Entry{std::move(key), std::move(value)});
  index_.emplace(lru_.front().key, lru_.begin());
  total_ += bytes;
}

Result<void> BlobCache::set(std::span<const uint8_t> key, std::span<const uint8_t> value) {
  if (key.empty()) return invalidArgument("blob cache: the key is empty");
  if (key.size() > limits_.maxKeyBytes) {
    return invalidArgument("blob cache: key of " + std::to_string(key.size()) +
                           " bytes exceeds maxKeyBytes " + std::to_string(limits_.maxKeyBytes));
  }
  if (value.size() > limits_.maxValueBytes) {
    return invalidArgument("blob cache: value of " + std::to_string(value.size()) +
                           " bytes exceeds maxValueBytes " + std::to_string(limits_.maxValueBytes));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  insertLocked(keyOf(key), std::vector<uint8_t>(value.begin(), value.end()));
  dirty_ = true;
  return {};
}

std::optional<std::vector<uint8_t>> BlobCache::get(std::span<const uint8_t> key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(keyOf(key));
  if (it == index_.end()) return std::nullopt;
  lru_.splice(lru_.begin(), lru_, it->second);  // most recently used now
  dirty_ = true;                                // recency is persisted too
  return it->second->value;
}

bool BlobCache::erase(std::span<const uint8_t> key) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = index_.find(keyOf(key));
  if (it == index_.end()) return false;
  total_ -= it->second->key.size() + it->second->value.size();
  lru_.erase(it->second);
  index_.erase(it);
  dirty_ = true;
  return true;
}

Result<void> BlobCache::flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!dirty_) return {};
  return flushLocked();
}

Result<void> BlobCache::flushLocked() {
  ByteWriter out;
  out.reserve(16 + total_ + lru_.size() * kEntryOverhead);
  out.putBytes({reinterpret_cast<const uint8_t*>(kMagic), sizeof(kMagic)});
  out.putU32(kFormatVersion);
  out.putU32(static_cast<uint32_t>(lru_.size()));
  for (auto it = lru_.rbegin(); it != lru_.rend(); ++it) {
    const auto keyLength = static_cast<uint32_t>(it->key.size());
    const auto valueLength = static_cast<uint32_t>(it->value.size());
    const std::span<const uint8_t> key(reinterpret_cast<const uint8_t*>(it->key.data()),
                                       it->key.size());
    out.putU32(keyLength);
    out.putU32(valueLength);
    out.putBytes(key);
    out.putBytes(it->value);
    out.putU32(crc32c(keyLength, valueLength, key, it->value));
  }
  std::filesystem::path temporary = file_;
  temporary += ".tmp." + std::to_string(::getpid()) + "." + std::to_string(flushes_++);
  auto written = replaceFileAtomically(file_, temporary, out.buffer());
  if (!written) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    return written;
  }
  dirty_ = false;
  return {};
}

size_t BlobCache::totalBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return total_;
}

size_t BlobCache::entryCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return lru_.size();
}

size_t BlobCache::evictions() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return evictions_;
}

}  // namespace nnhal::cache
