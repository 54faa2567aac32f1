// compliantWithV1_x / convertToV1_x (nnhal/version_compliance.h): a model or request that
// each HAL version can express, and each kind of loss a conversion to an older version finds.
#include "nnhal/version_compliance.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "nnhal/tflite_import.h"
#include "tools/common/cts_model.h"

namespace nnhal {
namespace {

using V = HalVersion;

Operand tensor(OperandType type, std::vector<uint32_t> dims,
               OperandLifeTime lifetime = OperandLifeTime::TEMPORARY_VARIABLE) {
  Operand operand;
  operand.type = type;
  operand.dimensions = std::move(dims);
  operand.lifetime = lifetime;
  if (type == OperandType::TENSOR_QUANT8_ASYMM || type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED) {
    operand.scale = 0.5f;
  }
  return operand;
}

/// Builds a main subgraph operation by operation; each `add` appends an operation whose
/// inputs are new operands (the first a model input of `type`) and whose output is a model
/// output of `outputType`.
class ModelBuilder {
 public:
  uint32_t operand(Operand operand) {
    model_.main.operands.push_back(std::move(operand));
    return static_cast<uint32_t>(model_.main.operands.size() - 1);
  }
  uint32_t int32Constant(int32_t value) {
    Operand scalar = tensor(OperandType::INT32, {}, OperandLifeTime::CONSTANT_COPY);
    scalar.location = {0, static_cast<uint32_t>(model_.operandValues.size()), 4};
    model_.operandValues.resize(model_.operandValues.size() + 4);
    std::memcpy(model_.operandValues.data() + scalar.location.offset, &value, 4);
    return operand(scalar);
  }
  uint32_t input(OperandType type, std::vector<uint32_t> dims = {1, 4}) {
    const uint32_t index = operand(tensor(type, std::move(dims), OperandLifeTime::SUBGRAPH_INPUT));
    model_.main.inputIndexes.push_back(index);
    return index;
  }
  uint32_t output(OperandType type, std::vector<uint32_t> dims = {1, 4}) {
    const uint32_t index = operand(tensor(type, std::move(dims), OperandLifeTime::SUBGRAPH_OUTPUT));
    model_.main.outputIndexes.push_back(index);
    return index;
  }
  /// An elementwise binary operation (ADD, SUB, MUL, DIV) on `type`.
  ModelBuilder& binary(OperationType op, OperandType type = OperandType::TENSOR_FLOAT32) {
    const uint32_t a = input(type), b = input(type), act = int32Constant(0);
    model_.main.operations.push_back({op, {a, b, act}, {output(type)}});
    return *this;
  }
  /// A unary operation with only its data input (RELU, TANH, HARD_SWISH, ...).
  ModelBuilder& unary(OperationType op, OperandType type = OperandType::TENSOR_FLOAT32,
                      OperandType outputType = OperandType::TENSOR_FLOAT32) {
    const uint32_t in = input(type);
    model_.main.operations.push_back({op, {in}, {output(outputType)}});
    return *this;
  }
  Model& model() { return model_; }

 private:
  Model model_;
};

std::string losses(const Compliance& compliance) {
  std::string text;
  for (const std::string& line : compliance.losses) text += line + "\n";
  return text;
}

void expectCompliantFrom(const Model& model, V lowest) {
  for (V version : {V::V1_0, V::V1_1, V::V1_2}) {
    const Compliance compliance = compliantWith(version, model);
    const Result<Model> converted = convertTo(version, model);
    if (version >= lowest) {
      EXPECT_TRUE(compliance) << toString(version) << ":\n" << losses(compliance);
      EXPECT_TRUE(compliance.noncompliantOperations.empty());
      ASSERT_TRUE(converted.has_value()) << converted.error().message;
      EXPECT_EQ(converted->main.operations.size(), model.main.operations.size());
      EXPECT_EQ(converted->operandValues, model.operandValues);
    } else {
      EXPECT_FALSE(compliance) << toString(version);
      ASSERT_FALSE(converted.has_value()) << toString(version);
      EXPECT_EQ(converted.error().status, ErrorStatus::INVALID_ARGUMENT);
      EXPECT_NE(converted.error().message.find("cannot express the model in NN HAL " +
                                               std::string(toString(version))),
                std::string::npos)
          << converted.error().message;
    }
  }
}

bool mentions(const Compliance& compliance, const std::string& text) {
  for (const std::string& line : compliance.losses) {
    if (line.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(VersionCompliance, IntroducedInFollowsTypesHal) {
  EXPECT_EQ(introducedIn(OperationType::TANH), V::V1_0);  // 28
  EXPECT_EQ(introducedIn(OperationType::BATCH_TO_SPACE_ND), V::V1_1);
  EXPECT_EQ(introducedIn(OperationType::TRANSPOSE), V::V1_1);                // 37
  EXPECT_EQ(introducedIn(OperationType::ABS), V::V1_2);                      // 38
  EXPECT_EQ(introducedIn(OperationType::RESIZE_NEAREST_NEIGHBOR), V::V1_2);  // 94
  EXPECT_EQ(introducedIn(OperationType::QUANTIZED_LSTM), V::V1_3);           // 95
  EXPECT_EQ(introducedIn(OperationType::RANK), V::V1_3);
  EXPECT_EQ(introducedIn(OperationType::OEM_OPERATION), V::V1_0);
  EXPECT_EQ(introducedIn(static_cast<OperationType>((1 << 16) | 3)), V::V1_2);
  EXPECT_EQ(introducedIn(OperandType::TENSOR_QUANT8_ASYMM), V::V1_0);  // 5
  EXPECT_EQ(introducedIn(OperandType::BOOL), V::V1_2);                 // 6
  EXPECT_EQ(introducedIn(OperandType::TENSOR_QUANT8_SYMM), V::V1_2);   // 13
  EXPECT_EQ(introducedIn(OperandType::TENSOR_QUANT8_ASYMM_SIGNED), V::V1_3);
  EXPECT_EQ(introducedIn(OperandType::SUBGRAPH), V::V1_3);
  EXPECT_EQ(introducedIn(OperandType::TENSOR_OEM_BYTE), V::V1_0);
  EXPECT_EQ(introducedIn(static_cast<OperandType>((2 << 16) | 1)), V::V1_2);
  EXPECT_EQ(toString(V::V1_2), "1.2");
}

// A model of each version: compliant with it and every later one, not with earlier ones.
TEST(VersionCompliance, AModelOfEachVersion) {
  ModelBuilder v10;
  v10.binary(OperationType::ADD)
      .unary(OperationType::RELU, OperandType::TENSOR_QUANT8_ASYMM,
             OperandType::TENSOR_QUANT8_ASYMM);
  expectCompliantFrom(v10.model(), V::V1_0);

  ModelBuilder v11;
  v11.binary(OperationType::ADD).binary(OperationType::DIV);
  expectCompliantFrom(v11.model(), V::V1_1);
  EXPECT_EQ(compliantWithV1_0(v11.model()).noncompliantOperations, std::vector<uint32_t>{1});
  EXPECT_TRUE(mentions(compliantWithV1_0(v11.model()),
                       "main operation 1 (DIV): operation type added in 1.1"));

  ModelBuilder v12;
  v12.unary(OperationType::EXP);
  expectCompliantFrom(v12.model(), V::V1_2);
  EXPECT_TRUE(mentions(compliantWithV1_1(v12.model()), "(EXP): operation type added in 1.2"));
}

TEST(VersionCompliance, NoncompliantOperationsAreListedPerVersion) {
  ModelBuilder b;
  b.binary(OperationType::ADD)
      .binary(OperationType::SUB)
      .unary(OperationType::EXP)
      .unary(OperationType::HARD_SWISH)
      .unary(OperationType::LOGISTIC);
  const Model& model = b.model();
  EXPECT_EQ(compliantWithV1_0(model).noncompliantOperations, (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(compliantWithV1_1(model).noncompliantOperations, (std::vector<uint32_t>{2, 3}));
  EXPECT_EQ(compliantWithV1_2(model).noncompliantOperations, (std::vector<uint32_t>{3}));
  EXPECT_TRUE(compliantWith(V::V1_3, model));
  const Result<Model> converted = convertToV1_2(model);
  ASSERT_FALSE(converted.has_value());
  EXPECT_NE(converted.error().message.find("main operation 3 (HARD_SWISH): operation type added "
                                           "in 1.3"),
            std::string::npos)
      << converted.error().message;
}

TEST(VersionCompliance, OperandTypesAddedLater) {
  ModelBuilder float16;  // ADD exists in 1.0, TENSOR_FLOAT16 only from 1.2
  float16.binary(OperationType::ADD, OperandType::TENSOR_FLOAT16);
  expectCompliantFrom(float16.model(), V::V1_2);
  const Compliance c = compliantWithV1_1(float16.model());
  EXPECT_EQ(c.noncompliantOperations, std::vector<uint32_t>{0});
  EXPECT_TRUE(mentions(c, "main.operands[0]: type TENSOR_FLOAT16 (added in 1.2)")) << losses(c);
  EXPECT_TRUE(mentions(c, "main operation 0 (ADD): input 0 is operand 0")) << losses(c);

  ModelBuilder signedQuant;  // RELU exists in 1.0, TENSOR_QUANT8_ASYMM_SIGNED from 1.3
  signedQuant.unary(OperationType::RELU, OperandType::TENSOR_QUANT8_ASYMM_SIGNED,
                    OperandType::TENSOR_QUANT8_ASYMM_SIGNED);
  EXPECT_FALSE(compliantWithV1_2(signedQuant.model()));
  EXPECT_TRUE(mentions(compliantWithV1_2(signedQuant.model()),
                       "type TENSOR_QUANT8_ASYMM_SIGNED (added in 1.3)"));
  EXPECT_TRUE(compliantWith(V::V1_3, signedQuant.model()));

  ModelBuilder unknownRank;  // tensors of unknown rank: from 1.2
  unknownRank.binary(OperationType::ADD);
  unknownRank.model().main.operands[3].dimensions.clear();  // the output
  expectCompliantFrom(unknownRank.model(), V::V1_2);
  EXPECT_TRUE(mentions(compliantWithV1_1(unknownRank.model()), "unknown rank"));
}

TEST(VersionCompliance, SignaturesOlderOperationsGainedLater) {
  ModelBuilder softmaxAxis;  // SOFTMAX (1.0) with its 1.2 axis input
  {
    const uint32_t in = softmaxAxis.input(OperandType::TENSOR_FLOAT32);
    Operand beta = tensor(OperandType::FLOAT32, {}, OperandLifeTime::CONSTANT_COPY);
    beta.location = {0, 0, 4};
    softmaxAxis.model().operandValues.resize(4);
    const uint32_t b = softmaxAxis.operand(beta);
    const uint32_t axis = softmaxAxis.int32Constant(-1);
    softmaxAxis.model().main.operations.push_back(
        {OperationType::SOFTMAX, {in, b, axis}, {softmaxAxis.output(OperandType::TENSOR_FLOAT32)}});
  }
  expectCompliantFrom(softmaxAxis.model(), V::V1_2);
  EXPECT_TRUE(
      mentions(compliantWithV1_1(softmaxAxis.model()), "(SOFTMAX): the axis input (added in 1.2)"));

  ModelBuilder quantSub;  // SUB (1.1) on TENSOR_QUANT8_ASYMM: 1.2
  quantSub.binary(OperationType::SUB, OperandType::TENSOR_QUANT8_ASYMM);
  expectCompliantFrom(quantSub.model(), V::V1_2);

  ModelBuilder quantTanh;  // TANH (1.0) on TENSOR_QUANT8_ASYMM: 1.2
  quantTanh.unary(OperationType::TANH, OperandType::TENSOR_QUANT8_ASYMM,
                  OperandType::TENSOR_QUANT8_ASYMM);
  expectCompliantFrom(quantTanh.model(), V::V1_2);

  ModelBuilder intAdd;  // ADD (1.0) on TENSOR_INT32: 1.3
  intAdd.binary(OperationType::ADD, OperandType::TENSOR_INT32);
  EXPECT_FALSE(compliantWithV1_2(intAdd.model()));
  EXPECT_TRUE(mentions(compliantWithV1_2(intAdd.model()), "TENSOR_INT32 input (added in 1.3)"));
  EXPECT_TRUE(compliantWith(V::V1_3, intAdd.model()));
}

TEST(VersionCompliance, RelaxedFloatIsLostIn1_0) {
  ModelBuilder b;
  b.binary(OperationType::ADD);
  b.model().relaxComputationFloat32toFloat16 = true;
  expectCompliantFrom(b.model(), V::V1_1);
  const Compliance c = compliantWithV1_0(b.model());
  EXPECT_TRUE(c.noncompliantOperations.empty());  // a model-wide feature, no operation's
  EXPECT_TRUE(mentions(c, "relaxComputationFloat32toFloat16 = true (added in 1.1"));
  const Result<Model> converted = convertToV1_1(b.model());
  ASSERT_TRUE(converted.has_value());
  EXPECT_TRUE(converted->relaxComputationFloat32toFloat16);
}

TEST(VersionCompliance, ExtensionsAreLostBefore1_2) {
  ModelBuilder b;
  b.binary(OperationType::ADD);
  const auto extensionType = static_cast<OperandType>((1 << 16) | 0);
  const uint32_t in = b.input(extensionType, {2});
  b.model().main.operations.push_back(
      {static_cast<OperationType>((1 << 16) | 7), {in}, {b.output(extensionType, {2})}});
  b.model().extensionNameToPrefix.push_back({"com.example.ops", 1});
  expectCompliantFrom(b.model(), V::V1_2);
  const Compliance c = compliantWithV1_1(b.model());
  EXPECT_EQ(c.noncompliantOperations, std::vector<uint32_t>{1});
  EXPECT_TRUE(mentions(c, "extensionNameToPrefix lists 1 extensions (added in 1.2)"));
  EXPECT_TRUE(mentions(c,
                       "main operation 1 (extension operation 0x10007): operation type added "
                       "in 1.2"))
      << losses(c);
  EXPECT_TRUE(mentions(c, "type extension type 0x10000 (added in 1.2)")) << losses(c);
}

TEST(VersionCompliance, SubgraphsAreLostBefore1_3) {
  Model model;
  Subgraph& body = model.referenced.emplace_back();
  body.operands = {tensor(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT),
                   tensor(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_OUTPUT)};
  body.operations = {{OperationType::RELU, {0}, {1}}};
  body.inputIndexes = {0};
  body.outputIndexes = {1};
  model.referenced.push_back(body);
  Operand ref = tensor(OperandType::SUBGRAPH, {}, OperandLifeTime::SUBGRAPH);
  ref.location = {0, 0, 4};
  model.operandValues.resize(8);
  const uint32_t one = 1;
  std::memcpy(model.operandValues.data() + 4, &one, 4);
  Operand ref2 = ref;
  ref2.location.offset = 4;
  model.main.operands = {
      ref, ref2, tensor(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT),
      tensor(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_OUTPUT)};
  model.main.operations = {{OperationType::WHILE, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {2};
  model.main.outputIndexes = {3};
  for (V version : {V::V1_0, V::V1_1, V::V1_2}) {
    const Compliance c = compliantWith(version, model);
    EXPECT_EQ(c.noncompliantOperations, std::vector<uint32_t>{0});
    EXPECT_TRUE(mentions(c, "referenced holds 2 subgraphs for IF/WHILE (added in 1.3)"));
    EXPECT_TRUE(mentions(c, "main.operands[0]: type SUBGRAPH (added in 1.3)")) << losses(c);
    EXPECT_TRUE(mentions(c, "main operation 0 (WHILE): operation type added in 1.3"));
    EXPECT_FALSE(convertTo(version, model).has_value());
  }
  EXPECT_TRUE(compliantWith(V::V1_3, model));
  // The SUBGRAPH lifetime alone (a 1.2 type) is reported too.
  model.main.operands[0].type = OperandType::TENSOR_INT32;
  EXPECT_TRUE(mentions(compliantWithV1_2(model), "main.operands[0]: lifetime SUBGRAPH"));
}

TEST(VersionCompliance, OutOfRangeOperandsMakeTheOperationNoncompliant) {
  ModelBuilder b;
  b.binary(OperationType::ADD);
  b.model().main.operations[0].inputs[1] = 99;
  const Compliance c = compliantWithV1_2(b.model());
  EXPECT_EQ(c.noncompliantOperations, std::vector<uint32_t>{0});
  EXPECT_TRUE(mentions(c, "input 1 names operand 99, which main lacks")) << losses(c);
}

TEST(VersionCompliance, RequestWithAMemoryDomainPool) {
  auto memory = Memory::create(64);
  ASSERT_TRUE(memory.has_value()) << memory.error().message;
  Request request;
  request.inputs = {{false, {0, 0, 16}, {}}};
  request.outputs = {{false, {1, 0, 16}, {}}};
  request.pools = {*memory, MemoryDomainToken{7}};
  for (V version : {V::V1_0, V::V1_1, V::V1_2}) {
    const Compliance c = compliantWith(version, request);
    EXPECT_FALSE(c);
    EXPECT_TRUE(c.noncompliantOperations.empty());
    EXPECT_TRUE(mentions(c, "request.pools[1]: a memory domain token")) << losses(c);
    const Result<Request> converted = convertTo(version, request);
    ASSERT_FALSE(converted.has_value());
    EXPECT_NE(converted.error().message.find("cannot express the request in NN HAL"),
              std::string::npos);
  }
  EXPECT_TRUE(compliantWith(V::V1_3, request));

  request.pools[1] = *memory;  // shared memory only: every version
  for (V version : {V::V1_0, V::V1_1, V::V1_2}) {
    EXPECT_TRUE(compliantWith(version, request));
    const Result<Request> converted = convertTo(version, request);
    ASSERT_TRUE(converted.has_value());
    EXPECT_EQ(converted->pools.size(), 2u);
    EXPECT_EQ(converted->outputs[0].location, (DataLocation{1, 0, 16}));
  }
}

TEST(VersionCompliance, HardwareBufferBlobPoolsNeed1_2) {
  auto blob = Memory::create(64, MemoryKind::HARDWARE_BUFFER_BLOB);
  if (!blob) GTEST_SKIP() << blob.error().message;
  Request request;
  request.pools = {*blob};
  EXPECT_FALSE(compliantWithV1_1(request));
  EXPECT_TRUE(mentions(compliantWithV1_0(request), "hardware_buffer_blob memory (added in 1.2)"));
  EXPECT_TRUE(compliantWithV1_2(request));
  ModelBuilder b;
  b.binary(OperationType::ADD);
  b.model().pools = {*blob};
  EXPECT_TRUE(mentions(compliantWithV1_1(b.model()), "pools[0]: hardware_buffer_blob"));
  EXPECT_TRUE(compliantWithV1_2(b.model()));
}

TEST(VersionCompliance, MobileNetV1QuantIsA1_0Model) {
  auto imported = importTfliteFile(std::string(NNHAL_SHARED_DIR) +
                                   "/models/mobilenet_v1_0.25_128_quant.tflite");
  ASSERT_TRUE(imported.has_value()) << imported.error().message;
  const Compliance c = compliantWithV1_0(imported->model);
  EXPECT_TRUE(c) << losses(c);
  EXPECT_TRUE(convertToV1_0(imported->model).has_value());
}

// Every NNAPI CTS test model of shared/cts/V1_x is compliant with HAL 1.x (the test set a
// 1.x driver passes), and the share of each set that an older version can express is
// reported.
TEST(VersionCompliance, EveryCtsModelIsCompliantWithItsVersion) {
  const std::map<std::string, V> folders = {
      {"V1_0", V::V1_0}, {"V1_1", V::V1_1}, {"V1_2", V::V1_2}};
  std::map<std::string, size_t> checked, olderCompliant;
  for (const auto& path : tools::ctsFiles(std::string(NNHAL_SHARED_DIR) + "/cts")) {
    auto models = tools::loadCtsFile(path);
    ASSERT_TRUE(models.has_value()) << models.error().message;
    for (const tools::CtsModel& cts : *models) {
      const auto folder = folders.find(cts.version);
      if (folder == folders.end() || cts.expectFailure) continue;
      ++checked[cts.version];
      const Compliance c = compliantWith(folder->second, cts.model);
      EXPECT_TRUE(c) << cts.version << "/" << cts.spec << " " << cts.name << ":\n" << losses(c);
      if (folder->second != V::V1_0) {
        const auto older = static_cast<V>(static_cast<int32_t>(folder->second) - 1);
        olderCompliant[cts.version] += compliantWith(older, cts.model).compliant();
      }
    }
  }
  for (const auto& [version, count] : checked) {
    std::cout << version << ": " << count << " models, " << olderCompliant[version]
              << " of them expressible in the version before\n";
  }
  EXPECT_GT(checked["V1_0"], 0u);
  EXPECT_GT(checked["V1_1"], 0u);
  EXPECT_GT(checked["V1_2"], 0u);
  // The newer sets test what the newer version added: most of their models are lost before.
  EXPECT_LT(olderCompliant["V1_1"], checked["V1_1"]);
  EXPECT_LT(olderCompliant["V1_2"], checked["V1_2"] / 2);
}

// Models of the 1.3 set that use 1.3 types are refused by 1.2.
TEST(VersionCompliance, CtsSignedQuantModelsAreNot1_2) {
  size_t checked = 0;
  for (const auto& path : tools::ctsFiles(std::string(NNHAL_SHARED_DIR) + "/cts/V1_3")) {
    auto models = tools::loadCtsFile(path);
    ASSERT_TRUE(models.has_value()) << models.error().message;
    for (const tools::CtsModel& cts : *models) {
      bool usesSigned = false;
      for (const Operand& operand : cts.model.main.operands) {
        usesSigned |= operand.type == OperandType::TENSOR_QUANT8_ASYMM_SIGNED;
      }
      if (!usesSigned) continue;
      ++checked;
      const Compliance c = compliantWithV1_2(cts.model);
      EXPECT_FALSE(c) << cts.name;
      EXPECT_TRUE(mentions(c, "TENSOR_QUANT8_ASYMM_SIGNED (added in 1.3)")) << cts.name;
    }
  }
  EXPECT_GT(checked, 100u);
}

}  // namespace
}  // namespace nnhal
