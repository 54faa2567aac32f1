// TFLite's arithmetic on what converters write, imported and run by the embedded driver:
//  - a tensor of a tiny scale (3e-35, calibrated to zeros) keeps it: a product into it
//    saturates, and its contribution to a sum flushes to 0, as in TFLite;
//  - an int8 variable (state) tensor starts at its zero point, as TFLite's
//    ResetVariableTensor leaves it (real 0), not at raw 0;
//  - hybrid operators (float input, int8 weights: TFLite's dynamic-range quantization) run
//    on the dequantized weights, as the NNAPI delegate maps them: CONV_2D, FULLY_CONNECTED
//    and the recurrent operators (RNN, SVDF, LSTM, the sequence LSTM);
//  - FULLY_CONNECTED with keep_num_dims keeps the input's leading dimensions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/one_pool_execution.h"
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
  auto ran = testing::executeFloatsOnOnePool(*prepared, input, outputCount);
  EXPECT_TRUE(ran) << ran.error().message;
  return ran ? *ran : std::vector<float>(outputCount);
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

/// One model of a recurrent operator, float or hybrid: its weights are q * kWeightScale,
/// stored as floats, or as int8 with that scale (TFLite's dynamic-range quantization).
class RecurrentModel {
 public:
  static constexpr float kWeightScale = 0.0625f;
  explicit RecurrentModel(bool hybrid) : hybrid_(hybrid) {}

  /// A [rows, cols] weight tensor with values from `seed`.
  int32_t weights(int32_t rows, int32_t cols, int seed) {
    std::vector<int8_t> q(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < q.size(); ++i) q[i] = static_cast<int8_t>((i * 7 + seed * 13) % 17) - 8;
    const std::string name = "w" + std::to_string(seed);
    if (hybrid_) {
      return m.addConstant<int8_t>({.shape = {rows, cols},
                                    .type = ::tflite::TensorType_INT8,
                                    .name = name,
                                    .scales = {kWeightScale},
                                    .zeroPoints = {0}},
                                   q);
    }
    std::vector<float> real(q.size());
    for (size_t i = 0; i < q.size(); ++i) real[i] = kWeightScale * static_cast<float>(q[i]);
    return m.addConstant<float>({.shape = {rows, cols}, .name = name}, real);
  }
  int32_t bias(int32_t size) {
    std::vector<float> v(static_cast<size_t>(size));
    for (size_t i = 0; i < v.size(); ++i) v[i] = 0.125f * static_cast<float>(i) - 0.25f;
    return m.addConstant<float>({.shape = {size}, .name = "bias"}, v);
  }
  int32_t state(std::vector<int32_t> shape) {
    return m.addTensor({.shape = std::move(shape), .name = "state", .variable = true});
  }

  TfliteModelMaker m;

 private:
  bool hybrid_;
};

/// Runs the float and the hybrid form of one recurrent model (built by `build`, which adds
/// the operator and returns its input and output tensors) on the same input: both import
/// and give the same results (DEQUANTIZE is exact, so only the kernels' summation order
/// may differ).
template <typename Build>
void expectHybridMatchesFloat(Build build, size_t inputSize, size_t outputSize) {
  std::vector<float> x(inputSize);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;
  std::vector<std::vector<float>> results;
  for (const bool hybrid : {false, true}) {
    SCOPED_TRACE(hybrid ? "hybrid" : "float");
    RecurrentModel r(hybrid);
    const auto [in, out] = build(r);
    const auto file = r.m.finish({in}, {out});
    results.push_back(runFloat(file, x, outputSize));
    ASSERT_EQ(results.back().size(), outputSize);
  }
  bool anyNonZero = false;
  for (size_t i = 0; i < outputSize; ++i) {
    EXPECT_NEAR(results[1][i], results[0][i], 1e-5f * (1.0f + std::abs(results[0][i]))) << i;
    anyNonZero = anyNonZero || results[0][i] != 0.0f;
  }
  EXPECT_TRUE(anyNonZero);
}

// RNN: input [2, 3], weights [4, 3], recurrent weights [4, 4], bias, hidden state [2, 4].
TEST(TfliteSemantics, HybridRnnRunsOnDequantizedWeights) {
  expectHybridMatchesFloat(
      [](RecurrentModel& r) {
        const int32_t in = r.m.addTensor({.shape = {2, 3}, .name = "in"});
        const int32_t w = r.weights(4, 3, 1);
        const int32_t rw = r.weights(4, 4, 2);
        const int32_t b = r.bias(4);
        const int32_t h = r.state({2, 4});
        const int32_t out = r.m.addTensor({.shape = {2, 4}, .name = "out"});
        r.m.addOperator(
            r.m.addOperatorCode(::tflite::BuiltinOperator_RNN), {in, w, rw, b, h}, {out},
            ::tflite::BuiltinOptions_RNNOptions,
            ::tflite::CreateRNNOptions(r.m.fbb(), ::tflite::ActivationFunctionType_TANH).Union());
        return std::pair{in, out};
      },
      6, 8);
}

// SVDF of rank 1: input [2, 3], feature weights [4, 3], time weights [4, 5], state [2, 20].
TEST(TfliteSemantics, HybridSvdfRunsOnDequantizedWeights) {
  expectHybridMatchesFloat(
      [](RecurrentModel& r) {
        const int32_t in = r.m.addTensor({.shape = {2, 3}, .name = "in"});
        const int32_t feature = r.weights(4, 3, 3);
        const int32_t time = r.weights(4, 5, 4);
        const int32_t b = r.bias(4);
        const int32_t state = r.state({2, 20});
        const int32_t out = r.m.addTensor({.shape = {2, 4}, .name = "out"});
        r.m.addOperator(
            r.m.addOperatorCode(::tflite::BuiltinOperator_SVDF), {in, feature, time, b, state},
            {out}, ::tflite::BuiltinOptions_SVDFOptions,
            ::tflite::CreateSVDFOptions(r.m.fbb(), 1, ::tflite::ActivationFunctionType_NONE)
                .Union());
        return std::pair{in, out};
      },
      6, 8);
}

/// The 20 inputs of TFLite's full LSTM kernel for `in` with 3 features and 4 cells, no
/// peepholes or projection; states [batch, 4].
std::vector<int32_t> lstmInputs(RecurrentModel& r, int32_t in, int32_t batch) {
  std::vector<int32_t> inputs{in};
  for (int g = 0; g < 4; ++g) inputs.push_back(r.weights(4, 3, 10 + g));
  for (int g = 0; g < 4; ++g) inputs.push_back(r.weights(4, 4, 20 + g));
  for (int p = 0; p < 3; ++p) inputs.push_back(-1);
  for (int g = 0; g < 4; ++g) inputs.push_back(r.bias(4));
  inputs.push_back(-1);
  inputs.push_back(-1);
  inputs.push_back(r.state({batch, 4}));
  inputs.push_back(r.state({batch, 4}));
  return inputs;
}

TEST(TfliteSemantics, HybridLstmRunsOnDequantizedWeights) {
  expectHybridMatchesFloat(
      [](RecurrentModel& r) {
        const int32_t in = r.m.addTensor({.shape = {2, 3}, .name = "in"});
        const auto inputs = lstmInputs(r, in, 2);
        const int32_t out = r.m.addTensor({.shape = {2, 4}, .name = "out"});
        r.m.addOperator(
            r.m.addOperatorCode(::tflite::BuiltinOperator_LSTM), inputs, {out},
            ::tflite::BuiltinOptions_LSTMOptions,
            ::tflite::CreateLSTMOptions(r.m.fbb(), ::tflite::ActivationFunctionType_TANH).Union());
        return std::pair{in, out};
      },
      6, 8);
}

// The sequence LSTM over [batch 2, time 3, 3 features], batch-major.
TEST(TfliteSemantics, HybridSequenceLstmRunsOnDequantizedWeights) {
  expectHybridMatchesFloat(
      [](RecurrentModel& r) {
        const int32_t in = r.m.addTensor({.shape = {2, 3, 3}, .name = "in"});
        const auto inputs = lstmInputs(r, in, 2);
        const int32_t out = r.m.addTensor({.shape = {2, 3, 4}, .name = "out"});
        r.m.addOperator(r.m.addOperatorCode(::tflite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM),
                        inputs, {out}, ::tflite::BuiltinOptions_UnidirectionalSequenceLSTMOptions,
                        ::tflite::CreateUnidirectionalSequenceLSTMOptions(
                            r.m.fbb(), ::tflite::ActivationFunctionType_TANH, 0.0f, 0.0f, false)
                            .Union());
        return std::pair{in, out};
      },
      18, 24);
}

}  // namespace
}  // namespace nnhal
