// One test per ValidateHal model rule: a valid model with one field broken must be rejected
// with INVALID_ARGUMENT and a message naming that field.
#include "hal/validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hal/validation_fixtures.h"

namespace nnhal::hal {
namespace {

using test::addModel;
using test::chainModel;
using test::expectInvalid;
using test::expectValid;
using test::ifModel;
using test::makeOperand;
using test::subgraphOperand;
using test::whileModel;

constexpr auto kFloat = OperandType::TENSOR_FLOAT32;

TEST(ValidateModel, FixturesAreValid) {
  expectValid(validateModel(addModel()));
  expectValid(validateModel(chainModel()));
  expectValid(validateModel(ifModel()));
  expectValid(validateModel(whileModel()));
}

// --- operand types ------------------------------------------------------------------------

TEST(ValidateModel, RejectsUnknownOperandType) {
  Model model = addModel();
  model.main.operands[0].type = static_cast<OperandType>(16);
  expectInvalid(validateModel(model), "main.operands[0].type: OperandType(16) is not a valid");
  model.main.operands[0].type = static_cast<OperandType>(9999);
  expectInvalid(validateModel(model), "main.operands[0].type");
}

TEST(ValidateModel, RejectsOemTypes) {
  Model model = addModel();
  model.main.operands[0].type = OperandType::TENSOR_OEM_BYTE;
  expectInvalid(validateModel(model), "main.operands[0].type: TENSOR_OEM_BYTE is deprecated");
  model.main.operands[0].type = OperandType::OEM;
  model.main.operands[0].dimensions.clear();
  expectInvalid(validateModel(model), "main.operands[0].type: OEM is deprecated");
}

// An extension operation reading the ADD result and writing an extension-typed output.
Model extensionModel() {
  Model model = addModel();
  model.extensionNameToPrefix.push_back({"com.example.ext", 7});
  auto& ops = model.main.operands;
  ops[3].lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  ops[3].numberOfConsumers = 1;
  Operand custom =
      makeOperand(static_cast<OperandType>((7u << 16) | 3u), {4}, OperandLifeTime::SUBGRAPH_OUTPUT);
  custom.extraParams = std::vector<uint8_t>{1, 2, 3};  // opaque extension parameters
  ops.push_back(custom);
  model.main.operations.push_back({static_cast<OperationType>((7u << 16) | 1u), {3}, {4}});
  model.main.outputIndexes = {4};
  return model;
}

TEST(ValidateModel, AcceptsExtensionTypesWithKnownPrefix) {
  expectValid(validateModel(extensionModel()));
}

TEST(ValidateModel, RejectsExtensionOperandTypeWithUnknownPrefix) {
  Model model = extensionModel();
  model.main.operands[4].type = static_cast<OperandType>((8u << 16) | 3u);
  expectInvalid(validateModel(model),
                "main.operands[4].type: extension type 0x80003 has prefix 0x8");
}

TEST(ValidateModel, RejectsExtensionOperationWithUnknownPrefix) {
  Model model = extensionModel();
  model.main.operations[1].type = static_cast<OperationType>((9u << 16) | 1u);
  expectInvalid(validateModel(model), "main.operations[1] (OperationType(589825)): type 0x90001");
}

TEST(ValidateModel, RejectsMalformedExtensionNames) {
  Model model = extensionModel();
  model.extensionNameToPrefix[0].name = "Com.Example";
  expectInvalid(validateModel(model), "extensionNameToPrefix[0].name: \"Com.Example\"");
  model.extensionNameToPrefix[0].name = "nodots";
  expectInvalid(validateModel(model), "extensionNameToPrefix[0].name: \"nodots\"");
}

TEST(ValidateModel, RejectsTheReservedExtensionPrefixZero) {
  Model model = extensionModel();
  model.extensionNameToPrefix.push_back({"com.example.zero", 0});
  expectInvalid(validateModel(model), "extensionNameToPrefix[1].prefix: 0 is reserved");
}

TEST(ValidateModel, RejectsDuplicateExtensionNamesAndPrefixes) {
  Model model = extensionModel();
  model.extensionNameToPrefix.push_back({"com.example.ext", 8});
  expectInvalid(validateModel(model),
                "extensionNameToPrefix[1].name: \"com.example.ext\" is "
                "listed twice");
  model.extensionNameToPrefix[1] = {"com.example.other", 7};
  expectInvalid(validateModel(model), "extensionNameToPrefix[1].prefix: 0x7 is listed twice");
}

// --- dimensions ---------------------------------------------------------------------------

TEST(ValidateModel, RejectsScalarWithDimensions) {
  Model model = addModel();
  model.main.operands[2].dimensions = {1};
  expectInvalid(validateModel(model), "main.operands[2].dimensions: scalar type INT32");
}

TEST(ValidateModel, RejectsConstantWithUnknownDimension) {
  Model model = addModel();
  model.main.operands[1].dimensions = {0};
  expectInvalid(validateModel(model),
                "main.operands[1].dimensions: a CONSTANT_COPY operand must "
                "have a fully specified shape");
}

TEST(ValidateModel, RejectsConstantWithUnknownRank) {
  Model model = addModel();
  model.main.operands[1].dimensions.clear();
  expectInvalid(validateModel(model), "main.operands[1].dimensions");
}

TEST(ValidateModel, AcceptsUnknownDimensionsOfNonConstants) {
  Model model = chainModel();
  model.main.operands[0].dimensions = {0};  // input: unknown dimension
  model.main.operands[3].dimensions = {};   // temporary: unknown rank
  model.main.operands[4].dimensions = {0};  // output: unknown dimension
  expectValid(validateModel(model));
}

// --- scale / zeroPoint --------------------------------------------------------------------

TEST(ValidateModel, RejectsScaleOrZeroPointOnFloatTensor) {
  Model model = addModel();
  model.main.operands[0].scale = 0.5f;
  expectInvalid(validateModel(model), "main.operands[0].scale: 0.5 must be 0 for TENSOR_FLOAT32");
  model.main.operands[0].scale = 0.0f;
  model.main.operands[0].zeroPoint = 1;
  expectInvalid(validateModel(model), "main.operands[0].zeroPoint: 1 must be 0");
}

TEST(ValidateModel, RejectsScaleOnScalar) {
  Model model = addModel();
  model.main.operands[2].scale = 1.0f;
  expectInvalid(validateModel(model), "main.operands[2].scale: 1 must be 0 for INT32");
}

// MUL of two TENSOR_INT32 inputs: the operands are free for quantization experiments.
Model intModel() {
  Model model = addModel();
  model.main.operations[0].type = OperationType::MUL;
  for (size_t i : {0, 1, 3}) model.main.operands[i].type = OperandType::TENSOR_INT32;
  return model;
}

TEST(ValidateModel, TensorInt32AllowsNonNegativeScaleButNoZeroPoint) {
  Model model = intModel();
  model.main.operands[0].scale = 0.25f;
  expectValid(validateModel(model));
  model.main.operands[0].scale = -0.25f;
  expectInvalid(validateModel(model), "main.operands[0].scale: -0.25 must be >= 0");
  model.main.operands[0].scale = 0.0f;
  model.main.operands[0].zeroPoint = 3;
  expectInvalid(validateModel(model), "main.operands[0].zeroPoint: 3 must be 0 for TENSOR_INT32");
}

// addModel with every tensor of a quantized `type` (scale 1, zeroPoint 0).
Model quantModel(OperandType type) {
  Model model = addModel();
  for (size_t i : {0, 1, 3}) {
    model.main.operands[i].type = type;
    model.main.operands[i].scale = 1.0f;
  }
  // The constant shrinks to the element size of `type`.
  model.main.operands[1].location.length =
      type == OperandType::TENSOR_QUANT16_ASYMM || type == OperandType::TENSOR_QUANT16_SYMM ? 4 : 2;
  return model;
}

TEST(ValidateModel, Quant8AsymmNeedsPositiveScaleAndZeroPointInRange) {
  Model model = quantModel(OperandType::TENSOR_QUANT8_ASYMM);
  model.main.operands[0].zeroPoint = 255;
  expectValid(validateModel(model));
  model.main.operands[0].zeroPoint = 256;
  expectInvalid(validateModel(model), "main.operands[0].zeroPoint: 256 is outside [0, 255]");
  model.main.operands[0].zeroPoint = -1;
  expectInvalid(validateModel(model), "main.operands[0].zeroPoint: -1 is outside [0, 255]");
  model.main.operands[0].zeroPoint = 0;
  model.main.operands[0].scale = 0.0f;
  expectInvalid(validateModel(model), "main.operands[0].scale: 0 must be positive");
}

TEST(ValidateModel, Quant8AsymmSignedZeroPointRange) {
  Model model = quantModel(OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
  model.main.operands[0].zeroPoint = -128;
  expectValid(validateModel(model));
  model.main.operands[0].zeroPoint = 128;
  expectInvalid(validateModel(model), "main.operands[0].zeroPoint: 128 is outside [-128, 127]");
  model.main.operands[0].zeroPoint = -129;
  expectInvalid(validateModel(model), "main.operands[0].zeroPoint: -129 is outside [-128, 127]");
}

TEST(ValidateModel, RejectsNonFiniteScale) {
  Model model = quantModel(OperandType::TENSOR_QUANT8_ASYMM);
  model.main.operands[0].scale = std::numeric_limits<float>::infinity();
  expectInvalid(validateModel(model), "main.operands[0].scale: inf must be positive and finite");
  model.main.operands[0].scale = std::nanf("");
  expectInvalid(validateModel(model), "main.operands[0].scale: nan");
}

// Operand 0 of addModel becomes `type`: the operand rules run before the operation rules.
Result<void> validateWithInputType(OperandType type, float scale, int32_t zeroPoint) {
  Model model = addModel();
  model.main.operands[0].type = type;
  model.main.operands[0].scale = scale;
  model.main.operands[0].zeroPoint = zeroPoint;
  return validateModel(model);
}

TEST(ValidateModel, SymmetricTypesNeedZeroPointZero) {
  expectInvalid(validateWithInputType(OperandType::TENSOR_QUANT8_SYMM, 1.0f, 1),
                "main.operands[0].zeroPoint: 1 is outside [0, 0] for TENSOR_QUANT8_SYMM");
  expectInvalid(validateWithInputType(OperandType::TENSOR_QUANT16_SYMM, 1.0f, -1),
                "main.operands[0].zeroPoint: -1 is outside [0, 0] for TENSOR_QUANT16_SYMM");
  expectInvalid(validateWithInputType(OperandType::TENSOR_QUANT8_SYMM, 0.0f, 0),
                "main.operands[0].scale: 0 must be positive");
}

TEST(ValidateModel, Quant16AsymmZeroPointRange) {
  expectInvalid(validateWithInputType(OperandType::TENSOR_QUANT16_ASYMM, 1.0f, 65536),
                "main.operands[0].zeroPoint: 65536 is outside [0, 65535]");
  expectInvalid(validateWithInputType(OperandType::TENSOR_QUANT16_ASYMM, 1.0f, -1),
                "main.operands[0].zeroPoint: -1 is outside [0, 65535]");
  // In range: the operand passes and the operation rule (ADD input type) rejects instead.
  expectInvalid(validateWithInputType(OperandType::TENSOR_QUANT16_ASYMM, 1.0f, 65535),
                "main.operations[0] (ADD): input 0");
}

// --- per-channel quantization -------------------------------------------------------------

// CONV_2D (implicit padding, 7 inputs) with a per-channel filter:
// in(0) QUANT8_ASYMM [1,2,2,1], filter(1) [2,1,1,1] per channel, bias(2) INT32 [2],
// padding(3), strides(4, 5), activation(6), out(7) [1,2,2,2].
Model perChannelConvModel() {
  Model model;
  auto& ops = model.main.operands;
  Operand input = makeOperand(OperandType::TENSOR_QUANT8_ASYMM, {1, 2, 2, 1},
                              OperandLifeTime::SUBGRAPH_INPUT, 1);
  input.scale = 0.5f;
  ops.push_back(input);
  Operand filter = makeOperand(OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL, {2, 1, 1, 1},
                               OperandLifeTime::CONSTANT_COPY, 1);
  filter.extraParams = SymmPerChannelQuantParams{{0.5f, 0.25f}, 0};
  const int8_t weights[2] = {1, 2};
  test::setConstantCopy(model, filter, weights, sizeof(weights));
  ops.push_back(filter);
  Operand bias = makeOperand(OperandType::TENSOR_INT32, {2}, OperandLifeTime::CONSTANT_COPY, 1);
  const int32_t biases[2] = {0, 0};
  test::setConstantCopy(model, bias, biases, sizeof(biases));
  ops.push_back(bias);
  for (int32_t value : {1, 1, 1, 0}) {
    Operand scalar = makeOperand(OperandType::INT32, {}, OperandLifeTime::CONSTANT_COPY, 1);
    test::setConstantCopy(model, scalar, &value, sizeof(value));
    ops.push_back(scalar);
  }
  Operand output =
      makeOperand(OperandType::TENSOR_QUANT8_ASYMM, {1, 2, 2, 2}, OperandLifeTime::SUBGRAPH_OUTPUT);
  output.scale = 1.0f;
  ops.push_back(output);
  model.main.operations.push_back({OperationType::CONV_2D, {0, 1, 2, 3, 4, 5, 6}, {7}});
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {7};
  return model;
}

TEST(ValidateModel, AcceptsPerChannelQuantization) {
  expectValid(validateModel(perChannelConvModel()));
}

TEST(ValidateModel, PerChannelNeedsChannelQuant) {
  Model model = perChannelConvModel();
  model.main.operands[1].extraParams = std::monostate{};
  expectInvalid(validateModel(model),
                "main.operands[1].extraParams: "
                "TENSOR_QUANT8_SYMM_PER_CHANNEL needs channelQuant");
}

TEST(ValidateModel, PerChannelChannelDimBelowRank) {
  Model model = perChannelConvModel();
  std::get<SymmPerChannelQuantParams>(model.main.operands[1].extraParams).channelDim = 4;
  expectInvalid(validateModel(model),
                "main.operands[1].extraParams.channelQuant.channelDim: 4 is "
                "not below the rank 4");
}

TEST(ValidateModel, PerChannelScaleCountMatchesChannels) {
  Model model = perChannelConvModel();
  std::get<SymmPerChannelQuantParams>(model.main.operands[1].extraParams).scales = {0.5f};
  expectInvalid(validateModel(model),
                "main.operands[1].extraParams.channelQuant.scales: 1 scales "
                "for 2 channels");
}

TEST(ValidateModel, PerChannelScalesPositive) {
  Model model = perChannelConvModel();
  std::get<SymmPerChannelQuantParams>(model.main.operands[1].extraParams).scales[1] = 0.0f;
  expectInvalid(validateModel(model),
                "main.operands[1].extraParams.channelQuant.scales[1]: 0 "
                "must be positive");
}

TEST(ValidateModel, PerChannelOperandScaleMustBeZero) {
  Model model = perChannelConvModel();
  model.main.operands[1].scale = 0.5f;
  expectInvalid(validateModel(model),
                "main.operands[1].scale: 0.5 must be 0 for TENSOR_QUANT8_SYMM_PER_CHANNEL");
}

TEST(ValidateModel, RejectsExtraParamsOnOtherTypes) {
  Model model = addModel();
  model.main.operands[0].extraParams = SymmPerChannelQuantParams{{1.0f, 1.0f}, 0};
  expectInvalid(validateModel(model),
                "main.operands[0].extraParams: TENSOR_FLOAT32 takes no extra parameters");
  model.main.operands[0].extraParams = std::vector<uint8_t>{1};
  expectInvalid(validateModel(model), "main.operands[0].extraParams");
}

// --- lifetimes and locations --------------------------------------------------------------

TEST(ValidateModel, RejectsUnknownLifetime) {
  Model model = addModel();
  model.main.operands[0].lifetime = static_cast<OperandLifeTime>(7);
  expectInvalid(validateModel(model), "main.operands[0].lifetime: 7 is not a valid lifetime");
}

TEST(ValidateModel, ConstantCopyPoolIndexMustBeZero) {
  Model model = addModel();
  model.main.operands[1].location.poolIndex = 1;
  expectInvalid(validateModel(model), "main.operands[1].location: poolIndex 1 must be 0");
}

TEST(ValidateModel, ConstantCopyRangeInsideOperandValues) {
  Model model = addModel();
  model.main.operands[2].location.offset = static_cast<uint32_t>(model.operandValues.size() - 2);
  expectInvalid(validateModel(model),
                "main.operands[2].location: CONSTANT_COPY range [10, 14) is "
                "outside operandValues (12 bytes)");
  model.main.operands[2].location.offset = std::numeric_limits<uint32_t>::max();  // no overflow
  expectInvalid(validateModel(model), "main.operands[2].location: CONSTANT_COPY range");
}

TEST(ValidateModel, ConstantLengthMatchesTypeAndDimensions) {
  Model model = addModel();
  model.main.operands[1].location.length = 4;
  expectInvalid(validateModel(model),
                "main.operands[1].location: length 4 does not match the 8 "
                "bytes of TENSOR_FLOAT32");
}

// addModel with the constant (operand 1) moved into a shared-memory pool.
Model referenceModel() {
  Model model = addModel();
  auto pool = Memory::create(64);
  EXPECT_TRUE(pool.has_value());
  model.pools.push_back(*pool);
  model.main.operands[1].lifetime = OperandLifeTime::CONSTANT_REFERENCE;
  model.main.operands[1].location = {0, 16, 8};
  return model;
}

TEST(ValidateModel, AcceptsConstantReference) { expectValid(validateModel(referenceModel())); }

TEST(ValidateModel, ConstantReferencePoolIndexInRange) {
  Model model = referenceModel();
  model.main.operands[1].location.poolIndex = 1;
  expectInvalid(validateModel(model),
                "main.operands[1].location: poolIndex 1 is out of range (1 pools)");
}

TEST(ValidateModel, ConstantReferenceRangeInsidePool) {
  Model model = referenceModel();
  model.main.operands[1].location.offset = 60;
  expectInvalid(validateModel(model),
                "main.operands[1].location: CONSTANT_REFERENCE range [60, "
                "68) is outside pools[0] (64 bytes)");
}

TEST(ValidateModel, ConstantReferenceLengthMatchesSize) {
  Model model = referenceModel();
  model.main.operands[1].location.length = 12;
  expectInvalid(validateModel(model), "main.operands[1].location: length 12 does not match");
}

TEST(ValidateModel, RejectsInvalidModelPool) {
  Model model = addModel();
  model.pools.emplace_back();  // an empty handle
  expectInvalid(validateModel(model), "pools[0]: not a valid memory");
}

TEST(ValidateModel, NonConstantLocationsMustBeZero) {
  for (size_t operand : {0u, 3u}) {  // SUBGRAPH_INPUT, SUBGRAPH_OUTPUT
    Model model = addModel();
    model.main.operands[operand].location.length = 8;
    expectInvalid(validateModel(model), "location: must be all zero");
  }
  Model chain = chainModel();  // TEMPORARY_VARIABLE
  chain.main.operands[3].location.offset = 4;
  expectInvalid(validateModel(chain),
                "main.operands[3].location: must be all zero for a TEMPORARY_VARIABLE operand");
}

// SQUEEZE with its optional axes omitted by a NO_VALUE operand.
Model squeezeModel() {
  Model model;
  auto& ops = model.main.operands;
  ops.push_back(makeOperand(kFloat, {1, 2}, OperandLifeTime::SUBGRAPH_INPUT, 1));
  ops.push_back(makeOperand(OperandType::TENSOR_INT32, {1}, OperandLifeTime::NO_VALUE, 1));
  ops.push_back(makeOperand(kFloat, {2}, OperandLifeTime::SUBGRAPH_OUTPUT));
  model.main.operations.push_back({OperationType::SQUEEZE, {0, 1}, {2}});
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {2};
  return model;
}

TEST(ValidateModel, NoValueOperands) {
  Model model = squeezeModel();
  expectValid(validateModel(model));
  model.main.operands[1].location.poolIndex = 2;
  expectInvalid(validateModel(model),
                "main.operands[1].location: must be all zero for a NO_VALUE operand");
}

TEST(ValidateModel, SubgraphOperandNamesAReferencedSubgraph) {
  Model model = ifModel();
  model.main.operands[2].location.offset = 2;
  expectInvalid(validateModel(model),
                "main.operands[2].location: offset 2 names no referenced "
                "subgraph (2 referenced subgraphs)");
}

TEST(ValidateModel, SubgraphOperandPoolIndexAndLengthZero) {
  Model model = ifModel();
  model.main.operands[1].location.length = 4;
  expectInvalid(validateModel(model),
                "main.operands[1].location: poolIndex and length must be 0 for a SUBGRAPH operand");
}

TEST(ValidateModel, SubgraphTypeAndLifetimeGoTogether) {
  Model model = ifModel();
  model.main.operands[1].lifetime = OperandLifeTime::CONSTANT_COPY;
  expectInvalid(validateModel(model),
                "main.operands[1]: type SUBGRAPH with lifetime CONSTANT_COPY");
  model = ifModel();
  model.main.operands[1].type = OperandType::INT32;
  expectInvalid(validateModel(model), "main.operands[1]: type INT32 with lifetime SUBGRAPH");
}

// --- subgraph inputs and outputs ----------------------------------------------------------

TEST(ValidateModel, InputIndexesInRange) {
  Model model = addModel();
  model.main.inputIndexes = {9};
  expectInvalid(validateModel(model), "main.inputIndexes[0]: operand 9 is out of range");
}

TEST(ValidateModel, OutputIndexesInRange) {
  Model model = addModel();
  model.main.outputIndexes = {3, 4};
  expectInvalid(validateModel(model), "main.outputIndexes[1]: operand 4 is out of range");
}

TEST(ValidateModel, NoDuplicateInputsOrOutputs) {
  Model model = addModel();
  model.main.inputIndexes = {0, 0};
  expectInvalid(validateModel(model), "main.inputIndexes[1]: operand 0 is listed twice");
  model = addModel();
  model.main.outputIndexes = {3, 3};
  expectInvalid(validateModel(model), "main.outputIndexes[1]: operand 3 is listed twice");
}

TEST(ValidateModel, InputsAndOutputsHaveMatchingLifetimes) {
  Model model = addModel();
  model.main.inputIndexes = {0, 1};
  expectInvalid(validateModel(model),
                "main.inputIndexes[1]: operand 1 has lifetime CONSTANT_COPY, "
                "expected SUBGRAPH_INPUT");
  model = addModel();
  model.main.outputIndexes = {0};
  expectInvalid(validateModel(model),
                "main.outputIndexes[0]: operand 0 has lifetime "
                "SUBGRAPH_INPUT, expected SUBGRAPH_OUTPUT");
}

TEST(ValidateModel, EverySubgraphInputAndOutputIsListed) {
  Model model = addModel();
  model.main.inputIndexes.clear();
  expectInvalid(validateModel(model),
                "main.inputIndexes: operand 0 has lifetime SUBGRAPH_INPUT but is not listed");
  model = addModel();
  model.main.outputIndexes.clear();
  expectInvalid(validateModel(model),
                "main.outputIndexes: operand 3 has lifetime SUBGRAPH_OUTPUT but is not listed");
}

// --- operations ---------------------------------------------------------------------------

TEST(ValidateModel, RejectsUnknownOperationType) {
  Model model = addModel();
  model.main.operations[0].type = static_cast<OperationType>(102);
  expectInvalid(validateModel(model),
                "main.operations[0] (OperationType(102)): type 0x66 is "
                "neither a fundamental operation");
}

TEST(ValidateModel, RejectsOemOperation) {
  Model model = addModel();
  model.main.operations[0].type = OperationType::OEM_OPERATION;
  expectInvalid(validateModel(model),
                "main.operations[0] (OEM_OPERATION): OEM_OPERATION is deprecated");
}

TEST(ValidateModel, OperationOperandIndexesInRange) {
  Model model = addModel();
  model.main.operations[0].inputs[1] = 17;
  expectInvalid(validateModel(model),
                "main.operations[0] (ADD): input 1 is operand 17, out of range (4 operands)");
  model = addModel();
  model.main.operations[0].outputs[0] = 4;
  expectInvalid(validateModel(model), "main.operations[0] (ADD): output 0 is operand 4");
}

TEST(ValidateModel, OperationInputCountFromSignature) {
  Model model = addModel();
  model.main.operations[0].inputs.pop_back();
  model.main.operands[2].numberOfConsumers = 0;
  expectInvalid(validateModel(model), "main.operations[0] (ADD): 2 inputs, expected {3}");
}

TEST(ValidateModel, OperationOutputCountFromSignature) {
  Model model = chainModel();
  model.main.operations[1].outputs = {};
  expectInvalid(validateModel(model), "main.operations[1] (RELU): 0 outputs, expected {1}");
}

TEST(ValidateModel, OperationPrimaryTypeFromSignature) {
  Model model = addModel();
  model.main.operations[0].type = OperationType::LOGICAL_AND;  // TENSOR_BOOL8 only
  model.main.operations[0].inputs = {0, 1};
  model.main.operands[2].numberOfConsumers = 0;
  expectInvalid(validateModel(model),
                "main.operations[0] (LOGICAL_AND): input 0 (operand 0) has "
                "type TENSOR_FLOAT32, expected {TENSOR_BOOL8}");
}

TEST(ValidateModel, OperationParameterTypesFromSignature) {
  Model model = addModel();
  model.main.operands[2].type = OperandType::FLOAT32;
  expectInvalid(validateModel(model),
                "main.operations[0] (ADD): input 2 (operand 2) has type "
                "FLOAT32, expected {INT32}");
}

TEST(ValidateModel, ReadBeforeWriteIsRejected) {
  Model model = chainModel();
  std::swap(model.main.operations[0], model.main.operations[1]);
  expectInvalid(validateModel(model),
                "main.operations[0] (RELU): input 0 (operand 3, TEMPORARY_VARIABLE) is read "
                "before any operation writes it");
}

TEST(ValidateModel, OperandWrittenTwiceIsRejected) {
  Model model = chainModel();
  model.main.operations[1].outputs = {3};
  model.main.operations[1].inputs = {0};
  model.main.operands[0].numberOfConsumers = 2;
  model.main.operands[3].numberOfConsumers = 0;
  expectInvalid(validateModel(model),
                "main.operations[1] (RELU): output 0 (operand 3) is already "
                "written by main.operations[0]");
}

TEST(ValidateModel, OperationCannotWriteConstantsInputsOrNoValue) {
  Model model = addModel();
  model.main.operations[0].outputs = {1};
  expectInvalid(validateModel(model),
                "main.operations[0] (ADD): output 0 (operand 1) has lifetime "
                "CONSTANT_COPY");
  model = addModel();
  model.main.operations[0].outputs = {0};
  expectInvalid(validateModel(model), "output 0 (operand 0) has lifetime SUBGRAPH_INPUT");
  model = chainModel();
  model.main.operands.push_back(makeOperand(kFloat, {2}, OperandLifeTime::NO_VALUE));
  model.main.operations[1].outputs = {5};
  expectInvalid(validateModel(model), "output 0 (operand 5) has lifetime NO_VALUE");
}

TEST(ValidateModel, TemporaryMustBeWritten) {
  Model model = chainModel();
  model.main.operands.push_back(makeOperand(kFloat, {2}, OperandLifeTime::TEMPORARY_VARIABLE));
  expectInvalid(validateModel(model),
                "main.operands[5]: TEMPORARY_VARIABLE operand is never written by any operation");
}

TEST(ValidateModel, SubgraphOutputMustBeWritten) {
  Model model = addModel();
  model.main.operands.push_back(makeOperand(kFloat, {2}, OperandLifeTime::SUBGRAPH_OUTPUT));
  model.main.outputIndexes.push_back(4);
  expectInvalid(validateModel(model),
                "main.operands[4]: SUBGRAPH_OUTPUT operand is never written by any operation");
}

TEST(ValidateModel, NumberOfConsumersMustMatch) {
  Model model = addModel();
  model.main.operands[0].numberOfConsumers = 2;
  expectInvalid(validateModel(model),
                "main.operands[0].numberOfConsumers: 2, but operation inputs "
                "read the operand 1 times");
  model = addModel();
  model.main.operations[0].inputs = {0, 0, 2};  // operand 0 read twice, operand 1 never
  model.main.operands[0].numberOfConsumers = 2;
  expectInvalid(validateModel(model),
                "main.operands[1].numberOfConsumers: 1, but operation inputs "
                "read the operand 0 times");
}

TEST(ValidateModel, OperationsOfReferencedSubgraphsAreChecked) {
  Model model = ifModel();
  model.referenced[1].operands[0].numberOfConsumers = 0;
  expectInvalid(validateModel(model), "referenced[1].operands[0].numberOfConsumers");
  model = ifModel();
  model.referenced[0].operations[0].type = OperationType::CONV_2D;
  expectInvalid(validateModel(model),
                "referenced[0].operations[0] (CONV_2D): 1 inputs, expected "
                "{7, 8, 10, 11, 13}");
}

// --- IF / WHILE ---------------------------------------------------------------------------

TEST(ValidateModel, IfConditionIsBool8OfShapeOne) {
  Model model = ifModel();
  model.main.operands[0].dimensions = {2};
  expectInvalid(validateModel(model),
                "main.operations[0] (IF): the condition (input 0) must be a "
                "TENSOR_BOOL8 of shape [1]");
}

TEST(ValidateModel, IfConditionIsRequired) {
  Model model = ifModel();
  model.main.operands[0].lifetime = OperandLifeTime::NO_VALUE;
  model.main.inputIndexes = {3};
  expectInvalid(validateModel(model),
                "main.operations[0] (IF): the condition (input 0) is "
                "required but has lifetime NO_VALUE");
}

TEST(ValidateModel, IfBranchesMustBeSubgraphs) {
  Model model = ifModel();
  model.main.operands[2] = makeOperand(OperandType::INT32, {}, OperandLifeTime::SUBGRAPH_INPUT, 1);
  model.main.inputIndexes.push_back(2);
  model.referenced.pop_back();
  expectInvalid(validateModel(model),
                "main.operations[0] (IF): input 2 (operand 2) has type "
                "INT32, expected {SUBGRAPH}");
}

TEST(ValidateModel, IfBranchInputAndOutputCountsMatch) {
  Model model = ifModel();
  model.referenced[1].operands.push_back(makeOperand(kFloat, {2}, OperandLifeTime::SUBGRAPH_INPUT));
  model.referenced[1].inputIndexes.push_back(2);
  expectInvalid(validateModel(model),
                "main.operations[0] (IF): else branch referenced[1] has 2 "
                "inputs and 1 outputs, the operation passes 1 and expects 1");
}

TEST(ValidateModel, IfBranchOperandTypesMatch) {
  Model model = ifModel();
  model.referenced[0] = test::reluSubgraph(OperandType::TENSOR_FLOAT16);
  expectInvalid(validateModel(model),
                "main.operations[0] (IF): operand 3 (TENSOR_FLOAT32, scale "
                "0, zeroPoint 0) does not match referenced[0].inputIndexes[0]"
                " (TENSOR_FLOAT16");
}

TEST(ValidateModel, WhileConditionSignature) {
  Model model = whileModel();
  // The condition must produce exactly one TENSOR_BOOL8 [1].
  model.referenced[0].operands[2].dimensions = {2};
  expectInvalid(validateModel(model),
                "main.operations[0] (WHILE): condition referenced[0] must "
                "output a TENSOR_BOOL8 of shape [1]");
  model = whileModel();
  model.referenced[0].operands.push_back(makeOperand(kFloat, {1}, OperandLifeTime::SUBGRAPH_INPUT));
  model.referenced[0].inputIndexes.push_back(3);
  expectInvalid(validateModel(model),
                "main.operations[0] (WHILE): condition referenced[0] has 2 "
                "inputs and 1 outputs, expected 1 inputs and 1 output");
}

TEST(ValidateModel, WhileBodySignature) {
  Model model = whileModel();
  model.referenced[1].outputIndexes.clear();
  model.referenced[1].operands[3].lifetime = OperandLifeTime::TEMPORARY_VARIABLE;
  expectInvalid(validateModel(model),
                "main.operations[0] (WHILE): body referenced[1] has 1 inputs "
                "and 0 outputs; expected 1 inputs and between 1 and 1 "
                "outputs");
}

TEST(ValidateModel, WhileOperandTypesMatch) {
  Model model = whileModel();
  model.main.operands[2].type = OperandType::TENSOR_INT32;
  expectInvalid(validateModel(model),
                "main.operations[0] (WHILE): operand 2 (TENSOR_INT32, scale "
                "0, zeroPoint 0) does not match referenced[0].inputIndexes[0]");
}

TEST(ValidateModel, WhileNeedsALoopValue) {
  Model model = whileModel();
  model.main.operations[0].inputs = {0, 1};
  model.main.operands[2].numberOfConsumers = 0;
  expectInvalid(validateModel(model), "main.operations[0] (WHILE): 2 inputs, expected >= 3");
}

// --- referenced subgraphs -----------------------------------------------------------------

TEST(ValidateModel, RejectsUnusedReferencedSubgraph) {
  Model model = ifModel();
  model.referenced.push_back(test::reluSubgraph());
  expectInvalid(validateModel(model),
                "referenced[2]: not referenced by any SUBGRAPH operand; unused subgraphs are not "
                "allowed");
}

TEST(ValidateModel, RejectsReferenceCycles) {
  // referenced[0] (a then-branch) holds a SUBGRAPH operand naming referenced[0] itself.
  Model model = ifModel();
  model.referenced[0].operands.push_back(subgraphOperand(0, 0));
  expectInvalid(validateModel(model), "referenced[0]: part of a reference cycle");
  // Two subgraphs naming each other, neither reachable from main.
  model = ifModel();
  model.referenced.push_back(test::reluSubgraph());
  model.referenced.push_back(test::reluSubgraph());
  model.referenced[2].operands.push_back(subgraphOperand(3, 0));
  model.referenced[3].operands.push_back(subgraphOperand(2, 0));
  expectInvalid(validateModel(model), "part of a reference cycle");
}

}  // namespace
}  // namespace nnhal::hal
