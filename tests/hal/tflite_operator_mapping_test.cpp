// Tests of how the TFLite importer maps tensors and builtin options to NNAPI operands
// and operation inputs, on small models built with the flatbuffers builder.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/model_builder.h"
#include "hal/tflite_test_model.h"
#include "hal/tflite_test_util.h"
#include "tflite_schema_generated.h"

// Tensor specs below name only the fields they need; g++ 12 warns about the others.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace nnhal {
namespace {

using ::testing::ElementsAre;
using namespace nnhal::testing;  // NOLINT(google-build-using-namespace): test helpers

// --- synthetic models: parameter mapping -----------------------------------------------------

/// Float CONV_2D [1,8,8,3] * [4,3,3,3] -> [1,4,4,4] with the given options.
std::vector<uint8_t> floatConvModel(
    flatbuffers::Offset<void> (*options)(flatbuffers::FlatBufferBuilder&)) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 8, 8, 3}, .name = "in"});
  const int32_t filter = m.addConstant<float>({.shape = {4, 3, 3, 3}, .name = "filter"},
                                              std::vector<float>(108, 0.5f));
  const int32_t bias = m.addConstant<float>({.shape = {4}, .name = "bias"}, {1, 2, 3, 4});
  const int32_t out = m.addTensor({.shape = {1, 4, 4, 4}, .name = "out"});
  const uint32_t code = m.addOperatorCode(::tflite::BuiltinOperator_CONV_2D);
  m.addOperator(code, {in, filter, bias}, {out}, ::tflite::BuiltinOptions_Conv2DOptions,
                options(m.fbb()));
  return m.finish({in}, {out});
}

TEST(TfliteOperatorMappingTest, Conv2dSameStride2Relu6) {
  const auto bytes = floatConvModel([](flatbuffers::FlatBufferBuilder& fbb) {
    return ::tflite::CreateConv2DOptions(fbb, ::tflite::Padding_SAME, 2, 2,
                                         ::tflite::ActivationFunctionType_RELU6)
        .Union();
  });
  auto imported = importTfliteModel(bytes);
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  ASSERT_EQ(model.main.operations.size(), 1u);
  const Operation& conv = model.main.operations[0];
  EXPECT_EQ(conv.type, OperationType::CONV_2D);
  ASSERT_EQ(conv.inputs.size(), 7u);
  EXPECT_EQ(conv.inputs[0], 0u);  // input, filter, bias keep their tensor indexes
  EXPECT_EQ(conv.inputs[1], 1u);
  EXPECT_EQ(conv.inputs[2], 2u);
  EXPECT_EQ(intParam(model, conv.inputs[3]), 1);  // SAME
  EXPECT_EQ(intParam(model, conv.inputs[4]), 2);  // stride w
  EXPECT_EQ(intParam(model, conv.inputs[5]), 2);  // stride h
  EXPECT_EQ(intParam(model, conv.inputs[6]), 3);  // RELU6
  EXPECT_THAT(conv.outputs, ElementsAre(3u));
  // Parameters come after the tensors.
  for (size_t i = 3; i < 7; ++i) EXPECT_GE(conv.inputs[i], 4u);
  EXPECT_EQ(model.main.operands.size(), 8u);

  const Operand& filter = model.main.operands[1];
  EXPECT_EQ(filter.lifetime, OperandLifeTime::CONSTANT_REFERENCE);  // 432 bytes
  EXPECT_THAT(filter.dimensions, ElementsAre(4, 3, 3, 3));
  const Operand& bias = model.main.operands[2];
  EXPECT_EQ(bias.lifetime, OperandLifeTime::CONSTANT_COPY);  // 16 bytes
  std::vector<float> biasValues(4);
  const auto biasBytes = constantBytes(model, 2);
  std::memcpy(biasValues.data(), biasBytes.data(), 16);
  EXPECT_THAT(biasValues, ElementsAre(1, 2, 3, 4));
  const auto filterBytes = constantBytes(model, 1);
  float first = 0;
  std::memcpy(&first, filterBytes.data(), 4);
  EXPECT_EQ(first, 0.5f);
  EXPECT_EQ(model.main.operands[0].lifetime, OperandLifeTime::SUBGRAPH_INPUT);
  EXPECT_EQ(model.main.operands[3].lifetime, OperandLifeTime::SUBGRAPH_OUTPUT);
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteOperatorMappingTest, Conv2dValidWithDilationUsesTheLayoutForm) {
  const auto bytes = floatConvModel([](flatbuffers::FlatBufferBuilder& fbb) {
    return ::tflite::CreateConv2DOptions(fbb, ::tflite::Padding_VALID, 1, 1,
                                         ::tflite::ActivationFunctionType_RELU, 2, 3)
        .Union();
  });
  auto imported = importTfliteModel(bytes);
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  const Operation& conv = model.main.operations.at(0);
  ASSERT_EQ(conv.inputs.size(), 10u);
  EXPECT_EQ(intParam(model, conv.inputs[3]), 2);  // VALID
  EXPECT_EQ(intParam(model, conv.inputs[4]), 1);
  EXPECT_EQ(intParam(model, conv.inputs[5]), 1);
  EXPECT_EQ(intParam(model, conv.inputs[6]), 1);  // RELU
  EXPECT_EQ(model.main.operands[conv.inputs[7]].type, OperandType::BOOL);
  EXPECT_EQ(constantValue<uint8_t>(model, conv.inputs[7]), 0);  // NHWC
  EXPECT_EQ(intParam(model, conv.inputs[8]), 2);                // dilation w
  EXPECT_EQ(intParam(model, conv.inputs[9]), 3);                // dilation h
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteOperatorMappingTest, RejectsTanhFusedActivation) {
  const auto bytes = floatConvModel([](flatbuffers::FlatBufferBuilder& fbb) {
    return ::tflite::CreateConv2DOptions(fbb, ::tflite::Padding_SAME, 1, 1,
                                         ::tflite::ActivationFunctionType_TANH)
        .Union();
  });
  expectInvalid(importTfliteModel(bytes), "TFLite operator 0 (CONV_2D): fused activation TANH");
}

TEST(TfliteOperatorMappingTest, RejectsConvWithoutOptionsOrWithZeroStride) {
  expectInvalid(importTfliteModel(floatConvModel(
                    [](flatbuffers::FlatBufferBuilder&) { return flatbuffers::Offset<void>(0); })),
                "missing builtin options Conv2DOptions");
  expectInvalid(importTfliteModel(floatConvModel([](flatbuffers::FlatBufferBuilder& fbb) {
                  return ::tflite::CreateConv2DOptions(fbb, ::tflite::Padding_SAME, 0, 1).Union();
                })),
                "stride_w is 0");
}

TEST(TfliteOperatorMappingTest, QuantizedConvGetsBiasScaleAndMissingBiasIsZero) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 4, 4, 2},
                                  .type = ::tflite::TensorType_UINT8,
                                  .name = "in",
                                  .scales = {0.5f},
                                  .zeroPoints = {128}});
  const int32_t filter = m.addConstant<uint8_t>({.shape = {40, 1, 1, 2},
                                                 .type = ::tflite::TensorType_UINT8,
                                                 .name = "filter",
                                                 .scales = {0.25f},
                                                 .zeroPoints = {3}},
                                                std::vector<uint8_t>(80, 7));
  const int32_t out = m.addTensor({.shape = {1, 4, 4, 40},
                                   .type = ::tflite::TensorType_UINT8,
                                   .name = "out",
                                   .scales = {1.0f},
                                   .zeroPoints = {0}});
  const uint32_t code = m.addOperatorCode(::tflite::BuiltinOperator_CONV_2D);
  m.addOperator(code, {in, filter, -1}, {out}, ::tflite::BuiltinOptions_Conv2DOptions,
                ::tflite::CreateConv2DOptions(m.fbb(), ::tflite::Padding_VALID, 1, 1).Union());
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  const Operation& conv = model.main.operations.at(0);
  ASSERT_EQ(conv.inputs.size(), 7u);
  const Operand& bias = model.main.operands[conv.inputs[2]];
  EXPECT_EQ(bias.type, OperandType::TENSOR_INT32);
  EXPECT_THAT(bias.dimensions, ElementsAre(40));
  EXPECT_FLOAT_EQ(bias.scale, 0.125f);
  EXPECT_EQ(bias.zeroPoint, 0);
  EXPECT_EQ(bias.lifetime, OperandLifeTime::CONSTANT_REFERENCE);  // 160 bytes
  EXPECT_EQ(int32Vector(model, conv.inputs[2]), std::vector<int32_t>(40, 0));
  EXPECT_EQ(model.main.operands[conv.inputs[1]].zeroPoint, 3);
  EXPECT_EQ(model.pools.size(), 1u);
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteOperatorMappingTest, DepthwiseConvMultiplierComesFromTheShapes) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 5, 5, 2}, .name = "in"});
  const int32_t filter =
      m.addConstant<float>({.shape = {1, 3, 3, 6}, .name = "filter"}, std::vector<float>(54, 1));
  const int32_t bias = m.addConstant<float>({.shape = {6}, .name = "bias"}, std::vector<float>(6));
  const int32_t out = m.addTensor({.shape = {1, 5, 5, 6}, .name = "out"});
  const uint32_t code = m.addOperatorCode(::tflite::BuiltinOperator_DEPTHWISE_CONV_2D);
  m.addOperator(code, {in, filter, bias}, {out}, ::tflite::BuiltinOptions_DepthwiseConv2DOptions,
                ::tflite::CreateDepthwiseConv2DOptions(
                    m.fbb(), ::tflite::Padding_SAME, 1, 2,
                    /*depth_multiplier=*/0, ::tflite::ActivationFunctionType_RELU_N1_TO_1)
                    .Union());
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  const Operation& op = model.main.operations.at(0);
  EXPECT_EQ(op.type, OperationType::DEPTHWISE_CONV_2D);
  ASSERT_EQ(op.inputs.size(), 8u);
  EXPECT_THAT(std::vector<uint32_t>(op.inputs.begin(), op.inputs.begin() + 3),
              ElementsAre(0u, 1u, 2u));
  EXPECT_EQ(intParam(model, op.inputs[3]), 1);  // SAME
  EXPECT_EQ(intParam(model, op.inputs[4]), 1);  // stride w
  EXPECT_EQ(intParam(model, op.inputs[5]), 2);  // stride h
  EXPECT_EQ(intParam(model, op.inputs[6]), 3);  // 6 / 2 channels
  EXPECT_EQ(intParam(model, op.inputs[7]), 2);  // RELU1
  expectConsistent(model);
  expectValid(model);
}

/// One pooling operator [1,6,6,1] -> [1,2,2,1].
std::vector<uint8_t> poolModel(::tflite::BuiltinOperator code) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 6, 6, 1}, .name = "in"});
  const int32_t out = m.addTensor({.shape = {1, 2, 2, 1}, .name = "out"});
  m.addOperator(m.addOperatorCode(code), {in}, {out}, ::tflite::BuiltinOptions_Pool2DOptions,
                ::tflite::CreatePool2DOptions(m.fbb(), ::tflite::Padding_VALID, 3, 2, 3, 4,
                                              ::tflite::ActivationFunctionType_RELU)
                    .Union());
  return m.finish({in}, {out});
}

TEST(TfliteOperatorMappingTest, PoolingParameters) {
  for (const auto& [code, type] :
       {std::pair{::tflite::BuiltinOperator_AVERAGE_POOL_2D, OperationType::AVERAGE_POOL_2D},
        std::pair{::tflite::BuiltinOperator_MAX_POOL_2D, OperationType::MAX_POOL_2D}}) {
    auto imported = importTfliteModel(poolModel(code));
    ASSERT_TRUE(imported.has_value()) << imported.error().message;
    const Model& model = imported->model;
    const Operation& op = model.main.operations.at(0);
    EXPECT_EQ(op.type, type);
    ASSERT_EQ(op.inputs.size(), 7u);
    EXPECT_EQ(op.inputs[0], 0u);
    std::vector<int32_t> params;
    for (size_t i = 1; i < 7; ++i) params.push_back(intParam(model, op.inputs[i]));
    // padding VALID, stride w 3, stride h 2, filter w 3, filter h 4, RELU
    EXPECT_THAT(params, ElementsAre(2, 3, 2, 3, 4, 1));
    expectConsistent(model);
    expectValid(model);
  }
}

TEST(TfliteOperatorMappingTest, FullyConnectedAndSoftmax) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {2, 3}, .name = "in"});
  const int32_t weights =
      m.addConstant<float>({.shape = {4, 3}, .name = "weights"}, std::vector<float>(12, 1));
  const int32_t hidden = m.addTensor({.shape = {2, 4}, .name = "hidden"});
  const int32_t out = m.addTensor({.shape = {2, 4}, .name = "out"});
  m.addOperator(
      m.addOperatorCode(::tflite::BuiltinOperator_FULLY_CONNECTED), {in, weights}, {hidden},
      ::tflite::BuiltinOptions_FullyConnectedOptions,
      ::tflite::CreateFullyConnectedOptions(m.fbb(), ::tflite::ActivationFunctionType_RELU)
          .Union());
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_SOFTMAX), {hidden}, {out},
                ::tflite::BuiltinOptions_SoftmaxOptions,
                ::tflite::CreateSoftmaxOptions(m.fbb(), 0.75f).Union());
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  ASSERT_EQ(model.main.operations.size(), 2u);
  const Operation& fc = model.main.operations[0];
  EXPECT_EQ(fc.type, OperationType::FULLY_CONNECTED);
  ASSERT_EQ(fc.inputs.size(), 4u);
  EXPECT_EQ(fc.inputs[0], 0u);
  EXPECT_EQ(fc.inputs[1], 1u);
  const Operand& bias = model.main.operands[fc.inputs[2]];
  EXPECT_EQ(bias.type, OperandType::TENSOR_FLOAT32);
  EXPECT_THAT(bias.dimensions, ElementsAre(4));
  EXPECT_EQ(bias.lifetime, OperandLifeTime::CONSTANT_COPY);
  EXPECT_EQ(constantBytes(model, fc.inputs[2]), std::vector<uint8_t>(16, 0));
  EXPECT_EQ(intParam(model, fc.inputs[3]), 1);

  const Operation& softmax = model.main.operations[1];
  EXPECT_EQ(softmax.type, OperationType::SOFTMAX);
  ASSERT_EQ(softmax.inputs.size(), 2u);
  EXPECT_EQ(softmax.inputs[0], 2u);
  EXPECT_EQ(model.main.operands[softmax.inputs[1]].type, OperandType::FLOAT32);
  EXPECT_EQ(constantValue<float>(model, softmax.inputs[1]), 0.75f);
  EXPECT_EQ(model.main.operands[2].numberOfConsumers, 1u);
  expectConsistent(model);
  expectValid(model);
}

// keep_num_dims = true: FULLY_CONNECTED into [batch, units], then RESHAPE to the input's
// leading dimensions and units (as the NNAPI delegate emits it).
TEST(TfliteOperatorMappingTest, FullyConnectedKeepNumDimsBecomesFullyConnectedAndReshape) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {2, 5, 3}, .name = "in"});
  const int32_t weights =
      m.addConstant<float>({.shape = {4, 3}, .name = "weights"}, std::vector<float>(12, 1));
  const int32_t out = m.addTensor({.shape = {2, 5, 4}, .name = "out"});
  m.addFullyConnectedKeepingDims({in, weights}, out);
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported) << imported.error().message;
  const Model& model = imported->model;
  ASSERT_EQ(model.main.operations.size(), 2u);
  const Operation& fc = model.main.operations[0];
  const Operation& reshape = model.main.operations[1];
  EXPECT_EQ(fc.type, OperationType::FULLY_CONNECTED);
  EXPECT_EQ(reshape.type, OperationType::RESHAPE);
  EXPECT_THAT(model.main.operands[fc.outputs[0]].dimensions, ElementsAre(10, 4));
  EXPECT_EQ(reshape.inputs[0], fc.outputs[0]);
  EXPECT_EQ(int32Vector(model, reshape.inputs[1]), (std::vector<int32_t>{2, 5, 4}));
  expectConsistent(model);
  expectValid(model);
}

// A hybrid operator (float input, int8 weights): a DEQUANTIZE of the weights into a float
// temporary comes first, as the NNAPI delegate's AddDequantizeOperatorsWhereNeeded does.
TEST(TfliteOperatorMappingTest, HybridFullyConnectedDequantizesItsWeights) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 3}, .name = "in"});
  const int32_t weights = m.addConstant<int8_t>({.shape = {2, 3},
                                                 .type = ::tflite::TensorType_INT8,
                                                 .name = "weights",
                                                 .scales = {0.1f},
                                                 .zeroPoints = {0}},
                                                std::vector<int8_t>(6, 3));
  const int32_t out = m.addTensor({.shape = {1, 2}, .name = "out"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_FULLY_CONNECTED), {in, weights}, {out});
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported) << imported.error().message;
  const Model& model = imported->model;
  ASSERT_EQ(model.main.operations.size(), 2u);
  const Operation& dequantize = model.main.operations[0];
  const Operation& fc = model.main.operations[1];
  EXPECT_EQ(dequantize.type, OperationType::DEQUANTIZE);
  EXPECT_EQ(fc.type, OperationType::FULLY_CONNECTED);
  EXPECT_EQ(fc.inputs[1], dequantize.outputs[0]);
  const Operand& real = model.main.operands[fc.inputs[1]];
  EXPECT_EQ(real.type, OperandType::TENSOR_FLOAT32);
  EXPECT_THAT(real.dimensions, ElementsAre(2, 3));
  EXPECT_EQ(model.main.operands[fc.inputs[2]].type, OperandType::TENSOR_FLOAT32);
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteOperatorMappingTest, Float16SoftmaxBetaIsFloat16) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 4}, .type = ::tflite::TensorType_FLOAT16});
  const int32_t out = m.addTensor({.shape = {1, 4}, .type = ::tflite::TensorType_FLOAT16});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_SOFTMAX), {in}, {out},
                ::tflite::BuiltinOptions_SoftmaxOptions,
                ::tflite::CreateSoftmaxOptions(m.fbb(), 1.0f).Union());
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  const Operation& op = model.main.operations.at(0);
  EXPECT_EQ(model.main.operands[op.inputs[1]].type, OperandType::FLOAT16);
  EXPECT_EQ(constantValue<uint16_t>(model, op.inputs[1]), 0x3c00);  // 1.0 in binary16
}

TEST(TfliteOperatorMappingTest, FloatToHalfRounding) {
  using hal::tfl::floatToHalfBits;
  EXPECT_EQ(floatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(floatToHalfBits(-2.0f), 0xc000);
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalfBits(1e6f), 0x7c00);
  EXPECT_EQ(floatToHalfBits(0.1f), 0x2e66);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001);         // smallest subnormal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14)), 0x0400);         // smallest normal
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);  // tie to even
  EXPECT_EQ(floatToHalfBits(std::nanf("")) & 0x7e00, 0x7e00);
}

TEST(TfliteOperatorMappingTest, AddMulConcatenationWithNegativeAxis) {
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {1, 2, 3}, .name = "a"});
  const int32_t sum = m.addTensor({.shape = {1, 2, 3}, .name = "sum"});
  const int32_t product = m.addTensor({.shape = {1, 2, 3}, .name = "product"});
  const int32_t joined = m.addTensor({.shape = {1, 2, 6}, .name = "joined"});
  m.addOperator(
      m.addOperatorCode(::tflite::BuiltinOperator_ADD), {a, a}, {sum},
      ::tflite::BuiltinOptions_AddOptions,
      ::tflite::CreateAddOptions(m.fbb(), ::tflite::ActivationFunctionType_RELU6).Union());
  // MUL without options: activation NONE.
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_MUL), {sum, a}, {product});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_CONCATENATION), {sum, product},
                {joined}, ::tflite::BuiltinOptions_ConcatenationOptions,
                ::tflite::CreateConcatenationOptions(m.fbb(), -1).Union());
  auto imported = importTfliteModel(m.finish({a}, {joined}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  ASSERT_EQ(model.main.operations.size(), 3u);
  const Operation& add = model.main.operations[0];
  EXPECT_EQ(add.type, OperationType::ADD);
  ASSERT_EQ(add.inputs.size(), 3u);
  EXPECT_EQ(add.inputs[0], 0u);
  EXPECT_EQ(add.inputs[1], 0u);
  EXPECT_EQ(intParam(model, add.inputs[2]), 3);
  const Operation& mul = model.main.operations[1];
  EXPECT_EQ(mul.type, OperationType::MUL);
  ASSERT_EQ(mul.inputs.size(), 3u);
  EXPECT_EQ(intParam(model, mul.inputs[2]), 0);
  const Operation& concat = model.main.operations[2];
  EXPECT_EQ(concat.type, OperationType::CONCATENATION);
  ASSERT_EQ(concat.inputs.size(), 3u);
  EXPECT_EQ(concat.inputs[0], 1u);
  EXPECT_EQ(concat.inputs[1], 2u);
  EXPECT_EQ(intParam(model, concat.inputs[2]), 2);  // -1 + rank 3
  // "a" feeds ADD twice and MUL once; "sum" feeds MUL and CONCATENATION.
  EXPECT_EQ(model.main.operands[0].numberOfConsumers, 3u);
  EXPECT_EQ(model.main.operands[1].numberOfConsumers, 2u);
  EXPECT_EQ(model.main.operands[3].numberOfConsumers, 0u);
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteOperatorMappingTest, RejectsConcatenationWithFusedActivation) {
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {1, 2}});
  const int32_t out = m.addTensor({.shape = {2, 2}});
  m.addOperator(
      m.addOperatorCode(::tflite::BuiltinOperator_CONCATENATION), {a, a}, {out},
      ::tflite::BuiltinOptions_ConcatenationOptions,
      ::tflite::CreateConcatenationOptions(m.fbb(), 0, ::tflite::ActivationFunctionType_RELU)
          .Union());
  expectInvalid(importTfliteModel(m.finish({a}, {out})), "fused activation RELU");
}

TEST(TfliteOperatorMappingTest, ReshapeShapeFromOptionsOrInputAndMeanKeepDims) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {2, 3, 4}, .name = "in"});
  const int32_t flat = m.addTensor({.shape = {2, 12}, .name = "flat"});
  const int32_t shape = m.addConstant<int32_t>(
      {.shape = {3}, .type = ::tflite::TensorType_INT32, .name = "shape"}, {2, 4, 3});
  const int32_t back = m.addTensor({.shape = {2, 4, 3}, .name = "back"});
  const int32_t axis = m.addConstant<int32_t>(
      {.shape = {}, .type = ::tflite::TensorType_INT32, .name = "axis"}, {1});
  const int32_t mean = m.addTensor({.shape = {2, 1, 3}, .name = "mean"});
  const uint32_t reshape = m.addOperatorCode(::tflite::BuiltinOperator_RESHAPE);
  const std::vector<int32_t> newShape{2, -1};
  m.addOperator(reshape, {in}, {flat}, ::tflite::BuiltinOptions_ReshapeOptions,
                ::tflite::CreateReshapeOptionsDirect(m.fbb(), &newShape).Union());
  m.addOperator(reshape, {flat, shape}, {back});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_MEAN), {back, axis}, {mean},
                ::tflite::BuiltinOptions_ReducerOptions,
                ::tflite::CreateReducerOptions(m.fbb(), true).Union());
  auto imported = importTfliteModel(m.finish({in}, {mean}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  ASSERT_EQ(model.main.operations.size(), 3u);

  const Operation& first = model.main.operations[0];
  EXPECT_EQ(first.type, OperationType::RESHAPE);
  ASSERT_EQ(first.inputs.size(), 2u);
  const Operand& newShapeOperand = model.main.operands[first.inputs[1]];
  EXPECT_EQ(newShapeOperand.type, OperandType::TENSOR_INT32);
  EXPECT_THAT(newShapeOperand.dimensions, ElementsAre(2));
  EXPECT_THAT(int32Vector(model, first.inputs[1]), ElementsAre(2, -1));

  const Operation& second = model.main.operations[1];
  EXPECT_THAT(second.inputs, ElementsAre(1u, 2u));  // the file's shape tensor
  EXPECT_THAT(int32Vector(model, 2), ElementsAre(2, 4, 3));

  const Operation& reduce = model.main.operations[2];
  EXPECT_EQ(reduce.type, OperationType::MEAN);
  ASSERT_EQ(reduce.inputs.size(), 3u);
  EXPECT_EQ(reduce.inputs[1], 4u);
  // A rank-0 constant axis becomes a [1] tensor.
  EXPECT_THAT(model.main.operands[4].dimensions, ElementsAre(1));
  EXPECT_THAT(int32Vector(model, 4), ElementsAre(1));
  EXPECT_EQ(intParam(model, reduce.inputs[2]), 1);
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteOperatorMappingTest, SingleInputOperators) {
  const std::vector<std::pair<::tflite::BuiltinOperator, OperationType>> cases{
      {::tflite::BuiltinOperator_RELU, OperationType::RELU},
      {::tflite::BuiltinOperator_RELU6, OperationType::RELU6},
      {::tflite::BuiltinOperator_RELU_N1_TO_1, OperationType::RELU1},
      {::tflite::BuiltinOperator_LOGISTIC, OperationType::LOGISTIC},
  };
  for (const auto& [code, type] : cases) {
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {1, 3}});
    const int32_t out = m.addTensor({.shape = {1, 3}});
    m.addOperator(m.addOperatorCode(code), {in}, {out});
    auto imported = importTfliteModel(m.finish({in}, {out}));
    ASSERT_TRUE(imported.has_value()) << imported.error().message;
    const Operation& op = imported->model.main.operations.at(0);
    EXPECT_EQ(op.type, type);
    EXPECT_THAT(op.inputs, ElementsAre(0u));
    EXPECT_THAT(op.outputs, ElementsAre(1u));
  }
}

TEST(TfliteOperatorMappingTest, QuantizeDequantizeAndTypes) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {4}, .name = "in"});
  const int32_t q = m.addTensor({.shape = {4},
                                 .type = ::tflite::TensorType_INT8,
                                 .name = "q",
                                 .scales = {0.5f},
                                 .zeroPoints = {-3}});
  const int32_t out = m.addTensor({.shape = {4}, .name = "out"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_QUANTIZE), {in}, {q});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_DEQUANTIZE), {q}, {out});
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  EXPECT_EQ(model.main.operations.at(0).type, OperationType::QUANTIZE);
  EXPECT_EQ(model.main.operations.at(1).type, OperationType::DEQUANTIZE);
  const Operand& quantized = model.main.operands[1];
  EXPECT_EQ(quantized.type, OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
  EXPECT_FLOAT_EQ(quantized.scale, 0.5f);
  EXPECT_EQ(quantized.zeroPoint, -3);
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteOperatorMappingTest, TensorTypeMapping) {
  const std::vector<std::pair<::tflite::TensorType, OperandType>> cases{
      {::tflite::TensorType_FLOAT32, OperandType::TENSOR_FLOAT32},
      {::tflite::TensorType_FLOAT16, OperandType::TENSOR_FLOAT16},
      {::tflite::TensorType_INT32, OperandType::TENSOR_INT32},
      {::tflite::TensorType_BOOL, OperandType::TENSOR_BOOL8},
      {::tflite::TensorType_UINT8, OperandType::TENSOR_QUANT8_ASYMM},
      {::tflite::TensorType_INT8, OperandType::TENSOR_QUANT8_ASYMM_SIGNED},
      {::tflite::TensorType_INT16, OperandType::TENSOR_QUANT16_SYMM},
  };
  for (const auto& [tfliteType, operandType] : cases) {
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}, .type = tfliteType, .scales = {0.5f}});
    const int32_t out = m.addTensor({.shape = {2}, .type = tfliteType, .scales = {0.5f}});
    m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_RELU), {in}, {out});
    auto imported = importTfliteModel(m.finish({in}, {out}));
    ASSERT_TRUE(imported.has_value()) << imported.error().message;
    EXPECT_EQ(imported->inputs.at(0).type, operandType) << toString(operandType);
    EXPECT_EQ(imported->model.main.operands[0].type, operandType);
    const bool quantized = hal::isQuantizedType(operandType);
    EXPECT_EQ(imported->model.main.operands[0].scale, quantized ? 0.5f : 0.0f);
  }
}

TEST(TfliteOperatorMappingTest, PerChannelInt8Filter) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 2, 2, 2},
                                  .type = ::tflite::TensorType_INT8,
                                  .scales = {0.5f},
                                  .zeroPoints = {1}});
  const int32_t filter = m.addConstant<int8_t>({.shape = {3, 1, 1, 2},
                                                .type = ::tflite::TensorType_INT8,
                                                .scales = {0.1f, 0.2f, 0.3f},
                                                .zeroPoints = {0, 0, 0},
                                                .quantizedDimension = 0},
                                               std::vector<int8_t>(6, 1));
  const int32_t bias = m.addConstant<int32_t>(
      {.shape = {3}, .type = ::tflite::TensorType_INT32, .scales = {0.05f, 0.1f, 0.15f}},
      {0, 0, 0});
  const int32_t out = m.addTensor({.shape = {1, 2, 2, 3},
                                   .type = ::tflite::TensorType_INT8,
                                   .scales = {1.0f},
                                   .zeroPoints = {0}});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_CONV_2D), {in, filter, bias}, {out},
                ::tflite::BuiltinOptions_Conv2DOptions,
                ::tflite::CreateConv2DOptions(m.fbb(), ::tflite::Padding_SAME, 1, 1).Union());
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  const Operand& f = model.main.operands[1];
  EXPECT_EQ(f.type, OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL);
  const auto* params = std::get_if<SymmPerChannelQuantParams>(&f.extraParams);
  ASSERT_NE(params, nullptr);
  EXPECT_THAT(params->scales, ElementsAre(0.1f, 0.2f, 0.3f));
  EXPECT_EQ(params->channelDim, 0u);
  const Operand& b = model.main.operands[2];
  EXPECT_EQ(b.type, OperandType::TENSOR_INT32);
  EXPECT_EQ(b.scale, 0.0f);  // per-channel: NNAPI derives each channel's bias scale
  EXPECT_EQ(model.main.operands[0].type, OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
  expectConsistent(model);
  expectValid(model);
}

}  // namespace
}  // namespace nnhal
