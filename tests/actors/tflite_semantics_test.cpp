// TFLite's arithmetic on what converters write, imported and run by the embedded driver:
//  - a tensor of a tiny scale (3e-35, calibrated to zeros) keeps it: a product into it
//    saturates, and its contribution to a sum flushes to 0, as in TFLite;
//  - an int8 variable (state) tensor starts at its zero point, as TFLite's
//    ResetVariableTensor leaves it (real 0), not at raw 0;
//  - hybrid operators (float input, int8 weights: TFLite's dynamic-range quantization) run
//    on the dequantized weights, as the NNAPI delegate maps them;
//  - FULLY_CONNECTED with keep_num_dims keeps the input's leading dimensions.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "hal/tflite_test_model.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"

// TensorSpec's designated initializers name only the fields a tensor needs.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace nnhal {
namespace {

using testing::TfliteModelMaker;

/// `file` imported and prepared on a new embedded device (null after a failed expectation).
std::shared_ptr<PreparedModel> importAndPrepare(const std::vector<uint8_t>& file) {
  auto imported = importTfliteModel(file);
  EXPECT_TRUE(imported) << imported.error().message;
  if (!imported) return nullptr;
  auto device = createDevice();
  EXPECT_TRUE(device);
  if (!device) return nullptr;
  auto prepared = (*device)->prepareModel(std::move(imported->model));
  EXPECT_TRUE(prepared) << prepared.error().message;
  return prepared ? *prepared : nullptr;
}

/// Runs `file` (int8 inputs and outputs of 4 elements each) on `inputs`; the outputs.
std::vector<std::vector<int8_t>> run(const std::vector<uint8_t>& file,
                                     const std::vector<std::vector<int8_t>>& inputs,
                                     size_t outputs) {
  const std::shared_ptr<PreparedModel> prepared = importAndPrepare(file);
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
  auto ran = prepared->executeSynchronously(request);
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

/// Runs `file` (float32 input and output) on `input`; the output of `outputCount` floats.
std::vector<float> runFloat(const std::vector<uint8_t>& file, const std::vector<float>& input,
                            size_t outputCount) {
  const std::shared_ptr<PreparedModel> prepared = importAndPrepare(file);
  if (!prepared) return {};
  const uint32_t inBytes = static_cast<uint32_t>(4 * input.size());
  const uint32_t outBytes = static_cast<uint32_t>(4 * outputCount);
  Memory pool = *Memory::create(inBytes + outBytes);
  std::memcpy(pool.data(), input.data(), inBytes);
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, inBytes}, {}}};
  request.outputs = {{false, {0, inBytes, outBytes}, {}}};
  auto ran = prepared->executeSynchronously(request);
  EXPECT_TRUE(ran) << ran.error().message;
  std::vector<float> out(outputCount);
  std::memcpy(out.data(), pool.data() + inBytes, outBytes);
  return out;
}

// A hybrid FULLY_CONNECTED: float input [2, 3], int8 weights [4, 3] of scale 0.5, float
// bias; the result is the float product with the dequantized weights.
TEST(TfliteSemantics, HybridFullyConnectedRunsOnDequantizedWeights) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {2, 3}, .name = "in"});
  const std::vector<int8_t> q = {2, -4, 6, 0, 1, -1, 10, 20, 30, -8, 0, 8};
  const int32_t weights = m.addConstant<int8_t>({.shape = {4, 3},
                                                 .type = ::tflite::TensorType_INT8,
                                                 .name = "weights",
                                                 .scales = {0.5f},
                                                 .zeroPoints = {0}},
                                                q);
  const int32_t bias =
      m.addConstant<float>({.shape = {4}, .name = "bias"}, {0.25f, -1.0f, 0.0f, 2.0f});
  const int32_t out = m.addTensor({.shape = {2, 4}, .name = "out"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_FULLY_CONNECTED), {in, weights, bias},
                {out});
  const std::vector<float> x = {1.0f, 2.0f, 3.0f, -1.5f, 0.5f, 4.0f};
  const auto got = runFloat(m.finish({in}, {out}), x, 8);
  ASSERT_EQ(got.size(), 8u);
  const std::vector<float> b = {0.25f, -1.0f, 0.0f, 2.0f};
  for (int row = 0; row < 2; ++row) {
    for (int unit = 0; unit < 4; ++unit) {
      float expected = b[unit];
      for (int k = 0; k < 3; ++k) expected += x[row * 3 + k] * 0.5f * q[unit * 3 + k];
      EXPECT_FLOAT_EQ(got[row * 4 + unit], expected) << row << "," << unit;
    }
  }
}

// A hybrid CONV_2D with per-channel int8 weights (two output channels of scales 0.5 and
// 0.25), 1x1 kernel over a [1, 2, 2, 2] float input, no bias.
TEST(TfliteSemantics, HybridConvolutionWithPerChannelWeights) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 2, 2, 2}, .name = "in"});
  const std::vector<int8_t> q = {2, 4, -8, 12};  // [2 out, 1, 1, 2 in]
  const int32_t filter = m.addConstant<int8_t>({.shape = {2, 1, 1, 2},
                                                .type = ::tflite::TensorType_INT8,
                                                .name = "filter",
                                                .scales = {0.5f, 0.25f},
                                                .zeroPoints = {0, 0},
                                                .quantizedDimension = 0},
                                               q);
  const int32_t out = m.addTensor({.shape = {1, 2, 2, 2}, .name = "out"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_CONV_2D), {in, filter}, {out},
                ::tflite::BuiltinOptions_Conv2DOptions,
                ::tflite::CreateConv2DOptions(m.fbb(), ::tflite::Padding_VALID, 1, 1).Union());
  const std::vector<float> x = {1, 2, 3, 4, -1, 0.5f, 8, -2};
  const auto got = runFloat(m.finish({in}, {out}), x, 8);
  ASSERT_EQ(got.size(), 8u);
  const float w[2][2] = {{1.0f, 2.0f}, {-2.0f, 3.0f}};
  for (int pixel = 0; pixel < 4; ++pixel) {
    for (int c = 0; c < 2; ++c) {
      const float expected = x[pixel * 2] * w[c][0] + x[pixel * 2 + 1] * w[c][1];
      EXPECT_FLOAT_EQ(got[pixel * 2 + c], expected) << pixel << "," << c;
    }
  }
}

// keep_num_dims: input [2, 2, 3] -> output [2, 2, 4], each row a product with the weights.
TEST(TfliteSemantics, FullyConnectedKeepNumDimsKeepsTheLeadingDimensions) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {2, 2, 3}, .name = "in"});
  std::vector<float> wv(12);
  for (int i = 0; i < 12; ++i) wv[i] = static_cast<float>(i % 5) - 2.0f;
  const int32_t weights = m.addConstant<float>({.shape = {4, 3}, .name = "weights"}, wv);
  const int32_t out = m.addTensor({.shape = {2, 2, 4}, .name = "out"});
  m.addFullyConnectedKeepingDims({in, weights}, out);
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = 0.5f * static_cast<float>(i) - 3.0f;
  const auto file = m.finish({in}, {out});
  auto imported = importTfliteModel(file);
  ASSERT_TRUE(imported) << imported.error().message;
  const Model& model = imported->model;
  const Operand& output = model.main.operands[model.main.outputIndexes[0]];
  EXPECT_EQ(output.dimensions, (std::vector<uint32_t>{2, 2, 4}));
  const auto got = runFloat(file, x, 16);
  ASSERT_EQ(got.size(), 16u);
  for (int row = 0; row < 4; ++row) {
    for (int unit = 0; unit < 4; ++unit) {
      float expected = 0;
      for (int k = 0; k < 3; ++k) expected += x[row * 3 + k] * wv[unit * 3 + k];
      EXPECT_FLOAT_EQ(got[row * 4 + unit], expected) << row << "," << unit;
    }
  }
}

}  // namespace
}  // namespace nnhal
