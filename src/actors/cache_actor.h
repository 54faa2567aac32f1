// actors/cache_actor.h — all compilation-cache file I/O and token-map updates.
//
// Messages, each for an owner (the application that prepares, hal/application.h), handled one
// at a time on that application's lane (hal/lanes.h): a thread of its own, so a slow or
// large cache file of one application never delays another's preparations. flock() locks keep
// other processes and other drivers out; a message whose files are locked elsewhere does not
// hold its lane: it is tried again later (a timer on the runtime's pool posts it back, with
// backoff, up to 5 s, then GENERAL_FAILURE), so a client that keeps its own cache file locked
// delays only the preparations that use that file. Token-map entries belong to their owner
// (cache/token_map.h): an application finds and replaces only its own.
//   Save{token, files, image, reply, runAs}: records (owner, token) -> SHA-256(model cache),
//     with the preparation's priority and preference, in the token map (durably) and only
//     then rewrites both files (exclusive locks, truncate, write from byte 0). Replies once:
//     success, or why nothing (or not everything) was saved.
//   Load{token, files, reply, owner}: looks the token up first: a token the owner never
//     saved fails at once, before a byte is read. Then takes shared locks on both files,
//     reads the model cache whole into memory (from byte 0), hashes the bytes read (never
//     the file again: no time-of-check to time-of-use gap) and compares with the digest
//     recorded. Replies once: GENERAL_FAILURE (unknown token, digest mismatch, unreadable or
//     oversized file), or the authenticated model cache bytes with a FillingBuffer for the
//     data cache, *before* reading the data cache: the handler then fills that buffer chunk
//     by chunk (still under the locks) while the compilation the reply started uses what has
//     arrived. The buffer always ends finished or failed (a file that shrank or grew).
// Parsing and compiling the loaded bytes, and encoding a compiled model, happen on the
// runtime's pool (CompilationActor), so compilations of different models stay parallel.
// Replies run on the lane: they must only post further work, never block.
//
// Thread safety: post() and stop() may be called from any thread.
#pragma once

#include <functional>

#include <memory>
#include <span>
#include <vector>
#include "cache/cache_format.h"

#include "actors/drain_gate.h"
#include "actors/runtime.h"
#include "cache/buffer_recycler.h"
#include "cache/digest.h"
#include "cache/file_io.h"
#include "cache/filling_buffer.h"
#include "cache/token_map.h"
#include "hal/lanes.h"
#include "nnhal/status.h"

namespace nnhal::actors {

/// The cache files a preparation uses, duplicated (the driver's own descriptors).
struct CacheFds {
  cache::UniqueFd model;
  cache::UniqueFd data;
};

/// The bytes of both cache files of one prepared model.
struct CacheImage {
  std::span<const uint8_t> model;     ///< bytes of the model cache file
  cache::Digest modelDigest{};        ///< SHA-256 of `model`
  std::span<const uint8_t> data;      ///< bytes of the data cache file
  std::shared_ptr<const void> owner;  ///< keeps `model` and `data` alive
};

class CacheActor {
 public:
  using SaveReply = std::move_only_function<void(Result<void>)>;
  struct Save {
    cache::Token token{};
    std::shared_ptr<const CacheFds> files;
    CacheImage image;
    SaveReply reply;
    /// The preparation's application (the entry's owner), priority and preference, recorded
    /// with the token.
    RunAs runAs{};
  };

  /// Authenticated model cache, and the data cache as it is being read.
  struct Loaded {
    cache::AlignedBuffer model;
    cache::Digest modelDigest{};
    std::shared_ptr<const cache::FillingBuffer> data;  ///< filled after the reply
    /// As recorded by the Save: the prepared model runs with its priority and preference.
    RunAs runAs{};
  };
  using LoadReply = std::move_only_function<void(Result<Loaded>)>;
  struct Load {
    cache::Token token{};
    std::shared_ptr<const CacheFds> files;
    LoadReply reply;
    hal::ApplicationId owner = hal::kEmbeddedApplication;
  };

  /// `tokens` null: caching disabled (every message replies GENERAL_FAILURE).
  /// `maxDataCacheBytes`: a larger data cache fails the load before anything is read.
  CacheActor(std::shared_ptr<Runtime> runtime, std::unique_ptr<cache::TokenMap> tokens,
             size_t maxDataCacheBytes = cache::kMaxDataCacheBytes);
  ~CacheActor();

  bool enabled() const { return tokens_ != nullptr; }
  void post(Save message);
  void post(Load message);
  /// Refuses new messages (DEVICE_UNAVAILABLE) and waits for the queued ones.
  void stop();

 private:
  /// Both files locked, or why not; `busy` when another process holds a lock.
  struct Locks {
    cache::FileLock model, data;
  };
  Result<Locks> tryLock(const CacheFds& files, bool exclusive, bool& busy) const;
  /// Runs `attempt` on `owner`'s lane until it stops asking for a retry (it returns true
  /// when the files or the token map were locked by another process); between tries a
  /// timer waits with backoff, off the lane, so the lane serves the owner's other work.
  /// After kLockTimeout it calls `timedOut` (on the lane).
  void withRetry(hal::ApplicationId owner, std::function<bool()> attempt,
                 std::function<void()> timedOut);
  /// Records the token, then writes the files. `busy` (nothing written) when another
  /// process holds the token map's lock: the caller tries again on its timer.
  Result<void> save(const Save& message, Locks& locks, bool& busy);
  /// Replies, then reads the data cache.
  void load(Load& message, Locks& locks);

  std::shared_ptr<Runtime> runtime_;
  std::unique_ptr<cache::TokenMap> tokens_;
  /// Data cache buffers of released prepared models, reused by later loads (warm pages).
  std::shared_ptr<cache::BufferRecycler> buffers_ = cache::BufferRecycler::create();
  size_t maxDataCacheBytes_;
  DrainGate gate_;
  hal::Lanes lanes_;  ///< last: its threads finish before the rest goes
};

}  // namespace nnhal::actors
