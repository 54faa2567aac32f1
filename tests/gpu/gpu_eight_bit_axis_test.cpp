// 8-bit operations along axes on the GPU device against the CPU device. L2_NORMALIZATION
// gives its bytes: the shader's float estimate of round(d * 128 / sqrt(sum d^2)) is corrected
// with exact integer comparisons, so rows of random values and rows crafted where the float
// estimate rounds the wrong way agree in every byte, in both 8-bit types, along the last and
// a middle axis, with zero rows and single elements. MEAN requantizes in float32 where the
// CPU device uses double: every byte within one step, nearly all equal.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "cache/cache_test_util.h"
#include "common/one_pool_execution.h"
#include "gpu/gpu_test_models.h"
#include "nnhal/device.h"

namespace nnhal {
namespace {

struct Case {
  OperandType type;
  std::vector<uint32_t> dims;
  int32_t axis;
  int32_t zeroPoint;
  std::vector<uint8_t> input = {};  // random when empty
};

Model l2Model(const Case& c) {
  cachetest::ModelBuilder b;
  const bool isSigned = c.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  const uint32_t in = b.tensor(c.type, c.dims, 0.05f, c.zeroPoint, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t axis = b.scalar(c.axis);
  const uint32_t out =
      b.tensor(c.type, c.dims, 1.0f / 128.0f, isSigned ? 0 : 128, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.operation(OperationType::L2_NORMALIZATION, {in, axis}, {out});
  b.model.main.inputIndexes = {in};
  b.model.main.outputIndexes = {out};
  return std::move(b.model);
}

/// Prepares `model` (one input, one output) on `device` and runs it on `input`: the
/// output's `outBytes` bytes (none when a step failed, which fails the test).
std::vector<uint8_t> runOnce(Device& device, Model model, const std::vector<uint8_t>& input,
                             uint32_t outBytes) {
  auto prepared = device.prepareModel(std::move(model));
  EXPECT_TRUE(prepared) << prepared.error().message;
  if (!prepared) return {};
  auto result = testing::executeOnOnePool(**prepared, input, outBytes);
  EXPECT_TRUE(result) << result.error().message;
  return result ? *result : std::vector<uint8_t>(outBytes);
}

std::vector<uint8_t> run(Device& device, const Case& c, const std::vector<uint8_t>& input) {
  return runOnce(device, l2Model(c), input, static_cast<uint32_t>(input.size()));
}

TEST(GpuL2Normalization, GivesTheCpuDevicesBytesOnEightBitValues) {
  gputest::ValidatedGpu gpu = gputest::validatedGpu();
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  const OperandType u8 = OperandType::TENSOR_QUANT8_ASYMM;
  const OperandType s8 = OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
  std::vector<Case> cases = {
      {u8, {256, 1}, -1, 100}, {u8, {128, 3}, 1, 128},   {u8, {64, 17}, -1, 0},
      {u8, {16, 300}, 1, 255}, {s8, {128, 2}, -1, -128}, {s8, {64, 9}, 1, 0},
      {s8, {8, 40, 5}, 1, 3},  {u8, {4, 1000}, -1, 77},
  };
  // Rows whose float estimate rounds the wrong way (found by searching all d and sums):
  // d = 23 with sum 7723 = 23^2 + 84^2 + 11^2 + 4^2 + 1^2 gives 33, not float's 34; d = 17
  // with sum 233826 = 17^2 + 3 * 255^2 + 196^2 + 6^2 + 3^2 + 1^2 gives 4, not 5.
  const std::vector<uint8_t> nearBoundaries = {23, 84,  11,  4,   1,   0, 0, 0,
                                               17, 255, 255, 255, 196, 6, 3, 1};
  cases.push_back({u8, {2, 8}, -1, 0, nearBoundaries});
  const auto neg23 = static_cast<uint8_t>(-23);
  cases.push_back({s8, {1, 8}, -1, 0, {neg23, 84, 11, 4, 1, 0, 0, 0}});
  std::mt19937 rng(5);
  for (const Case& c : cases) {
    size_t elements = 1;
    for (uint32_t d : c.dims) elements *= d;
    if (!c.input.empty()) {
      EXPECT_EQ(run(*gpu.device, c, c.input), run(**cpu, c, c.input)) << "the crafted rows";
      continue;
    }
    std::vector<uint8_t> input(elements);
    for (uint8_t& v : input) v = static_cast<uint8_t>(rng());
    // A row of zero points (sum 0: the output zero point) and small values near it.
    const uint8_t zero = static_cast<uint8_t>(c.zeroPoint);
    for (size_t k = 0; k < c.dims.back() && k < elements; ++k) input[k] = zero;
    for (size_t k = elements / 2; k < elements / 2 + 40 && k < elements; ++k) {
      input[k] = static_cast<uint8_t>(zero + static_cast<int>(rng() % 5) - 2);
    }
    const std::vector<uint8_t> expected = run(**cpu, c, input);
    const std::vector<uint8_t> actual = run(*gpu.device, c, input);
    ASSERT_EQ(actual.size(), expected.size());
    size_t differing = 0;
    for (size_t k = 0; k < expected.size(); ++k) differing += actual[k] != expected[k] ? 1 : 0;
    EXPECT_EQ(differing, 0u) << "of " << expected.size() << " bytes, dims[0] " << c.dims[0]
                             << ", zero point " << c.zeroPoint;
  }
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

Model meanModel(OperandType type, const std::vector<uint32_t>& dims, std::vector<uint32_t> kept) {
  cachetest::ModelBuilder b;
  const uint32_t in = b.tensor(type, dims, 0.1f, 20, OperandLifeTime::SUBGRAPH_INPUT);
  const std::vector<int32_t> axes = {1, 2};
  const uint32_t axis = b.constant(OperandType::TENSOR_INT32, {2}, 0.0f, 0, axes.data(), 8);
  const uint32_t keep = b.scalar(1);
  const uint32_t out = b.tensor(type, std::move(kept), 0.07f, 5, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.operation(OperationType::MEAN, {in, axis, keep}, {out});
  b.model.main.inputIndexes = {in};
  b.model.main.outputIndexes = {out};
  return b.finish();
}

TEST(GpuEightBitMean, IsWithinOneStepOfTheCpuDevice) {
  gputest::ValidatedGpu gpu = gputest::validatedGpu();
  if (gpu.device == nullptr) GTEST_SKIP() << gpu.whyNot;
  auto cpu = createDevice({});
  ASSERT_TRUE(cpu);
  const std::vector<uint32_t> dims = {3, 9, 13, 40};
  const uint32_t inBytes = 3 * 9 * 13 * 40;
  const uint32_t outBytes = 3 * 40;
  std::mt19937 rng(9);
  for (OperandType type :
       {OperandType::TENSOR_QUANT8_ASYMM_SIGNED, OperandType::TENSOR_QUANT8_ASYMM}) {
    std::vector<uint8_t> input(inBytes);
    for (uint8_t& v : input) v = static_cast<uint8_t>(rng());
    const std::vector<uint8_t> expected =
        runOnce(**cpu, meanModel(type, dims, {3, 1, 1, 40}), input, outBytes);
    const std::vector<uint8_t> actual =
        runOnce(*gpu.device, meanModel(type, dims, {3, 1, 1, 40}), input, outBytes);
    ASSERT_EQ(actual.size(), expected.size());
    const bool isSigned = type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
    size_t equal = 0;
    for (size_t k = 0; k < expected.size(); ++k) {
      const int e = isSigned ? static_cast<int8_t>(expected[k]) : expected[k];
      const int a = isSigned ? static_cast<int8_t>(actual[k]) : actual[k];
      EXPECT_LE(std::abs(a - e), 1) << "element " << k;
      equal += a == e ? 1 : 0;
    }
    EXPECT_GE(equal, expected.size() * 95 / 100);
  }
  gpu.device.reset();
  EXPECT_EQ(gpu.vulkan->context().validationErrors(), 0u);
}

}  // namespace
}  // namespace nnhal
