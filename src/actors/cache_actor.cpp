#include "actors/cache_actor.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>

#include "cache/cache_format.h"

namespace nnhal::actors {
namespace {

constexpr auto kLockTimeout = std::chrono::seconds(5);
/// Data cache reads publish this much at a time to the compilation waiting for it.
constexpr size_t kDataChunkBytes = size_t{256} << 10;

std::unexpected<Error> failure(const std::string& message) {
  return fail(ErrorStatus::GENERAL_FAILURE, message);
}

/// True when both descriptors name the same file (one file cannot hold both caches).
bool sameFile(int a, int b) {
  struct stat sa {
  }, sb{};
  if (fstat(a, &sa) != 0 || fstat(b, &sb) != 0) return false;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace

CacheActor::CacheActor(std::shared_ptr<Runtime> runtime, std::unique_ptr<cache::TokenMap> tokens)
    : runtime_(std::move(runtime)), tokens_(std::move(tokens)), strand_(runtime_->makeStrand()) {}

CacheActor::~CacheActor() { stop(); }

void CacheActor::stop() { gate_.closeAndDrain(); }

void CacheActor::post(Save message) {
  if (!gate_.enter()) {
    message.reply(fail(ErrorStatus::DEVICE_UNAVAILABLE, "the driver is shutting down"));
    return;
  }
  boost::asio::post(strand_, [this, m = std::move(message)]() mutable {
    Result<void> outcome = save(m);
    m.reply(std::move(outcome));
    gate_.leave();
  });
}

void CacheActor::post(Load message) {
  if (!gate_.enter()) {
    message.reply(fail(ErrorStatus::DEVICE_UNAVAILABLE, "the driver is shutting down"));
    return;
  }
  boost::asio::post(strand_, [this, m = std::move(message)]() mutable {
    load(m);
    gate_.leave();
  });
}

Result<void> CacheActor::save(const Save& m) {
  if (!enabled()) return failure("compilation caching is disabled (no state directory)");
  const int modelFd = m.files->model.get(), dataFd = m.files->data.get();
  NNHAL_ASSIGN_OR_RETURN(const cache::FdAccess modelAccess, cache::accessOf(modelFd));
  NNHAL_ASSIGN_OR_RETURN(const cache::FdAccess dataAccess, cache::accessOf(dataFd));
  if (!modelAccess.writable || !dataAccess.writable) {
    return failure("a cache file descriptor is not writable");
  }
  if (sameFile(modelFd, dataFd)) return failure("the model and data cache are the same file");
  // The digest is durable before any byte of the files changes: a crash in between leaves a
  // mapping that rejects whatever the files then hold.
  NNHAL_TRY(tokens_->put(m.token, m.image.modelDigest));
  NNHAL_ASSIGN_OR_RETURN(cache::FileLock modelLock,
                         cache::FileLock::acquire(modelFd, true, kLockTimeout));
  NNHAL_ASSIGN_OR_RETURN(cache::FileLock dataLock,
                         cache::FileLock::acquire(dataFd, true, kLockTimeout));
  NNHAL_TRY(cache::rewriteWhole(dataFd, m.image.data));
  NNHAL_TRY(cache::rewriteWhole(modelFd, m.image.model));
  return {};
}

void CacheActor::load(Load& m) {
  const auto reject = [&m](const std::string& message) { m.reply(failure(message)); };
  if (!enabled()) return reject("compilation caching is disabled (no state directory)");
  const int modelFd = m.files->model.get(), dataFd = m.files->data.get();
  const auto modelAccess = cache::accessOf(modelFd);
  if (!modelAccess) return m.reply(std::unexpected(modelAccess.error()));
  const auto dataAccess = cache::accessOf(dataFd);
  if (!dataAccess) return m.reply(std::unexpected(dataAccess.error()));
  if (!modelAccess->readable) return reject("the model cache descriptor is not readable");
  if (!dataAccess->readable) return reject("the data cache descriptor is not readable");
  if (sameFile(modelFd, dataFd)) return reject("the model and data cache are the same file");

  auto modelLock = cache::FileLock::acquire(modelFd, false, kLockTimeout);
  if (!modelLock) return m.reply(std::unexpected(modelLock.error()));
  auto dataLock = cache::FileLock::acquire(dataFd, false, kLockTimeout);
  if (!dataLock) return m.reply(std::unexpected(dataLock.error()));
  auto model = cache::readWhole(modelFd, cache::kMaxModelCacheBytes);
  if (!model) return reject("model cache: " + model.error().message);
  // From here on only the in-memory copy of the model cache is used.
  const cache::Digest digest = cache::sha256(model->bytes());
  const std::optional<cache::Digest> expected = tokens_->find(m.token);
  if (!expected) return reject("no compilation cache was saved under this token");
  if (!cache::digestsEqual(*expected, digest)) {
    return reject("the model cache is not the one saved under this token");
  }
  const auto size = cache::sizeWithin(dataFd, cache::kMaxDataCacheBytes);
  if (!size) return reject("data cache: " + size.error().message);
  auto bytes = buffers_->allocate(*size);
  if (!bytes) return m.reply(std::unexpected(bytes.error()));
  const std::shared_ptr<cache::FillingBuffer> data = cache::FillingBuffer::toFill(*bytes);

  // The compilation starts now and consumes the data cache as it arrives.
  m.reply(Loaded{std::move(*model), digest, data});
  if (auto filled = cache::fillFromFile(dataFd, *data, kDataChunkBytes); !filled) {
    spdlog::debug("data cache read failed: {}", filled.error().message);
  }
}

}  // namespace nnhal::actors
