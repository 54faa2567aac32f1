#include "actors/cache_actor.h"

#include <spdlog/spdlog.h>

#include <sys/stat.h>

#include <algorithm>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <optional>

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

std::unexpected<Error> lockTimedOut() {
  return failure("timed out waiting for the lock of a cache file (another reader or writer)");
}

}  // namespace

CacheActor::CacheActor(std::shared_ptr<Runtime> runtime, std::unique_ptr<cache::TokenMap> tokens,
                       size_t maxDataCacheBytes)
    : runtime_(std::move(runtime)),
      tokens_(std::move(tokens)),
      maxDataCacheBytes_(maxDataCacheBytes) {}

CacheActor::~CacheActor() { stop(); }

void CacheActor::stop() { gate_.closeAndDrain(); }

Result<CacheActor::Locks> CacheActor::tryLock(const CacheFds& files, bool exclusive,
                                              bool& busy) const {
  busy = false;
  Locks locks;
  auto model = cache::FileLock::tryAcquire(files.model.get(), exclusive, busy);
  if (!model) return std::unexpected(model.error());
  auto data = cache::FileLock::tryAcquire(files.data.get(), exclusive, busy);
  if (!data) return std::unexpected(data.error());
  locks.model = std::move(*model);
  locks.data = std::move(*data);
  return locks;
}

void CacheActor::withRetry(hal::ApplicationId owner, std::function<bool()> attempt,
                           std::function<void()> timedOut) {
  struct Retry : std::enable_shared_from_this<Retry> {
    Retry(CacheActor& actor, hal::ApplicationId owner, std::function<bool()> a,
          std::function<void()> t)
        : actor(actor),
          owner(owner),
          attempt(std::move(a)),
          timedOut(std::move(t)),
          deadline(std::chrono::steady_clock::now() + kLockTimeout) {}
    /// On the lane.
    void run() {
      // The timer lives only while it waits: `attempt` may end the work (leave the gate),
      // after which the runtime whose io service the timer uses may be destroyed at once.
      timer.reset();
      if (!attempt()) return;
      if (std::chrono::steady_clock::now() >= deadline) {
        timedOut();
        return;
      }
      timer.emplace(actor.runtime_->executor());
      timer->expires_after(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(20000));
      timer->async_wait([self = shared_from_this()](boost::system::error_code) mutable {
        // The lane job takes the only reference: the Retry (and the reply it holds) is never
        // released on a runtime thread.
        hal::Lanes& lanes = self->actor.lanes_;
        const hal::ApplicationId owner = self->owner;
        lanes.post(owner, [self = std::move(self)] { self->run(); });
      });
    }
    CacheActor& actor;
    hal::ApplicationId owner;
    std::optional<boost::asio::steady_timer> timer;
    std::function<bool()> attempt;
    std::function<void()> timedOut;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::microseconds pause{100};
  };
  auto retry = std::make_shared<Retry>(*this, owner, std::move(attempt), std::move(timedOut));
  lanes_.post(owner, [retry] { retry->run(); });
}

void CacheActor::post(Save message) {
  if (!gate_.enter()) {
    message.reply(fail(ErrorStatus::DEVICE_UNAVAILABLE, "the driver is shutting down"));
    return;
  }
  auto m = std::make_shared<Save>(std::move(message));
  withRetry(
      m->runAs.application,
      [this, m] {
        bool busy = false;
        Result<void> outcome;
        try {
          auto locks = tryLock(*m->files, true, busy);
          if (!locks && busy) return true;
          outcome = locks ? save(*m, *locks, busy) : std::unexpected(locks.error());
          if (busy) return true;  // the token map's lock, held by another process
        } catch (const std::exception& e) {
          outcome = failure(std::string("saving the compilation cache failed: ") + e.what());
        }
        m->reply(std::move(outcome));
        gate_.leave();
        return false;
      },
      [this, m] {
        m->reply(lockTimedOut());
        gate_.leave();
      });
}

void CacheActor::post(Load message) {
  if (!gate_.enter()) {
    message.reply(fail(ErrorStatus::DEVICE_UNAVAILABLE, "the driver is shutting down"));
    return;
  }
  auto m = std::make_shared<Load>(std::move(message));
  withRetry(
      m->owner,
      [this, m] {
        // A token this application never saved fails before any file is locked or read.
        if (!enabled() || !tokens_->find(m->token, m->owner)) {
          m->reply(failure("the cache files are not a compilation saved under this token"));
          gate_.leave();
          return false;
        }
        bool busy = false;
        auto locks = tryLock(*m->files, false, busy);
        if (!locks && busy) return true;
        if (!locks) {
          m->reply(std::unexpected(locks.error()));
        } else {
          load(*m, *locks);
        }
        gate_.leave();
        return false;
      },
      [this, m] {
        m->reply(lockTimedOut());
        gate_.leave();
      });
}

Result<void> CacheActor::save(const Save& m, Locks& /*locks: held while writing*/, bool& busy) {
  const ScopedTraceSpan span(runtime_->trace(), "cache", "saveToCache");
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
  NNHAL_TRY(tokens_->tryPut(cache::TokenEntry{m.runAs.application, m.token, m.image.modelDigest,
                                              static_cast<uint8_t>(m.runAs.priority),
                                              static_cast<uint8_t>(m.runAs.preference)},
                            busy));
  NNHAL_TRY(cache::rewriteWhole(dataFd, m.image.data));
  NNHAL_TRY(cache::rewriteWhole(modelFd, m.image.model));
  return {};
}

void CacheActor::load(Load& m, Locks& /*locks: held while reading*/) {
  const ScopedTraceSpan span(runtime_->trace(), "cache", "loadFromCache");
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
  auto model = cache::readWhole(modelFd, cache::kMaxModelCacheBytes);
  if (!model) return reject("model cache: " + model.error().message);
  // From here on only the in-memory copy of the model cache is used.
  const cache::Digest digest = cache::sha256(model->bytes());
  // One answer whether the token is unknown or names another model's cache (and only the
  // owner's own tokens are looked at: nothing is learnt of another application's).
  const std::optional<cache::TokenEntry> expected = tokens_->findEntry(m.token, m.owner);
  if (!expected || !cache::digestsEqual(expected->digest, digest)) {
    return reject("the cache files are not a compilation saved under this token");
  }
  const auto size = cache::sizeWithin(dataFd, maxDataCacheBytes_);
  if (!size) return reject("data cache: " + size.error().message);
  auto bytes = buffers_->allocate(*size);
  if (!bytes) return m.reply(std::unexpected(bytes.error()));
  const std::shared_ptr<cache::FillingBuffer> data = cache::FillingBuffer::toFill(*bytes);

  // The compilation starts now and consumes the data cache as it arrives.
  // Codes written by this driver's own Save; anything else is treated as the default.
  RunAs runAs{m.owner, Priority::MEDIUM, ExecutionPreference::FAST_SINGLE_ANSWER};
  if (expected->priority <= static_cast<uint8_t>(Priority::HIGH)) {
    runAs.priority = static_cast<Priority>(expected->priority);
  }
  if (expected->preference <= static_cast<uint8_t>(ExecutionPreference::SUSTAINED_SPEED)) {
    runAs.preference = static_cast<ExecutionPreference>(expected->preference);
  }
  m.reply(Loaded{std::move(*model), digest, data, runAs});
  if (auto filled = cache::fillFromFile(dataFd, *data, kDataChunkBytes); !filled) {
    spdlog::debug("data cache read failed: {}", filled.error().message);
  }
}

}  // namespace nnhal::actors
