// The cache codec: round trips, and garbage that must never make the decoder read out of
// bounds (run under ASan in CI). The byte reader/writer it uses is tested in
// tests/hal/serialization_test.cpp.
#include "cache/cache_format.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include "cache_test_util.h"
#include "engine/compiler.h"
#include "hal/validation.h"

namespace nnhal::cache {
namespace {

// --- codec -----------------------------------------------------------------------------------

struct Encoded {
  Model model;
  EncodedCache cache;
  size_t savedStates = 0;
};

Encoded encodeTestModel(OperandType type, uint32_t seed = 1, const CacheOptions& options = {}) {
  Encoded e;
  e.model = cachetest::buildModel(type, seed);
  EXPECT_TRUE(hal::validateModel(e.model));
  engine::PreparedStateStore state(engine::PreparedStateStore::Mode::kSave);
  auto plan = engine::compile(e.model, {&state});
  EXPECT_TRUE(plan) << plan.error().message;
  e.savedStates = state.saved().size();
  auto cache = encodeCache(e.model, state, "test-version", options);
  EXPECT_TRUE(cache) << cache.error().message;
  e.cache = std::move(*cache);
  return e;
}

AlignedBuffer toBuffer(const std::vector<uint8_t>& bytes) {
  AlignedBuffer buffer = *AlignedBuffer::allocate(bytes.size());
  if (!bytes.empty()) std::memcpy(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

TEST(CacheCodecTest, RoundTripsTheModel) {
  for (OperandType type : {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM}) {
    Encoded e = encodeTestModel(type);
    // CONV_2D, FULLY_CONNECTED and (quantized: it packs its filter) DEPTHWISE_CONV_2D.
    const bool quant = type == OperandType::TENSOR_QUANT8_ASYMM;
    EXPECT_EQ(e.savedStates, quant ? 3u : 2u);
    EXPECT_EQ(e.cache.modelDigest, sha256(e.cache.model));
    const AlignedBuffer data = toBuffer(e.cache.data);
    auto decoded = decodeCache(e.cache.model, e.cache.modelDigest, data, "test-version");
    ASSERT_TRUE(decoded) << decoded.error().message;
    const Model& m = decoded->model;
    ASSERT_TRUE(hal::validateModel(m));
    ASSERT_EQ(m.main.operands.size(), e.model.main.operands.size());
    for (size_t i = 0; i < m.main.operands.size(); ++i) {
      const Operand& a = m.main.operands[i];
      const Operand& b = e.model.main.operands[i];
      EXPECT_EQ(a.type, b.type);
      EXPECT_EQ(a.dimensions, b.dimensions);
      EXPECT_EQ(a.scale, b.scale);
      EXPECT_EQ(a.zeroPoint, b.zeroPoint);
      EXPECT_EQ(a.lifetime, b.lifetime);
      EXPECT_EQ(a.numberOfConsumers, b.numberOfConsumers);
      if (b.lifetime != OperandLifeTime::CONSTANT_REFERENCE) {
        EXPECT_EQ(a.location, b.location);
        continue;
      }
      EXPECT_EQ(a.location.length, b.location.length);
      EXPECT_EQ(a.location.offset % 64, b.location.offset % 64) << "alignment kept";
    }
    EXPECT_EQ(m.operandValues, e.model.operandValues);
    // The original pool (lazily zero) and a pool borrowing the kept constants in place from
    // the data cache buffer: no copy, no shared memory (neither has a descriptor).
    ASSERT_EQ(m.pools.size(), 2u);
    EXPECT_EQ(m.pools[0].size(), e.model.pools[0].size());
    EXPECT_EQ(m.pools[0].fd(), -1);
    EXPECT_EQ(m.pools[1].fd(), -1);
    EXPECT_FALSE(m.pools[1].writable());
    EXPECT_GE(m.pools[1].data(), data.data());
    EXPECT_LE(m.pools[1].data() + m.pools[1].size(), data.data() + data.size());
    const auto bytesOf = [](const Model& model, const Operand& operand) {
      const uint8_t* at = model.pools[operand.location.poolIndex].data() + operand.location.offset;
      return std::vector<uint8_t>(at, at + operand.location.length);
    };
    // The weights of the operations that saved state were left out (their packed form
    // replaces them): they keep their location and read as zero. The biases were kept and
    // relocated into the borrowed pool with their bytes.
    for (uint32_t operation :
         quant ? std::vector<uint32_t>{0, 1, 3} : std::vector<uint32_t>{0, 3}) {
      const uint32_t w = e.model.main.operations[operation].inputs[1];
      const uint32_t bias = e.model.main.operations[operation].inputs[2];
      EXPECT_EQ(m.main.operands[w].location, e.model.main.operands[w].location);
      const std::vector<uint8_t> weights = bytesOf(m, m.main.operands[w]);
      EXPECT_TRUE(std::all_of(weights.begin(), weights.end(), [](uint8_t b) { return b == 0; }));
      EXPECT_EQ(m.main.operands[bias].location.poolIndex, 1u);
      EXPECT_EQ(bytesOf(m, m.main.operands[bias]), bytesOf(e.model, e.model.main.operands[bias]));
    }
  }
}

TEST(CacheCodecTest, DataCacheLeavesOutReplacedWeights) {
  Encoded e = encodeTestModel(OperandType::TENSOR_QUANT8_ASYMM);
  // Without the raw weights, the data cache is smaller than pool + packed states.
  const size_t pool = e.model.pools[0].size();
  EXPECT_LT(e.cache.data.size(), pool + 3 * 1024);
}

TEST(CacheCodecTest, EverySaveIsUnique) {
  Encoded a = encodeTestModel(OperandType::TENSOR_FLOAT32);
  Encoded b = encodeTestModel(OperandType::TENSOR_FLOAT32);
  EXPECT_NE(a.cache.modelDigest, b.cache.modelDigest);
  // b's data does not decode with a's model cache.
  auto decoded =
      decodeCache(a.cache.model, a.cache.modelDigest, toBuffer(b.cache.data), "test-version");
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().status, ErrorStatus::GENERAL_FAILURE);
}

TEST(CacheCodecTest, RejectsOtherVersionsAndMagic) {
  Encoded e = encodeTestModel(OperandType::TENSOR_FLOAT32);
  const AlignedBuffer data = toBuffer(e.cache.data);
  auto other = decodeCache(e.cache.model, e.cache.modelDigest, data, "another-version");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().message.find("driver version"), std::string::npos);
  std::vector<uint8_t> magic = e.cache.model;
  magic[0] ^= 1;
  auto bad = decodeCache(magic, sha256(magic), data, "test-version");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("magic"), std::string::npos);
  std::vector<uint8_t> format = e.cache.model;
  format[8] += 1;  // format version
  auto future = decodeCache(format, sha256(format), data, "test-version");
  ASSERT_FALSE(future);
  EXPECT_NE(future.error().message.find("format version"), std::string::npos);
}

TEST(CacheCodecTest, CompileFromCacheMatchesTheCompiledModel) {
  for (OperandType type : {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM}) {
    Encoded e = encodeTestModel(type);
    auto plan = compileFromCache(e.cache.model, e.cache.modelDigest, toBuffer(e.cache.data),
                                 "test-version");
    ASSERT_TRUE(plan) << plan.error().message;
    EXPECT_EQ((*plan)->subgraphs[0].steps.size(), 4u);
    EXPECT_EQ((*plan)->retained.size(), 1u);  // the data buffer the packed weights live in
  }
}

/// Replaces the model-cache digest stored in a data cache header (at a fixed offset after
/// the magic, format version, version string and payload length).
void rebind(std::vector<uint8_t>& data, const Digest& digest, size_t versionLength) {
  const size_t at = 8 + 4 + 4 + versionLength + 8;
  std::memcpy(data.data() + at, digest.data(), digest.size());
}

TEST(CacheCodecTest, GarbageModelCachesNeverCrashTheDecoder) {
  // The token map makes this impossible in the driver (only caches it wrote are parsed),
  // but the parser must be safe on its own: flip bits, truncate and extend the model cache
  // (re-binding the data cache to it) and decode, validate and compile whatever comes out.
  for (OperandType type : {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_QUANT8_ASYMM}) {
    Encoded e = encodeTestModel(type);
    std::mt19937 rng(type == OperandType::TENSOR_FLOAT32 ? 1 : 2);
    size_t decoded = 0;
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<uint8_t> model = e.cache.model;
      if (trial % 10 == 9) {
        model.resize(rng() % model.size());
      } else {
        const int flips = 1 + static_cast<int>(rng() % 4);
        for (int f = 0; f < flips; ++f) {
          // Mostly in the payload past the header and nonce.
          const size_t at = 40 + rng() % (model.size() - 40);
          model[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
        }
      }
      const Digest digest = sha256(model);
      std::vector<uint8_t> data = e.cache.data;
      rebind(data, digest, std::strlen("test-version"));
      auto plan = compileFromCache(model, digest, toBuffer(data), "test-version");
      if (plan) {
        ++decoded;
      } else {
        EXPECT_TRUE(plan.error().status == ErrorStatus::GENERAL_FAILURE ||
                    plan.error().status == ErrorStatus::RESOURCE_EXHAUSTED_TRANSIENT)
            << plan.error().message;
      }
    }
    RecordProperty(type == OperandType::TENSOR_FLOAT32 ? "float_decoded" : "quant_decoded",
                   static_cast<int>(decoded));
  }
}

TEST(CacheCodecTest, GarbageDataCachesNeverCrashTheDecoder) {
  Encoded e = encodeTestModel(OperandType::TENSOR_QUANT8_ASYMM);
  std::mt19937 rng(9);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<uint8_t> data = e.cache.data;
    switch (trial % 3) {
      case 0:
        data.resize(rng() % data.size());
        break;
      case 1:
        data.resize(data.size() + 1 + rng() % 100, 0);
        break;
      default:
        for (int f = 0; f < 8; ++f) data[rng() % data.size()] = static_cast<uint8_t>(rng());
    }
    auto plan =
        compileFromCache(e.cache.model, e.cache.modelDigest, toBuffer(data), "test-version");
    if (!plan) {
      EXPECT_EQ(plan.error().status, ErrorStatus::GENERAL_FAILURE);
    }
  }
}

// --- loading while the data cache is still being read ---------------------------------------

/// Publishes `data` into `buffer` in chunks of `chunk` bytes from another thread, writing
/// each chunk only just before publishing it (the rest holds a pattern that a read-ahead
/// would see), then finishes it; or, with `failAt`, fails it after publishing that much.
class Producer {
 public:
  Producer(const std::vector<uint8_t>& data, std::shared_ptr<FillingBuffer> buffer, size_t chunk,
           std::optional<size_t> failAt = std::nullopt)
      : thread_([&data, buffer, chunk, failAt] {
          std::memset(buffer->unfilled(), 0xEE, data.size());
          const size_t end = failAt ? std::min(*failAt, data.size()) : data.size();
          for (size_t at = 0; at < end;) {
            const size_t n = std::min(chunk, end - at);
            std::memcpy(buffer->unfilled() + at, data.data() + at, n);
            at += n;
            buffer->publish(at);
            if ((at / chunk) % 16 == 0) std::this_thread::yield();
          }
          if (failAt) {
            buffer->fail("read error after " + std::to_string(end) + " bytes");
          } else {
            buffer->finish();
          }
        }) {}
  ~Producer() { thread_.join(); }

 private:
  std::thread thread_;
};

std::shared_ptr<FillingBuffer> emptyBuffer(size_t size) {
  auto buffer = FillingBuffer::allocate(size);
  EXPECT_TRUE(buffer);
  return *buffer;
}

class StreamingLoadTest : public ::testing::TestWithParam<OperandType> {};

TEST_P(StreamingLoadTest, DataArrivingInChunksGivesTheSameResults) {
  const Encoded e = encodeTestModel(GetParam());
  auto reference =
      compileFromCache(e.cache.model, e.cache.modelDigest, toBuffer(e.cache.data), "test-version");
  ASSERT_TRUE(reference) << reference.error().message;
  const std::vector<uint8_t> expected = cachetest::runPlan(**reference, GetParam());
  for (size_t chunk : {size_t{1}, size_t{7}, size_t{64}, size_t{1000}, e.cache.data.size()}) {
    auto buffer = emptyBuffer(e.cache.data.size());
    Result<std::unique_ptr<engine::ExecutionPlan>> plan;
    {
      Producer producer(e.cache.data, buffer, chunk);
      plan = compileFromCache(e.cache.model, e.cache.modelDigest, buffer, "test-version");
    }
    ASSERT_TRUE(plan) << "chunk " << chunk << ": " << plan.error().message;
    EXPECT_EQ(cachetest::runPlan(**plan, GetParam()), expected) << "chunk " << chunk;
  }
}

TEST_P(StreamingLoadTest, AReadFailingAtAnyPointFailsTheLoadWithItsReason) {
  const Encoded e = encodeTestModel(GetParam());
  const size_t size = e.cache.data.size();
  // Before and inside the header, inside the kept constants and the states, at the very
  // end (every byte arrived, but the file turned out longer or shorter than measured).
  std::vector<size_t> cuts = {0,        1,        40,        64,       100, 200,
                              size / 3, size / 2, size - 64, size - 1, size};
  for (size_t cut : cuts) {
    auto buffer = emptyBuffer(size);
    Result<std::unique_ptr<engine::ExecutionPlan>> plan;
    {
      Producer producer(e.cache.data, buffer, 16, cut);
      plan = compileFromCache(e.cache.model, e.cache.modelDigest, buffer, "test-version");
    }
    ASSERT_FALSE(plan) << "a load whose data cache read failed after " << cut
                       << " bytes returned a plan";
    EXPECT_EQ(plan.error().status, ErrorStatus::GENERAL_FAILURE);
    EXPECT_NE(plan.error().message.find("read error after " + std::to_string(cut)),
              std::string::npos)
        << "cut " << cut << ": " << plan.error().message;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, StreamingLoadTest,
                         ::testing::Values(OperandType::TENSOR_FLOAT32,
                                           OperandType::TENSOR_QUANT8_ASYMM),
                         [](const auto& info) {
                           return info.param == OperandType::TENSOR_FLOAT32 ? "Float32" : "Quant8";
                         });

}  // namespace
}  // namespace nnhal::cache
