// fuzz/fuzz_input.h — how the fuzz targets read their input, and how fuzz_seeds writes the
// seed corpora in the same layout (docs/FUZZING.md).
//
// Every multi-part input is a list of length-prefixed parts: [u32 length][bytes] ...,
// little-endian; a missing or short part reads as empty. The model target's parts are a
// WireModel payload, an Execute payload (docs/IPC_PROTOCOL.md encodings, so the daemon's
// own decoders read them) and the bytes that fill the pools those describe.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace nnhal::fuzz {

/// Splits `data` into its length-prefixed parts (at most `count`; missing ones are empty).
inline std::vector<std::span<const uint8_t>> splitParts(std::span<const uint8_t> data,
                                                        size_t count) {
  std::vector<std::span<const uint8_t>> parts(count);
  size_t at = 0;
  for (size_t i = 0; i < count && at + 4 <= data.size(); ++i) {
    uint32_t length = 0;
    std::memcpy(&length, data.data() + at, 4);
    at += 4;
    const size_t take = std::min<size_t>(length, data.size() - at);
    parts[i] = data.subspan(at, take);
    at += take;
  }
  return parts;
}

/// Joins parts into the layout splitParts reads.
inline std::vector<uint8_t> joinParts(const std::vector<std::vector<uint8_t>>& parts) {
  std::vector<uint8_t> out;
  for (const auto& part : parts) {
    const auto length = static_cast<uint32_t>(part.size());
    const auto* bytes = reinterpret_cast<const uint8_t*>(&length);
    out.insert(out.end(), bytes, bytes + 4);
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

/// The driver version the cache target and its seeds use (cache::cacheVersion of it).
inline constexpr const char* kFuzzDriverVersion = "nnhal-fuzz";

/// Largest pool the model target creates (bigger ones make the input uninteresting).
inline constexpr uint64_t kMaxFuzzPoolBytes = 1 << 20;

}  // namespace nnhal::fuzz
