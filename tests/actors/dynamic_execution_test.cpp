// Dynamic shapes and control flow through the embedded driver: outputs whose shapes are
// only known at execution, OUTPUT_INSUFFICIENT_SIZE with the real shapes, IF, WHILE and
// the loop timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "nnhal/device.h"

namespace nnhal {
namespace {

using namespace std::chrono_literals;

/// Builds subgraphs operand by operand.
struct GraphBuilder {
  Model& model;
  Subgraph& graph;

  uint32_t add(OperandType type, std::vector<uint32_t> dims, OperandLifeTime lifetime) {
    Operand op;
    op.type = type;
    op.dimensions = std::move(dims);
    op.lifetime = lifetime;
    graph.operands.push_back(op);
    return static_cast<uint32_t>(graph.operands.size() - 1);
  }
  uint32_t constantInt(int32_t value) {
    const uint32_t index = add(OperandType::INT32, {}, OperandLifeTime::CONSTANT_COPY);
    const auto offset = static_cast<uint32_t>(model.operandValues.size());
    model.operandValues.resize(offset + 4);
    std::memcpy(model.operandValues.data() + offset, &value, 4);
    graph.operands[index].location = {0, offset, 4};
    return index;
  }
  uint32_t constantFloats(std::vector<uint32_t> dims, const std::vector<float>& values) {
    const uint32_t index =
        add(OperandType::TENSOR_FLOAT32, std::move(dims), OperandLifeTime::CONSTANT_COPY);
    const auto offset = static_cast<uint32_t>(model.operandValues.size());
    const auto bytes = static_cast<uint32_t>(values.size() * 4);
    model.operandValues.resize(offset + bytes);
    std::memcpy(model.operandValues.data() + offset, values.data(), bytes);
    graph.operands[index].location = {0, offset, bytes};
    return index;
  }
  uint32_t subgraphRef(uint32_t referencedIndex) {
    const uint32_t index = add(OperandType::SUBGRAPH, {}, OperandLifeTime::SUBGRAPH);
    graph.operands[index].location = {0, referencedIndex, 0};
    return index;
  }
  void op(OperationType type, std::vector<uint32_t> in, std::vector<uint32_t> out) {
    for (uint32_t i : in) graph.operands[i].numberOfConsumers++;
    graph.operations.push_back({type, std::move(in), std::move(out)});
  }
};

/// A request over one pool: inputs' bytes, then outputs of the given byte sizes.
struct PoolRequest {
  Memory pool;
  Request request;
  std::vector<uint32_t> outputOffsets;

  PoolRequest(const std::vector<std::vector<uint8_t>>& inputs, const std::vector<uint32_t>& outs) {
    uint32_t total = 0;
    for (const auto& in : inputs) total += static_cast<uint32_t>((in.size() + 7) / 8 * 8);
    for (uint32_t o : outs) total += (o + 7) / 8 * 8 + 8;
    pool = *Memory::create(total);
    request.pools.push_back(pool);
    uint32_t offset = 0;
    for (const auto& in : inputs) {
      std::memcpy(pool.data() + offset, in.data(), in.size());
      request.inputs.push_back({false, {0, offset, static_cast<uint32_t>(in.size())}, {}});
      offset += static_cast<uint32_t>((in.size() + 7) / 8 * 8);
    }
    for (uint32_t o : outs) {
      request.outputs.push_back({false, {0, offset, o}, {}});
      outputOffsets.push_back(offset);
      offset += (o + 7) / 8 * 8 + 8;
    }
  }
  template <typename T>
  T at(size_t output, size_t i) const {
    T v;
    std::memcpy(&v, pool.data() + outputOffsets[output] + i * sizeof(T), sizeof(T));
    return v;
  }
};

std::vector<uint8_t> bytesOf(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * 4);
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

class DynamicExecution : public ::testing::Test {
 protected:
  void SetUp() override { device_ = *createDevice(); }
  std::shared_ptr<Device> device_;
};

// RESHAPE whose shape arrives with the request: the output shape is known only then.
Model reshapeModel() {
  Model model;
  GraphBuilder b{model, model.main};
  const uint32_t in = b.add(OperandType::TENSOR_FLOAT32, {2, 3}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t shape = b.add(OperandType::TENSOR_INT32, {2}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t out = b.add(OperandType::TENSOR_FLOAT32, {0, 0}, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.op(OperationType::RESHAPE, {in, shape}, {out});
  model.main.inputIndexes = {in, shape};
  model.main.outputIndexes = {out};
  return model;
}

std::vector<uint8_t> shapeBytes(int32_t a, int32_t b) {
  std::vector<uint8_t> bytes(8);
  std::memcpy(bytes.data(), &a, 4);
  std::memcpy(bytes.data() + 4, &b, 4);
  return bytes;
}

TEST_F(DynamicExecution, OutputShapeResolvedAtExecution) {
  auto prepared = device_->prepareModel(reshapeModel());
  ASSERT_TRUE(prepared) << prepared.error().message;
  for (auto [rows, cols] : {std::pair{3, 2}, std::pair{1, 6}, std::pair{6, -1}}) {
    PoolRequest r({bytesOf({1, 2, 3, 4, 5, 6}), shapeBytes(rows, cols)}, {24});
    auto result = (*prepared)->executeSynchronously(r.request);
    ASSERT_TRUE(result) << result.error().message;
    const uint32_t expectedCols = cols == -1 ? 1 : static_cast<uint32_t>(cols);
    EXPECT_EQ(result->outputShapes[0].dimensions,
              (std::vector<uint32_t>{static_cast<uint32_t>(rows), expectedCols}));
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(r.at<float>(0, i), static_cast<float>(i + 1));
  }
}

TEST_F(DynamicExecution, InsufficientDynamicOutputReportsRealShape) {
  auto prepared = device_->prepareModel(reshapeModel());
  ASSERT_TRUE(prepared);
  PoolRequest r({bytesOf({1, 2, 3, 4, 5, 6}), shapeBytes(2, 3)}, {8});
  auto result = (*prepared)->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::OUTPUT_INSUFFICIENT_SIZE);
  ASSERT_EQ(result.error().outputShapes.size(), 1u);
  EXPECT_FALSE(result.error().outputShapes[0].isSufficient);
  EXPECT_EQ(result.error().outputShapes[0].dimensions, (std::vector<uint32_t>{2, 3}));
}

TEST_F(DynamicExecution, BadRuntimeShapeIsAnError) {
  auto prepared = device_->prepareModel(reshapeModel());
  ASSERT_TRUE(prepared);
  PoolRequest r({bytesOf({1, 2, 3, 4, 5, 6}), shapeBytes(4, 4)}, {64});
  auto result = (*prepared)->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_NE(result.error().message.find("RESHAPE"), std::string::npos) << result.error().message;
}

/// IF(cond, then: x + y, else: x * y) over float32 [2].
Model ifModel() {
  Model model;
  model.referenced.resize(2);
  for (int branch = 0; branch < 2; ++branch) {
    GraphBuilder g{model, model.referenced[branch]};
    const uint32_t x = g.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t y = g.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t act = g.constantInt(0);
    const uint32_t z = g.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_OUTPUT);
    g.op(branch == 0 ? OperationType::ADD : OperationType::MUL, {x, y, act}, {z});
    model.referenced[branch].inputIndexes = {x, y};
    model.referenced[branch].outputIndexes = {z};
  }
  GraphBuilder b{model, model.main};
  const uint32_t cond = b.add(OperandType::TENSOR_BOOL8, {1}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t x = b.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t y = b.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t thenRef = b.subgraphRef(0);
  const uint32_t elseRef = b.subgraphRef(1);
  const uint32_t out = b.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.op(OperationType::IF, {cond, thenRef, elseRef, x, y}, {out});
  model.main.inputIndexes = {cond, x, y};
  model.main.outputIndexes = {out};
  return model;
}

TEST_F(DynamicExecution, IfRunsTheChosenBranch) {
  auto prepared = device_->prepareModel(ifModel());
  ASSERT_TRUE(prepared) << prepared.error().message;
  for (uint8_t cond : {uint8_t{1}, uint8_t{0}}) {
    PoolRequest r({{cond}, bytesOf({2, 3}), bytesOf({10, 20})}, {8});
    auto result = (*prepared)->executeSynchronously(r.request);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_EQ(r.at<float>(0, 0), cond ? 12.0f : 20.0f);
    EXPECT_EQ(r.at<float>(0, 1), cond ? 23.0f : 60.0f);
  }
}

/// WHILE (i < limit) { i = i + 1; acc = acc * 2 } with float32 [1] state; `limit` input.
Model whileModel() {
  Model model;
  model.referenced.resize(2);
  {  // condition: (i, acc, limit) -> i < limit
    GraphBuilder g{model, model.referenced[0]};
    const uint32_t i = g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t acc = g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t limit = g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t out = g.add(OperandType::TENSOR_BOOL8, {1}, OperandLifeTime::SUBGRAPH_OUTPUT);
    g.op(OperationType::LESS, {i, limit}, {out});
    model.referenced[0].inputIndexes = {i, acc, limit};
    model.referenced[0].outputIndexes = {out};
  }
  {  // body: (i, acc, limit) -> (i + 1, acc * 2)
    GraphBuilder g{model, model.referenced[1]};
    const uint32_t i = g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t acc = g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t limit = g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
    const uint32_t one = g.constantFloats({1}, {1.0f});
    const uint32_t two = g.constantFloats({1}, {2.0f});
    const uint32_t act = g.constantInt(0);
    const uint32_t iNext =
        g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_OUTPUT);
    const uint32_t accNext =
        g.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_OUTPUT);
    g.op(OperationType::ADD, {i, one, act}, {iNext});
    g.op(OperationType::MUL, {acc, two, act}, {accNext});
    model.referenced[1].inputIndexes = {i, acc, limit};
    model.referenced[1].outputIndexes = {iNext, accNext};
    (void)limit;
  }
  GraphBuilder b{model, model.main};
  const uint32_t i = b.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t acc = b.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t limit = b.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t condRef = b.subgraphRef(0);
  const uint32_t bodyRef = b.subgraphRef(1);
  const uint32_t iOut = b.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_OUTPUT);
  const uint32_t accOut = b.add(OperandType::TENSOR_FLOAT32, {1}, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.op(OperationType::WHILE, {condRef, bodyRef, i, acc, limit}, {iOut, accOut});
  model.main.inputIndexes = {i, acc, limit};
  model.main.outputIndexes = {iOut, accOut};
  return model;
}

TEST_F(DynamicExecution, WhileLoopsUntilTheConditionFails) {
  auto prepared = device_->prepareModel(whileModel());
  ASSERT_TRUE(prepared) << prepared.error().message;
  PoolRequest r({bytesOf({0}), bytesOf({1}), bytesOf({5})}, {4, 4});
  auto result = (*prepared)->executeSynchronously(r.request);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(r.at<float>(0, 0), 5.0f);
  EXPECT_EQ(r.at<float>(1, 0), 32.0f);
}

TEST_F(DynamicExecution, RunawayWhileEndsAtTheLoopTimeout) {
  auto prepared = device_->prepareModel(whileModel());
  ASSERT_TRUE(prepared);
  // A limit of 1e30 takes forever with step 1 (it stops growing at 2^24).
  PoolRequest r({bytesOf({0}), bytesOf({1}), bytesOf({1e30f})}, {4, 4});
  ExecuteOptions options;
  options.loopTimeout = 50ms;
  const auto start = std::chrono::steady_clock::now();
  auto result = (*prepared)->executeSynchronously(r.request, options);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::MISSED_DEADLINE_TRANSIENT);
  EXPECT_LT(elapsed, 5s);
}

/// FULLY_CONNECTED(x [1, 2], weights [[1, 2], [3, 4]], bias) with the bias a model input, so
/// a request may omit it.
Model fullyConnectedWithBiasInput() {
  Model model;
  GraphBuilder b{model, model.main};
  const uint32_t x = b.add(OperandType::TENSOR_FLOAT32, {1, 2}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t w = b.constantFloats({2, 2}, {1, 2, 3, 4});
  const uint32_t bias = b.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t act = b.constantInt(0);
  const uint32_t out = b.add(OperandType::TENSOR_FLOAT32, {1, 2}, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.op(OperationType::FULLY_CONNECTED, {x, w, bias, act}, {out});
  model.main.inputIndexes = {x, bias};
  model.main.outputIndexes = {out};
  return model;
}

/// MEAN of a [2, 3] model input over axis 1.
Model meanModel() {
  Model model;
  GraphBuilder b{model, model.main};
  const uint32_t x = b.add(OperandType::TENSOR_FLOAT32, {2, 3}, OperandLifeTime::SUBGRAPH_INPUT);
  const uint32_t axes = b.add(OperandType::TENSOR_INT32, {1}, OperandLifeTime::CONSTANT_COPY);
  const auto offset = static_cast<uint32_t>(model.operandValues.size());
  model.operandValues.resize(offset + 4);
  const int32_t axis = 1;
  std::memcpy(model.operandValues.data() + offset, &axis, 4);
  model.main.operands[axes].location = {0, offset, 4};
  const uint32_t keep = b.constantInt(0);
  const uint32_t out = b.add(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.op(OperationType::MEAN, {x, axes, keep}, {out});
  model.main.inputIndexes = {x};
  model.main.outputIndexes = {out};
  return model;
}

// Request.inputs[k].hasNoValue omits a model input for one execution: an optional operation
// input takes its default (no bias), exactly as if the model had omitted it.
TEST_F(DynamicExecution, OmittedOptionalInputTakesItsDefault) {
  auto prepared = device_->prepareModel(fullyConnectedWithBiasInput());
  ASSERT_TRUE(prepared) << prepared.error().message;
  PoolRequest withBias({bytesOf({1, 1}), bytesOf({10, 20})}, {8});
  auto result = (*prepared)->executeSynchronously(withBias.request);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(withBias.at<float>(0, 0), 13.0f);
  EXPECT_EQ(withBias.at<float>(0, 1), 27.0f);

  PoolRequest omitted({bytesOf({1, 1})}, {8});
  omitted.request.inputs.push_back({true, {}, {}});
  result = (*prepared)->executeSynchronously(omitted.request);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(omitted.at<float>(0, 0), 3.0f);
  EXPECT_EQ(omitted.at<float>(0, 1), 7.0f);
}

// Omitting an input the operation requires is the caller's error, found before any kernel
// reads it (a fuzzed MEAN once read through the null pointer).
TEST_F(DynamicExecution, OmittedRequiredInputIsRefused) {
  auto prepared = device_->prepareModel(meanModel());
  ASSERT_TRUE(prepared) << prepared.error().message;
  PoolRequest r({}, {8});
  r.request.inputs.push_back({true, {}, {}});
  auto result = (*prepared)->executeSynchronously(r.request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(result.error().message.find("MEAN input 0"), std::string::npos)
      << result.error().message;
  EXPECT_NE(result.error().message.find("required"), std::string::npos) << result.error().message;

  PoolRequest present({bytesOf({1, 2, 3, 4, 5, 6})}, {8});
  result = (*prepared)->executeSynchronously(present.request);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(present.at<float>(0, 0), 2.0f);
  EXPECT_EQ(present.at<float>(0, 1), 5.0f);
}

}  // namespace
}  // namespace nnhal
