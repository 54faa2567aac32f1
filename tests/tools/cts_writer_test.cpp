// The CTS JSON writer (tools/common/cts_model.h) against its reader: every model of
// ../shared/cts written and read back is the same model, byte for byte; what the format
// cannot hold is refused with a message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/common/cts_model.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;

std::vector<uint8_t> bytesOf(std::string_view text) { return {text.begin(), text.end()}; }

TEST(CtsWriter, Base64MatchesRfc4648AndRoundTrips) {
  EXPECT_EQ(encodeBase64({}), "");
  EXPECT_EQ(encodeBase64(bytesOf("f")), "Zg==");
  EXPECT_EQ(encodeBase64(bytesOf("fo")), "Zm8=");
  EXPECT_EQ(encodeBase64(bytesOf("foo")), "Zm9v");
  EXPECT_EQ(encodeBase64(bytesOf("foobar")), "Zm9vYmFy");
  std::mt19937 rng(5);
  for (size_t size = 0; size < 200; size += 7) {
    std::vector<uint8_t> bytes(size);
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    const std::string text = encodeBase64(bytes);
    EXPECT_EQ(text.find('\n'), std::string::npos);
    auto back = decodeBase64(text);
    ASSERT_TRUE(back) << back.error().message;
    EXPECT_EQ(*back, bytes);
  }
}

TEST(CtsWriter, Base64DecodingRefusesMalformedText) {
  EXPECT_EQ(*decodeBase64("Zm9vYmFy"), bytesOf("foobar"));
  EXPECT_EQ(*decodeBase64("Zg=="), bytesOf("f"));
  EXPECT_TRUE(decodeBase64("")->empty());
  for (const char* bad : {"Zm9", "Zm9v!mFy", "Z=9v", "Zm 9", "=Zm9"}) {
    auto decoded = decodeBase64(bad);
    ASSERT_FALSE(decoded) << bad;
    EXPECT_EQ(decoded.error().status, ErrorStatus::INVALID_ARGUMENT);
  }
}

/// The value bytes of every constant of `model`, in subgraph and operand order.
std::vector<std::vector<uint8_t>> constants(const Model& model) {
  std::vector<std::vector<uint8_t>> all;
  auto add = [&](const Subgraph& subgraph) {
    for (const Operand& operand : subgraph.operands) {
      const DataLocation& at = operand.location;
      if (operand.lifetime == OperandLifeTime::CONSTANT_COPY) {
        all.emplace_back(model.operandValues.begin() + at.offset,
                         model.operandValues.begin() + at.offset + at.length);
      } else if (operand.lifetime == OperandLifeTime::CONSTANT_REFERENCE) {
        const uint8_t* begin = model.pools[at.poolIndex].data() + at.offset;
        all.emplace_back(begin, begin + at.length);
      }
    }
  };
  add(model.main);
  for (const Subgraph& subgraph : model.referenced) add(subgraph);
  return all;
}

void expectSameSubgraph(const Subgraph& a, const Subgraph& b) {
  ASSERT_EQ(a.operands.size(), b.operands.size());
  for (size_t i = 0; i < a.operands.size(); ++i) {
    SCOPED_TRACE(i);
    const Operand& x = a.operands[i];
    const Operand& y = b.operands[i];
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.dimensions, y.dimensions);
    EXPECT_EQ(x.scale, y.scale);
    EXPECT_EQ(x.zeroPoint, y.zeroPoint);
    EXPECT_EQ(x.lifetime, y.lifetime);
    EXPECT_EQ(x.numberOfConsumers, y.numberOfConsumers);
    EXPECT_EQ(x.location, y.location);
    EXPECT_TRUE(x.extraParams == y.extraParams);
  }
  ASSERT_EQ(a.operations.size(), b.operations.size());
  for (size_t i = 0; i < a.operations.size(); ++i) {
    EXPECT_EQ(a.operations[i].type, b.operations[i].type);
    EXPECT_EQ(a.operations[i].inputs, b.operations[i].inputs);
    EXPECT_EQ(a.operations[i].outputs, b.operations[i].outputs);
  }
  EXPECT_EQ(a.inputIndexes, b.inputIndexes);
  EXPECT_EQ(a.outputIndexes, b.outputIndexes);
}

void expectSameCtsModel(const CtsModel& a, const CtsModel& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.expectFailure, b.expectFailure);
  EXPECT_EQ(a.isRelaxed, b.isRelaxed);
  EXPECT_EQ(a.multinomialTolerance, b.multinomialTolerance);
  EXPECT_EQ(a.model.relaxComputationFloat32toFloat16, b.model.relaxComputationFloat32toFloat16);
  expectSameSubgraph(a.model.main, b.model.main);
  ASSERT_EQ(a.model.referenced.size(), b.model.referenced.size());
  for (size_t i = 0; i < a.model.referenced.size(); ++i) {
    expectSameSubgraph(a.model.referenced[i], b.model.referenced[i]);
  }
  // The same layout: operandValues and the pool are byte for byte what they were.
  EXPECT_EQ(a.model.operandValues, b.model.operandValues);
  ASSERT_EQ(a.model.pools.size(), b.model.pools.size());
  for (size_t i = 0; i < a.model.pools.size(); ++i) {
    ASSERT_EQ(a.model.pools[i].size(), b.model.pools[i].size());
    EXPECT_EQ(
        std::memcmp(a.model.pools[i].data(), b.model.pools[i].data(), a.model.pools[i].size()), 0);
  }
  EXPECT_EQ(constants(a.model), constants(b.model));
  EXPECT_EQ(a.inputs, b.inputs);
  EXPECT_EQ(a.outputs, b.outputs);
  EXPECT_EQ(a.outputIgnored, b.outputIgnored);
}

// Every CTS model (9,127 in 604 files) survives the round trip through the writer.
TEST(CtsWriter, EveryCtsModelRoundTrips) {
  size_t models = 0;
  for (const fs::path& file : ctsFiles(fs::path(NNHAL_SHARED_DIR) / "cts")) {
    auto loaded = loadCtsFile(file);
    ASSERT_TRUE(loaded) << loaded.error().message;
    for (const CtsModel& cts : *loaded) {
      SCOPED_TRACE(cts.name);
      auto written = ctsModelToJson(cts);
      ASSERT_TRUE(written) << written.error().message;
      auto back = ctsModelFromJson(*written, cts.spec, cts.version);
      ASSERT_TRUE(back) << back.error().message;
      expectSameCtsModel(cts, *back);
      if (::testing::Test::HasFailure()) return;  // one model's report is enough
      ++models;
    }
  }
  EXPECT_GE(models, 9127u);
}

// A written file is one loadCtsFile reads back, with its spec and version.
TEST(CtsWriter, AWrittenFileLoadsBack) {
  const fs::path source = fs::path(NNHAL_SHARED_DIR) / "cts/V1_3/while_fib.json";
  auto loaded = loadCtsFile(source);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_FALSE(loaded->empty());
  std::vector<nlohmann::json> tests;
  for (const CtsModel& cts : *loaded) {
    auto written = ctsModelToJson(cts);
    ASSERT_TRUE(written) << written.error().message;
    tests.push_back(std::move(*written));
  }
  const fs::path path =
      fs::temp_directory_path() / ("nnhal-cts-" + std::to_string(getpid()) + ".json");
  ASSERT_TRUE(writeCtsFile(path, "while_fib", "V1_3", tests));
  auto back = loadCtsFile(path);
  fs::remove(path);
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), loaded->size());
  for (size_t i = 0; i < back->size(); ++i) {
    EXPECT_EQ((*back)[i].spec, "while_fib");
    EXPECT_EQ((*back)[i].version, "V1_3");
    expectSameCtsModel((*loaded)[i], (*back)[i]);
  }
  EXPECT_FALSE(writeCtsFile(fs::path("/nonexistent-folder/x.json"), "s", "V1_0", tests));
}

/// One ADD of two float32 tensors into a third, with a constant second operand.
CtsModel addModel() {
  CtsModel cts;
  cts.name = "add";
  Operand tensor;
  tensor.type = OperandType::TENSOR_FLOAT32;
  tensor.dimensions = {2};
  Operand a = tensor, b = tensor, out = tensor;
  a.lifetime = OperandLifeTime::SUBGRAPH_INPUT;
  a.numberOfConsumers = 1;
  b.lifetime = OperandLifeTime::CONSTANT_COPY;
  b.numberOfConsumers = 1;
  b.location = {0, 0, 8};
  out.lifetime = OperandLifeTime::SUBGRAPH_OUTPUT;
  Operand act;
  act.type = OperandType::INT32;
  act.lifetime = OperandLifeTime::CONSTANT_COPY;
  act.numberOfConsumers = 1;
  act.location = {0, 8, 4};
  cts.model.operandValues.resize(12);
  const float values[2] = {1.5f, -2.0f};
  std::memcpy(cts.model.operandValues.data(), values, 8);
  cts.model.main.operands = {a, b, act, out};
  cts.model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  cts.model.main.inputIndexes = {0};
  cts.model.main.outputIndexes = {3};
  return cts;
}

// A model received without a request (nnhald --dump-models): inputs and outputs are
// written empty, and it reads back the same.
TEST(CtsWriter, AModelWithoutDataRoundTrips) {
  const CtsModel cts = addModel();
  auto written = ctsModelToJson(cts);
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ((*written)["model"]["main"]["operands"][0]["data"], "");
  EXPECT_EQ((*written)["model"]["main"]["operands"][1]["count"], 2);
  auto back = ctsModelFromJson(*written, "s", "V1_0");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->model.operandValues.size(), 12u);
  EXPECT_EQ(constants(back->model), constants(cts.model));
  EXPECT_EQ(back->inputs, std::vector<std::vector<uint8_t>>{{}});
}

TEST(CtsWriter, RefusesWhatTheFormatCannotHold) {
  {
    CtsModel cts = addModel();
    cts.model.main.operations[0].type = static_cast<OperationType>((1u << 16) | 3u);
    auto written = ctsModelToJson(cts);
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error().status, ErrorStatus::INVALID_ARGUMENT);
    EXPECT_NE(written.error().message.find("main.operations[0]"), std::string::npos)
        << written.error().message;
  }
  {
    CtsModel cts = addModel();
    cts.model.main.operands[0].type = static_cast<OperandType>((1u << 16) | 1u);
    auto written = ctsModelToJson(cts);
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().message.find("main.operands[0]"), std::string::npos)
        << written.error().message;
  }
  {
    CtsModel cts = addModel();
    cts.model.main.operands[1].location = {0, 8, 8};  // past operandValues' 12 bytes
    auto written = ctsModelToJson(cts);
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().message.find("outside operandValues"), std::string::npos)
        << written.error().message;
  }
  {
    CtsModel cts = addModel();
    cts.model.main.operands[1].lifetime = OperandLifeTime::CONSTANT_REFERENCE;  // no pool
    auto written = ctsModelToJson(cts);
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().message.find("outside the model's pools"), std::string::npos)
        << written.error().message;
  }
}

}  // namespace
}  // namespace nnhal::tools
