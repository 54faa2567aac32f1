// Tests of the TFLite operators beyond the first MobileNet set: for each, a tiny model built
// with the flatbuffers builder, the NNAPI operation(s) and inputs the importer produces, and
// hal::validateModel accepting the result; plus every rejection of the new mappings.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite/model_builder.h"
#include "hal/tflite/operator_mapping.h"
#include "hal/tflite_test_model.h"
#include "hal/tflite_test_util.h"
#include "tflite_schema_generated.h"

// Tensor specs below name only the fields they need; g++ 12 warns about the others.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace nnhal {
namespace {

using ::testing::ElementsAre;
using namespace nnhal::testing;  // NOLINT(google-build-using-namespace): test helpers
namespace lite = ::tflite;
using Spec = TfliteModelMaker::TensorSpec;

// --- helpers -------------------------------------------------------------------------------

/// Imports `bytes`, expecting success, the importer's invariants and a valid HAL model.
Model importValid(const std::vector<uint8_t>& bytes) {
  auto imported = importTfliteModel(bytes);
  EXPECT_TRUE(imported.has_value()) << imported.error().message;
  if (!imported) return {};
  expectConsistent(imported->model);
  expectValid(imported->model);
  return std::move(imported->model);
}

float floatParam(const Model& model, uint32_t index) {
  EXPECT_EQ(model.main.operands.at(index).type, OperandType::FLOAT32) << "operand " << index;
  return constantValue<float>(model, index);
}

bool boolParam(const Model& model, uint32_t index) {
  EXPECT_EQ(model.main.operands.at(index).type, OperandType::BOOL) << "operand " << index;
  return constantValue<uint8_t>(model, index) != 0;
}

bool isOmitted(const Model& model, uint32_t index) {
  return model.main.operands.at(index).lifetime == OperandLifeTime::NO_VALUE;
}

std::vector<OperationType> typesOf(const Model& model) {
  std::vector<OperationType> types;
  for (const Operation& operation : model.main.operations) types.push_back(operation.type);
  return types;
}

Spec floats(std::vector<int32_t> shape, std::string name = "") {
  return {.shape = std::move(shape), .name = std::move(name)};
}
Spec ints(std::vector<int32_t> shape) {
  return {.shape = std::move(shape), .type = lite::TensorType_INT32};
}
Spec bools(std::vector<int32_t> shape) {
  return {.shape = std::move(shape), .type = lite::TensorType_BOOL};
}
Spec uint8s(std::vector<int32_t> shape, float scale, int64_t zeroPoint) {
  return {.shape = std::move(shape),
          .type = lite::TensorType_UINT8,
          .scales = {scale},
          .zeroPoints = {zeroPoint}};
}

/// One operator with the given inputs (graph inputs: every non-constant one) and outputs.
struct OneOperator {
  TfliteModelMaker m;
  std::vector<int32_t> graphInputs;

  int32_t input(const Spec& spec) {
    const int32_t t = m.addTensor(spec);
    graphInputs.push_back(t);
    return t;
  }
  std::vector<uint8_t> finish(lite::BuiltinOperator code, const std::vector<int32_t>& inputs,
                              const std::vector<int32_t>& outputs,
                              lite::BuiltinOptions type = lite::BuiltinOptions_NONE,
                              flatbuffers::Offset<void> options = 0) {
    m.addOperator(m.addOperatorCode(code), inputs, outputs, type, options);
    return m.finish(graphInputs, outputs);
  }
};

// --- element-wise --------------------------------------------------------------------------

TEST(TfliteOperatorMapping2Test, SubAndDivCarryTheirFusedActivation) {
  TfliteModelMaker m;
  const int32_t a = m.addTensor(floats({2, 3}, "a"));
  const int32_t b = m.addTensor(floats({2, 3}, "b"));
  const int32_t difference = m.addTensor(floats({2, 3}));
  const int32_t quotient = m.addTensor(floats({2, 3}));
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_SUB), {a, b}, {difference},
                lite::BuiltinOptions_SubOptions,
                lite::CreateSubOptions(m.fbb(), lite::ActivationFunctionType_RELU6).Union());
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_DIV), {difference, b}, {quotient},
                lite::BuiltinOptions_DivOptions,
                lite::CreateDivOptions(m.fbb(), lite::ActivationFunctionType_RELU).Union());
  const Model model = importValid(m.finish({a, b}, {quotient}));
  ASSERT_THAT(typesOf(model), ElementsAre(OperationType::SUB, OperationType::DIV));
  const Operation& sub = model.main.operations[0];
  ASSERT_EQ(sub.inputs.size(), 3u);
  EXPECT_EQ(sub.inputs[0], 0u);
  EXPECT_EQ(sub.inputs[1], 1u);
  EXPECT_EQ(intParam(model, sub.inputs[2]), 3);  // RELU6
  const Operation& div = model.main.operations[1];
  ASSERT_EQ(div.inputs.size(), 3u);
  EXPECT_EQ(div.inputs[0], 2u);
  EXPECT_EQ(intParam(model, div.inputs[2]), 1);  // RELU
}

TEST(TfliteOperatorMapping2Test, TwoInputOperatorsPassTheirTensors) {
  struct Case {
    lite::BuiltinOperator code;
    OperationType type;
    lite::TensorType in;
    lite::TensorType out;
  };
  const std::vector<Case> cases{
      {lite::BuiltinOperator_MAXIMUM, OperationType::MAXIMUM, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_MINIMUM, OperationType::MINIMUM, lite::TensorType_INT32,
       lite::TensorType_INT32},
      {lite::BuiltinOperator_POW, OperationType::POW, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_PRELU, OperationType::PRELU, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_EQUAL, OperationType::EQUAL, lite::TensorType_FLOAT32,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_NOT_EQUAL, OperationType::NOT_EQUAL, lite::TensorType_INT32,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_GREATER, OperationType::GREATER, lite::TensorType_FLOAT32,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_GREATER_EQUAL, OperationType::GREATER_EQUAL, lite::TensorType_FLOAT32,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_LESS, OperationType::LESS, lite::TensorType_FLOAT32,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_LESS_EQUAL, OperationType::LESS_EQUAL, lite::TensorType_BOOL,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_LOGICAL_AND, OperationType::LOGICAL_AND, lite::TensorType_BOOL,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_LOGICAL_OR, OperationType::LOGICAL_OR, lite::TensorType_BOOL,
       lite::TensorType_BOOL},
  };
  for (const Case& test : cases) {
    OneOperator op;
    const int32_t x = op.input({.shape = {2, 3}, .type = test.in});
    const int32_t y = op.input({.shape = {2, 3}, .type = test.in});
    const int32_t out = op.m.addTensor({.shape = {2, 3}, .type = test.out});
    const Model model = importValid(op.finish(test.code, {x, y}, {out}));
    ASSERT_EQ(model.main.operations.size(), 1u) << toString(test.type);
    const Operation& operation = model.main.operations[0];
    EXPECT_EQ(operation.type, test.type);
    EXPECT_THAT(operation.inputs, ElementsAre(0u, 1u)) << toString(test.type);
    EXPECT_THAT(operation.outputs, ElementsAre(2u)) << toString(test.type);
  }
}

TEST(TfliteOperatorMapping2Test, OneInputOperatorsPassTheirTensor) {
  struct Case {
    lite::BuiltinOperator code;
    OperationType type;
    lite::TensorType in;
    lite::TensorType out;
  };
  const std::vector<Case> cases{
      {lite::BuiltinOperator_ABS, OperationType::ABS, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_EXP, OperationType::EXP, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_LOG, OperationType::LOG, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_NEG, OperationType::NEG, lite::TensorType_INT32,
       lite::TensorType_INT32},
      {lite::BuiltinOperator_RSQRT, OperationType::RSQRT, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_SIN, OperationType::SIN, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_SQRT, OperationType::SQRT, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_FLOOR, OperationType::FLOOR, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_TANH, OperationType::TANH, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_HARD_SWISH, OperationType::HARD_SWISH, lite::TensorType_FLOAT32,
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_LOGICAL_NOT, OperationType::LOGICAL_NOT, lite::TensorType_BOOL,
       lite::TensorType_BOOL},
      {lite::BuiltinOperator_CAST, OperationType::CAST, lite::TensorType_FLOAT32,
       lite::TensorType_INT32},
      {lite::BuiltinOperator_L2_NORMALIZATION, OperationType::L2_NORMALIZATION,
       lite::TensorType_FLOAT32, lite::TensorType_FLOAT32},
  };
  for (const Case& test : cases) {
    OneOperator op;
    const int32_t x = op.input({.shape = {1, 4}, .type = test.in});
    const int32_t out = op.m.addTensor({.shape = {1, 4}, .type = test.out});
    const Model model = importValid(op.finish(test.code, {x}, {out}));
    ASSERT_EQ(model.main.operations.size(), 1u) << toString(test.type);
    EXPECT_EQ(model.main.operations[0].type, test.type);
    EXPECT_THAT(model.main.operations[0].inputs, ElementsAre(0u)) << toString(test.type);
    EXPECT_THAT(model.main.operations[0].outputs, ElementsAre(1u)) << toString(test.type);
  }
}

/// LEAKY_RELU over one tensor of `spec` with the given alpha.
std::vector<uint8_t> leakyReluModel(const Spec& spec, float alpha) {
  OneOperator op;
  const int32_t x = op.input(spec);
  const int32_t out = op.m.addTensor(spec);
  return op.finish(lite::BuiltinOperator_LEAKY_RELU, {x}, {out},
                   lite::BuiltinOptions_LeakyReluOptions,
                   lite::CreateLeakyReluOptions(op.m.fbb(), alpha).Union());
}

TEST(TfliteOperatorMapping2Test, LeakyReluBecomesPreluWithAConstantAlpha) {
  {
    const Model model = importValid(leakyReluModel(floats({2, 2}), 0.2f));
    const Operation& prelu = model.main.operations.at(0);
    EXPECT_EQ(prelu.type, OperationType::PRELU);
    ASSERT_EQ(prelu.inputs.size(), 2u);
    EXPECT_EQ(prelu.inputs[0], 0u);
    const Operand& alpha = model.main.operands[prelu.inputs[1]];
    EXPECT_EQ(alpha.type, OperandType::TENSOR_FLOAT32);
    EXPECT_THAT(alpha.dimensions, ElementsAre(1u));
    float value = 0;
    std::memcpy(&value, constantBytes(model, prelu.inputs[1]).data(), sizeof(value));
    EXPECT_FLOAT_EQ(value, 0.2f);
  }
  {  // uint8: alpha is one step of scale alpha.
    const Model model = importValid(leakyReluModel(uint8s({2, 2}, 0.5f, 128), 0.2f));
    const Operand& alpha = model.main.operands[model.main.operations.at(0).inputs.at(1)];
    EXPECT_EQ(alpha.type, OperandType::TENSOR_QUANT8_ASYMM);
    EXPECT_FLOAT_EQ(alpha.scale, 0.2f);
    EXPECT_EQ(alpha.zeroPoint, 0);
    EXPECT_THAT(constantBytes(model, model.main.operations[0].inputs[1]), ElementsAre(1));
  }
  {  // int8, negative alpha: value 0 below zero point 1.
    const Model model = importValid(leakyReluModel(
        {.shape = {4}, .type = lite::TensorType_INT8, .scales = {0.1f}, .zeroPoints = {-3}},
        -0.5f));
    const Operand& alpha = model.main.operands[model.main.operations.at(0).inputs.at(1)];
    EXPECT_EQ(alpha.type, OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
    EXPECT_FLOAT_EQ(alpha.scale, 0.5f);
    EXPECT_EQ(alpha.zeroPoint, 1);
    EXPECT_THAT(constantBytes(model, model.main.operations[0].inputs[1]), ElementsAre(0));
  }
  {  // float16: a binary16 alpha.
    const Model model =
        importValid(leakyReluModel({.shape = {3}, .type = lite::TensorType_FLOAT16}, 0.25f));
    const uint32_t alpha = model.main.operations.at(0).inputs.at(1);
    EXPECT_EQ(model.main.operands[alpha].type, OperandType::TENSOR_FLOAT16);
    uint16_t bits = 0;
    std::memcpy(&bits, constantBytes(model, alpha).data(), sizeof(bits));
    EXPECT_EQ(bits, hal::tfl::floatToHalfBits(0.25f));
  }
}

TEST(TfliteOperatorMapping2Test, RejectsLeakyReluOnIntegers) {
  expectInvalid(importTfliteModel(leakyReluModel(ints({2}), 0.2f)),
                "TFLite operator 0 (LEAKY_RELU): input type TENSOR_INT32 has no NNAPI PRELU");
}

TEST(TfliteOperatorMapping2Test, EluAndLogSoftmaxGetTheirImplicitParameters) {
  TfliteModelMaker m;
  const int32_t x = m.addTensor(floats({2, 5}));
  const int32_t elu = m.addTensor(floats({2, 5}));
  const int32_t out = m.addTensor(floats({2, 5}));
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_ELU), {x}, {elu});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_LOG_SOFTMAX), {elu}, {out});
  const Model model = importValid(m.finish({x}, {out}));
  ASSERT_THAT(typesOf(model), ElementsAre(OperationType::ELU, OperationType::LOG_SOFTMAX));
  const Operation& eluOp = model.main.operations[0];
  ASSERT_EQ(eluOp.inputs.size(), 2u);
  EXPECT_EQ(floatParam(model, eluOp.inputs[1]), 1.0f);
  const Operation& logSoftmax = model.main.operations[1];
  ASSERT_EQ(logSoftmax.inputs.size(), 3u);
  EXPECT_EQ(logSoftmax.inputs[0], 1u);
  EXPECT_EQ(floatParam(model, logSoftmax.inputs[1]), 1.0f);  // beta
  EXPECT_EQ(intParam(model, logSoftmax.inputs[2]), -1);      // axis
}

TEST(TfliteOperatorMapping2Test, SelectAndSelectV2WithEqualShapes) {
  for (const auto code : {lite::BuiltinOperator_SELECT, lite::BuiltinOperator_SELECT_V2}) {
    OneOperator op;
    const int32_t condition = op.input(bools({2, 2}));
    const int32_t x = op.input(floats({2, 2}));
    const int32_t y = op.input(floats({2, 2}));
    const int32_t out = op.m.addTensor(floats({2, 2}));
    const Model model = importValid(op.finish(code, {condition, x, y}, {out}));
    const Operation& select = model.main.operations.at(0);
    EXPECT_EQ(select.type, OperationType::SELECT);
    EXPECT_THAT(select.inputs, ElementsAre(0u, 1u, 2u));
  }
}

TEST(TfliteOperatorMapping2Test, RejectsBroadcastingSelectV2) {
  OneOperator op;
  const int32_t condition = op.input(bools({2}));
  const int32_t x = op.input(floats({2, 2}));
  const int32_t y = op.input(floats({2, 2}));
  const int32_t out = op.m.addTensor(floats({2, 2}));
  expectInvalid(
      importTfliteModel(op.finish(lite::BuiltinOperator_SELECT_V2, {condition, x, y}, {out})),
      "(SELECT_V2): the condition and both value tensors must have the same shape");
}

TEST(TfliteOperatorMapping2Test, RequantizeGoesThroughFloatAndFloat16DequantizeIsCast) {
  {
    OneOperator op;
    const int32_t x = op.input(uint8s({2, 2}, 0.5f, 128));
    const int32_t out = op.m.addTensor(
        {.shape = {2, 2}, .type = lite::TensorType_INT8, .scales = {0.25f}, .zeroPoints = {0}});
    const Model model = importValid(op.finish(lite::BuiltinOperator_QUANTIZE, {x}, {out}));
    ASSERT_THAT(typesOf(model), ElementsAre(OperationType::DEQUANTIZE, OperationType::QUANTIZE));
    const uint32_t real = model.main.operations[0].outputs.at(0);
    EXPECT_THAT(model.main.operations[0].inputs, ElementsAre(0u));
    EXPECT_EQ(model.main.operands[real].type, OperandType::TENSOR_FLOAT32);
    EXPECT_THAT(model.main.operands[real].dimensions, ElementsAre(2u, 2u));
    EXPECT_THAT(model.main.operations[1].inputs, ElementsAre(real));
    EXPECT_THAT(model.main.operations[1].outputs, ElementsAre(1u));
  }
  {
    TfliteModelMaker m;
    const int32_t x = m.addTensor(floats({3}));
    const int32_t weights = m.addConstant<uint16_t>(
        {.shape = {3}, .type = lite::TensorType_FLOAT16}, {0x3c00, 0x4000, 0x4200});
    const int32_t real = m.addTensor(floats({3}));
    const int32_t out = m.addTensor(floats({3}));
    m.addOperator(m.addOperatorCode(lite::BuiltinOperator_DEQUANTIZE), {weights}, {real});
    m.addOperator(m.addOperatorCode(lite::BuiltinOperator_MUL), {x, real}, {out});
    const Model model = importValid(m.finish({x}, {out}));
    ASSERT_THAT(typesOf(model), ElementsAre(OperationType::CAST, OperationType::MUL));
    EXPECT_THAT(model.main.operations[0].inputs, ElementsAre(1u));
  }
}

// --- normalization and pooling ---------------------------------------------------------------

TEST(TfliteOperatorMapping2Test, LocalResponseNormalizationAndL2Pool) {
  TfliteModelMaker m;
  const int32_t x = m.addTensor(floats({1, 4, 4, 3}));
  const int32_t normalized = m.addTensor(floats({1, 4, 4, 3}));
  const int32_t out = m.addTensor(floats({1, 2, 2, 3}));
  m.addOperator(
      m.addOperatorCode(lite::BuiltinOperator_LOCAL_RESPONSE_NORMALIZATION), {x}, {normalized},
      lite::BuiltinOptions_LocalResponseNormalizationOptions,
      lite::CreateLocalResponseNormalizationOptions(m.fbb(), 2, 1.0f, 0.5f, 0.75f).Union());
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_L2_POOL_2D), {normalized}, {out},
                lite::BuiltinOptions_Pool2DOptions,
                lite::CreatePool2DOptions(m.fbb(), lite::Padding_VALID, 2, 2, 2, 2).Union());
  const Model model = importValid(m.finish({x}, {out}));
  ASSERT_THAT(typesOf(model),
              ElementsAre(OperationType::LOCAL_RESPONSE_NORMALIZATION, OperationType::L2_POOL_2D));
  const Operation& lrn = model.main.operations[0];
  ASSERT_EQ(lrn.inputs.size(), 5u);
  EXPECT_EQ(intParam(model, lrn.inputs[1]), 2);
  EXPECT_EQ(floatParam(model, lrn.inputs[2]), 1.0f);
  EXPECT_EQ(floatParam(model, lrn.inputs[3]), 0.5f);
  EXPECT_EQ(floatParam(model, lrn.inputs[4]), 0.75f);
  const Operation& pool = model.main.operations[1];
  ASSERT_EQ(pool.inputs.size(), 7u);
  std::vector<int32_t> params;
  for (size_t i = 1; i < 7; ++i) params.push_back(intParam(model, pool.inputs[i]));
  EXPECT_THAT(params, ElementsAre(2, 2, 2, 2, 2, 0));
}

TEST(TfliteOperatorMapping2Test, RejectsL2NormalizationWithActivationAndNegativeLrnRadius) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 4}));
    const int32_t out = op.m.addTensor(floats({1, 4}));
    expectInvalid(
        importTfliteModel(op.finish(
            lite::BuiltinOperator_L2_NORMALIZATION, {x}, {out}, lite::BuiltinOptions_L2NormOptions,
            lite::CreateL2NormOptions(op.m.fbb(), lite::ActivationFunctionType_RELU).Union())),
        "fused activation RELU is unsupported on L2_NORMALIZATION");
  }
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 1, 1, 4}));
    const int32_t out = op.m.addTensor(floats({1, 1, 1, 4}));
    expectInvalid(
        importTfliteModel(op.finish(
            lite::BuiltinOperator_LOCAL_RESPONSE_NORMALIZATION, {x}, {out},
            lite::BuiltinOptions_LocalResponseNormalizationOptions,
            lite::CreateLocalResponseNormalizationOptions(op.m.fbb(), -1, 1, 1, 1).Union())),
        "radius is -1");
  }
}

TEST(TfliteOperatorMapping2Test, ReductionsTakeABoolKeepDims) {
  struct Case {
    lite::BuiltinOperator code;
    OperationType type;
    lite::TensorType dataType;
    bool keepDims;
  };
  const std::vector<Case> cases{
      {lite::BuiltinOperator_SUM, OperationType::REDUCE_SUM, lite::TensorType_FLOAT32, true},
      {lite::BuiltinOperator_REDUCE_PROD, OperationType::REDUCE_PROD, lite::TensorType_FLOAT32,
       false},
      {lite::BuiltinOperator_REDUCE_MAX, OperationType::REDUCE_MAX, lite::TensorType_FLOAT32, true},
      {lite::BuiltinOperator_REDUCE_MIN, OperationType::REDUCE_MIN, lite::TensorType_FLOAT32,
       false},
      {lite::BuiltinOperator_REDUCE_ANY, OperationType::REDUCE_ANY, lite::TensorType_BOOL, true},
      {lite::BuiltinOperator_REDUCE_ALL, OperationType::REDUCE_ALL, lite::TensorType_BOOL, false},
  };
  for (const Case& test : cases) {
    OneOperator op;
    const int32_t x = op.input({.shape = {2, 3}, .type = test.dataType});
    const int32_t axes = op.m.addConstant<int32_t>(ints({1}), {1});
    const int32_t out = op.m.addTensor(
        {.shape = test.keepDims ? std::vector<int32_t>{2, 1} : std::vector<int32_t>{2},
         .type = test.dataType});
    const Model model =
        importValid(op.finish(test.code, {x, axes}, {out}, lite::BuiltinOptions_ReducerOptions,
                              lite::CreateReducerOptions(op.m.fbb(), test.keepDims).Union()));
    const Operation& reduce = model.main.operations.at(0);
    EXPECT_EQ(reduce.type, test.type);
    ASSERT_EQ(reduce.inputs.size(), 3u);
    EXPECT_EQ(reduce.inputs[0], 0u);
    EXPECT_EQ(reduce.inputs[1], 1u);
    EXPECT_EQ(boolParam(model, reduce.inputs[2]), test.keepDims) << toString(test.type);
  }
}

// --- shapes and indexing --------------------------------------------------------------------

TEST(TfliteOperatorMapping2Test, PadWithoutValueIsPadAndWithValueIsPadV2) {
  const std::vector<int32_t> paddingValues{0, 0, 1, 1, 1, 1, 0, 0};
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 2, 2, 1}));
    const int32_t paddings = op.m.addConstant<int32_t>(ints({4, 2}), paddingValues);
    const int32_t out = op.m.addTensor(floats({1, 4, 4, 1}));
    const Model model = importValid(op.finish(lite::BuiltinOperator_PAD, {x, paddings}, {out}));
    const Operation& pad = model.main.operations.at(0);
    EXPECT_EQ(pad.type, OperationType::PAD);
    EXPECT_THAT(pad.inputs, ElementsAre(0u, 1u));
    EXPECT_EQ(int32Vector(model, 1), paddingValues);
  }
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 2, 2, 1}));
    const int32_t paddings = op.m.addConstant<int32_t>(ints({4, 2}), paddingValues);
    const int32_t value = op.m.addConstant<float>(floats({}), {1.5f});
    const int32_t out = op.m.addTensor(floats({1, 4, 4, 1}));
    const Model model =
        importValid(op.finish(lite::BuiltinOperator_PADV2, {x, paddings, value}, {out}));
    const Operation& pad = model.main.operations.at(0);
    EXPECT_EQ(pad.type, OperationType::PAD_V2);
    ASSERT_EQ(pad.inputs.size(), 3u);
    EXPECT_EQ(floatParam(model, pad.inputs[2]), 1.5f);
  }
  {  // Quantized: the value (scale 0.25: raw 20 = 5.0) requantized to the input's 0.5 / 10.
    OneOperator op;
    const int32_t x = op.input(uint8s({1, 2, 2, 1}, 0.5f, 10));
    const int32_t paddings = op.m.addConstant<int32_t>(ints({4, 2}), paddingValues);
    const int32_t value = op.m.addConstant<uint8_t>(uint8s({1}, 0.25f, 0), {20});
    const int32_t out = op.m.addTensor(uint8s({1, 4, 4, 1}, 0.5f, 10));
    const Model model =
        importValid(op.finish(lite::BuiltinOperator_PADV2, {x, paddings, value}, {out}));
    const Operation& pad = model.main.operations.at(0);
    EXPECT_EQ(pad.type, OperationType::PAD_V2);
    EXPECT_EQ(intParam(model, pad.inputs.at(2)), 20);
  }
}

TEST(TfliteOperatorMapping2Test, RejectsPadV2WithAComputedPadValue) {
  OneOperator op;
  const int32_t x = op.input(floats({1, 2}));
  const int32_t paddings = op.m.addConstant<int32_t>(ints({2, 2}), {0, 0, 1, 1});
  const int32_t value = op.input(floats({1}));
  const int32_t out = op.m.addTensor(floats({1, 4}));
  expectInvalid(
      importTfliteModel(op.finish(lite::BuiltinOperator_PADV2, {x, paddings, value}, {out})),
      "the constant_values tensor must be a constant");
}

TEST(TfliteOperatorMapping2Test, SqueezeListsItsDimsOrOmitsThem) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 3, 1}));
    const int32_t out = op.m.addTensor(floats({3, 1}));
    const std::vector<int32_t> dims{0};
    const Model model = importValid(
        op.finish(lite::BuiltinOperator_SQUEEZE, {x}, {out}, lite::BuiltinOptions_SqueezeOptions,
                  lite::CreateSqueezeOptionsDirect(op.m.fbb(), &dims).Union()));
    const Operation& squeeze = model.main.operations.at(0);
    EXPECT_EQ(squeeze.type, OperationType::SQUEEZE);
    ASSERT_EQ(squeeze.inputs.size(), 2u);
    EXPECT_THAT(int32Vector(model, squeeze.inputs[1]), ElementsAre(0));
  }
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 3, 1}));
    const int32_t out = op.m.addTensor(floats({3}));
    const Model model = importValid(op.finish(lite::BuiltinOperator_SQUEEZE, {x}, {out}));
    const Operation& squeeze = model.main.operations.at(0);
    ASSERT_EQ(squeeze.inputs.size(), 2u);
    EXPECT_TRUE(isOmitted(model, squeeze.inputs[1]));
    EXPECT_EQ(model.main.operands[squeeze.inputs[1]].type, OperandType::TENSOR_INT32);
  }
}

TEST(TfliteOperatorMapping2Test, AxisTensorsBecomeScalars) {
  struct Case {
    lite::BuiltinOperator code;
    OperationType type;
    std::vector<int32_t> outShape;
    lite::TensorType outType;
  };
  const std::vector<Case> cases{
      {lite::BuiltinOperator_EXPAND_DIMS,
       OperationType::EXPAND_DIMS,
       {2, 5, 1},
       lite::TensorType_FLOAT32},
      {lite::BuiltinOperator_ARG_MAX, OperationType::ARGMAX, {2}, lite::TensorType_INT32},
      {lite::BuiltinOperator_ARG_MIN, OperationType::ARGMIN, {2}, lite::TensorType_INT32},
  };
  for (const Case& test : cases) {
    OneOperator op;
    const int32_t x = op.input(floats({2, 5}));
    const int32_t axis = op.m.addConstant<int32_t>(ints({}), {-1});
    const int32_t out = op.m.addTensor({.shape = test.outShape, .type = test.outType});
    const Model model = importValid(op.finish(test.code, {x, axis}, {out}));
    const Operation& operation = model.main.operations.at(0);
    EXPECT_EQ(operation.type, test.type);
    ASSERT_EQ(operation.inputs.size(), 2u);
    EXPECT_EQ(operation.inputs[0], 0u);
    EXPECT_EQ(intParam(model, operation.inputs[1]), -1) << toString(test.type);
  }
}

TEST(TfliteOperatorMapping2Test, RejectsAComputedAxis) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 5}));
  const int32_t axis = op.input(ints({1}));
  const int32_t out = op.m.addTensor(floats({2, 5, 1}));
  expectInvalid(importTfliteModel(op.finish(lite::BuiltinOperator_EXPAND_DIMS, {x, axis}, {out})),
                "TFLite operator 0 (EXPAND_DIMS): the axis tensor must be a constant");
}

/// STRIDED_SLICE of a [4, 4] input with the given options.
std::vector<uint8_t> stridedSliceModel(int32_t beginMask, int32_t endMask, int32_t ellipsisMask,
                                       int32_t newAxisMask, int32_t shrinkMask, bool offset) {
  OneOperator op;
  const int32_t x = op.input(floats({4, 4}));
  const int32_t begin = op.m.addConstant<int32_t>(ints({2}), {1, 0});
  const int32_t end = op.m.addConstant<int32_t>(ints({2}), {3, 4});
  const int32_t strides = op.m.addConstant<int32_t>(ints({2}), {1, 2});
  const int32_t out = op.m.addTensor(floats({2}));
  return op.finish(lite::BuiltinOperator_STRIDED_SLICE, {x, begin, end, strides}, {out},
                   lite::BuiltinOptions_StridedSliceOptions,
                   lite::CreateStridedSliceOptions(op.m.fbb(), beginMask, endMask, ellipsisMask,
                                                   newAxisMask, shrinkMask, offset)
                       .Union());
}

TEST(TfliteOperatorMapping2Test, StridedSliceMasksBecomeScalars) {
  const Model model = importValid(stridedSliceModel(1, 2, 0, 0, 1, false));
  const Operation& slice = model.main.operations.at(0);
  EXPECT_EQ(slice.type, OperationType::STRIDED_SLICE);
  ASSERT_EQ(slice.inputs.size(), 7u);
  EXPECT_THAT(std::vector<uint32_t>(slice.inputs.begin(), slice.inputs.begin() + 4),
              ElementsAre(0u, 1u, 2u, 3u));
  EXPECT_EQ(intParam(model, slice.inputs[4]), 1);  // begin mask
  EXPECT_EQ(intParam(model, slice.inputs[5]), 2);  // end mask
  EXPECT_EQ(intParam(model, slice.inputs[6]), 1);  // shrink axis mask
}

TEST(TfliteOperatorMapping2Test, RejectsStridedSliceMasksNnapiLacks) {
  expectInvalid(importTfliteModel(stridedSliceModel(0, 0, 1, 0, 0, false)),
                "(STRIDED_SLICE): ellipsis_mask is unsupported");
  expectInvalid(importTfliteModel(stridedSliceModel(0, 0, 0, 2, 0, false)),
                "new_axis_mask is unsupported");
  expectInvalid(importTfliteModel(stridedSliceModel(0, 0, 0, 0, 0, true)),
                "offset = true is unsupported");
}

TEST(TfliteOperatorMapping2Test, SliceTransposeTileAndGather) {
  TfliteModelMaker m;
  const int32_t x = m.addTensor(floats({3, 4}));
  const int32_t begin = m.addConstant<int32_t>(ints({2}), {0, 1});
  const int32_t size = m.addConstant<int32_t>(ints({2}), {3, 2});
  const int32_t sliced = m.addTensor(floats({3, 2}));
  const int32_t perm = m.addConstant<int32_t>(ints({2}), {1, 0});
  const int32_t transposed = m.addTensor(floats({2, 3}));
  const int32_t multiples = m.addConstant<int32_t>(ints({2}), {2, 1});
  const int32_t tiled = m.addTensor(floats({4, 3}));
  const int32_t indices = m.addConstant<int32_t>(ints({2}), {2, 0});
  const int32_t gathered = m.addTensor(floats({4, 2}));
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_SLICE), {x, begin, size}, {sliced});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_TRANSPOSE), {sliced, perm}, {transposed});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_TILE), {transposed, multiples}, {tiled});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_GATHER), {tiled, indices}, {gathered},
                lite::BuiltinOptions_GatherOptions, lite::CreateGatherOptions(m.fbb(), 1).Union());
  const Model model = importValid(m.finish({x}, {gathered}));
  ASSERT_THAT(typesOf(model), ElementsAre(OperationType::SLICE, OperationType::TRANSPOSE,
                                          OperationType::TILE, OperationType::GATHER));
  EXPECT_THAT(model.main.operations[0].inputs, ElementsAre(0u, 1u, 2u));
  EXPECT_THAT(model.main.operations[1].inputs, ElementsAre(3u, 4u));
  EXPECT_THAT(model.main.operations[2].inputs, ElementsAre(5u, 6u));
  const Operation& gather = model.main.operations[3];
  ASSERT_EQ(gather.inputs.size(), 3u);  // input, axis, indices
  EXPECT_EQ(gather.inputs[0], 7u);
  EXPECT_EQ(intParam(model, gather.inputs[1]), 1);
  EXPECT_EQ(gather.inputs[2], 8u);
}

TEST(TfliteOperatorMapping2Test, RejectsGatherBatchDims) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 3}));
  const int32_t indices = op.input(ints({2, 1}));
  const int32_t out = op.m.addTensor(floats({2, 1}));
  expectInvalid(importTfliteModel(op.finish(lite::BuiltinOperator_GATHER, {x, indices}, {out},
                                            lite::BuiltinOptions_GatherOptions,
                                            lite::CreateGatherOptions(op.m.fbb(), 1, 1).Union())),
                "batch_dims 1 is unsupported");
}

TEST(TfliteOperatorMapping2Test, SpaceDepthAndBatchOperators) {
  TfliteModelMaker m;
  const int32_t x = m.addTensor(floats({1, 4, 4, 1}));
  const int32_t deep = m.addTensor(floats({1, 2, 2, 4}));
  const int32_t back = m.addTensor(floats({1, 4, 4, 1}));
  const int32_t block = m.addConstant<int32_t>(ints({2}), {2, 2});
  const int32_t paddings = m.addConstant<int32_t>(ints({2, 2}), {0, 0, 0, 0});
  const int32_t batched = m.addTensor(floats({4, 2, 2, 1}));
  const int32_t crops = m.addConstant<int32_t>(ints({2, 2}), {0, 0, 0, 0});
  const int32_t out = m.addTensor(floats({1, 4, 4, 1}));
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_SPACE_TO_DEPTH), {x}, {deep},
                lite::BuiltinOptions_SpaceToDepthOptions,
                lite::CreateSpaceToDepthOptions(m.fbb(), 2).Union());
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_DEPTH_TO_SPACE), {deep}, {back},
                lite::BuiltinOptions_DepthToSpaceOptions,
                lite::CreateDepthToSpaceOptions(m.fbb(), 2).Union());
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_SPACE_TO_BATCH_ND), {back, block, paddings},
                {batched});
  m.addOperator(m.addOperatorCode(lite::BuiltinOperator_BATCH_TO_SPACE_ND), {batched, block, crops},
                {out});
  const Model model = importValid(m.finish({x}, {out}));
  ASSERT_THAT(typesOf(model),
              ElementsAre(OperationType::SPACE_TO_DEPTH, OperationType::DEPTH_TO_SPACE,
                          OperationType::SPACE_TO_BATCH_ND, OperationType::BATCH_TO_SPACE_ND));
  EXPECT_EQ(intParam(model, model.main.operations[0].inputs.at(1)), 2);
  EXPECT_EQ(intParam(model, model.main.operations[1].inputs.at(1)), 2);
  EXPECT_THAT(model.main.operations[2].inputs, ElementsAre(2u, 3u, 4u));
  EXPECT_THAT(model.main.operations[3].inputs, ElementsAre(5u, 3u));  // crops dropped
}

TEST(TfliteOperatorMapping2Test, RejectsNonZeroCropsAndZeroBlockSize) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({4, 2, 2, 1}));
    const int32_t block = op.m.addConstant<int32_t>(ints({2}), {2, 2});
    const int32_t crops = op.m.addConstant<int32_t>(ints({2, 2}), {0, 1, 0, 0});
    const int32_t out = op.m.addTensor(floats({1, 3, 4, 1}));
    expectInvalid(importTfliteModel(
                      op.finish(lite::BuiltinOperator_BATCH_TO_SPACE_ND, {x, block, crops}, {out})),
                  "non-zero crops have no NNAPI equivalent");
  }
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 4, 4, 1}));
    const int32_t out = op.m.addTensor(floats({1, 4, 4, 1}));
    expectInvalid(
        importTfliteModel(op.finish(lite::BuiltinOperator_SPACE_TO_DEPTH, {x}, {out},
                                    lite::BuiltinOptions_SpaceToDepthOptions,
                                    lite::CreateSpaceToDepthOptions(op.m.fbb(), 0).Union())),
        "block_size is 0");
  }
}

TEST(TfliteOperatorMapping2Test, TopKAndFill) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({2, 5}));
    const int32_t k = op.m.addConstant<int32_t>(ints({}), {3});
    const int32_t values = op.m.addTensor(floats({2, 3}));
    const int32_t indices = op.m.addTensor(ints({2, 3}));
    const Model model =
        importValid(op.finish(lite::BuiltinOperator_TOPK_V2, {x, k}, {values, indices}));
    const Operation& topk = model.main.operations.at(0);
    EXPECT_EQ(topk.type, OperationType::TOPK_V2);
    ASSERT_EQ(topk.inputs.size(), 2u);
    EXPECT_EQ(intParam(model, topk.inputs[1]), 3);
    EXPECT_THAT(topk.outputs, ElementsAre(2u, 3u));
  }
  for (const auto type : {lite::TensorType_FLOAT32, lite::TensorType_INT32}) {
    OneOperator op;
    const int32_t dims = op.input(ints({2}));
    const int32_t value = type == lite::TensorType_FLOAT32
                              ? op.m.addConstant<float>(floats({}), {2.5f})
                              : op.m.addConstant<int32_t>(ints({}), {7});
    const int32_t out = op.m.addTensor({.shape = {2, 3}, .type = type});
    const Model model = importValid(op.finish(lite::BuiltinOperator_FILL, {dims, value}, {out}));
    const Operation& fill = model.main.operations.at(0);
    EXPECT_EQ(fill.type, OperationType::FILL);
    ASSERT_EQ(fill.inputs.size(), 2u);
    EXPECT_EQ(fill.inputs[0], 0u);
    if (type == lite::TensorType_FLOAT32) {
      EXPECT_EQ(floatParam(model, fill.inputs[1]), 2.5f);
    } else {
      EXPECT_EQ(intParam(model, fill.inputs[1]), 7);
    }
  }
}

TEST(TfliteOperatorMapping2Test, RejectsTopKZeroAndBoolFill) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({2, 5}));
    const int32_t k = op.m.addConstant<int32_t>(ints({1}), {0});
    const int32_t values = op.m.addTensor(floats({2, 1}));
    const int32_t indices = op.m.addTensor(ints({2, 1}));
    expectInvalid(
        importTfliteModel(op.finish(lite::BuiltinOperator_TOPK_V2, {x, k}, {values, indices})),
        "k is 0");
  }
  {
    OneOperator op;
    const int32_t dims = op.input(ints({1}));
    const int32_t value = op.m.addConstant<uint8_t>(bools({}), {1});
    const int32_t out = op.m.addTensor(bools({2}));
    expectInvalid(importTfliteModel(op.finish(lite::BuiltinOperator_FILL, {dims, value}, {out})),
                  "has type TENSOR_BOOL8");
  }
}

// --- split and pack -------------------------------------------------------------------------

TEST(TfliteOperatorMapping2Test, SplitReordersAxisAndValue) {
  OneOperator op;
  const int32_t x = op.input(floats({4, 6}));
  const int32_t axis = op.m.addConstant<int32_t>(ints({}), {1});
  const int32_t a = op.m.addTensor(floats({4, 3}));
  const int32_t b = op.m.addTensor(floats({4, 3}));
  const Model model = importValid(op.finish(lite::BuiltinOperator_SPLIT, {axis, x}, {a, b},
                                            lite::BuiltinOptions_SplitOptions,
                                            lite::CreateSplitOptions(op.m.fbb(), 2).Union()));
  const Operation& split = model.main.operations.at(0);
  EXPECT_EQ(split.type, OperationType::SPLIT);
  ASSERT_EQ(split.inputs.size(), 3u);
  EXPECT_EQ(split.inputs[0], 0u);
  EXPECT_EQ(intParam(model, split.inputs[1]), 1);
  EXPECT_EQ(intParam(model, split.inputs[2]), 2);
  EXPECT_THAT(split.outputs, ElementsAre(2u, 3u));
}

/// SPLIT_V of a [4, 6] input along axis 1 into outputs of `widths`, with `sizes` in the file.
std::vector<uint8_t> splitVModel(const std::vector<int32_t>& sizes,
                                 const std::vector<int32_t>& widths) {
  OneOperator op;
  const int32_t x = op.input(floats({4, 6}));
  const int32_t sizesTensor =
      op.m.addConstant<int32_t>(ints({static_cast<int32_t>(sizes.size())}), sizes);
  const int32_t axis = op.m.addConstant<int32_t>(ints({}), {-1});
  std::vector<int32_t> outputs;
  for (const int32_t width : widths) outputs.push_back(op.m.addTensor(floats({4, width})));
  return op.finish(
      lite::BuiltinOperator_SPLIT_V, {x, sizesTensor, axis}, outputs,
      lite::BuiltinOptions_SplitVOptions,
      lite::CreateSplitVOptions(op.m.fbb(), static_cast<int32_t>(widths.size())).Union());
}

TEST(TfliteOperatorMapping2Test, SplitVWithEqualSizesIsSplitOtherwiseSlices) {
  {
    const Model model = importValid(splitVModel({3, -1}, {3, 3}));
    const Operation& split = model.main.operations.at(0);
    EXPECT_EQ(split.type, OperationType::SPLIT);
    EXPECT_EQ(intParam(model, split.inputs.at(1)), 1);  // axis -1 normalized
    EXPECT_EQ(intParam(model, split.inputs.at(2)), 2);
  }
  {
    const Model model = importValid(splitVModel({2, -1}, {2, 4}));
    ASSERT_THAT(typesOf(model), ElementsAre(OperationType::SLICE, OperationType::SLICE));
    const Operation& first = model.main.operations[0];
    const Operation& second = model.main.operations[1];
    EXPECT_EQ(first.inputs.at(0), 0u);
    EXPECT_THAT(int32Vector(model, first.inputs.at(1)), ElementsAre(0, 0));
    EXPECT_THAT(int32Vector(model, first.inputs.at(2)), ElementsAre(4, 2));
    EXPECT_THAT(int32Vector(model, second.inputs.at(1)), ElementsAre(0, 2));
    EXPECT_THAT(int32Vector(model, second.inputs.at(2)), ElementsAre(4, 4));
    EXPECT_NE(first.outputs, second.outputs);
  }
}

TEST(TfliteOperatorMapping2Test, RejectsBadSplitSizes) {
  expectInvalid(importTfliteModel(splitVModel({2, 2}, {2, 2})), "size_splits add up to 4, not 6");
  expectInvalid(importTfliteModel(splitVModel({-1, -1}, {3, 3})), "size_splits[1] is -1");
  expectInvalid(importTfliteModel(splitVModel({6, -1}, {6, 1})), "nothing for the -1 entry");
  expectInvalid(importTfliteModel(splitVModel({6}, {3, 3})), "size_splits has 1 entries");
  OneOperator op;
  const int32_t x = op.input(floats({4, 6}));
  const int32_t axis = op.m.addConstant<int32_t>(ints({}), {1});
  const int32_t a = op.m.addTensor(floats({4, 3}));
  const int32_t b = op.m.addTensor(floats({4, 3}));
  expectInvalid(importTfliteModel(op.finish(lite::BuiltinOperator_SPLIT, {axis, x}, {a, b},
                                            lite::BuiltinOptions_SplitOptions,
                                            lite::CreateSplitOptions(op.m.fbb(), 3).Union())),
                "num_splits is 3 but there are 2 outputs");
}

/// PACK of `count` [2, 3] tensors of `spec` type along `axis`.
std::vector<uint8_t> packModel(int count, int32_t axis, const std::vector<int32_t>& outShape,
                               Spec spec = floats({2, 3}), int32_t valuesCount = -1) {
  OneOperator op;
  std::vector<int32_t> inputs;
  for (int i = 0; i < count; ++i) inputs.push_back(op.input(spec));
  Spec outSpec = spec;
  outSpec.shape = outShape;
  const int32_t out = op.m.addTensor(outSpec);
  return op.finish(
      lite::BuiltinOperator_PACK, inputs, {out}, lite::BuiltinOptions_PackOptions,
      lite::CreatePackOptions(op.m.fbb(), valuesCount < 0 ? count : valuesCount, axis).Union());
}

TEST(TfliteOperatorMapping2Test, PackIsExpandDimsOfEachInputThenConcatenation) {
  const Model model = importValid(packModel(3, 1, {2, 3, 3}));
  ASSERT_THAT(typesOf(model),
              ElementsAre(OperationType::EXPAND_DIMS, OperationType::EXPAND_DIMS,
                          OperationType::EXPAND_DIMS, OperationType::CONCATENATION));
  std::vector<uint32_t> expanded;
  for (uint32_t i = 0; i < 3; ++i) {
    const Operation& expand = model.main.operations[i];
    ASSERT_EQ(expand.inputs.size(), 2u);
    EXPECT_EQ(expand.inputs[0], i);
    EXPECT_EQ(intParam(model, expand.inputs[1]), 1);
    ASSERT_EQ(expand.outputs.size(), 1u);
    const Operand& temporary = model.main.operands[expand.outputs[0]];
    EXPECT_EQ(temporary.lifetime, OperandLifeTime::TEMPORARY_VARIABLE);
    EXPECT_THAT(temporary.dimensions, ElementsAre(2u, 1u, 3u));
    expanded.push_back(expand.outputs[0]);
  }
  const Operation& concat = model.main.operations[3];
  ASSERT_EQ(concat.inputs.size(), 4u);
  EXPECT_EQ(std::vector<uint32_t>(concat.inputs.begin(), concat.inputs.begin() + 3), expanded);
  EXPECT_EQ(intParam(model, concat.inputs[3]), 1);
  EXPECT_THAT(concat.outputs, ElementsAre(3u));
}

TEST(TfliteOperatorMapping2Test, PackAlongTheLastAxisKeepsQuantization) {
  const Model model = importValid(packModel(2, -1, {2, 3, 2}, uint8s({2, 3}, 0.5f, 7)));
  ASSERT_EQ(model.main.operations.size(), 3u);
  const Operand& temporary = model.main.operands[model.main.operations[0].outputs.at(0)];
  EXPECT_EQ(temporary.type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_FLOAT_EQ(temporary.scale, 0.5f);
  EXPECT_EQ(temporary.zeroPoint, 7);
  EXPECT_THAT(temporary.dimensions, ElementsAre(2u, 3u, 1u));
  EXPECT_EQ(intParam(model, model.main.operations[2].inputs.at(2)), 2);  // -1 of rank 3
}

TEST(TfliteOperatorMapping2Test, PackOfOneInputIsOneExpandDims) {
  const Model model = importValid(packModel(1, 0, {1, 2, 3}));
  ASSERT_THAT(typesOf(model), ElementsAre(OperationType::EXPAND_DIMS));
  EXPECT_THAT(model.main.operations[0].outputs, ElementsAre(1u));
}

TEST(TfliteOperatorMapping2Test, RejectsPackCountAndAxisMismatch) {
  expectInvalid(importTfliteModel(packModel(2, 0, {2, 2, 3}, floats({2, 3}), 3)),
                "(PACK): values_count is 3 but there are 2 inputs");
  expectInvalid(importTfliteModel(packModel(2, 3, {2, 3, 2})), "axis 3 is outside [-3, 3)");
}

/// UNPACK of a [3, 2, 4] input along `axis` into `count` outputs of `outShape`.
std::vector<uint8_t> unpackModel(int32_t axis, int count, const std::vector<int32_t>& outShape,
                                 int32_t num) {
  OneOperator op;
  const int32_t x = op.input(floats({3, 2, 4}));
  std::vector<int32_t> outputs;
  for (int i = 0; i < count; ++i) outputs.push_back(op.m.addTensor(floats(outShape)));
  return op.finish(lite::BuiltinOperator_UNPACK, {x}, outputs, lite::BuiltinOptions_UnpackOptions,
                   lite::CreateUnpackOptions(op.m.fbb(), num, axis).Union());
}

TEST(TfliteOperatorMapping2Test, UnpackIsSplitThenSqueeze) {
  const Model model = importValid(unpackModel(1, 2, {3, 4}, 2));
  ASSERT_THAT(typesOf(model),
              ElementsAre(OperationType::SPLIT, OperationType::SQUEEZE, OperationType::SQUEEZE));
  const Operation& split = model.main.operations[0];
  ASSERT_EQ(split.inputs.size(), 3u);
  EXPECT_EQ(split.inputs[0], 0u);
  EXPECT_EQ(intParam(model, split.inputs[1]), 1);
  EXPECT_EQ(intParam(model, split.inputs[2]), 2);
  ASSERT_EQ(split.outputs.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    const Operand& slice = model.main.operands[split.outputs[k]];
    EXPECT_EQ(slice.lifetime, OperandLifeTime::TEMPORARY_VARIABLE);
    EXPECT_THAT(slice.dimensions, ElementsAre(3u, 1u, 4u));
    const Operation& squeeze = model.main.operations[1 + k];
    ASSERT_EQ(squeeze.inputs.size(), 2u);
    EXPECT_EQ(squeeze.inputs[0], split.outputs[k]);
    EXPECT_THAT(int32Vector(model, squeeze.inputs[1]), ElementsAre(1));
    EXPECT_THAT(squeeze.outputs, ElementsAre(static_cast<uint32_t>(1 + k)));
  }
}

TEST(TfliteOperatorMapping2Test, RejectsUnpackCountMismatch) {
  expectInvalid(importTfliteModel(unpackModel(0, 2, {2, 4}, 2)),
                "(UNPACK): the axis dimension is 3 but there are 2 outputs");
  expectInvalid(importTfliteModel(unpackModel(1, 2, {3, 4}, 3)), "num is 3 but there are 2");
  expectInvalid(importTfliteModel(unpackModel(-4, 2, {3, 4}, 2)), "axis -4 is outside [-3, 3)");
}

// --- image operators ------------------------------------------------------------------------

/// A resize of a [1, 2, 2, 1] input to [1, 4, 6, 1] through a constant size tensor.
std::vector<uint8_t> resizeModel(lite::BuiltinOperator code, bool alignCorners, bool halfPixel) {
  OneOperator op;
  const int32_t x = op.input(floats({1, 2, 2, 1}));
  const int32_t size = op.m.addConstant<int32_t>(ints({2}), {4, 6});
  const int32_t out = op.m.addTensor(floats({1, 4, 6, 1}));
  if (code == lite::BuiltinOperator_RESIZE_BILINEAR) {
    return op.finish(
        code, {x, size}, {out}, lite::BuiltinOptions_ResizeBilinearOptions,
        lite::CreateResizeBilinearOptions(op.m.fbb(), alignCorners, halfPixel).Union());
  }
  return op.finish(
      code, {x, size}, {out}, lite::BuiltinOptions_ResizeNearestNeighborOptions,
      lite::CreateResizeNearestNeighborOptions(op.m.fbb(), alignCorners, halfPixel).Union());
}

TEST(TfliteOperatorMapping2Test, ResizeBilinearHalfPixelCentersUsesTheOptionalInputs) {
  const Model model = importValid(resizeModel(lite::BuiltinOperator_RESIZE_BILINEAR, false, true));
  const Operation& resize = model.main.operations.at(0);
  EXPECT_EQ(resize.type, OperationType::RESIZE_BILINEAR);
  ASSERT_EQ(resize.inputs.size(), 6u);
  EXPECT_EQ(resize.inputs[0], 0u);
  EXPECT_EQ(intParam(model, resize.inputs[1]), 6);   // width
  EXPECT_EQ(intParam(model, resize.inputs[2]), 4);   // height
  EXPECT_FALSE(boolParam(model, resize.inputs[3]));  // NHWC
  EXPECT_FALSE(boolParam(model, resize.inputs[4]));  // align corners
  EXPECT_TRUE(boolParam(model, resize.inputs[5]));   // half pixel centers
}

TEST(TfliteOperatorMapping2Test, ResizeWithoutCornerOptions) {
  const Model bilinear =
      importValid(resizeModel(lite::BuiltinOperator_RESIZE_BILINEAR, false, false));
  EXPECT_EQ(bilinear.main.operations.at(0).inputs.size(), 3u);
  const Model nearest =
      importValid(resizeModel(lite::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR, false, false));
  const Operation& resize = nearest.main.operations.at(0);
  EXPECT_EQ(resize.type, OperationType::RESIZE_NEAREST_NEIGHBOR);
  ASSERT_EQ(resize.inputs.size(), 4u);  // the layout input is required here
  EXPECT_FALSE(boolParam(nearest, resize.inputs[3]));
  const Model aligned =
      importValid(resizeModel(lite::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR, true, false));
  ASSERT_EQ(aligned.main.operations.at(0).inputs.size(), 6u);
  EXPECT_TRUE(boolParam(aligned, aligned.main.operations[0].inputs[4]));
}

TEST(TfliteOperatorMapping2Test, ResizeWithAComputedSizeUsesTheOutputShape) {
  OneOperator op;
  const int32_t x = op.input(floats({1, 2, 2, 1}));
  const int32_t size = op.input(ints({2}));
  const int32_t out = op.m.addTensor(floats({1, 3, 5, 1}));
  const Model model =
      importValid(op.finish(lite::BuiltinOperator_RESIZE_BILINEAR, {x, size}, {out}));
  const Operation& resize = model.main.operations.at(0);
  EXPECT_EQ(intParam(model, resize.inputs.at(1)), 5);
  EXPECT_EQ(intParam(model, resize.inputs.at(2)), 3);
}

TEST(TfliteOperatorMapping2Test, RejectsResizeWithBothCornerOptions) {
  expectInvalid(importTfliteModel(resizeModel(lite::BuiltinOperator_RESIZE_BILINEAR, true, true)),
                "align_corners and half_pixel_centers cannot both be true");
}

TEST(TfliteOperatorMapping2Test, TransposeConvReordersInputsAndAddsAZeroBias) {
  OneOperator op;
  const int32_t shape = op.m.addConstant<int32_t>(ints({4}), {1, 4, 4, 2});
  const int32_t weights =
      op.m.addConstant<float>(floats({2, 3, 3, 1}), std::vector<float>(18, 0.5f));
  const int32_t x = op.input(floats({1, 2, 2, 1}));
  const int32_t out = op.m.addTensor(floats({1, 4, 4, 2}));
  const Model model = importValid(
      op.finish(lite::BuiltinOperator_TRANSPOSE_CONV, {shape, weights, x}, {out},
                lite::BuiltinOptions_TransposeConvOptions,
                lite::CreateTransposeConvOptions(op.m.fbb(), lite::Padding_SAME, 2, 2).Union()));
  const Operation& conv = model.main.operations.at(0);
  EXPECT_EQ(conv.type, OperationType::TRANSPOSE_CONV_2D);
  ASSERT_EQ(conv.inputs.size(), 9u);
  EXPECT_EQ(conv.inputs[0], 2u);  // input
  EXPECT_EQ(conv.inputs[1], 1u);  // filter
  const Operand& bias = model.main.operands[conv.inputs[2]];
  EXPECT_EQ(bias.type, OperandType::TENSOR_FLOAT32);
  EXPECT_THAT(bias.dimensions, ElementsAre(2u));
  EXPECT_EQ(constantBytes(model, conv.inputs[2]), std::vector<uint8_t>(8, 0));
  EXPECT_EQ(conv.inputs[3], 0u);                  // output shape tensor
  EXPECT_EQ(intParam(model, conv.inputs[4]), 1);  // SAME
  EXPECT_EQ(intParam(model, conv.inputs[5]), 2);
  EXPECT_EQ(intParam(model, conv.inputs[6]), 2);
  EXPECT_EQ(intParam(model, conv.inputs[7]), 0);   // no activation
  EXPECT_FALSE(boolParam(model, conv.inputs[8]));  // NHWC
  EXPECT_THAT(conv.outputs, ElementsAre(3u));
}

TEST(TfliteOperatorMapping2Test, QuantizedTransposeConvBiasGetsItsScale) {
  OneOperator op;
  const int32_t shape = op.m.addConstant<int32_t>(ints({4}), {1, 4, 4, 2});
  const int32_t weights =
      op.m.addConstant<uint8_t>(uint8s({2, 3, 3, 1}, 0.25f, 3), std::vector<uint8_t>(18, 9));
  const int32_t x = op.input(uint8s({1, 2, 2, 1}, 0.5f, 128));
  const int32_t bias = op.m.addConstant<int32_t>(ints({2}), {5, -5});
  const int32_t out = op.m.addTensor(uint8s({1, 4, 4, 2}, 1.0f, 0));
  const Model model =
      importValid(op.finish(lite::BuiltinOperator_TRANSPOSE_CONV, {shape, weights, x, bias}, {out},
                            lite::BuiltinOptions_TransposeConvOptions,
                            lite::CreateTransposeConvOptions(op.m.fbb(), lite::Padding_VALID, 1, 1,
                                                             lite::ActivationFunctionType_RELU)
                                .Union()));
  const Operation& conv = model.main.operations.at(0);
  ASSERT_EQ(conv.inputs.size(), 9u);
  EXPECT_EQ(conv.inputs[2], 3u);
  EXPECT_FLOAT_EQ(model.main.operands[3].scale, 0.125f);
  EXPECT_EQ(intParam(model, conv.inputs[4]), 2);  // VALID
  EXPECT_EQ(intParam(model, conv.inputs[7]), 1);  // RELU
}

TEST(TfliteOperatorMapping2Test, RejectsTransposeConvWithAFloatShapeOrZeroStride) {
  {
    OneOperator op;
    const int32_t shape = op.m.addConstant<float>(floats({4}), {1, 4, 4, 2});
    const int32_t weights = op.m.addConstant<float>(floats({2, 1, 1, 1}), {1, 1});
    const int32_t x = op.input(floats({1, 2, 2, 1}));
    const int32_t out = op.m.addTensor(floats({1, 4, 4, 2}));
    expectInvalid(
        importTfliteModel(op.finish(
            lite::BuiltinOperator_TRANSPOSE_CONV, {shape, weights, x}, {out},
            lite::BuiltinOptions_TransposeConvOptions,
            lite::CreateTransposeConvOptions(op.m.fbb(), lite::Padding_SAME, 1, 1).Union())),
        "the output shape tensor must be INT32");
  }
  {
    OneOperator op;
    const int32_t shape = op.m.addConstant<int32_t>(ints({4}), {1, 4, 4, 2});
    const int32_t weights = op.m.addConstant<float>(floats({2, 1, 1, 1}), {1, 1});
    const int32_t x = op.input(floats({1, 2, 2, 1}));
    const int32_t out = op.m.addTensor(floats({1, 4, 4, 2}));
    expectInvalid(
        importTfliteModel(op.finish(
            lite::BuiltinOperator_TRANSPOSE_CONV, {shape, weights, x}, {out},
            lite::BuiltinOptions_TransposeConvOptions,
            lite::CreateTransposeConvOptions(op.m.fbb(), lite::Padding_SAME, 0, 1).Union())),
        "(TRANSPOSE_CONV): stride_w is 0");
  }
}

// --- lookups and hashing --------------------------------------------------------------------

TEST(TfliteOperatorMapping2Test, EmbeddingAndHashtableLookup) {
  {
    OneOperator op;
    const int32_t ids = op.input(ints({2}));
    const int32_t values = op.m.addConstant<float>(floats({4, 3}), std::vector<float>(12, 1));
    const int32_t out = op.m.addTensor(floats({2, 3}));
    const Model model =
        importValid(op.finish(lite::BuiltinOperator_EMBEDDING_LOOKUP, {ids, values}, {out}));
    EXPECT_EQ(model.main.operations.at(0).type, OperationType::EMBEDDING_LOOKUP);
    EXPECT_THAT(model.main.operations[0].inputs, ElementsAre(0u, 1u));
  }
  {
    // The hits output is UINT8 without quantization, as converters write it.
    OneOperator op;
    const int32_t lookups = op.input(ints({2}));
    const int32_t keys = op.m.addConstant<int32_t>(ints({4}), {1, 5, 9, 13});
    const int32_t values = op.m.addConstant<float>(floats({4, 3}), std::vector<float>(12, 1));
    const int32_t out = op.m.addTensor(floats({2, 3}));
    const int32_t hits = op.m.addTensor({.shape = {2}, .type = lite::TensorType_UINT8});
    const Model model = importValid(
        op.finish(lite::BuiltinOperator_HASHTABLE_LOOKUP, {lookups, keys, values}, {out, hits}));
    const Operation& lookup = model.main.operations.at(0);
    EXPECT_EQ(lookup.type, OperationType::HASHTABLE_LOOKUP);
    EXPECT_THAT(lookup.inputs, ElementsAre(0u, 1u, 2u));
    EXPECT_THAT(lookup.outputs, ElementsAre(3u, 4u));
    EXPECT_EQ(model.main.operands[4].type, OperandType::TENSOR_QUANT8_ASYMM);
    EXPECT_EQ(model.main.operands[4].scale, 1.0f);
  }
}

std::vector<uint8_t> lshModel(lite::LSHProjectionType type, bool weight) {
  OneOperator op;
  const int32_t hash = op.m.addConstant<float>(floats({4, 2}), std::vector<float>(8, 0.5f));
  const int32_t x = op.input(ints({3, 2}));
  std::vector<int32_t> inputs{hash, x};
  if (weight) inputs.push_back(op.m.addConstant<float>(floats({3}), {1, 2, 3}));
  const int32_t out = op.m.addTensor(ints({type == lite::LSHProjectionType_DENSE ? 8 : 4}));
  return op.finish(lite::BuiltinOperator_LSH_PROJECTION, inputs, {out},
                   lite::BuiltinOptions_LSHProjectionOptions,
                   lite::CreateLSHProjectionOptions(op.m.fbb(), type).Union());
}

TEST(TfliteOperatorMapping2Test, LshProjectionTypesAndOmittedWeight) {
  {
    const Model model = importValid(lshModel(lite::LSHProjectionType_SPARSE, false));
    const Operation& lsh = model.main.operations.at(0);
    EXPECT_EQ(lsh.type, OperationType::LSH_PROJECTION);
    ASSERT_EQ(lsh.inputs.size(), 4u);
    EXPECT_EQ(lsh.inputs[0], 0u);
    EXPECT_EQ(lsh.inputs[1], 1u);
    EXPECT_TRUE(isOmitted(model, lsh.inputs[2]));
    EXPECT_EQ(intParam(model, lsh.inputs[3]), 3);  // sparse
  }
  {
    const Model model = importValid(lshModel(lite::LSHProjectionType_DENSE, true));
    const Operation& lsh = model.main.operations.at(0);
    EXPECT_EQ(lsh.inputs.at(2), 2u);
    EXPECT_EQ(intParam(model, lsh.inputs.at(3)), 2);  // dense
  }
  expectInvalid(importTfliteModel(lshModel(lite::LSHProjectionType_UNKNOWN, false)),
                "(LSH_PROJECTION): projection type 0 is neither SPARSE nor DENSE");
}

// --- recurrent layers -----------------------------------------------------------------------

/// The weights and biases of a basic RNN cell: [units, input], [units, units], [units].
struct RnnWeights {
  int32_t weights;
  int32_t recurrent;
  int32_t bias;
};

RnnWeights addRnnWeights(TfliteModelMaker& m, int32_t units, int32_t inputSize) {
  return {m.addConstant<float>(floats({units, inputSize}),
                               std::vector<float>(static_cast<size_t>(units * inputSize), 0.1f)),
          m.addConstant<float>(floats({units, units}),
                               std::vector<float>(static_cast<size_t>(units * units), 0.2f)),
          m.addConstant<float>(floats({units}), std::vector<float>(static_cast<size_t>(units)))};
}

TEST(TfliteOperatorMapping2Test, RnnStateBecomesAZeroConstantAndANewStateOutput) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 3}));
  const RnnWeights w = addRnnWeights(op.m, 4, 3);
  const int32_t hidden = op.m.addTensor({.shape = {2, 4}, .name = "h", .variable = true});
  const int32_t out = op.m.addTensor(floats({2, 4}));
  const Model model = importValid(
      op.finish(lite::BuiltinOperator_RNN, {x, w.weights, w.recurrent, w.bias, hidden}, {out},
                lite::BuiltinOptions_RNNOptions,
                lite::CreateRNNOptions(op.m.fbb(), lite::ActivationFunctionType_TANH).Union()));
  const Operation& rnn = model.main.operations.at(0);
  EXPECT_EQ(rnn.type, OperationType::RNN);
  ASSERT_EQ(rnn.inputs.size(), 6u);
  EXPECT_THAT(std::vector<uint32_t>(rnn.inputs.begin(), rnn.inputs.begin() + 5),
              ElementsAre(0u, 1u, 2u, 3u, 4u));
  EXPECT_EQ(intParam(model, rnn.inputs[5]), 4);  // tanh
  const Operand& state = model.main.operands[4];
  EXPECT_EQ(state.lifetime, OperandLifeTime::CONSTANT_COPY);
  EXPECT_EQ(constantBytes(model, 4), std::vector<uint8_t>(32, 0));
  ASSERT_EQ(rnn.outputs.size(), 2u);
  const Operand& stateOut = model.main.operands[rnn.outputs[0]];
  EXPECT_EQ(stateOut.lifetime, OperandLifeTime::TEMPORARY_VARIABLE);
  EXPECT_THAT(stateOut.dimensions, ElementsAre(2u, 4u));
  EXPECT_EQ(rnn.outputs[1], 5u);
  EXPECT_EQ(model.main.inputIndexes.size(), 1u);  // the state is not a model input
}

TEST(TfliteOperatorMapping2Test, RejectsSignBitRecurrentActivationAndShapelessState) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({2, 3}));
    const RnnWeights w = addRnnWeights(op.m, 4, 3);
    const int32_t hidden = op.m.addTensor({.shape = {2, 4}, .variable = true});
    const int32_t out = op.m.addTensor(floats({2, 4}));
    expectInvalid(
        importTfliteModel(op.finish(
            lite::BuiltinOperator_RNN, {x, w.weights, w.recurrent, w.bias, hidden}, {out},
            lite::BuiltinOptions_RNNOptions,
            lite::CreateRNNOptions(op.m.fbb(), lite::ActivationFunctionType_SIGN_BIT).Union())),
        "(RNN): activation SIGN_BIT has no NNAPI equivalent");
  }
  {
    OneOperator op;
    const int32_t x = op.input(floats({2, 3}));
    const RnnWeights w = addRnnWeights(op.m, 4, 3);
    const int32_t hidden = op.m.addTensor({.shape = {}, .name = "h", .variable = true});
    const int32_t out = op.m.addTensor(floats({2, 4}));
    expectInvalid(importTfliteModel(op.finish(lite::BuiltinOperator_RNN,
                                              {x, w.weights, w.recurrent, w.bias, hidden}, {out})),
                  "TFLite tensor 4 ('h'): a variable tensor needs a fully specified shape");
  }
}

TEST(TfliteOperatorMapping2Test, SequenceRnnsTakeTimeMajorAndMergeOutputs) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({3, 2, 3}));
    const RnnWeights w = addRnnWeights(op.m, 4, 3);
    const int32_t hidden = op.m.addTensor({.shape = {2, 4}, .variable = true});
    const int32_t out = op.m.addTensor(floats({3, 2, 4}));
    const Model model = importValid(op.finish(
        lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_RNN,
        {x, w.weights, w.recurrent, w.bias, hidden}, {out}, lite::BuiltinOptions_SequenceRNNOptions,
        lite::CreateSequenceRNNOptions(op.m.fbb(), true, lite::ActivationFunctionType_RELU)
            .Union()));
    const Operation& rnn = model.main.operations.at(0);
    EXPECT_EQ(rnn.type, OperationType::UNIDIRECTIONAL_SEQUENCE_RNN);
    ASSERT_EQ(rnn.inputs.size(), 7u);
    EXPECT_EQ(intParam(model, rnn.inputs[5]), 1);  // RELU
    EXPECT_EQ(intParam(model, rnn.inputs[6]), 1);  // time major
    EXPECT_THAT(rnn.outputs, ElementsAre(5u));
  }
  {
    OneOperator op;
    const int32_t x = op.input(floats({2, 3, 3}));
    const RnnWeights fw = addRnnWeights(op.m, 4, 3);
    const int32_t fwHidden = op.m.addTensor({.shape = {2, 4}, .variable = true});
    const RnnWeights bw = addRnnWeights(op.m, 4, 3);
    const int32_t bwHidden = op.m.addTensor({.shape = {2, 4}, .variable = true});
    const int32_t fwOut = op.m.addTensor(floats({2, 3, 4}));
    const int32_t bwOut = op.m.addTensor(floats({2, 3, 4}));
    const Model model =
        importValid(op.finish(lite::BuiltinOperator_BIDIRECTIONAL_SEQUENCE_RNN,
                              {x, fw.weights, fw.recurrent, fw.bias, fwHidden, bw.weights,
                               bw.recurrent, bw.bias, bwHidden, -1, -1, -1},
                              {fwOut, bwOut}, lite::BuiltinOptions_BidirectionalSequenceRNNOptions,
                              lite::CreateBidirectionalSequenceRNNOptions(
                                  op.m.fbb(), false, lite::ActivationFunctionType_TANH, false)
                                  .Union()));
    const Operation& rnn = model.main.operations.at(0);
    EXPECT_EQ(rnn.type, OperationType::BIDIRECTIONAL_SEQUENCE_RNN);
    ASSERT_EQ(rnn.inputs.size(), 15u);
    for (uint32_t i = 0; i < 9; ++i) EXPECT_EQ(rnn.inputs[i], i);
    for (size_t i = 9; i < 12; ++i) EXPECT_TRUE(isOmitted(model, rnn.inputs[i])) << i;
    EXPECT_EQ(intParam(model, rnn.inputs[12]), 4);
    EXPECT_FALSE(boolParam(model, rnn.inputs[13]));  // time major
    EXPECT_FALSE(boolParam(model, rnn.inputs[14]));  // merge outputs
    EXPECT_THAT(rnn.outputs, ElementsAre(9u, 10u));
  }
}

TEST(TfliteOperatorMapping2Test, RejectsBidirectionalRnnOutputCountMismatch) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 3, 3}));
  const RnnWeights fw = addRnnWeights(op.m, 4, 3);
  const int32_t fwHidden = op.m.addTensor({.shape = {2, 4}, .variable = true});
  const RnnWeights bw = addRnnWeights(op.m, 4, 3);
  const int32_t bwHidden = op.m.addTensor({.shape = {2, 4}, .variable = true});
  const int32_t fwOut = op.m.addTensor(floats({2, 3, 8}));
  const int32_t bwOut = op.m.addTensor(floats({2, 3, 4}));
  expectInvalid(importTfliteModel(
                    op.finish(lite::BuiltinOperator_BIDIRECTIONAL_SEQUENCE_RNN,
                              {x, fw.weights, fw.recurrent, fw.bias, fwHidden, bw.weights,
                               bw.recurrent, bw.bias, bwHidden},
                              {fwOut, bwOut}, lite::BuiltinOptions_BidirectionalSequenceRNNOptions,
                              lite::CreateBidirectionalSequenceRNNOptions(
                                  op.m.fbb(), false, lite::ActivationFunctionType_TANH, true)
                                  .Union())),
                "has 2 outputs; expected 1 (merged outputs)");
}

TEST(TfliteOperatorMapping2Test, SvdfOmitsItsBiasAndAddsAStateOutput) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 3}));
  const int32_t feature = op.m.addConstant<float>(floats({4, 3}), std::vector<float>(12, 1));
  const int32_t time = op.m.addConstant<float>(floats({4, 5}), std::vector<float>(20, 1));
  const int32_t state = op.m.addTensor({.shape = {2, 20}, .variable = true});
  const int32_t out = op.m.addTensor(floats({2, 2}));
  const Model model = importValid(
      op.finish(lite::BuiltinOperator_SVDF, {x, feature, time, -1, state}, {out},
                lite::BuiltinOptions_SVDFOptions,
                lite::CreateSVDFOptions(op.m.fbb(), 2, lite::ActivationFunctionType_RELU).Union()));
  const Operation& svdf = model.main.operations.at(0);
  EXPECT_EQ(svdf.type, OperationType::SVDF);
  ASSERT_EQ(svdf.inputs.size(), 7u);
  EXPECT_TRUE(isOmitted(model, svdf.inputs[3]));
  EXPECT_EQ(svdf.inputs[4], 3u);
  EXPECT_EQ(model.main.operands[3].lifetime, OperandLifeTime::CONSTANT_REFERENCE);  // 160 B
  EXPECT_EQ(intParam(model, svdf.inputs[5]), 2);                                    // rank
  EXPECT_EQ(intParam(model, svdf.inputs[6]), 1);                                    // RELU
  ASSERT_EQ(svdf.outputs.size(), 2u);
  EXPECT_THAT(model.main.operands[svdf.outputs[0]].dimensions, ElementsAre(2u, 20u));
  EXPECT_EQ(svdf.outputs[1], 4u);
}

/// Appends the 17 weight inputs of one LSTM direction: CIFG (no input gate), no peepholes, no
/// projection; -1 for the omitted ones.
void addLstmWeights(TfliteModelMaker& m, std::vector<int32_t>& inputs, int32_t cells,
                    int32_t inputSize) {
  const auto matrix = [&](int32_t cols) {
    return m.addConstant<float>(floats({cells, cols}),
                                std::vector<float>(static_cast<size_t>(cells * cols), 0.1f));
  };
  const auto vector = [&] {
    return m.addConstant<float>(floats({cells}), std::vector<float>(static_cast<size_t>(cells)));
  };
  inputs.push_back(-1);  // 1 input to input
  for (int i = 0; i < 3; ++i) inputs.push_back(matrix(inputSize));
  inputs.push_back(-1);  // 5 recurrent to input
  for (int i = 0; i < 3; ++i) inputs.push_back(matrix(cells));
  for (int i = 0; i < 4; ++i) inputs.push_back(-1);  // 9-11 peepholes, 12 input gate bias
  for (int i = 0; i < 3; ++i) inputs.push_back(vector());
  inputs.push_back(-1);  // 16 projection weights
  inputs.push_back(-1);  // 17 projection bias
}

TEST(TfliteOperatorMapping2Test, UnidirectionalSequenceLstmWithCifgAndLayerNorm) {
  OneOperator op;
  const int32_t x = op.input(floats({1, 2, 3}));  // batch major [batch, time, input]
  std::vector<int32_t> inputs{x};
  addLstmWeights(op.m, inputs, 4, 3);
  inputs.push_back(op.m.addTensor({.shape = {1, 4}, .variable = true}));  // 18 output state
  inputs.push_back(op.m.addTensor({.shape = {1, 4}, .variable = true}));  // 19 cell state
  inputs.push_back(-1);                                                   // 20 input gate norm
  for (int i = 0; i < 3; ++i) {
    inputs.push_back(op.m.addConstant<float>(floats({4}), {1, 1, 1, 1}));  // 21-23
  }
  const int32_t out = op.m.addTensor(floats({1, 2, 4}));
  const Model model =
      importValid(op.finish(lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, {out},
                            lite::BuiltinOptions_UnidirectionalSequenceLSTMOptions,
                            lite::CreateUnidirectionalSequenceLSTMOptions(
                                op.m.fbb(), lite::ActivationFunctionType_TANH, 10.0f, 0.0f, false)
                                .Union()));
  const Operation& lstm = model.main.operations.at(0);
  EXPECT_EQ(lstm.type, OperationType::UNIDIRECTIONAL_SEQUENCE_LSTM);
  ASSERT_EQ(lstm.inputs.size(), 28u);
  for (const size_t omitted : {1, 5, 9, 10, 11, 12, 16, 17, 24}) {
    EXPECT_TRUE(isOmitted(model, lstm.inputs[omitted])) << "input " << omitted;
    EXPECT_EQ(model.main.operands[lstm.inputs[omitted]].type, OperandType::TENSOR_FLOAT32);
  }
  for (const size_t present : {0, 2, 3, 4, 6, 7, 8, 13, 14, 15, 18, 19, 25, 26, 27}) {
    EXPECT_FALSE(isOmitted(model, lstm.inputs[present])) << "input " << present;
  }
  EXPECT_EQ(lstm.inputs[0], 0u);
  EXPECT_EQ(intParam(model, lstm.inputs[20]), 4);  // tanh
  EXPECT_EQ(floatParam(model, lstm.inputs[21]), 10.0f);
  EXPECT_EQ(floatParam(model, lstm.inputs[22]), 0.0f);
  EXPECT_FALSE(boolParam(model, lstm.inputs[23]));  // batch major
  // The states are zero constants.
  for (const size_t state : {18, 19}) {
    EXPECT_EQ(model.main.operands[lstm.inputs[state]].lifetime, OperandLifeTime::CONSTANT_COPY);
    EXPECT_EQ(constantBytes(model, lstm.inputs[state]), std::vector<uint8_t>(16, 0));
  }
  ASSERT_EQ(lstm.outputs.size(), 1u);
  EXPECT_EQ(model.main.operands[lstm.outputs[0]].lifetime, OperandLifeTime::SUBGRAPH_OUTPUT);
}

TEST(TfliteOperatorMapping2Test, UnidirectionalSequenceLstmWithoutLayerNormOmitsIt) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 1, 3}));
  std::vector<int32_t> inputs{x};
  addLstmWeights(op.m, inputs, 4, 3);
  inputs.push_back(op.m.addTensor({.shape = {1, 4}, .variable = true}));
  inputs.push_back(op.m.addTensor({.shape = {1, 4}, .variable = true}));
  const int32_t out = op.m.addTensor(floats({2, 1, 4}));
  const Model model =
      importValid(op.finish(lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, {out},
                            lite::BuiltinOptions_UnidirectionalSequenceLSTMOptions,
                            lite::CreateUnidirectionalSequenceLSTMOptions(
                                op.m.fbb(), lite::ActivationFunctionType_TANH, 0.0f, 0.0f, true)
                                .Union()));
  const Operation& lstm = model.main.operations.at(0);
  ASSERT_EQ(lstm.inputs.size(), 28u);
  EXPECT_TRUE(boolParam(model, lstm.inputs[23]));  // time major
  for (size_t i = 24; i < 28; ++i) EXPECT_TRUE(isOmitted(model, lstm.inputs[i])) << i;
}

TEST(TfliteOperatorMapping2Test, LstmWritesScratchAndStateOutputs) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 3}));
  std::vector<int32_t> inputs{x};
  addLstmWeights(op.m, inputs, 4, 3);
  inputs.push_back(op.m.addTensor({.shape = {2, 4}, .variable = true}));
  inputs.push_back(op.m.addTensor({.shape = {2, 4}, .variable = true}));
  const int32_t out = op.m.addTensor(floats({2, 4}));
  const Model model = importValid(op.finish(
      lite::BuiltinOperator_LSTM, inputs, {out}, lite::BuiltinOptions_LSTMOptions,
      lite::CreateLSTMOptions(op.m.fbb(), lite::ActivationFunctionType_TANH, 0.0f, 3.0f).Union()));
  const Operation& lstm = model.main.operations.at(0);
  EXPECT_EQ(lstm.type, OperationType::LSTM);
  ASSERT_EQ(lstm.inputs.size(), 23u);
  EXPECT_EQ(intParam(model, lstm.inputs[20]), 4);
  EXPECT_EQ(floatParam(model, lstm.inputs[21]), 0.0f);
  EXPECT_EQ(floatParam(model, lstm.inputs[22]), 3.0f);
  ASSERT_EQ(lstm.outputs.size(), 4u);
  EXPECT_THAT(model.main.operands[lstm.outputs[0]].dimensions, ElementsAre(2u, 12u));  // CIFG
  EXPECT_THAT(model.main.operands[lstm.outputs[1]].dimensions, ElementsAre(2u, 4u));
  EXPECT_THAT(model.main.operands[lstm.outputs[2]].dimensions, ElementsAre(2u, 4u));
  EXPECT_EQ(model.main.operands[lstm.outputs[3]].lifetime, OperandLifeTime::SUBGRAPH_OUTPUT);
}

TEST(TfliteOperatorMapping2Test, RejectsBasicLstmKernelAndMissingRequiredWeights) {
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 3}));
    const int32_t out = op.m.addTensor(floats({1, 4}));
    expectInvalid(
        importTfliteModel(op.finish(
            lite::BuiltinOperator_LSTM, {x, x, x, x, x}, {out}, lite::BuiltinOptions_LSTMOptions,
            lite::CreateLSTMOptions(op.m.fbb(), lite::ActivationFunctionType_TANH, 0, 0,
                                    lite::LSTMKernelType_BASIC)
                .Union())),
        "(LSTM): the BASIC kernel type is unsupported");
  }
  {
    OneOperator op;
    const int32_t x = op.input(floats({1, 1, 3}));
    std::vector<int32_t> inputs{x};
    addLstmWeights(op.m, inputs, 4, 3);
    inputs[2] = -1;  // input to forget weights are required
    inputs.push_back(op.m.addTensor({.shape = {1, 4}, .variable = true}));
    inputs.push_back(op.m.addTensor({.shape = {1, 4}, .variable = true}));
    const int32_t out = op.m.addTensor(floats({1, 1, 4}));
    expectInvalid(importTfliteModel(
                      op.finish(lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM, inputs, {out})),
                  "input 2 is omitted (-1)");
  }
}

TEST(TfliteOperatorMapping2Test, BidirectionalSequenceLstmAddsOmittedLayerNorms) {
  OneOperator op;
  const int32_t x = op.input(floats({2, 1, 3}));  // time major
  std::vector<int32_t> inputs{x};
  addLstmWeights(op.m, inputs, 4, 3);  // forward 1-17
  addLstmWeights(op.m, inputs, 4, 3);  // backward 18-34
  for (int i = 0; i < 4; ++i) {        // 35-38 states
    inputs.push_back(op.m.addTensor({.shape = {1, 4}, .variable = true}));
  }
  for (int i = 39; i < 48; ++i) inputs.push_back(-1);  // auxiliary input and weights
  const int32_t out = op.m.addTensor(floats({2, 1, 8}));
  const Model model = importValid(
      op.finish(lite::BuiltinOperator_BIDIRECTIONAL_SEQUENCE_LSTM, inputs, {out},
                lite::BuiltinOptions_BidirectionalSequenceLSTMOptions,
                lite::CreateBidirectionalSequenceLSTMOptions(
                    op.m.fbb(), lite::ActivationFunctionType_TANH, 0.0f, 0.0f, true, true)
                    .Union()));
  const Operation& lstm = model.main.operations.at(0);
  EXPECT_EQ(lstm.type, OperationType::BIDIRECTIONAL_SEQUENCE_LSTM);
  ASSERT_EQ(lstm.inputs.size(), 61u);
  EXPECT_TRUE(isOmitted(model, lstm.inputs[18]));   // backward input to input
  EXPECT_FALSE(isOmitted(model, lstm.inputs[19]));  // backward input to forget
  for (size_t i = 35; i < 39; ++i) EXPECT_FALSE(isOmitted(model, lstm.inputs[i])) << i;
  for (size_t i = 39; i < 48; ++i) EXPECT_TRUE(isOmitted(model, lstm.inputs[i])) << i;
  EXPECT_EQ(intParam(model, lstm.inputs[48]), 4);
  EXPECT_TRUE(boolParam(model, lstm.inputs[51]));  // merge outputs
  EXPECT_TRUE(boolParam(model, lstm.inputs[52]));  // time major
  for (size_t i = 53; i < 61; ++i) EXPECT_TRUE(isOmitted(model, lstm.inputs[i])) << i;
  EXPECT_EQ(lstm.outputs.size(), 1u);
}

// --- coverage of the mapping table -----------------------------------------------------------

TEST(TfliteOperatorMapping2Test, OperatorsWithoutAnNnapiEquivalentAreRejectedByName) {
  for (const auto& [code, name] :
       {std::pair{lite::BuiltinOperator_MIRROR_PAD, "MIRROR_PAD"},
        std::pair{lite::BuiltinOperator_SQUARED_DIFFERENCE, "SQUARED_DIFFERENCE"},
        std::pair{lite::BuiltinOperator_RANK, "RANK"},
        std::pair{lite::BuiltinOperator_WHILE, "WHILE"}}) {
    EXPECT_EQ(hal::tfl::findOperatorMapping(code), nullptr) << name;
    OneOperator op;
    const int32_t x = op.input(floats({2, 2}));
    const int32_t out = op.m.addTensor(floats({2, 2}));
    expectInvalid(importTfliteModel(op.finish(code, {x}, {out})),
                  std::string("unsupported TFLite operator ") + name + " (builtin code " +
                      std::to_string(static_cast<int>(code)) + ") at operator 0");
  }
}

TEST(TfliteOperatorMapping2Test, EveryOperatorOfTheDelegateSetHasAMapping) {
  const std::vector<lite::BuiltinOperator> mapped{
      lite::BuiltinOperator_SUB,
      lite::BuiltinOperator_DIV,
      lite::BuiltinOperator_MAXIMUM,
      lite::BuiltinOperator_MINIMUM,
      lite::BuiltinOperator_POW,
      lite::BuiltinOperator_ABS,
      lite::BuiltinOperator_EXP,
      lite::BuiltinOperator_LOG,
      lite::BuiltinOperator_NEG,
      lite::BuiltinOperator_RSQRT,
      lite::BuiltinOperator_SIN,
      lite::BuiltinOperator_SQRT,
      lite::BuiltinOperator_FLOOR,
      lite::BuiltinOperator_TANH,
      lite::BuiltinOperator_ELU,
      lite::BuiltinOperator_HARD_SWISH,
      lite::BuiltinOperator_PRELU,
      lite::BuiltinOperator_LEAKY_RELU,
      lite::BuiltinOperator_EQUAL,
      lite::BuiltinOperator_NOT_EQUAL,
      lite::BuiltinOperator_GREATER,
      lite::BuiltinOperator_GREATER_EQUAL,
      lite::BuiltinOperator_LESS,
      lite::BuiltinOperator_LESS_EQUAL,
      lite::BuiltinOperator_LOGICAL_AND,
      lite::BuiltinOperator_LOGICAL_OR,
      lite::BuiltinOperator_LOGICAL_NOT,
      lite::BuiltinOperator_SELECT,
      lite::BuiltinOperator_SELECT_V2,
      lite::BuiltinOperator_CAST,
      lite::BuiltinOperator_ARG_MAX,
      lite::BuiltinOperator_ARG_MIN,
      lite::BuiltinOperator_PAD,
      lite::BuiltinOperator_PADV2,
      lite::BuiltinOperator_SQUEEZE,
      lite::BuiltinOperator_EXPAND_DIMS,
      lite::BuiltinOperator_STRIDED_SLICE,
      lite::BuiltinOperator_SLICE,
      lite::BuiltinOperator_TRANSPOSE,
      lite::BuiltinOperator_TILE,
      lite::BuiltinOperator_GATHER,
      lite::BuiltinOperator_SPLIT,
      lite::BuiltinOperator_SPLIT_V,
      lite::BuiltinOperator_PACK,
      lite::BuiltinOperator_UNPACK,
      lite::BuiltinOperator_SPACE_TO_DEPTH,
      lite::BuiltinOperator_DEPTH_TO_SPACE,
      lite::BuiltinOperator_SPACE_TO_BATCH_ND,
      lite::BuiltinOperator_BATCH_TO_SPACE_ND,
      lite::BuiltinOperator_REDUCE_MAX,
      lite::BuiltinOperator_REDUCE_MIN,
      lite::BuiltinOperator_REDUCE_PROD,
      lite::BuiltinOperator_SUM,
      lite::BuiltinOperator_REDUCE_ANY,
      lite::BuiltinOperator_REDUCE_ALL,
      lite::BuiltinOperator_L2_NORMALIZATION,
      lite::BuiltinOperator_LOCAL_RESPONSE_NORMALIZATION,
      lite::BuiltinOperator_LOG_SOFTMAX,
      lite::BuiltinOperator_L2_POOL_2D,
      lite::BuiltinOperator_RESIZE_BILINEAR,
      lite::BuiltinOperator_RESIZE_NEAREST_NEIGHBOR,
      lite::BuiltinOperator_TRANSPOSE_CONV,
      lite::BuiltinOperator_EMBEDDING_LOOKUP,
      lite::BuiltinOperator_HASHTABLE_LOOKUP,
      lite::BuiltinOperator_LSH_PROJECTION,
      lite::BuiltinOperator_SVDF,
      lite::BuiltinOperator_RNN,
      lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_RNN,
      lite::BuiltinOperator_BIDIRECTIONAL_SEQUENCE_RNN,
      lite::BuiltinOperator_LSTM,
      lite::BuiltinOperator_UNIDIRECTIONAL_SEQUENCE_LSTM,
      lite::BuiltinOperator_BIDIRECTIONAL_SEQUENCE_LSTM,
      lite::BuiltinOperator_FILL,
      lite::BuiltinOperator_TOPK_V2,
      lite::BuiltinOperator_QUANTIZE,
      lite::BuiltinOperator_DEQUANTIZE,
  };
  for (const lite::BuiltinOperator code : mapped) {
    EXPECT_NE(hal::tfl::findOperatorMapping(code), nullptr) << hal::tfl::builtinOperatorName(code);
  }
}

}  // namespace
}  // namespace nnhal
