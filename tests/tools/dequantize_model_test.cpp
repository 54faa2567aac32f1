// dequantizeModel: constants and biases become the real values they stand for, the float
// MobileNet v2 classifies grace_hopper as the quantized one does, and operations without a
// float form are refused by name.
#include "tools/common/dequantize_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "nnhal/device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/tensor_io.h"

namespace nnhal::tools {
namespace {

const std::string kModels = std::string(NNHAL_SHARED_DIR) + "/models/";

/// Appends `bytes` to model.operandValues as CONSTANT_COPY operand `operand`'s value.
void setConstant(Model& model, uint32_t operand, std::span<const uint8_t> bytes) {
  model.operandValues.resize((model.operandValues.size() + 3) / 4 * 4);
  Operand& o = model.main.operands[operand];
  o.lifetime = OperandLifeTime::CONSTANT_COPY;
  o.location = {0, static_cast<uint32_t>(model.operandValues.size()),
                static_cast<uint32_t>(bytes.size())};
  model.operandValues.insert(model.operandValues.end(), bytes.begin(), bytes.end());
}

template <typename T>
void setScalar(Model& model, uint32_t operand, T value) {
  setConstant(model, operand, {reinterpret_cast<const uint8_t*>(&value), sizeof(T)});
}

/// The float32 values of a constant operand of `model`.
std::vector<float> floatValues(const Model& model, uint32_t operand) {
  const Operand& o = model.main.operands[operand];
  const uint8_t* base = o.lifetime == OperandLifeTime::CONSTANT_COPY
                            ? model.operandValues.data()
                            : model.pools.at(o.location.poolIndex).data();
  std::vector<float> values(o.location.length / sizeof(float));
  std::memcpy(values.data(), base + o.location.offset, o.location.length);
  return values;
}

Operand tensor(OperandType type, std::vector<uint32_t> dimensions, float scale = 0.0f,
               int32_t zeroPoint = 0,
               OperandLifeTime lifetime = OperandLifeTime::TEMPORARY_VARIABLE) {
  Operand operand;
  operand.type = type;
  operand.dimensions = std::move(dimensions);
  operand.scale = scale;
  operand.zeroPoint = zeroPoint;
  operand.lifetime = lifetime;
  return operand;
}

Operand quant8(std::vector<uint32_t> dimensions, float scale, int32_t zeroPoint) {
  return tensor(OperandType::TENSOR_QUANT8_ASYMM, std::move(dimensions), scale, zeroPoint);
}

Operand scalar(OperandType type) { return tensor(type, {}); }

/// FULLY_CONNECTED of a uint8 [1, 40] input (scale 0.5) with uint8 weights [1, 40]
/// (scale 0.25, zero point 10, values 0..39: 160 float bytes, so a pool value) and an INT32
/// bias of scale 0.125.
Model fullyConnectedModel() {
  Model model;
  auto& ops = model.main.operands;
  ops = {quant8({1, 40}, 0.5f, 128), quant8({1, 40}, 0.25f, 10),
         tensor(OperandType::TENSOR_INT32, {1}, 0.125f), scalar(OperandType::INT32),
         quant8({1, 1}, 1.0f, 0)};
  ops[0].lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  ops[4].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  std::vector<uint8_t> weights(40);
  for (uint8_t i = 0; i < 40; ++i) weights[i] = i;
  setConstant(model, 1, weights);
  setScalar<int32_t>(model, 2, -8);
  setScalar<int32_t>(model, 3, 0);
  model.main.operations = {{OperationType::FULLY_CONNECTED, {0, 1, 2, 3}, {4}}};
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {4};
  return model;
}

TEST(DequantizeModel, ConstantsAndBiasesBecomeTheirRealValues) {
  const Model quantized = fullyConnectedModel();
  auto converted = dequantizeModel(quantized);
  ASSERT_TRUE(converted) << converted.error().message;
  for (const Operand& operand : converted->main.operands) {
    if (operand.dimensions.empty()) continue;
    EXPECT_EQ(operand.type, OperandType::TENSOR_FLOAT32);
    EXPECT_EQ(operand.scale, 0.0f);
    EXPECT_EQ(operand.zeroPoint, 0);
  }
  const Operand& weights = converted->main.operands[1];
  EXPECT_EQ(weights.lifetime, OperandLifeTime::CONSTANT_REFERENCE);
  ASSERT_EQ(converted->pools.size(), 1u);
  EXPECT_FALSE(converted->pools[0].writable());
  const std::vector<float> w = floatValues(*converted, 1);
  ASSERT_EQ(w.size(), 40u);
  for (size_t i = 0; i < w.size(); ++i) EXPECT_EQ(w[i], (static_cast<float>(i) - 10) * 0.25f);
  EXPECT_EQ(converted->main.operands[2].lifetime, OperandLifeTime::CONSTANT_COPY);
  EXPECT_EQ(floatValues(*converted, 2), std::vector<float>{-1.0f});
  // The activation scalar is kept as it was.
  EXPECT_EQ(converted->main.operands[3].type, OperandType::INT32);
  EXPECT_EQ(converted->main.operations[0].type, OperationType::FULLY_CONNECTED);
}

TEST(DequantizeModel, RefusesOperationsWithoutAFloatForm) {
  Model model;
  model.main.operands = {
      tensor(OperandType::TENSOR_FLOAT32, {4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT),
      quant8({4}, 0.5f, 0)};
  model.main.operands[1].lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  model.main.operations = {{OperationType::QUANTIZE, {0}, {1}}};
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {1};
  auto converted = dequantizeModel(model);
  ASSERT_FALSE(converted);
  EXPECT_EQ(converted.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(converted.error().message.find("operation 0 (QUANTIZE)"), std::string::npos)
      << converted.error().message;
}

TEST(DequantizeModel, RefusesQuant16Operands) {
  Model model = fullyConnectedModel();
  model.main.operands.push_back(tensor(OperandType::TENSOR_QUANT16_SYMM, {2}, 1.0f));
  auto converted = dequantizeModel(model);
  ASSERT_FALSE(converted);
  EXPECT_EQ(converted.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(converted.error().message.find("operand 5"), std::string::npos)
      << converted.error().message;
}

/// Runs `model` on `input` through the embedded driver and returns the top-1 class.
Result<uint32_t> topClass(Device& device, Model model, const std::vector<uint8_t>& input,
                          const TensorDescription& output) {
  NNHAL_ASSIGN_OR_RETURN(auto prepared, device.prepareModel(std::move(model)));
  const size_t outputBytes = tensorBytes(output);
  NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(input.size() + outputBytes));
  std::memcpy(pool.data(), input.data(), input.size());
  Request request;
  request.pools.push_back(pool);
  request.inputs.push_back({false, {0, 0, static_cast<uint32_t>(input.size())}, {}});
  request.outputs.push_back(
      {false, {0, static_cast<uint32_t>(input.size()), static_cast<uint32_t>(outputBytes)}, {}});
  NNHAL_TRY(prepared->executeSynchronously(request));
  const std::vector<uint8_t> bytes(pool.data() + input.size(),
                                   pool.data() + input.size() + outputBytes);
  NNHAL_ASSIGN_OR_RETURN(const auto best, topK(bytes, output, 1));
  return best.at(0).index;
}

TEST(DequantizeModel, FloatMobileNetV2ClassifiesAsTheQuantizedOne) {
  auto imported = importTfliteFile(kModels + "mobilenet_v2_1.0_224_quant.tflite");
  ASSERT_TRUE(imported) << imported.error().message;
  auto input = readFile(kModels + "inputs/mobilenet_v2_1.0_224_quant__grace_hopper.input.bin");
  ASSERT_TRUE(input) << input.error().message;
  auto device = createDevice();
  ASSERT_TRUE(device) << device.error().message;

  auto converted = dequantizeModel(imported->model);
  ASSERT_TRUE(converted) << converted.error().message;
  const TensorDescription& quantInput = imported->inputs.at(0);
  std::vector<uint8_t> floatInput(input->size() * sizeof(float));
  for (size_t i = 0; i < input->size(); ++i) {
    const float value = static_cast<float>((*input)[i] - quantInput.zeroPoint) * quantInput.scale;
    std::memcpy(floatInput.data() + i * sizeof(float), &value, sizeof(float));
  }
  TensorDescription floatOutput = imported->outputs.at(0);
  floatOutput.type = OperandType::TENSOR_FLOAT32;

  auto quantTop = topClass(**device, imported->model, *input, imported->outputs.at(0));
  ASSERT_TRUE(quantTop) << quantTop.error().message;
  EXPECT_EQ(*quantTop, 653u);  // 'military uniform'
  auto floatTop = topClass(**device, std::move(*converted), floatInput, floatOutput);
  ASSERT_TRUE(floatTop) << floatTop.error().message;
  EXPECT_EQ(*floatTop, *quantTop);
}

}  // namespace
}  // namespace nnhal::tools
