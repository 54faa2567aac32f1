#include "hal/operation_signatures.h"

#include <gtest/gtest.h>

#include "hal/validation_fixtures.h"

namespace nnhal::hal {
namespace {

using test::expectInvalid;
using test::expectValid;
using test::makeOperand;

TEST(OperationSignatures, EveryFundamentalOperationHasASignature) {
  for (int32_t code = 0; code <= kOperationTypeFundamentalMax; ++code) {
    const auto type = static_cast<OperationType>(code);
    SCOPED_TRACE(std::string(toString(type)));
    const OperationSignature* signature = findSignature(type);
    ASSERT_NE(signature, nullptr);
    EXPECT_EQ(signature->type, type);
    EXPECT_FALSE(signature->primaryTypes.empty());
    EXPECT_FALSE(signature->inputCounts.contains(0)) << "input 0 must exist";
    EXPECT_FALSE(signature->outputCounts.contains(0));
    bool someInputs = false;
    for (size_t n = 1; n < 64; ++n) someInputs |= signature->inputCounts.contains(n);
    EXPECT_TRUE(someInputs);
  }
}

TEST(OperationSignatures, NoSignatureForOemExtensionsOrUnknownCodes) {
  EXPECT_EQ(findSignature(OperationType::OEM_OPERATION), nullptr);
  EXPECT_EQ(findSignature(static_cast<OperationType>(102)), nullptr);
  EXPECT_EQ(findSignature(static_cast<OperationType>(-1)), nullptr);
  EXPECT_EQ(findSignature(static_cast<OperationType>(0x10001)), nullptr);
}

TEST(OperationSignatures, CountsFollowTypesHal) {
  const auto* conv = findSignature(OperationType::CONV_2D);
  EXPECT_EQ(conv->inputCounts.toString(), "{7, 8, 10, 11, 13}");
  EXPECT_EQ(findSignature(OperationType::DEPTHWISE_CONV_2D)->inputCounts.toString(),
            "{8, 9, 11, 12, 14}");
  EXPECT_EQ(findSignature(OperationType::AVERAGE_POOL_2D)->inputCounts.toString(),
            "{7, 8, 10, 11}");
  EXPECT_EQ(findSignature(OperationType::RESIZE_BILINEAR)->inputCounts.toString(), "{3, 4, 6}");
  EXPECT_EQ(findSignature(OperationType::LSTM)->inputCounts.toString(), "{23, 27}");
  EXPECT_EQ(findSignature(OperationType::BIDIRECTIONAL_SEQUENCE_LSTM)->outputCounts.toString(),
            "{1, 2, 5, 6}");
  EXPECT_EQ(findSignature(OperationType::CONCATENATION)->inputCounts.toString(), ">= 2");
  EXPECT_EQ(findSignature(OperationType::SPLIT)->outputCounts.toString(), ">= 1");
  EXPECT_EQ(findSignature(OperationType::IF)->inputCounts.toString(), ">= 3");
  EXPECT_EQ(findSignature(OperationType::QUANTIZED_LSTM)->inputCounts.toString(), "{32}");
}

TEST(OperationSignatures, PrimaryTypesFollowTypesHal) {
  EXPECT_EQ(findSignature(OperationType::ADD)->primaryTypes.toString(),
            "{TENSOR_FLOAT32, TENSOR_INT32, TENSOR_QUANT8_ASYMM, TENSOR_FLOAT16, "
            "TENSOR_QUANT8_ASYMM_SIGNED}");
  EXPECT_EQ(findSignature(OperationType::L2_POOL_2D)->primaryTypes.toString(),
            "{TENSOR_FLOAT32, TENSOR_FLOAT16}");
  EXPECT_EQ(findSignature(OperationType::EMBEDDING_LOOKUP)->primaryTypes.toString(),
            "{TENSOR_INT32}");
  EXPECT_EQ(findSignature(OperationType::WHILE)->primaryTypes.toString(), "{SUBGRAPH}");
  EXPECT_TRUE(findSignature(OperationType::DEQUANTIZE)
                  ->primaryTypes.contains(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL));
  EXPECT_FALSE(
      findSignature(OperationType::DEQUANTIZE)->primaryTypes.contains(OperandType::TENSOR_FLOAT32));
  EXPECT_TRUE(findSignature(OperationType::RANK)->primaryTypes.contains(OperandType::TENSOR_BOOL8));
}

TEST(OperandTypeSet, ContainsOnlyFundamentalTypes) {
  const OperandTypeSet set{OperandType::INT32, OperandType::OEM};
  EXPECT_TRUE(set.contains(OperandType::INT32));
  EXPECT_FALSE(set.contains(OperandType::OEM));
  EXPECT_FALSE(set.contains(static_cast<OperandType>(0x10001)));
  EXPECT_EQ(set.toString(), "{INT32}");
  EXPECT_TRUE(OperandTypeSet{}.empty());
}

TEST(CountSet, ExactAndOpenEnded) {
  const CountSet exact = CountSet::of({2, 5});
  EXPECT_TRUE(exact.contains(2));
  EXPECT_FALSE(exact.contains(3));
  EXPECT_FALSE(exact.contains(200));
  const CountSet open = CountSet::from(3);
  EXPECT_FALSE(open.contains(2));
  EXPECT_TRUE(open.contains(3));
  EXPECT_TRUE(open.contains(1000));
}

// A subgraph of `types` operands, all SUBGRAPH_INPUT, for signature checks.
Subgraph operandsOf(std::initializer_list<OperandType> types) {
  Subgraph graph;
  for (OperandType type : types) {
    graph.operands.push_back(makeOperand(type, {}, OperandLifeTime::SUBGRAPH_INPUT));
  }
  return graph;
}

using enum OperandType;

TEST(ValidateOperationSignature, ConvWithOptionalLayoutAndDilation) {
  const Subgraph graph = operandsOf({TENSOR_QUANT8_ASYMM_SIGNED, TENSOR_QUANT8_SYMM_PER_CHANNEL,
                                     TENSOR_INT32, INT32, BOOL, TENSOR_QUANT8_ASYMM_SIGNED});
  // Implicit padding with layout and dilation: 10 inputs.
  Operation conv{OperationType::CONV_2D, {0, 1, 2, 3, 3, 3, 3, 4, 3, 3}, {5}};
  expectValid(validateOperationSignature(conv, graph));
  conv.inputs[7] = 2;  // the layout flag (a scalar parameter) cannot be a tensor
  expectInvalid(validateOperationSignature(conv, graph),
                "input 7 (operand 2) has type TENSOR_INT32, expected {INT32, BOOL}");
  conv.inputs = {0, 1, 0, 3, 3, 3, 3};  // a QUANT8_ASYMM_SIGNED bias
  expectInvalid(validateOperationSignature(conv, graph),
                "input 2 (operand 0) has type TENSOR_QUANT8_ASYMM_SIGNED, expected "
                "{TENSOR_FLOAT32, TENSOR_INT32, TENSOR_FLOAT16}");
}

// Couplings between operand types that the VTS mutateOperationOperandTypeTest relies on.
TEST(ValidateOperationSignature, FloatVariantsShareOneType) {
  const Subgraph graph = operandsOf({TENSOR_FLOAT32, TENSOR_FLOAT16, INT32, TENSOR_INT32,
                                     TENSOR_QUANT8_ASYMM, TENSOR_QUANT16_ASYMM, FLOAT32});
  // RNN: input, weights, recurrent weights, bias, hidden state (all like input 0), activation.
  Operation rnn{OperationType::RNN, {0, 0, 0, 0, 0, 2}, {0, 0}};
  expectValid(validateOperationSignature(rnn, graph));
  rnn.inputs[2] = 1;
  expectInvalid(
      validateOperationSignature(rnn, graph),
      "input 2 (operand 1) has type TENSOR_FLOAT16, expected TENSOR_FLOAT32 like input 0");
  // ROI_ALIGN rois: like a float feature map, anything of the allowed set for a quantized one.
  Operation roi{OperationType::ROI_ALIGN, {0, 1, 3, 2, 2, 6, 6, 2, 2, 2}, {0}};
  expectInvalid(
      validateOperationSignature(roi, graph),
      "input 1 (operand 1) has type TENSOR_FLOAT16, expected TENSOR_FLOAT32 like input 0");
  // FULLY_CONNECTED bias: like a float input, TENSOR_INT32 for a quantized one.
  Operation fc{OperationType::FULLY_CONNECTED, {4, 4, 0, 2}, {4}};
  expectInvalid(validateOperationSignature(fc, graph),
                "input 2 (operand 0) has type TENSOR_FLOAT32, expected {TENSOR_INT32}");
  fc.inputs = {0, 0, 1, 2};
  fc.outputs = {0};
  expectInvalid(
      validateOperationSignature(fc, graph),
      "input 2 (operand 1) has type TENSOR_FLOAT16, expected TENSOR_FLOAT32 like input 0");
}

TEST(ValidateOperationSignature, CouplingsToOtherInputs) {
  const Subgraph graph =
      operandsOf({TENSOR_BOOL8, TENSOR_FLOAT32, TENSOR_FLOAT16, TENSOR_INT32, FLOAT32, INT32});
  Operation select{OperationType::SELECT, {0, 1, 1}, {1}};
  expectValid(validateOperationSignature(select, graph));
  select.inputs = {0, 1, 2};
  expectInvalid(
      validateOperationSignature(select, graph),
      "input 2 (operand 2) has type TENSOR_FLOAT16, expected TENSOR_FLOAT32 like input 1");
  select.inputs = {0, 1, 1};
  select.outputs = {2};
  expectInvalid(
      validateOperationSignature(select, graph),
      "output 0 (operand 2) has type TENSOR_FLOAT16, expected TENSOR_FLOAT32 like input 1");
  Operation fill{OperationType::FILL, {3, 4}, {1}};
  expectValid(validateOperationSignature(fill, graph));
  fill.outputs = {2};
  expectInvalid(validateOperationSignature(fill, graph),
                "output 0 (operand 2) has type TENSOR_FLOAT16, which does not hold input 1's "
                "FLOAT32 values");
  Operation lookup{OperationType::EMBEDDING_LOOKUP, {3, 1}, {2}};
  expectInvalid(
      validateOperationSignature(lookup, graph),
      "output 0 (operand 2) has type TENSOR_FLOAT16, expected TENSOR_FLOAT32 like input 1");
}

TEST(ValidateOperationSignature, ConcatenationIsVariadic) {
  const Subgraph graph = operandsOf({TENSOR_FLOAT32, TENSOR_FLOAT16, INT32});
  Operation concat{OperationType::CONCATENATION, {0, 0, 0, 0, 2}, {0}};
  expectValid(validateOperationSignature(concat, graph));
  concat.inputs = {0, 2};  // a single tensor and the axis
  expectValid(validateOperationSignature(concat, graph));
  concat.inputs = {0, 0, 1, 2};
  expectInvalid(
      validateOperationSignature(concat, graph),
      "input 2 (operand 1) has type TENSOR_FLOAT16, expected TENSOR_FLOAT32 like input 0");
  concat.inputs = {0, 0};  // the last input is the axis
  expectInvalid(validateOperationSignature(concat, graph),
                "input 1 (operand 0) has type TENSOR_FLOAT32, expected {INT32}");
  concat.inputs = {2};
  expectInvalid(validateOperationSignature(concat, graph), "1 inputs, expected >= 2");
}

TEST(ValidateOperationSignature, OutputTypes) {
  const Subgraph graph = operandsOf({TENSOR_FLOAT32, TENSOR_BOOL8, TENSOR_INT32});
  Operation less{OperationType::LESS, {0, 0}, {1}};
  expectValid(validateOperationSignature(less, graph));
  less.outputs = {0};
  expectInvalid(validateOperationSignature(less, graph),
                "output 0 (operand 0) has type TENSOR_FLOAT32, expected {TENSOR_BOOL8}");
  Operation relu{OperationType::RELU, {0}, {2}};
  expectInvalid(validateOperationSignature(relu, graph),
                "output 0 (operand 2) has type TENSOR_INT32, expected TENSOR_FLOAT32 like input 0");
  Operation split{OperationType::SPLIT, {0, 2, 2}, {}};
  expectInvalid(validateOperationSignature(split, graph), "0 outputs, expected >= 1");
}

TEST(ValidateOperationSignature, ExtensionOperationsAreAccepted) {
  const Subgraph graph = operandsOf({TENSOR_FLOAT32});
  const Operation custom{static_cast<OperationType>(0x20005), {0, 0, 0}, {}};
  expectValid(validateOperationSignature(custom, graph));
}

TEST(ValidateOperationSignature, RejectsOemAndUnknownOperations) {
  const Subgraph graph = operandsOf({TENSOR_FLOAT32});
  expectInvalid(validateOperationSignature({OperationType::OEM_OPERATION, {0}, {0}}, graph),
                "operation type OEM_OPERATION is not a fundamental operation");
  expectInvalid(validateOperationSignature({static_cast<OperationType>(500), {0}, {0}}, graph),
                "is not a fundamental operation");
}

TEST(ValidateOperationSignature, OperandIndexesInRange) {
  const Subgraph graph = operandsOf({TENSOR_FLOAT32});
  expectInvalid(validateOperationSignature({OperationType::RELU, {3}, {0}}, graph),
                "input 0 is operand 3, out of range (1 operands)");
  expectInvalid(validateOperationSignature({OperationType::RELU, {0}, {1}}, graph),
                "output 0 is operand 1, out of range (1 operands)");
}

}  // namespace
}  // namespace nnhal::hal
