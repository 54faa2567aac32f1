#include "cache/cache_format.h"

#include <cryptopp/osrng.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include "engine/compiler.h"
#include "hal/model_codec.h"
#include "hal/process_memory.h"
#include "hal/serialization.h"
#include "hal/validation.h"
#include "kernels/isa.h"

namespace nnhal::cache {

using hal::ByteReader;
using hal::ByteWriter;

namespace {

constexpr char kModelMagic[8] = {'N', 'N', 'H', 'A', 'L', 'M', 'C', '1'};
constexpr char kDataMagic[8] = {'N', 'N', 'H', 'A', 'L', 'D', 'C', '1'};
constexpr size_t kDataAlignment = engine::kStateAlignment;
constexpr uint32_t kMaxVersionLength = 1024;
constexpr uint32_t kMaxExtensionNameLength = 1024;
constexpr uint32_t kMaxCount = uint32_t{1} << 24;
constexpr uint64_t kMaxPoolBytes = uint64_t{1} << 33;  // DataLocation is 32-bit
constexpr uint64_t kMaxTotalPoolBytes = uint64_t{1} << 36;
constexpr uint32_t kRelaxedFlag = 1;
constexpr uint32_t kDataDigestFlag = 2;
constexpr size_t kNonceBytes = 16;
// Longest possible data cache header: magic, format, version string, payload length,
// model cache digest, padded to the payload alignment.
constexpr size_t kMaxDataHeaderBytes =
    (8 + 4 + 4 + kMaxVersionLength + 8 + sizeof(Digest) + kDataAlignment - 1) / kDataAlignment *
    kDataAlignment;

const Subgraph& subgraphAt(const Model& model, size_t index) {
  return index == 0 ? model.main : model.referenced[index - 1];
}

std::unexpected<Error> corrupt(const std::string& what) {
  return fail(ErrorStatus::GENERAL_FAILURE, "compilation cache: " + what);
}

std::span<const uint8_t> magicBytes(const char (&magic)[8]) {
  return {reinterpret_cast<const uint8_t*>(magic), sizeof(magic)};
}

// --- encoding ------------------------------------------------------------------------------

struct Segment {
  uint32_t pool = 0;
  uint64_t offset = 0;
  uint64_t length = 0;
  uint64_t dataOffset = 0;
};

struct StateRecord {
  engine::StateKey key;
  uint64_t dataOffset = 0;
  uint64_t length = 0;
  bool required = false;
};

/// Decides which constant pool ranges the data cache keeps and which states are required.
/// An operand is left out when every operation reading it accepted-and-saved a state that
/// replaces that input.
void planData(const Model& model, const engine::PreparedStateStore& saved,
              std::vector<Segment>* segments, std::map<engine::StateKey, bool>* required) {
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> ranges(model.pools.size());
  const size_t subgraphs = 1 + model.referenced.size();
  for (size_t s = 0; s < subgraphs; ++s) {
    const Subgraph& subgraph = subgraphAt(model, s);
    std::vector<bool> keep(subgraph.operands.size(), false);
    std::vector<std::vector<engine::StateKey>> replacers(subgraph.operands.size());
    for (size_t k = 0; k < subgraph.operations.size(); ++k) {
      const engine::StateKey key{static_cast<uint32_t>(s), static_cast<uint32_t>(k)};
      const auto entry = saved.saved().find(key);
      const std::vector<uint32_t>& inputs = subgraph.operations[k].inputs;
      for (size_t j = 0; j < inputs.size(); ++j) {
        const bool replaced =
            entry != saved.saved().end() &&
            std::ranges::find(entry->second.replacedInputs, static_cast<uint32_t>(j)) !=
                entry->second.replacedInputs.end();
        if (replaced) {
          replacers[inputs[j]].push_back(key);
        } else {
          keep[inputs[j]] = true;
        }
      }
    }
    for (size_t i = 0; i < subgraph.operands.size(); ++i) {
      const Operand& operand = subgraph.operands[i];
      if (operand.lifetime != OperandLifeTime::CONSTANT_REFERENCE || operand.location.length == 0) {
        continue;
      }
      if (keep[i] || replacers[i].empty()) {
        ranges[operand.location.poolIndex].emplace_back(
            operand.location.offset, uint64_t{operand.location.offset} + operand.location.length);
      } else {
        for (const engine::StateKey& key : replacers[i]) (*required)[key] = true;
      }
    }
  }
  for (size_t p = 0; p < ranges.size(); ++p) {
    auto& list = ranges[p];
    std::sort(list.begin(), list.end());
    for (size_t i = 0; i < list.size();) {
      uint64_t begin = list[i].first, end = list[i].second;
      size_t j = i + 1;
      while (j < list.size() && list[j].first <= end) end = std::max(end, list[j++].second);
      segments->push_back({static_cast<uint32_t>(p), begin, end - begin, 0});
      i = j;
    }
  }
}

void putHeader(ByteWriter& out, const char (&magic)[8], std::string_view version,
               uint64_t payloadLength) {
  out.putBytes(magicBytes(magic));
  out.putU32(kCacheFormatVersion);
  out.putString(version);
  out.putU64(payloadLength);
}

// --- decoding ------------------------------------------------------------------------------

/// Reads and checks a header; returns the payload length.
Result<uint64_t> readHeader(ByteReader& in, const char (&magic)[8], std::string_view version,
                            const char* file) {
  const std::span<const uint8_t> m = in.getBytes(sizeof(magic));
  if (!in.ok()) return corrupt(std::string(file) + " is truncated (no header)");
  if (std::memcmp(m.data(), magic, sizeof(magic)) != 0) {
    return corrupt(std::string(file) + " has the wrong magic");
  }
  const uint32_t format = in.getU32();
  if (in.ok() && format != kCacheFormatVersion) {
    return corrupt(std::string(file) + " has format version " + std::to_string(format) +
                   ", this driver reads " + std::to_string(kCacheFormatVersion));
  }
  const std::string written = in.getString(kMaxVersionLength);
  if (in.ok() && written != version) {
    return corrupt(std::string(file) + " was written by driver version '" + written +
                   "', this is '" + std::string(version) + "'");
  }
  const uint64_t payload = in.getU64();
  if (!in.ok()) return corrupt(std::string(file) + " header: " + in.error());
  return payload;
}

/// Where the kept constant ranges end in the data payload (they come first in it).
uint64_t keptRangesEnd(const std::vector<Segment>& segments) {
  uint64_t end = 0;
  for (const Segment& segment : segments) {
    if (segment.length > 0) end = std::max(end, segment.dataOffset + segment.length);
  }
  return end;
}

/// Rebuilds the Model's pools without copying: the original pools come back as lazy zero
/// pools (private mappings that cost nothing until written): they keep the locations of the
/// constants the data cache left out (replaced by precomputed states, never read). The kept
/// ranges are not copied at all: one read-only pool borrows the front of the data payload
/// where they lie, and the constants inside them are relocated to it. The writer placed
/// every range at the same offset modulo 64 as in its pool, so constants keep their
/// alignment. When that front is not addressable with 32-bit offsets, the ranges are copied
/// into the zero pools instead. `keptEnd` is keptRangesEnd(segments).
Result<void> restorePools(Model& model, const std::vector<uint64_t>& poolSizes,
                          const std::vector<Segment>& segments, uint64_t keptEnd,
                          const uint8_t* payload, const std::shared_ptr<const void>& payloadOwner) {
  model.pools.reserve(poolSizes.size() + 1);
  for (uint64_t size : poolSizes) {
    auto pool = hal::lazyZeroPool(static_cast<size_t>(size));
    if (!pool) {
      return fail(ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT,
                  "compilation cache: cannot allocate a pool: " + pool.error().message);
    }
    model.pools.push_back(std::move(*pool));
  }
  if (keptEnd == 0) return {};
  if (keptEnd > UINT32_MAX) {
    for (const Segment& segment : segments) {
      std::memcpy(model.pools[segment.pool].data() + segment.offset, payload + segment.dataOffset,
                  segment.length);
    }
    return {};
  }
  const auto keptPool = static_cast<uint32_t>(model.pools.size());
  model.pools.push_back(hal::borrowedPool(payload, static_cast<size_t>(keptEnd), payloadOwner));

  // Segments in (pool, offset) order, so each constant finds its own with one search.
  std::vector<size_t> order;
  order.reserve(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) {
    if (segments[i].length > 0) order.push_back(i);
  }
  std::ranges::sort(order, [&](size_t a, size_t b) {
    return std::tie(segments[a].pool, segments[a].offset) <
           std::tie(segments[b].pool, segments[b].offset);
  });
  const auto relocate = [&](Operand& operand) {
    if (operand.lifetime != OperandLifeTime::CONSTANT_REFERENCE || operand.location.length == 0) {
      return;
    }
    const DataLocation& at = operand.location;
    // The last segment starting at or before the constant, in its pool.
    auto it = std::ranges::upper_bound(
        order, std::make_pair(at.poolIndex, uint64_t{at.offset}), std::less<>{},
        [&](size_t i) { return std::make_pair(segments[i].pool, segments[i].offset); });
    if (it == order.begin()) return;
    const Segment& segment = segments[*std::prev(it)];
    if (segment.pool != at.poolIndex ||
        uint64_t{at.offset} + at.length > segment.offset + segment.length) {
      return;  // left out of the data cache: stays in its zero pool
    }
    operand.location.poolIndex = keptPool;
    operand.location.offset =
        static_cast<uint32_t>(segment.dataOffset + (at.offset - segment.offset));
  };
  for (Operand& operand : model.main.operands) relocate(operand);
  for (Subgraph& subgraph : model.referenced) {
    for (Operand& operand : subgraph.operands) relocate(operand);
  }
  return {};
}

}  // namespace

std::string cacheVersion(std::string_view driverVersion) {
  std::string tag(driverVersion);
  tag += " (";
#if defined(__x86_64__)
  tag += "x86_64";
#elif defined(__aarch64__)
  tag += "aarch64";
#else
  tag += "other";
#endif
  // The kernels' instruction-set level: packed layouts (depthwise filters) differ between
  // levels, so a cache made at one level must not load at another.
  tag += "+";
  tag += kernels::toString(kernels::activeIsa());
  tag += ")";
  return tag;
}

Result<EncodedCache> encodeCache(const Model& model, const engine::PreparedStateStore& saved,
                                 std::string_view version, const CacheOptions& options) {
  std::vector<Segment> segments;
  std::map<engine::StateKey, bool> required;
  planData(model, saved, &segments, &required);

  // Data payload: kept pool ranges first (a load borrows them in place, so each keeps its
  // pool offset modulo 64: its constants keep their alignment), then states, 64-aligned, in
  // step order (the order a load's compilation asks for them while the file is read).
  uint64_t dataLength = 0;
  auto place = [&](uint64_t length, uint64_t misalignment) {
    dataLength = (dataLength + kDataAlignment - 1) / kDataAlignment * kDataAlignment;
    const uint64_t at = dataLength + misalignment;
    dataLength = at + length;
    return at;
  };
  for (Segment& segment : segments) {
    segment.dataOffset = place(segment.length, segment.offset % kDataAlignment);
  }
  std::vector<StateRecord> states;
  for (const auto& [key, entry] : saved.saved()) {
    if (entry.bytes.empty()) continue;
    states.push_back({key, place(entry.bytes.size(), 0), entry.bytes.size(), required[key]});
  }

  // Data cache payload (the header needs the model cache's digest, so it comes later).
  std::vector<uint8_t> dataPayload(dataLength, 0);
  for (const Segment& segment : segments) {
    const Memory& pool = model.pools[segment.pool];
    if (!pool.valid() || segment.offset + segment.length > pool.size()) {
      return corrupt("pool " + std::to_string(segment.pool) + " is smaller than its operands");
    }
    std::memcpy(dataPayload.data() + segment.dataOffset, pool.data() + segment.offset,
                segment.length);
  }
  for (const StateRecord& state : states) {
    const auto& bytes = saved.saved().at(state.key).bytes;
    std::memcpy(dataPayload.data() + state.dataOffset, bytes.data(), bytes.size());
  }

  // Model cache.
  ByteWriter payload;
  std::array<uint8_t, kNonceBytes> nonce{};
  CryptoPP::OS_GenerateRandomBlock(false, nonce.data(), nonce.size());
  payload.putBytes(nonce);
  payload.putU32((model.relaxComputationFloat32toFloat16 ? kRelaxedFlag : 0) |
                 (options.authenticateData ? kDataDigestFlag : 0));
  if (options.authenticateData) payload.putBytes(sha256(dataPayload));
  payload.putU32(static_cast<uint32_t>(model.extensionNameToPrefix.size()));
  for (const ExtensionNameAndPrefix& extension : model.extensionNameToPrefix) {
    payload.putString(extension.name);
    payload.putU16(extension.prefix);
  }
  const size_t subgraphs = 1 + model.referenced.size();
  payload.putU32(static_cast<uint32_t>(subgraphs));
  for (size_t s = 0; s < subgraphs; ++s) hal::putSubgraph(payload, subgraphAt(model, s));
  payload.putBlob(model.operandValues);
  payload.putU32(static_cast<uint32_t>(model.pools.size()));
  for (const Memory& pool : model.pools) payload.putU64(pool.valid() ? pool.size() : 0);
  payload.putU64(dataLength);
  payload.putU32(static_cast<uint32_t>(segments.size()));
  for (const Segment& segment : segments) {
    payload.putU32(segment.pool);
    payload.putU64(segment.offset);
    payload.putU64(segment.length);
    payload.putU64(segment.dataOffset);
  }
  payload.putU32(static_cast<uint32_t>(states.size()));
  for (const StateRecord& state : states) {
    payload.putU32(state.key.subgraph);
    payload.putU32(state.key.step);
    payload.putU64(state.dataOffset);
    payload.putU64(state.length);
    payload.putU8(state.required ? 1 : 0);
  }

  EncodedCache encoded;
  ByteWriter modelFile;
  modelFile.reserve(64 + version.size() + payload.size());
  putHeader(modelFile, kModelMagic, version, payload.size());
  modelFile.putBytes(payload.buffer());
  encoded.model = modelFile.take();
  encoded.modelDigest = sha256(encoded.model);

  // Data cache.
  ByteWriter dataFile;
  dataFile.reserve(128 + version.size() + dataPayload.size());
  putHeader(dataFile, kDataMagic, version, dataLength);
  dataFile.putBytes(encoded.modelDigest);
  dataFile.alignTo(kDataAlignment);
  dataFile.putBytes(dataPayload);
  encoded.data = dataFile.take();
  return encoded;
}

Result<DecodedCache> decodeCache(std::span<const uint8_t> modelBytes, const Digest& modelDigest,
                                 std::shared_ptr<const FillingBuffer> data,
                                 std::string_view version, const CacheOptions& options) {
  // Model cache: header, then a payload that must end exactly at the end of the file.
  ByteReader file(modelBytes);
  NNHAL_ASSIGN_OR_RETURN(const uint64_t payloadLength,
                         readHeader(file, kModelMagic, version, "model cache"));
  if (payloadLength != file.remaining()) {
    return corrupt("model cache holds " + std::to_string(file.remaining()) +
                   " payload bytes, its header says " + std::to_string(payloadLength));
  }
  ByteReader in(file.getBytes(payloadLength));

  DecodedCache decoded;
  Model& model = decoded.model;
  in.getBytes(kNonceBytes);
  const uint32_t flags = in.getU32();
  if (in.ok() && (flags & ~(kRelaxedFlag | kDataDigestFlag)) != 0) in.failWith("unknown flags");
  model.relaxComputationFloat32toFloat16 = (flags & kRelaxedFlag) != 0;
  std::optional<Digest> dataDigest;
  if ((flags & kDataDigestFlag) != 0) {
    const std::span<const uint8_t> bytes = in.getBytes(sizeof(Digest));
    if (in.ok()) std::memcpy(dataDigest.emplace().data(), bytes.data(), sizeof(Digest));
  }
  const uint32_t extensions = in.readCount(kMaxCount, 6);
  for (uint32_t i = 0; i < extensions && in.ok(); ++i) {
    ExtensionNameAndPrefix extension;
    extension.name = in.getString(kMaxExtensionNameLength);
    extension.prefix = in.getU16();
    model.extensionNameToPrefix.push_back(std::move(extension));
  }
  const uint32_t subgraphs = in.readCount(kMaxCount, 16);
  if (in.ok() && subgraphs == 0) in.failWith("no main subgraph");
  for (uint32_t s = 0; s < subgraphs && in.ok(); ++s) {
    Subgraph subgraph = hal::getSubgraph(in);
    if (s == 0) {
      model.main = std::move(subgraph);
    } else {
      model.referenced.push_back(std::move(subgraph));
    }
  }
  {
    const uint64_t length = in.readLength(UINT32_MAX);
    const std::span<const uint8_t> values = in.getBytes(length);
    model.operandValues.assign(values.begin(), values.end());
  }
  const uint32_t poolCount = in.readCount(kMaxCount, sizeof(uint64_t));
  std::vector<uint64_t> poolSizes(poolCount);
  uint64_t totalPoolBytes = 0;
  for (uint64_t& size : poolSizes) {
    size = in.getU64();
    if (in.ok() && (size == 0 || size > kMaxPoolBytes)) in.failWith("bad pool size");
    totalPoolBytes += size;
  }
  if (in.ok() && totalPoolBytes > kMaxTotalPoolBytes) in.failWith("pools too large");
  const uint64_t dataLength = in.getU64();
  const uint32_t segmentCount = in.readCount(kMaxCount, 28);
  std::vector<Segment> segments(segmentCount);
  for (Segment& segment : segments) {
    segment.pool = in.getU32();
    segment.offset = in.getU64();
    segment.length = in.getU64();
    segment.dataOffset = in.getU64();
    if (!in.ok()) break;
    if (segment.pool >= poolCount || segment.offset > poolSizes[segment.pool] ||
        segment.length > poolSizes[segment.pool] - segment.offset ||
        segment.dataOffset > dataLength || segment.length > dataLength - segment.dataOffset) {
      in.failWith("pool segment out of range");
    }
  }
  const uint32_t stateCount = in.readCount(kMaxCount, 25);
  std::vector<StateRecord> states(stateCount);
  for (StateRecord& state : states) {
    state.key.subgraph = in.getU32();
    state.key.step = in.getU32();
    state.dataOffset = in.getU64();
    state.length = in.getU64();
    const uint8_t required = in.getU8();
    if (!in.ok()) break;
    state.required = required == 1;
    if (required > 1 || state.key.subgraph >= subgraphs ||
        state.key.step >= subgraphAt(model, state.key.subgraph).operations.size() ||
        state.dataOffset % kDataAlignment != 0 || state.dataOffset > dataLength ||
        state.length > dataLength - state.dataOffset) {
      in.failWith("precomputed state record out of range");
    }
  }
  if (in.ok() && !in.atEnd()) in.failWith("trailing bytes");
  if (!in.ok()) return corrupt("model cache is malformed: " + in.error());

  // Data cache: header with the same version and the digest of this model cache. The file
  // may still be arriving: wait for what each step reads, never read past it.
  const auto dataFailure = [](const Error& error) {
    return corrupt("data cache: " + error.message);
  };
  const size_t headerWindow = std::min(data->size(), kMaxDataHeaderBytes);
  if (auto ready = data->waitFor(headerWindow); !ready) return dataFailure(ready.error());
  ByteReader dataIn({data->data(), headerWindow});
  NNHAL_ASSIGN_OR_RETURN(const uint64_t dataPayload,
                         readHeader(dataIn, kDataMagic, version, "data cache"));
  const std::span<const uint8_t> owner = dataIn.getBytes(sizeof(Digest));
  dataIn.alignTo(kDataAlignment);
  if (!dataIn.ok()) return corrupt("data cache header: " + dataIn.error());
  if (std::memcmp(owner.data(), modelDigest.data(), sizeof(Digest)) != 0) {
    return corrupt("data cache belongs to another model cache");
  }
  const size_t payloadBytes = data->size() - dataIn.position();
  if (dataPayload != dataLength || payloadBytes != dataLength) {
    return corrupt("data cache holds " + std::to_string(payloadBytes) +
                   " payload bytes, expected " + std::to_string(dataLength));
  }
  const size_t payloadStart = dataIn.position();
  const uint8_t* payload = data->data() + payloadStart;
  if (options.authenticateData) {
    if (!dataDigest) return corrupt("the model cache records no data cache digest to check");
    if (auto done = data->waitDone(); !done) return dataFailure(done.error());
    if (!digestsEqual(sha256({payload, static_cast<size_t>(dataLength)}), *dataDigest)) {
      return corrupt("the data cache is not the one saved with this model cache");
    }
  }

  // The kept constant ranges come first in the payload; compiling reads them.
  const uint64_t keptEnd = keptRangesEnd(segments);
  if (auto ready = data->waitFor(payloadStart + keptEnd); !ready) return dataFailure(ready.error());
  NNHAL_TRY(restorePools(model, poolSizes, segments, keptEnd, payload, data->owner()));

  decoded.state =
      std::make_unique<engine::PreparedStateStore>(engine::PreparedStateStore::Mode::kRestore);
  for (const StateRecord& state : states) {
    decoded.state->addRestored(state.key, {payload + state.dataOffset, state.length},
                               state.required);
  }
  decoded.state->setAvailability([data](std::span<const uint8_t> bytes) {
    return data->waitFor(static_cast<size_t>(bytes.data() + bytes.size() - data->data()))
        .has_value();
  });
  decoded.state->retain(data->owner());
  return decoded;
}

Result<DecodedCache> decodeCache(std::span<const uint8_t> modelBytes, const Digest& modelDigest,
                                 const AlignedBuffer& data, std::string_view version,
                                 const CacheOptions& options) {
  return decodeCache(modelBytes, modelDigest, FillingBuffer::complete(data), version, options);
}

Result<std::unique_ptr<engine::ExecutionPlan>> compileFromCache(
    std::span<const uint8_t> modelBytes, const Digest& modelDigest,
    std::shared_ptr<const FillingBuffer> data, std::string_view version,
    const CacheOptions& options) {
  auto plan = [&]() -> Result<std::unique_ptr<engine::ExecutionPlan>> {
    NNHAL_ASSIGN_OR_RETURN(DecodedCache decoded,
                           decodeCache(modelBytes, modelDigest, data, version, options));
    if (auto valid = hal::validateModel(decoded.model); !valid) {
      return corrupt("the cached model does not validate: " + valid.error().message);
    }
    auto compiled = engine::compile(std::move(decoded.model), {decoded.state.get()});
    if (!compiled) return corrupt("the cached model does not compile: " + compiled.error().message);
    return compiled;
  }();
  // Only a data cache read to its end, exactly as long as it was, counts; and when the read
  // failed, that (not a state it starved) is the reason to report.
  if (auto done = data->waitDone(); !done) return corrupt("data cache: " + done.error().message);
  return plan;
}

Result<std::unique_ptr<engine::ExecutionPlan>> compileFromCache(std::span<const uint8_t> modelBytes,
                                                                const Digest& modelDigest,
                                                                const AlignedBuffer& data,
                                                                std::string_view version,
                                                                const CacheOptions& options) {
  return compileFromCache(modelBytes, modelDigest, FillingBuffer::complete(data), version, options);
}

}  // namespace nnhal::cache
