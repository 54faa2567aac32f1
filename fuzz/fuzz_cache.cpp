// libFuzzer target: model and data cache files -> the decoding and compilation that
// prepareModelFromCache runs once the model cache's SHA-256 matched the token's (the target
// computes that digest itself, so every input gets past the check, as a cache replaced by
// someone who could also write the token map would). Any outcome but a crash, a sanitizer
// report or a hang is fine.
//
// Input (fuzz/fuzz_input.h): [model cache bytes][data cache bytes][u8 flags].
#include <cstdint>
#include <cstring>

#include "cache/cache_format.h"
#include "cache/digest.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nnhal;
  const auto parts = fuzz::splitParts({data, size}, 3);
  auto buffer = cache::AlignedBuffer::allocate(parts[1].size());
  if (!buffer) return 0;
  if (!parts[1].empty()) std::memcpy(buffer->data(), parts[1].data(), parts[1].size());
  cache::CacheOptions options;
  options.authenticateData = !parts[2].empty() && (parts[2][0] & 1) != 0;
  (void)cache::compileFromCache(parts[0], cache::sha256(parts[0]), *buffer,
                                cache::cacheVersion(fuzz::kFuzzDriverVersion), options);
  return 0;
}
