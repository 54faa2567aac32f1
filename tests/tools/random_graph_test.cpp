// Random graphs (tools/common/random_graph.h) and their check (random_graph_check.h): every
// generated graph is valid and runs; the generator covers the types and operations it
// promises; a result one step or 0.1% off fails the check, and the written file fails the
// same way when `nnhal cts` replays it while the true results pass.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "tools/common/random_graph_check.h"

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;

class RandomGraphTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto created = createDevice();
    ASSERT_TRUE(created) << created.error().message;
    device_ = new std::shared_ptr<Device>(*created);
  }
  static void TearDownTestSuite() {
    delete device_;
    device_ = nullptr;
  }
  static Device& device() { return **device_; }
  static std::shared_ptr<Device>* device_;
};
std::shared_ptr<Device>* RandomGraphTest::device_ = nullptr;

TEST_F(RandomGraphTest, TheSameSeedMakesTheSameGraph) {
  for (uint64_t seed : {1u, 2u, 77u}) {
    const auto a = ctsModelToJson(*generateRandomGraph(seed));
    const auto b = ctsModelToJson(*generateRandomGraph(seed));
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->dump(), b->dump());
  }
  EXPECT_NE(ctsModelToJson(*generateRandomGraph(1))->dump(),
            ctsModelToJson(*generateRandomGraph(2))->dump());
}

// Every graph prepares and runs on the embedded driver, and over 2,000 graphs every main
// type, every operation the generator knows and every kind of output turns up.
TEST_F(RandomGraphTest, EveryGraphIsValidAndTheGeneratorCoversWhatItPromises) {
  std::set<OperandType> mainTypes;
  std::set<OperandType> outputTypes;
  std::map<OperationType, int> operations;
  int exactOutputs = 0;
  int toleratedOutputs = 0;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    auto made = generateRandomGraph(seed);
    ASSERT_TRUE(made) << made.error().message;
    const CtsModel& graph = *made;
    const Subgraph& main = graph.model.main;
    ASSERT_FALSE(main.outputIndexes.empty());
    ASSERT_EQ(graph.outputTolerances.size(), main.outputIndexes.size());
    auto outputs = computeOutputs(device(), graph);
    ASSERT_TRUE(outputs) << graph.name << " (" << describeRandomGraph(graph)
                         << "): " << outputs.error().message;
    mainTypes.insert(main.operands[main.inputIndexes[0]].type);
    for (const Operation& op : main.operations) ++operations[op.type];
    for (size_t k = 0; k < main.outputIndexes.size(); ++k) {
      outputTypes.insert(main.operands[main.outputIndexes[k]].type);
      (graph.outputTolerances[k] == OutputTolerance{} ? exactOutputs : toleratedOutputs)++;
    }
  }
  EXPECT_EQ(mainTypes.size(), 4u);
  for (OperandType type :
       {OperandType::TENSOR_FLOAT32, OperandType::TENSOR_FLOAT16, OperandType::TENSOR_QUANT8_ASYMM,
        OperandType::TENSOR_QUANT8_ASYMM_SIGNED, OperandType::TENSOR_BOOL8,
        OperandType::TENSOR_INT32}) {
    EXPECT_TRUE(outputTypes.count(type)) << toString(type);
  }
  for (OperationType type : {OperationType::ADD,
                             OperationType::SUB,
                             OperationType::MUL,
                             OperationType::DIV,
                             OperationType::MAXIMUM,
                             OperationType::MINIMUM,
                             OperationType::RELU,
                             OperationType::RELU1,
                             OperationType::RELU6,
                             OperationType::LOGISTIC,
                             OperationType::TANH,
                             OperationType::ABS,
                             OperationType::NEG,
                             OperationType::HARD_SWISH,
                             OperationType::FULLY_CONNECTED,
                             OperationType::CONV_2D,
                             OperationType::DEPTHWISE_CONV_2D,
                             OperationType::AVERAGE_POOL_2D,
                             OperationType::MAX_POOL_2D,
                             OperationType::CONCATENATION,
                             OperationType::RESHAPE,
                             OperationType::TRANSPOSE,
                             OperationType::SOFTMAX,
                             OperationType::MEAN,
                             OperationType::PAD,
                             OperationType::LESS,
                             OperationType::GREATER,
                             OperationType::LOGICAL_NOT,
                             OperationType::SELECT,
                             OperationType::ARGMAX,
                             OperationType::ARGMIN,
                             OperationType::QUANTIZE,
                             OperationType::DEQUANTIZE}) {
    EXPECT_GE(operations[type], 5) << toString(type);
  }
  EXPECT_GT(exactOutputs, 500);
  EXPECT_GT(toleratedOutputs, 200);
}

/// The first graph from `seed` on with an output of `type` judged by `exact` tolerance,
/// with the device's outputs as the expected ones; the output's index in `output`.
CtsModel graphWithOutput(Device& device, OperandType type, bool exact, size_t& output) {
  for (uint64_t seed = 0; seed < 500; ++seed) {
    auto made = generateRandomGraph(seed);
    if (!made) continue;
    CtsModel graph = std::move(*made);
    const Subgraph& main = graph.model.main;
    for (size_t k = 0; k < main.outputIndexes.size(); ++k) {
      if (main.operands[main.outputIndexes[k]].type != type ||
          (graph.outputTolerances[k] == OutputTolerance{}) != exact) {
        continue;
      }
      auto outputs = computeOutputs(device, graph);
      if (!outputs) continue;
      graph.outputs = std::move(*outputs);
      output = k;
      return graph;
    }
  }
  ADD_FAILURE() << "no graph with such an output";
  return {};
}

TEST_F(RandomGraphTest, AResultOneStepOffFailsAndItsWrittenFileFailsTheSameWayOnReplay) {
  size_t k = 0;
  CtsModel graph = graphWithOutput(device(), OperandType::TENSOR_QUANT8_ASYMM, true, k);
  ASSERT_FALSE(graph.outputs.empty());
  EXPECT_TRUE(runCtsModel(device(), graph, CtsMode::kSynchronous).passed);

  RandomGraphCheck check;
  check.graph = graph;
  check.graph.outputs[k][0] = static_cast<uint8_t>(check.graph.outputs[k][0] ^ 1);  // one step
  const CtsOutcome wrong = runCtsModel(device(), check.graph, CtsMode::kBurst);
  EXPECT_FALSE(wrong.passed);
  EXPECT_NE(wrong.message.find("output " + std::to_string(k) + " element 0"), std::string::npos)
      << wrong.message;

  const fs::path folder =
      fs::temp_directory_path() / ("nnhal-random-graph-" + std::to_string(::getpid()));
  auto written = writeFailedGraph(folder / "failures", check);
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(written->filename(), graph.name + ".json");
  auto loaded = loadCtsFile(*written);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 1u);
  EXPECT_EQ((*loaded)[0].outputTolerances, graph.outputTolerances);
  EXPECT_EQ((*loaded)[0].inputs, graph.inputs);
  const CtsOutcome replayed = runCtsModel(device(), (*loaded)[0], CtsMode::kSynchronous);
  EXPECT_FALSE(replayed.passed);
  EXPECT_EQ(replayed.message, wrong.message);

  // The same file with the true results passes: the failure was the step, nothing else.
  check.graph = graph;
  written = writeFailedGraph(folder / "true", check);
  ASSERT_TRUE(written);
  loaded = loadCtsFile(*written);
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(runCtsModel(device(), (*loaded)[0], CtsMode::kSynchronous).passed);
  fs::remove_all(folder);
}

// The tolerances travel in the model's "nnhalOutputTolerances"; a list that does not give
// one pair of non-negative numbers per output is refused with a message, not half-applied.
TEST_F(RandomGraphTest, MalformedOutputTolerancesAreRefused) {
  auto made = generateRandomGraph(3);
  ASSERT_TRUE(made);
  made->outputs.assign(made->outputs.size(), std::vector<uint8_t>(4, 0));
  auto json = ctsModelToJson(*made);
  ASSERT_TRUE(json) << json.error().message;
  auto loaded = ctsModelFromJson(*json, "random_graph", "V1_3");
  ASSERT_TRUE(loaded) << loaded.error().message;
  EXPECT_EQ(loaded->outputTolerances, made->outputTolerances);

  const nlohmann::json good = (*json)["model"]["nnhalOutputTolerances"];
  nlohmann::json tooMany = good;
  tooMany.push_back({{"atol", 0}, {"rtol", 0}});
  nlohmann::json negative = good;
  negative[0]["atol"] = -1;
  nlohmann::json notANumber = good;
  notANumber[0]["rtol"] = "tiny";
  for (const nlohmann::json& bad : {tooMany, negative, notANumber, nlohmann::json("none")}) {
    nlohmann::json test = *json;
    test["model"]["nnhalOutputTolerances"] = bad;
    auto refused = ctsModelFromJson(test, "random_graph", "V1_3");
    ASSERT_FALSE(refused) << bad.dump();
    EXPECT_EQ(refused.error().status, ErrorStatus::INVALID_ARGUMENT);
    EXPECT_FALSE(refused.error().message.empty());
  }
}

TEST_F(RandomGraphTest, FloatSumsMayDifferByTheirToleranceButNotByATenthOfAPercent) {
  size_t k = 0;
  CtsModel graph = graphWithOutput(device(), OperandType::TENSOR_FLOAT32, false, k);
  ASSERT_FALSE(graph.outputs.empty());
  auto scaled = [&](float factor) {
    CtsModel changed = graph;
    float value = 0;
    std::memcpy(&value, changed.outputs[k].data(), 4);
    value = value * factor + (factor - 1.0f);  // relative and absolute change alike
    std::memcpy(changed.outputs[k].data(), &value, 4);
    return runCtsModel(device(), changed, CtsMode::kSynchronous);
  };
  EXPECT_TRUE(scaled(1.00001f).passed);
  EXPECT_FALSE(scaled(1.001f).passed);
}

TEST_F(RandomGraphTest, TheCheckAgainstTheSameDeviceLevelPasses) {
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const CtsMode mode = seed % 2 ? CtsMode::kFenced : CtsMode::kDeviceBuffers;
    const RandomGraphCheck check = checkRandomGraph(device(), device(), seed, mode);
    EXPECT_EQ(check.verdict, RandomGraphCheck::Verdict::kPassed)
        << check.graph.name << ": " << check.message;
  }
}

}  // namespace
}  // namespace nnhal::tools
