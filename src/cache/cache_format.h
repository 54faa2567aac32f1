// cache/cache_format.h — the compilation cache files: what goes where, and the codec.
//
// One prepared model is saved as one model cache file and one data cache file
// (docs/CACHE_FORMAT.md has the byte layout):
//  - model cache: header {magic "NNHALMC1", format version, driver version, payload length}
//    + the Model's structure (every subgraph's operands, operations and input/output
//    indexes, operandValues, the relaxed flag, extension prefixes, pool sizes) + the table of
//    contents of the data cache (which pool byte ranges and which operations' precomputed
//    states it holds, and where). Everything that decides what the driver executes and how
//    memory is addressed lives here, and the driver's token map authenticates these bytes
//    (SHA-256) before any of them is parsed.
//    Each save also writes a fresh random 16-byte nonce into the model cache, so that two
//    saves never produce the same model cache (even of models that differ only in weights).
//  - data cache: header {magic "NNHALDC1", format version, driver version, payload length,
//    SHA-256 of the model cache it belongs to} padded to 64 bytes + the bytes of the Model's
//    constant pools (only the ranges still needed) + the operations' precomputed states
//    (packed weights), each 64-byte aligned. The header ties it to exactly one save: a data
//    cache from another save (another model, an older save) is rejected. Its payload is not
//    authenticated unless CacheOptions::authenticateData: it is treated as untrusted values
//    (bounds come from the model cache; operations check the values they rely on), so
//    crafted damage can change results but never memory safety.
// Constant pool ranges read only by operations whose precomputed state replaces them (e.g.
// raw weights of a convolution whose packed weights are saved) are left out of the data
// cache: that roughly halves it and is what makes loading fast. Those states are then
// *required*: if one is rejected on load, the load fails instead of computing with zeros.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/digest.h"
#include "cache/file_io.h"
#include "cache/filling_buffer.h"
#include "engine/execution_plan.h"
#include "engine/prepared_state.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::cache {

/// Version of the file layout; bump on any change of the bytes.
inline constexpr uint32_t kCacheFormatVersion = 2;

/// Largest cache files read back (a larger file fails to load).
inline constexpr size_t kMaxModelCacheBytes = size_t{256} << 20;
inline constexpr size_t kMaxDataCacheBytes = size_t{16} << 30;

/// The version string written into cache headers and the token map: the driver version,
/// the architecture and the kernels' instruction-set level in use (kernels::activeIsa(); the
/// packed layouts differ between levels), e.g. "1.0.0 (x86_64+vnni)". A cache whose version
/// differs is not loaded (the preparation compiles instead).
std::string cacheVersion(std::string_view driverVersion);

/// How caches are written and read.
struct CacheOptions {
  /// Save: record the SHA-256 of the data cache payload in the model cache. Load: require
  /// it and check the data cache against it (costs one SHA-256 pass over the data cache,
  /// about as long as compiling; off by default, see docs/CACHE_FORMAT.md).
  bool authenticateData = false;
};

/// Both files' bytes, ready to write.
struct EncodedCache {
  std::vector<uint8_t> model;
  std::vector<uint8_t> data;
  Digest modelDigest{};  ///< SHA-256 of `model`
};

/// Serializes a compiled model. `model` must be the (validated) Model that was compiled with
/// `saved` (a save-mode store). Errors: GENERAL_FAILURE when the model cannot be encoded
/// (sizes beyond the format's limits).
Result<EncodedCache> encodeCache(const Model& model, const engine::PreparedStateStore& saved,
                                 std::string_view version, const CacheOptions& options = {});

/// What decodeCache rebuilt.
struct DecodedCache {
  /// The pools are process-local (hal/process_memory.h): lazy zero pools standing in for
  /// the constants the data cache left out, and one read-only pool borrowing the kept
  /// constant ranges from the data cache buffer (the constants are relocated into it).
  Model model;
  /// Restore mode; retains the data buffer; restored() waits for bytes still arriving.
  std::unique_ptr<engine::PreparedStateStore> state;
};

/// Parses cache files read into memory. `modelBytes` must already be authenticated (its
/// SHA-256 `modelDigest` matched the token map); `data` is untrusted and may still be
/// filling (decodeCache waits for its header and kept constants; the returned state waits
/// for each precomputed state as it is asked for). Never reads outside the buffers, nor
/// bytes not yet published, whatever they hold. Errors: GENERAL_FAILURE naming what is wrong
/// (wrong magic, format or driver version, truncated or extended file, malformed content, a
/// data cache belonging to another model cache, a failed read of the data cache);
/// RESOURCE_EXHAUSTED_TRANSIENT when pools cannot be allocated.
Result<DecodedCache> decodeCache(std::span<const uint8_t> modelBytes, const Digest& modelDigest,
                                 std::shared_ptr<const FillingBuffer> data,
                                 std::string_view version, const CacheOptions& options = {});
/// decodeCache over a data cache already read whole.
Result<DecodedCache> decodeCache(std::span<const uint8_t> modelBytes, const Digest& modelDigest,
                                 const AlignedBuffer& data, std::string_view version,
                                 const CacheOptions& options = {});

/// decodeCache, then hal::validateModel, then engine::compile with the restored state; then
/// waits until `data` is complete (a plan is returned only when the whole data cache was read,
/// and had exactly the length measured when the load began). Errors: GENERAL_FAILURE for
/// anything wrong with the cache (including a failed read of the data cache, or a model that
/// does not validate or compile); RESOURCE_EXHAUSTED_TRANSIENT.
Result<std::unique_ptr<engine::ExecutionPlan>> compileFromCache(
    std::span<const uint8_t> modelBytes, const Digest& modelDigest,
    std::shared_ptr<const FillingBuffer> data, std::string_view version,
    const CacheOptions& options = {});
/// compileFromCache over a data cache already read whole.
Result<std::unique_ptr<engine::ExecutionPlan>> compileFromCache(std::span<const uint8_t> modelBytes,
                                                                const Digest& modelDigest,
                                                                const AlignedBuffer& data,
                                                                std::string_view version,
                                                                const CacheOptions& options = {});

}  // namespace nnhal::cache
