// TFLite's arithmetic on what converters write, imported and run by the embedded driver:
//  - a tensor of a tiny scale (3e-35, calibrated to zeros) keeps it: a product into it
//    saturates, and its contribution to a sum flushes to 0, as in TFLite;
//  - an int8 variable (state) tensor starts at its zero point, as TFLite's
//    ResetVariableTensor leaves it (real 0), not at raw 0.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "hal/tflite_test_model.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"

namespace nnhal {
namespace {

using testing::TfliteModelMaker;

/// Runs `file` (int8 inputs and outputs of 4 elements each) on `inputs`; the outputs.
std::vector<std::vector<int8_t>> run(const std::vector<uint8_t>& file,
                                     const std::vector<std::vector<int8_t>>& inputs,
                                     size_t outputs) {
  auto imported = importTfliteModel(file);
  EXPECT_TRUE(imported) << imported.error().message;
  if (!imported) return {};
  auto device = createDevice();
  EXPECT_TRUE(device);
  auto prepared = (*device)->prepareModel(std::move(imported->model));
  EXPECT_TRUE(prepared) << prepared.error().message;
  if (!prepared) return {};
  Memory pool = *Memory::create(4 * (inputs.size() + outputs));
  Request request;
  request.pools = {pool};
  uint32_t at = 0;
  for (const auto& values : inputs) {
    std::memcpy(pool.data() + at, values.data(), 4);
    request.inputs.push_back({false, {0, at, 4}, {}});
    at += 4;
  }
  for (size_t o = 0; o < outputs; ++o) {
    request.outputs.push_back({false, {0, at, 4}, {}});
    at += 4;
  }
  auto ran = (*prepared)->executeSynchronously(request);
  EXPECT_TRUE(ran) << ran.error().message;
  std::vector<std::vector<int8_t>> out(outputs, std::vector<int8_t>(4));
  for (size_t o = 0; o < outputs; ++o) {
    std::memcpy(out[o].data(), pool.data() + 4 * (inputs.size() + o), 4);
  }
  return out;
}

// product = MUL(x, x) into a tensor of scale 3e-35; sum = ADD(product, x). TFLite: the
// product's multiplier (0.25 / 3e-35) saturates every nonzero product; in the sum, the
// product's input multiplier (3e-35 / 1) flushes to 0, so sum = x.
TEST(TfliteSemantics, ATinyScaleSaturatesProductsAndFlushesInSums) {
  TfliteModelMaker m;
  const auto int8 = [](std::vector<float> scales) {
    TfliteModelMaker::TensorSpec spec;
    spec.shape = {4};
    spec.type = ::tflite::TensorType_INT8;
    spec.scales = std::move(scales);
    spec.zeroPoints = {0};
    return spec;
  };
  auto spec = int8({0.5f});
  spec.name = "x";
  const int32_t x = m.addTensor(spec);
  spec = int8({3e-35f});
  spec.name = "product";
  const int32_t product = m.addTensor(spec);
  spec = int8({0.5f});
  spec.name = "sum";
  const int32_t sum = m.addTensor(spec);
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_MUL), {x, x}, {product});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_ADD), {product, x}, {sum});
  const auto out = run(m.finish({x}, {product, sum}), {{-3, 0, 5, 100}}, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (std::vector<int8_t>{127, 0, 127, 127}));
  EXPECT_EQ(out[1], (std::vector<int8_t>{-3, 0, 5, 100}));
}

// out = ADD(state, x) where `state` is an int8 variable tensor of zero point -4: it holds real
// 0 at the start, so out = x.
TEST(TfliteSemantics, AnInt8VariableTensorStartsAtItsZeroPoint) {
  TfliteModelMaker m;
  const int32_t x = m.addTensor({.shape = {4},
                                 .type = ::tflite::TensorType_INT8,
                                 .name = "x",
                                 .scales = {1.0f},
                                 .zeroPoints = {0}});
  const int32_t state = m.addTensor({.shape = {4},
                                     .type = ::tflite::TensorType_INT8,
                                     .name = "state",
                                     .scales = {1.0f},
                                     .zeroPoints = {-4},
                                     .variable = true});
  const int32_t out = m.addTensor({.shape = {4},
                                   .type = ::tflite::TensorType_INT8,
                                   .name = "out",
                                   .scales = {1.0f},
                                   .zeroPoints = {0}});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_ADD), {state, x}, {out});
  const auto results = run(m.finish({x}, {out}), {{-3, 0, 5, 100}}, 1);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], (std::vector<int8_t>{-3, 0, 5, 100}));
}

}  // namespace
}  // namespace nnhal
