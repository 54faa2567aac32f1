// Helpers of the compilation-caching tests: small hand-built models (float32 and quant8)
// whose weights depend on a seed, requests that run them, temporary directories, and cache
// files opened with a chosen access mode.
//
// The model (NHWC): x [1,4,4,2] -> CONV_2D 3x3 SAME (3 channels) -> DEPTHWISE_CONV_2D 3x3 SAME
// (multiplier 1, RELU) -> ADD y [1,4,4,3] -> FULLY_CONNECTED (5 units) -> out [1,5].
// Weights and biases are CONSTANT_REFERENCE operands in one shared-memory pool, scalars
// CONSTANT_COPY. CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED all save precomputed state.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "nnhal/device.h"

namespace nnhal::cachetest {

inline constexpr uint32_t kOutputUnits = 5;

struct ModelBuilder {
  Model model;
  std::vector<uint8_t> pool;  // CONSTANT_REFERENCE bytes, copied into a Memory at the end

  uint32_t add(Operand operand) {
    model.main.operands.push_back(std::move(operand));
    return static_cast<uint32_t>(model.main.operands.size() - 1);
  }
  uint32_t tensor(OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint,
                  OperandLifeTime lifetime) {
    Operand op;
    op.type = type;
    op.dimensions = std::move(dims);
    op.scale = scale;
    op.zeroPoint = zeroPoint;
    op.lifetime = lifetime;
    return add(std::move(op));
  }
  uint32_t constant(OperandType type, std::vector<uint32_t> dims, float scale, int32_t zeroPoint,
                    const void* bytes, uint32_t length) {
    while (pool.size() % 64 != 0) pool.push_back(0);
    const auto offset = static_cast<uint32_t>(pool.size());
    pool.insert(pool.end(), static_cast<const uint8_t*>(bytes),
                static_cast<const uint8_t*>(bytes) + length);
    Operand op;
    op.type = type;
    op.dimensions = std::move(dims);
    op.scale = scale;
    op.zeroPoint = zeroPoint;
    op.lifetime = OperandLifeTime::CONSTANT_REFERENCE;
    op.location = {0, offset, length};
    return add(std::move(op));
  }
  uint32_t scalar(int32_t value) {
    const auto offset = static_cast<uint32_t>(model.operandValues.size());
    model.operandValues.resize(offset + 4);
    std::memcpy(model.operandValues.data() + offset, &value, 4);
    Operand op;
    op.type = OperandType::INT32;
    op.lifetime = OperandLifeTime::CONSTANT_COPY;
    op.location = {0, offset, 4};
    return add(std::move(op));
  }
  void operation(OperationType type, std::vector<uint32_t> inputs, std::vector<uint32_t> outputs) {
    for (uint32_t in : inputs) ++model.main.operands[in].numberOfConsumers;
    model.main.operations.push_back({type, std::move(inputs), std::move(outputs)});
  }
  Model finish() {
    Memory memory = *Memory::create(pool.size());
    std::memcpy(memory.data(), pool.data(), pool.size());
    model.pools.push_back(memory);
    return std::move(model);
  }
};

/// The test model for TENSOR_FLOAT32 or TENSOR_QUANT8_ASYMM; `seed` picks the weights.
inline Model buildModel(OperandType type, uint32_t seed) {
  const bool quant = type == OperandType::TENSOR_QUANT8_ASYMM;
  std::mt19937 rng(seed);
  ModelBuilder b;
  const auto in = OperandLifeTime::SUBGRAPH_INPUT;
  const auto tmp = OperandLifeTime::TEMPORARY_VARIABLE;
  const OperandType biasType = quant ? OperandType::TENSOR_INT32 : OperandType::TENSOR_FLOAT32;

  auto weights = [&](std::vector<uint32_t> dims, float scale, int32_t zeroPoint) {
    size_t count = 1;
    for (uint32_t d : dims) count *= d;
    if (quant) {
      std::vector<uint8_t> values(count);
      std::uniform_int_distribution<int> dist(0, 255);
      for (auto& v : values) v = static_cast<uint8_t>(dist(rng));
      return b.constant(type, dims, scale, zeroPoint, values.data(),
                        static_cast<uint32_t>(values.size()));
    }
    std::vector<float> values(count);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    for (auto& v : values) v = dist(rng);
    return b.constant(type, dims, 0.0f, 0, values.data(),
                      static_cast<uint32_t>(values.size() * sizeof(float)));
  };
  auto bias = [&](uint32_t n, float scale) {
    std::vector<int32_t> q(n);
    std::vector<float> f(n);
    std::uniform_int_distribution<int> qd(-500, 500);
    std::uniform_real_distribution<float> fd(-0.5f, 0.5f);
    for (uint32_t i = 0; i < n; ++i) {
      q[i] = qd(rng);
      f[i] = fd(rng);
    }
    if (quant) return b.constant(biasType, {n}, scale, 0, q.data(), n * 4);
    return b.constant(biasType, {n}, 0.0f, 0, f.data(), n * 4);
  };
  auto act = [&](float scale, int32_t zp) {
    return quant ? std::pair{scale, zp} : std::pair{0.f, 0};
  };

  const auto [xs, xz] = act(0.05f, 100);
  const uint32_t x = b.tensor(type, {1, 4, 4, 2}, xs, xz, in);
  const auto [w1s, w1z] = act(0.02f, 120);
  const uint32_t w1 = weights({3, 3, 3, 2}, w1s, w1z);
  const uint32_t b1 = bias(3, xs * w1s);
  const auto [t1s, t1z] = act(0.1f, 128);
  const uint32_t t1 = b.tensor(type, {1, 4, 4, 3}, t1s, t1z, tmp);
  b.operation(OperationType::CONV_2D,
              {x, w1, b1, b.scalar(1), b.scalar(1), b.scalar(1), b.scalar(0)}, {t1});

  const auto [w2s, w2z] = act(0.03f, 110);
  const uint32_t w2 = weights({1, 3, 3, 3}, w2s, w2z);
  const uint32_t b2 = bias(3, t1s * w2s);
  const auto [t2s, t2z] = act(0.1f, 0);
  const uint32_t t2 = b.tensor(type, {1, 4, 4, 3}, t2s, t2z, tmp);
  b.operation(OperationType::DEPTHWISE_CONV_2D,
              {t1, w2, b2, b.scalar(1), b.scalar(1), b.scalar(1), b.scalar(1), b.scalar(1)}, {t2});

  const auto [ys, yz] = act(0.1f, 128);
  const uint32_t y = b.tensor(type, {1, 4, 4, 3}, ys, yz, in);
  const auto [t3s, t3z] = act(0.2f, 128);
  const uint32_t t3 = b.tensor(type, {1, 4, 4, 3}, t3s, t3z, tmp);
  b.operation(OperationType::ADD, {t2, y, b.scalar(0)}, {t3});

  const auto [w3s, w3z] = act(0.01f, 130);
  const uint32_t w3 = weights({kOutputUnits, 48}, w3s, w3z);
  const uint32_t b3 = bias(kOutputUnits, t3s * w3s);
  const auto [os, oz] = act(0.5f, 128);
  const uint32_t out = b.tensor(type, {1, kOutputUnits}, os, oz, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.operation(OperationType::FULLY_CONNECTED, {t3, w3, b3, b.scalar(0)}, {out});

  b.model.main.inputIndexes = {x, y};
  b.model.main.outputIndexes = {out};
  return b.finish();
}

/// A Request for the test model: inputs derived from `inputSeed`, one pool for all.
struct TestRequest {
  Memory pool;
  Request request;
  size_t outputAt = 0, outputBytes = 0;

  TestRequest(OperandType type, uint32_t inputSeed) {
    const size_t element = type == OperandType::TENSOR_QUANT8_ASYMM ? 1 : 4;
    const size_t xBytes = 32 * element, yBytes = 48 * element;
    outputAt = xBytes + yBytes;
    outputBytes = kOutputUnits * element;
    pool = *Memory::create(outputAt + outputBytes);
    std::mt19937 rng(inputSeed);
    for (size_t i = 0; i < outputAt; i += element) {
      if (element == 1) {
        pool.data()[i] = static_cast<uint8_t>(rng() & 255);
      } else {
        const float v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
        std::memcpy(pool.data() + i, &v, 4);
      }
    }
    request.pools.push_back(pool);
    request.inputs = {
        {false, {0, 0, static_cast<uint32_t>(xBytes)}, {}},
        {false, {0, static_cast<uint32_t>(xBytes), static_cast<uint32_t>(yBytes)}, {}}};
    request.outputs = {
        {false, {0, static_cast<uint32_t>(outputAt), static_cast<uint32_t>(outputBytes)}, {}}};
  }
  std::vector<uint8_t> output() const {
    return {pool.data() + outputAt, pool.data() + outputAt + outputBytes};
  }
};

/// Runs `prepared` on inputs derived from `inputSeed`; returns the output bytes (empty and a
/// test failure when the execution fails).
inline std::vector<uint8_t> run(PreparedModel& prepared, OperandType type, uint32_t inputSeed = 7) {
  TestRequest test(type, inputSeed);
  auto result = prepared.executeSynchronously(test.request);
  EXPECT_TRUE(result) << result.error().message;
  if (!result) return {};
  return test.output();
}

/// Runs a compiled plan of the test model (engine level, one kernel thread) on the inputs of
/// run(); returns the output bytes (and a test failure when the execution fails).
inline std::vector<uint8_t> runPlan(const engine::ExecutionPlan& plan, OperandType type,
                                    uint32_t inputSeed = 7) {
  TestRequest test(type, inputSeed);
  engine::ArenaPool arenas(plan.main().arenaBytes);
  engine::Parallel parallel(1);
  auto shapes = engine::execute(plan, test.request, arenas, parallel, {});
  EXPECT_TRUE(shapes) << shapes.error().message;
  return test.output();
}

/// A fresh directory under the system temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "nnhal_cache_XXXXXX").string();
    const char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// Opens (creating) `path` with open(2) flags; -1 on failure (and a test failure).
inline int openFile(const std::filesystem::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CREAT | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0) << path;
  return fd;
}

/// Closes the descriptors it collects.
class Fds {
 public:
  ~Fds() {
    for (int fd : fds_) ::close(fd);
  }
  int open(const std::filesystem::path& path, int flags) {
    const int fd = openFile(path, flags);
    if (fd >= 0) fds_.push_back(fd);
    return fd;
  }

 private:
  std::vector<int> fds_;
};

inline std::vector<uint8_t> readAll(const std::filesystem::path& path) {
  std::vector<uint8_t> bytes;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return bytes;
  uint8_t buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  ::close(fd);
  return bytes;
}

inline void writeAll(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    ASSERT_GT(n, 0);
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

inline CacheToken tokenFor(uint8_t seed) {
  CacheToken token{};
  for (size_t i = 0; i < token.size(); ++i) token[i] = static_cast<uint8_t>(seed * 31 + i);
  return token;
}

}  // namespace nnhal::cachetest
