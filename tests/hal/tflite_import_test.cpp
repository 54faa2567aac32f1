// Tests of the TFLite importer (include/nnhal/tflite_import.h): the two real MobileNet
// models of shared/models, damaged files, and models the importer must refuse.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <flatbuffers/flexbuffers.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "hal/tflite_test_model.h"
#include "hal/tflite_test_util.h"
#include "tflite_schema_generated.h"

// Tensor specs below name only the fields they need; g++ 12 warns about the others.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace nnhal {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace nnhal::testing;  // NOLINT(google-build-using-namespace): test helpers
using TensorSpec = TfliteModelMaker::TensorSpec;

// --- the real models -----------------------------------------------------------------------

/// Tensor count of subgraph 0 read independently with the generated reader.
size_t tensorCountOf(const std::vector<uint8_t>& bytes) {
  return ::tflite::GetModel(bytes.data())->subgraphs()->Get(0)->tensors()->size();
}

TEST(TfliteImportTest, MobilenetV2MatchesTheReadme) {
  auto imported = importTfliteFile(kMobilenetV2);
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;

  const std::map<OperationType, int> expected{
      {OperationType::CONV_2D, 36}, {OperationType::DEPTHWISE_CONV_2D, 17},
      {OperationType::ADD, 10},     {OperationType::AVERAGE_POOL_2D, 1},
      {OperationType::RESHAPE, 1},  {OperationType::SOFTMAX, 1}};
  EXPECT_EQ(operationCounts(model), expected);
  EXPECT_EQ(model.main.operations.size(), 66u);
  // Every tensor plus the parameters: CONV_2D 4, DEPTHWISE 5, ADD 1, AVERAGE_POOL 6,
  // SOFTMAX 1, RESHAPE 0 (its shape is a tensor of the file).
  const size_t tensors = tensorCountOf(readFile(kMobilenetV2));
  EXPECT_EQ(tensors, 174u);
  EXPECT_EQ(model.main.operands.size(), tensors + 36 * 4 + 17 * 5 + 10 + 6 + 1);

  ASSERT_EQ(imported->inputs.size(), 1u);
  const TensorDescription& in = imported->inputs[0];
  EXPECT_EQ(in.name, "input");
  EXPECT_EQ(in.type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_THAT(in.dimensions, ElementsAre(1, 224, 224, 3));
  EXPECT_FLOAT_EQ(in.scale, 1.0f / 128);
  EXPECT_EQ(in.zeroPoint, 128);
  ASSERT_EQ(imported->outputs.size(), 1u);
  const TensorDescription& out = imported->outputs[0];
  EXPECT_EQ(out.name, "MobilenetV2/Predictions/Softmax");
  EXPECT_EQ(out.type, OperandType::TENSOR_QUANT8_ASYMM);
  EXPECT_THAT(out.dimensions, ElementsAre(1, 1001));
  EXPECT_FLOAT_EQ(out.scale, 1.0f / 256);
  EXPECT_EQ(out.zeroPoint, 0);

  ASSERT_EQ(model.main.inputIndexes.size(), 1u);
  ASSERT_EQ(model.main.outputIndexes.size(), 1u);
  EXPECT_EQ(model.main.operands[model.main.inputIndexes[0]].dimensions, in.dimensions);
  ASSERT_EQ(model.pools.size(), 1u);
  EXPECT_GT(model.pools[0].size(), 3'000'000u);  // the weights (~3.4 MB)
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteImportTest, MobilenetV1MatchesTheReadme) {
  auto imported = importTfliteFile(kMobilenetV1);
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  const std::map<OperationType, int> expected{{OperationType::CONV_2D, 15},
                                              {OperationType::DEPTHWISE_CONV_2D, 13},
                                              {OperationType::AVERAGE_POOL_2D, 1},
                                              {OperationType::RESHAPE, 1},
                                              {OperationType::SOFTMAX, 1}};
  EXPECT_EQ(operationCounts(model), expected);
  const size_t tensors = tensorCountOf(readFile(kMobilenetV1));
  EXPECT_EQ(model.main.operands.size(), tensors + 15 * 4 + 13 * 5 + 6 + 1);

  ASSERT_EQ(imported->inputs.size(), 1u);
  EXPECT_EQ(imported->inputs[0].name, "input");
  EXPECT_THAT(imported->inputs[0].dimensions, ElementsAre(1, 128, 128, 3));
  EXPECT_FLOAT_EQ(imported->inputs[0].scale, 1.0f / 128);
  EXPECT_EQ(imported->inputs[0].zeroPoint, 128);
  ASSERT_EQ(imported->outputs.size(), 1u);
  EXPECT_EQ(imported->outputs[0].name, "MobilenetV1/Predictions/Reshape_1");
  EXPECT_THAT(imported->outputs[0].dimensions, ElementsAre(1, 1001));
  EXPECT_FLOAT_EQ(imported->outputs[0].scale, 1.0f / 256);
  EXPECT_EQ(imported->outputs[0].zeroPoint, 0);
  expectConsistent(model);
  expectValid(model);
}

TEST(TfliteImportTest, MobilenetV2ConvolutionsCarryWeightsAndBiasScale) {
  const std::vector<uint8_t> bytes = readFile(kMobilenetV2);
  auto imported = importTfliteModel(bytes);
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;

  // Operand indexes equal tensor indexes here (every tensor is used), so the file's own
  // buffers can be compared with the imported constants.
  const ::tflite::Model* file = ::tflite::GetModel(bytes.data());
  const auto* tensors = file->subgraphs()->Get(0)->tensors();
  int checked = 0;
  for (const Operation& operation : model.main.operations) {
    if (operation.type != OperationType::CONV_2D &&
        operation.type != OperationType::DEPTHWISE_CONV_2D) {
      continue;
    }
    const bool depthwise = operation.type == OperationType::DEPTHWISE_CONV_2D;
    ASSERT_EQ(operation.inputs.size(), depthwise ? 8u : 7u);
    const Operand& input = model.main.operands[operation.inputs[0]];
    const Operand& filter = model.main.operands[operation.inputs[1]];
    const Operand& bias = model.main.operands[operation.inputs[2]];
    EXPECT_EQ(filter.type, OperandType::TENSOR_QUANT8_ASYMM);
    EXPECT_EQ(bias.type, OperandType::TENSOR_INT32);
    EXPECT_FLOAT_EQ(bias.scale, input.scale * filter.scale);
    EXPECT_EQ(bias.zeroPoint, 0);
    const int32_t padding = intParam(model, operation.inputs[3]);
    EXPECT_TRUE(padding == 1 || padding == 2);
    const int32_t stride = intParam(model, operation.inputs[4]);
    EXPECT_TRUE(stride == 1 || stride == 2);
    if (depthwise) {
      EXPECT_EQ(intParam(model, operation.inputs[6]), 1);  // depth multiplier
    }
    const int32_t activation = intParam(model, operation.inputs.back());
    EXPECT_TRUE(activation == 0 || activation == 3) << activation;

    const ::tflite::Tensor* tensor = tensors->Get(operation.inputs[1]);
    const auto* data = file->buffers()->Get(tensor->buffer())->data();
    ASSERT_NE(data, nullptr);
    EXPECT_EQ(constantBytes(model, operation.inputs[1]),
              std::vector<uint8_t>(data->begin(), data->end()));
    ++checked;
  }
  EXPECT_EQ(checked, 53);
}

// --- damaged files -------------------------------------------------------------------------

TEST(TfliteImportTest, RejectsEmptyInput) { expectInvalid(importTfliteModel({}), "empty"); }

TEST(TfliteImportTest, RejectsTruncatedFiles) {
  const std::vector<uint8_t> bytes = readFile(kMobilenetV1);
  ASSERT_GT(bytes.size(), 100'000u);
  // The file is the flatbuffer (503,776 bytes) followed by a zip of the labels, which the
  // flatbuffer does not refer to: only cuts inside the flatbuffer damage the model.
  for (const size_t n : {size_t{1}, size_t{4}, size_t{7}, size_t{8}, size_t{12}, size_t{64},
                         size_t{1024}, size_t{100'000}, size_t{250'000}, size_t{400'000},
                         size_t{481'000}, size_t{490'000}, size_t{503'000}}) {
    const std::span<const uint8_t> prefix(bytes.data(), n);
    const auto result = importTfliteModel(prefix);
    ASSERT_FALSE(result.has_value()) << "first " << n << " bytes were accepted";
    EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT) << n;
  }
}

TEST(TfliteImportTest, IgnoresBytesAfterTheFlatbuffer) {
  const std::vector<uint8_t> bytes = readFile(kMobilenetV1);
  auto imported = importTfliteModel(std::span<const uint8_t>(bytes.data(), 503'776));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  EXPECT_EQ(imported->model.main.operations.size(), 31u);
}

TEST(TfliteImportTest, RejectsRandomBytes) {
  std::mt19937 rng(1234);
  for (const size_t size : {16u, 1000u, 100'000u}) {
    std::vector<uint8_t> bytes(size);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    expectInvalid(importTfliteModel(bytes), "not a TFLite model");
    // With a valid identifier the verifier has to catch it.
    std::memcpy(bytes.data() + 4, "TFL3", 4);
    expectInvalid(importTfliteModel(bytes), "verification");
  }
}

TEST(TfliteImportTest, RejectsFlippedHeaderBytes) {
  const std::vector<uint8_t> original = readFile(kMobilenetV1);
  {
    std::vector<uint8_t> bytes = original;
    bytes[5] ^= 0xff;  // file identifier
    expectInvalid(importTfliteModel(bytes), "file identifier");
  }
  {
    std::vector<uint8_t> bytes = original;
    bytes[3] ^= 0x80;  // root table offset, now far past the end
    expectInvalid(importTfliteModel(bytes), "verification");
  }
  {
    std::vector<uint8_t> bytes = original;
    bytes[1] ^= 0x10;  // root table offset moved by 4 KiB: inside the file, not at a table
    expectInvalid(importTfliteModel(bytes), "verification");
  }
}

TEST(TfliteImportTest, RejectsMissingFile) {
  const std::filesystem::path path = "/nonexistent/dir/model.tflite";
  expectInvalid(importTfliteFile(path), path.string());
}

TEST(TfliteImportTest, RejectsDirectory) {
  expectInvalid(importTfliteFile(kModels), "not a regular file");
}

TEST(TfliteImportTest, FileErrorsNameThePath) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "nnhal_tflite_import_garbage.tflite";
  {
    std::ofstream out(path, std::ios::binary);
    out << "definitely not a flatbuffer";
  }
  const auto result = importTfliteFile(path);
  std::filesystem::remove(path);
  expectInvalid(result, path.string());
  EXPECT_THAT(result.error().message, HasSubstr("not a TFLite model"));
}

TEST(TfliteImportTest, AcceptsUnalignedBytes) {
  const std::vector<uint8_t> original = readFile(kMobilenetV1);
  std::vector<uint8_t> shifted(original.size() + 1);
  std::copy(original.begin(), original.end(), shifted.begin() + 1);
  auto imported = importTfliteModel(std::span<const uint8_t>(shifted).subspan(1));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  EXPECT_EQ(imported->model.main.operations.size(), 31u);
}

// --- synthetic models: rejections --------------------------------------------------------

/// RELU over one tensor described by `spec` (plus a float output).
std::vector<uint8_t> reluOver(const TensorSpec& spec, bool constant = false) {
  TfliteModelMaker m;
  int32_t in = 0;
  if (constant) {
    in = m.addConstant<uint8_t>(spec, std::vector<uint8_t>(4, 0));
  } else {
    in = m.addTensor(spec);
  }
  const int32_t out = m.addTensor({.shape = {2, 2}, .name = "out"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_RELU), {in}, {out});
  return m.finish(constant ? std::vector<int32_t>{} : std::vector<int32_t>{in}, {out});
}

TEST(TfliteImportTest, RejectsUnsupportedTensorTypes) {
  for (const auto& [type, name] : {std::pair{::tflite::TensorType_UINT64, "UINT64"},
                                   std::pair{::tflite::TensorType_STRING, "STRING"},
                                   std::pair{::tflite::TensorType_COMPLEX64, "COMPLEX64"},
                                   std::pair{::tflite::TensorType_FLOAT64, "FLOAT64"}}) {
    expectInvalid(
        importTfliteModel(reluOver({.shape = {2, 2}, .type = type, .name = "bad"})),
        std::string("TFLite tensor 0 ('bad'): tensor type ") + name + " has no NNAPI equivalent");
  }
}

TEST(TfliteImportTest, RejectsBadShapesAndQuantization) {
  expectInvalid(importTfliteModel(reluOver({.shape = {2, -1}, .name = "neg"})),
                "shape has negative dimension -1");
  expectInvalid(importTfliteModel(reluOver({.shape = {2, 2}, .type = ::tflite::TensorType_UINT8})),
                "TENSOR_QUANT8_ASYMM tensor has no quantization scale");
  expectInvalid(importTfliteModel(reluOver(
                    {.shape = {2, 2}, .type = ::tflite::TensorType_UINT8, .scales = {-0.5f}})),
                "not positive");
  expectInvalid(
      importTfliteModel(
          reluOver({.shape = {2, 2}, .type = ::tflite::TensorType_UINT8, .scales = {0.5f, 0.25f}})),
      "per-channel quantization is only supported for INT8");
  expectInvalid(importTfliteModel(reluOver({.shape = {2, 2},
                                            .type = ::tflite::TensorType_INT8,
                                            .scales = {0.5f, 0.25f},
                                            .quantizedDimension = 5})),
                "quantized_dimension 5");
  expectInvalid(importTfliteModel(reluOver({.shape = {2, 2},
                                            .type = ::tflite::TensorType_INT16,
                                            .scales = {0.5f},
                                            .zeroPoints = {4}})),
                "zero point 0");
  expectInvalid(importTfliteModel(reluOver({.shape = {2, 2}, .sparse = true})),
                "sparse tensors are unsupported");
}

TEST(TfliteImportTest, RejectsBufferProblems) {
  // A [2,2] float constant needs 16 bytes; reluOver gives it 4.
  expectInvalid(importTfliteModel(reluOver({.shape = {2, 2}, .name = "w"}, true)),
                "buffer 1 holds 4 bytes but the shape and type need 16");
  expectInvalid(importTfliteModel(reluOver({.shape = {2, 2}, .buffer = 9})),
                "buffer index 9 is out of range (1 buffers)");
  TfliteModelMaker m;
  const uint32_t external = m.addExternalBuffer(1'000'000, 16);
  const int32_t in = m.addTensor({.shape = {2, 2}, .buffer = external});
  const int32_t out = m.addTensor({.shape = {2, 2}});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_RELU), {in}, {out});
  expectInvalid(importTfliteModel(m.finish({}, {out})), "lies outside the file");
}

TEST(TfliteImportTest, ReadsExternalBuffersInsideTheFile) {
  // Files over 2 GB keep buffers after the flatbuffer: Buffer.offset / size count from the
  // start of the file.
  constexpr size_t kDataOffset = 8192;
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {4}, .name = "a"});
  const uint32_t external = m.addExternalBuffer(kDataOffset, 16);
  const int32_t b = m.addTensor({.shape = {4}, .name = "b", .buffer = external});
  const int32_t out = m.addTensor({.shape = {4}, .name = "out"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_ADD), {a, b}, {out});
  std::vector<uint8_t> bytes = m.finish({a}, {out});
  ASSERT_LT(bytes.size(), kDataOffset);
  bytes.resize(kDataOffset + 16, 0);
  const std::vector<float> values{1, 2, 3, 4};
  std::memcpy(bytes.data() + kDataOffset, values.data(), 16);
  auto imported = importTfliteModel(bytes);
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  EXPECT_EQ(model.main.operands[1].lifetime, OperandLifeTime::CONSTANT_COPY);
  std::vector<float> read(4);
  std::memcpy(read.data(), constantBytes(model, 1).data(), 16);
  EXPECT_EQ(read, values);
  // One byte short: the buffer now ends past the end of the file.
  bytes.pop_back();
  expectInvalid(importTfliteModel(bytes), "lies outside the file");
}

TEST(TfliteImportTest, RejectsModelWithoutSubgraphs) {
  TfliteModelMaker m;
  expectInvalid(importTfliteModel(m.finish({}, {}, /*subgraphCount=*/0)), "no subgraphs");
}

TEST(TfliteImportTest, RejectsIndexesOutOfRange) {
  {
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_RELU), {in}, {7});
    expectInvalid(importTfliteModel(m.finish({in}, {})),
                  "TFLite operator 0 (RELU): output tensor index 7 is out of range (1 tensors)");
  }
  {
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    const int32_t out = m.addTensor({.shape = {2}});
    m.addOperator(5, {in}, {out});  // no operator code 5
    expectInvalid(importTfliteModel(m.finish({in}, {out})), "opcode_index 5 is out of range");
  }
  {
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    expectInvalid(importTfliteModel(m.finish({in}, {3})),
                  "TFLite subgraph outputs: tensor index 3 is out of range");
  }
}

TEST(TfliteImportTest, RejectsBadDataflow) {
  {
    // Reads a tensor nothing writes.
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    const int32_t orphan = m.addTensor({.shape = {2}, .name = "orphan"});
    const int32_t out = m.addTensor({.shape = {2}});
    m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_ADD), {in, orphan}, {out});
    expectInvalid(importTfliteModel(m.finish({in}, {out})),
                  "TFLite operator 0 (ADD): reads tensor 1 ('orphan') before any operator");
  }
  {
    // Writes a graph input.
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    const int32_t out = m.addTensor({.shape = {2}});
    const uint32_t relu = m.addOperatorCode(::tflite::BuiltinOperator_RELU);
    m.addOperator(relu, {in}, {out});
    m.addOperator(relu, {out}, {in});
    expectInvalid(importTfliteModel(m.finish({in}, {out})),
                  "TFLite operator 1 (RELU): writes tensor 0");
  }
  {
    // Writes a tensor twice.
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    const int32_t out = m.addTensor({.shape = {2}});
    const uint32_t relu = m.addOperatorCode(::tflite::BuiltinOperator_RELU);
    m.addOperator(relu, {in}, {out});
    m.addOperator(relu, {in}, {out});
    expectInvalid(importTfliteModel(m.finish({in}, {out})),
                  "TFLite operator 1 (RELU): writes tensor 1");
  }
  {
    // An output nobody writes.
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    const int32_t out = m.addTensor({.shape = {2}, .name = "lonely"});
    expectInvalid(importTfliteModel(m.finish({in}, {out})),
                  "output tensor 1 ('lonely') is never written");
  }
  {
    TfliteModelMaker m;
    const int32_t in = m.addTensor({.shape = {2}});
    expectInvalid(importTfliteModel(m.finish({in}, {in})), "both an input and an output");
  }
}

TEST(TfliteImportTest, RejectsWrongInputCounts) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {2}});
  const int32_t out = m.addTensor({.shape = {2}});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_ADD), {in}, {out});
  expectInvalid(importTfliteModel(m.finish({in}, {out})),
                "TFLite operator 0 (ADD): has 1 inputs; expected 2");
}

// --- unsupported operators -------------------------------------------------------------------

TEST(TfliteImportTest, RejectsUnsupportedBuiltinOperatorByName) {
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {2}});
  const int32_t b = m.addTensor({.shape = {2}});
  const int32_t c = m.addTensor({.shape = {2}});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_RELU), {a}, {b});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_SQUARED_DIFFERENCE), {a, b}, {c});
  expectInvalid(importTfliteModel(m.finish({a}, {c})),
                "unsupported TFLite operator SQUARED_DIFFERENCE (builtin code 99) at operator 1");
}

// Where a model cannot run, the error names every operator it would need, once per kind.
TEST(TfliteImportTest, ListsEveryUnsupportedOperator) {
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {2}});
  const int32_t b = m.addTensor({.shape = {2}});
  const int32_t c = m.addTensor({.shape = {2}});
  const int32_t d = m.addTensor({.shape = {2}});
  const uint32_t square = m.addOperatorCode(::tflite::BuiltinOperator_SQUARED_DIFFERENCE);
  m.addOperator(square, {a, a}, {b});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_CUSTOM, "Foo"), {b}, {c});
  m.addOperator(square, {c, c}, {d});
  expectInvalid(importTfliteModel(m.finish({a}, {d})),
                "unsupported TFLite operator SQUARED_DIFFERENCE (builtin code 99) at operators 0, "
                "2; unsupported custom TFLite operator 'Foo' at operator 1");
}

TEST(TfliteImportTest, RejectsExtendedAndLegacyOperatorCodesByName) {
  {
    // Codes >= 127 only live in builtin_code (deprecated_builtin_code holds 127).
    TfliteModelMaker m;
    const int32_t a = m.addTensor({.shape = {2}});
    const int32_t b = m.addTensor({.shape = {2}});
    m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_BROADCAST_TO), {a}, {b});
    expectInvalid(importTfliteModel(m.finish({a}, {b})),
                  "unsupported TFLite operator BROADCAST_TO (builtin code 130) at operator 0");
  }
  {
    // Old files set only deprecated_builtin_code: SKIP_GRAM = 30.
    TfliteModelMaker m;
    const int32_t a = m.addTensor({.shape = {2}});
    const int32_t b = m.addTensor({.shape = {2}});
    m.addOperator(m.addLegacyOperatorCode(30), {a}, {b});
    expectInvalid(importTfliteModel(m.finish({a}, {b})),
                  "unsupported TFLite operator SKIP_GRAM (builtin code 30) at operator 0");
  }
  {
    // ... and a supported legacy code imports.
    TfliteModelMaker m;
    const int32_t a = m.addTensor({.shape = {2}});
    const int32_t b = m.addTensor({.shape = {2}});
    m.addOperator(m.addLegacyOperatorCode(19), {a}, {b});  // RELU
    auto imported = importTfliteModel(m.finish({a}, {b}));
    ASSERT_TRUE(imported.has_value()) << imported.error().message;
    EXPECT_EQ(imported->model.main.operations.at(0).type, OperationType::RELU);
  }
}

TEST(TfliteImportTest, RejectsCustomOperatorByName) {
  TfliteModelMaker m;
  const int32_t a = m.addTensor({.shape = {2}});
  const int32_t b = m.addTensor({.shape = {2}});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_CUSTOM, "MyVendorOp"), {a}, {b});
  expectInvalid(importTfliteModel(m.finish({a}, {b})),
                "unsupported custom TFLite operator 'MyVendorOp'");
}

/// SSD post-processing over 4 anchors with `maxDetections` x `classesPerDetection` slots;
/// without its flexbuffer options when `withOptions` is false.
std::vector<uint8_t> postProcessModel(int32_t maxDetections, int32_t classesPerDetection,
                                      bool withOptions = true) {
  TfliteModelMaker m;
  const int32_t boxes = m.addTensor({.shape = {1, 4, 4}});
  const int32_t scores = m.addTensor({.shape = {1, 4, 3}});
  const int32_t anchors = m.addConstant<float>({.shape = {4, 4}}, std::vector<float>(16, 0.5f));
  std::vector<int32_t> outs;
  for (int k = 0; k < 4; ++k) outs.push_back(m.addTensor({.shape = {}}));
  const int32_t code =
      m.addOperatorCode(::tflite::BuiltinOperator_CUSTOM, "TFLite_Detection_PostProcess");
  if (!withOptions) {
    m.addOperator(code, {boxes, scores, anchors}, outs);
    return m.finish({boxes, scores}, outs);
  }
  flexbuffers::Builder options;
  options.Map([&] {
    options.Int("max_detections", maxDetections);
    options.Int("max_classes_per_detection", classesPerDetection);
    options.Float("nms_score_threshold", 0.1f);
    options.Float("nms_iou_threshold", 0.5f);
    options.Int("num_classes", 2);
    for (const char* key : {"y_scale", "x_scale", "h_scale", "w_scale"}) options.Float(key, 10.0f);
  });
  options.Finish();
  m.addCustomOperator(code, {boxes, scores, anchors}, outs, options.GetBuffer());
  return m.finish({boxes, scores}, outs);
}

TEST(TfliteImportTest, DetectionPostProcessNeedsItsOptions) {
  expectInvalid(importTfliteModel(postProcessModel(10, 1, /*withOptions=*/false)),
                "TFLite_Detection_PostProcess): custom options are missing");
}

TEST(TfliteImportTest, DetectionPostProcessBecomesTheHalOperation) {
  auto imported = importTfliteModel(postProcessModel(10, 1));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  EXPECT_EQ(imported->outputs[0].dimensions, (std::vector<uint32_t>{1, 10, 4}));
  EXPECT_EQ(imported->outputs[3].dimensions, (std::vector<uint32_t>{1}));
  const auto& ops = imported->model.main.operations;
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].type, OperationType::DETECTION_POSTPROCESSING);
  EXPECT_EQ(ops[1].type, OperationType::CAST);
}

// A file asking for more output slots than any detector has is refused, not allocated.
TEST(TfliteImportTest, RefusesDetectionPostProcessWithHugeOutputs) {
  expectInvalid(importTfliteModel(postProcessModel(1 << 30, 1 << 30)),
                "output slots; at most 1048576 are imported");
}

// TFLite's NNAPI delegate computes INT64 tensors (ARG_MAX's output) as TENSOR_INT32.
std::vector<uint8_t> argMaxModel(int64_t axis) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {1, 4}, .name = "scores"});
  const int32_t axisTensor =
      m.addConstant<int64_t>({.shape = {1}, .type = ::tflite::TensorType_INT64}, {axis});
  const int32_t out = m.addTensor({.shape = {1}, .type = ::tflite::TensorType_INT64, .name = "am"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_ARG_MAX), {in, axisTensor}, {out});
  return m.finish({in}, {out});
}

TEST(TfliteImportTest, Int64TensorsAreComputedAsInt32) {
  auto imported = importTfliteModel(argMaxModel(1));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  ASSERT_EQ(imported->outputs.size(), 1u);
  EXPECT_TRUE(imported->outputs[0].int64);
  EXPECT_EQ(imported->outputs[0].type, OperandType::TENSOR_INT32);
  EXPECT_FALSE(imported->inputs[0].int64);
  const Operation& op = imported->model.main.operations.at(0);
  EXPECT_EQ(op.type, OperationType::ARGMAX);
  // The INT64 axis constant was narrowed to the INT32 scalar ARGMAX takes.
  const Operand& axis = imported->model.main.operands.at(op.inputs.at(1));
  int32_t value = -1;
  std::memcpy(&value, imported->model.operandValues.data() + axis.location.offset, sizeof(value));
  EXPECT_EQ(value, 1);
}

TEST(TfliteImportTest, RejectsInt64ConstantsOutsideInt32) {
  expectInvalid(importTfliteModel(argMaxModel(int64_t{1} << 40)),
                "INT64 value 1099511627776 at element 0 does not fit the TENSOR_INT32");
}

TEST(TfliteImportTest, WidensAndNarrowsInt64) {
  const std::vector<int32_t> values{0, -1, 7, std::numeric_limits<int32_t>::min()};
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  const std::vector<uint8_t> wide = widenInt32ToInt64(bytes);
  ASSERT_EQ(wide.size(), 32u);
  int64_t second = 0;
  std::memcpy(&second, wide.data() + 8, 8);
  EXPECT_EQ(second, -1);
  auto narrow = narrowInt64ToInt32(wide);
  ASSERT_TRUE(narrow.has_value());
  EXPECT_EQ(*narrow, bytes);
  const int64_t tooBig = int64_t{1} << 33;
  std::vector<uint8_t> big(8);
  std::memcpy(big.data(), &tooBig, 8);
  const auto tooWide = narrowInt64ToInt32(big);
  ASSERT_FALSE(tooWide.has_value());
  EXPECT_THAT(tooWide.error().message, ::testing::HasSubstr("at element 0 does not fit int32"));
  const auto partial = narrowInt64ToInt32(std::vector<uint8_t>(5));
  ASSERT_FALSE(partial.has_value());
  EXPECT_THAT(partial.error().message, ::testing::HasSubstr("not a whole number"));
}

// Converters write scale 0 where calibration saw only zeros; the NNAPI delegate gives such
// 8-bit tensors scale 1 ("zero scale is not valid in NNAPI").
TEST(TfliteImportTest, ZeroScaleBecomesOne) {
  auto imported = importTfliteModel(reluOver(
      {.shape = {2, 2}, .type = ::tflite::TensorType_UINT8, .scales = {0.0f}, .zeroPoints = {3}}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  EXPECT_EQ(imported->inputs[0].scale, 1.0f);
  EXPECT_EQ(imported->inputs[0].zeroPoint, 3);
}

// Any other scale is kept, however small: the delegate replaces only 0, and TFLite computes with
// it (tests/actors/tflite_semantics_test.cpp runs such a model).
TEST(TfliteImportTest, TinyScalesAreKept) {
  for (const float scale : {3e-35f, 1e-40f}) {
    auto imported = importTfliteModel(reluOver({.shape = {2, 2},
                                                .type = ::tflite::TensorType_INT8,
                                                .scales = {scale},
                                                .zeroPoints = {-2}}));
    ASSERT_TRUE(imported.has_value()) << imported.error().message;
    EXPECT_EQ(imported->inputs[0].scale, scale);
    EXPECT_EQ(imported->inputs[0].zeroPoint, -2);
  }
}

TEST(TfliteImportTest, UnusedTensorsAreLeftOut) {
  TfliteModelMaker m;
  const int32_t in = m.addTensor({.shape = {2}, .name = "in"});
  m.addTensor({.shape = {2}, .name = "unused"});
  const int32_t out = m.addTensor({.shape = {2}, .name = "out"});
  m.addOperator(m.addOperatorCode(::tflite::BuiltinOperator_RELU), {in}, {out});
  auto imported = importTfliteModel(m.finish({in}, {out}));
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Model& model = imported->model;
  ASSERT_EQ(model.main.operands.size(), 2u);
  EXPECT_THAT(model.main.inputIndexes, ElementsAre(0u));
  EXPECT_THAT(model.main.outputIndexes, ElementsAre(1u));
  EXPECT_EQ(imported->outputs.at(0).name, "out");
  EXPECT_TRUE(model.pools.empty());
  expectConsistent(model);
  expectValid(model);
}

}  // namespace
}  // namespace nnhal

namespace nnhal {
namespace {

// The int8 Keras LSTM with its 28 time steps turned into 5000 (every [1, 28, 28] shape in
// the file): the per-step lowering refuses more than 1024 steps instead of growing the model
// without bound.
TEST(TfliteImportTest, RefusesQuantizedLstmOverTooManySteps) {
  std::ifstream in(kModels / "keras_lstm_mnist_ptq.tflite", std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  ASSERT_FALSE(bytes.empty());
  ASSERT_TRUE(importTfliteModel(bytes).has_value());
  const int32_t from[3] = {1, 28, 28};
  const int32_t to[3] = {1, 5000, 28};
  int patched = 0;
  for (size_t i = 0; i + sizeof(from) <= bytes.size(); i += 4) {
    if (std::memcmp(bytes.data() + i, from, sizeof(from)) == 0) {
      std::memcpy(bytes.data() + i, to, sizeof(to));
      ++patched;
    }
  }
  ASSERT_GE(patched, 1);
  expectInvalid(importTfliteModel(bytes), "over 5000 time steps");
}

}  // namespace
}  // namespace nnhal
