// actors/cache_actor.h — all compilation-cache file I/O and token-map updates.
//
// Messages (handled one at a time on the actor's strand, so saves and loads of this driver
// never interleave; flock() locks keep other processes and other drivers out):
// A message whose files are locked by another process does not hold the strand: it retries
// on a timer (up to 5 s, then GENERAL_FAILURE) while the other messages go on, so a client
// that keeps its own cache file locked delays only its own preparations.
//   Save{token, files, image, reply}: records token -> SHA-256(model cache) in the token map
//     (durably) and only then rewrites both files (exclusive locks, truncate, write from
//     byte 0). Replies once: success, or why nothing (or not everything) was saved.
//   Load{token, files, reply}: takes shared locks on both files, reads the model cache whole
//     into memory (from byte 0), hashes the bytes read (never the file again: no
//     time-of-check to time-of-use gap) and compares with the digest recorded for the token.
//     Replies once: GENERAL_FAILURE (unknown token, digest mismatch, unreadable or oversized
//     file), or the authenticated model cache bytes with a FillingBuffer for the data cache,
//     *before* reading the data cache: the handler then fills that buffer chunk by chunk
//     (still under the locks) while the compilation the reply started uses what has
//     arrived. The buffer always ends finished or failed (a file that shrank or grew).
// Parsing and compiling the loaded bytes, and encoding a compiled model, happen on the
// runtime's pool (CompilationActor), so compilations of different models stay parallel.
// Replies run on the strand: they must only post further work, never block.
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
  };

  /// Authenticated model cache, and the data cache as it is being read.
  struct Loaded {
    cache::AlignedBuffer model;
    cache::Digest modelDigest{};
    std::shared_ptr<const cache::FillingBuffer> data;  ///< filled after the reply
  };
  using LoadReply = std::move_only_function<void(Result<Loaded>)>;
  struct Load {
    cache::Token token{};
    std::shared_ptr<const CacheFds> files;
    LoadReply reply;
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
  /// Runs `attempt` on the strand until it stops asking for a retry (it returns true when
  /// the files were busy), pausing with backoff; after kLockTimeout it calls `timedOut`.
  void withRetry(std::function<bool()> attempt, std::function<void()> timedOut);
  Result<void> save(const Save& message, Locks& locks);
  /// Replies, then reads the data cache.
  void load(Load& message, Locks& locks);

  std::shared_ptr<Runtime> runtime_;
  std::unique_ptr<cache::TokenMap> tokens_;
  /// Data cache buffers of released prepared models, reused by later loads (warm pages).
  std::shared_ptr<cache::BufferRecycler> buffers_ = cache::BufferRecycler::create();
  size_t maxDataCacheBytes_;
  Strand strand_;
  DrainGate gate_;
};

}  // namespace nnhal::actors
