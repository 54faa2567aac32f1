// Models a hostile client sends: deep control flow, shapes whose size overflows, endless
// loops, index tensors. Shared by the hal, actors and ipc tests.
#pragma once

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "nnhal/types.h"

namespace nnhal::testing {

inline Operand hostileOperand(OperandType type, std::vector<uint32_t> dims,
                              OperandLifeTime lifetime, uint32_t consumers = 0) {
  Operand op;
  op.type = type;
  op.dimensions = std::move(dims);
  op.lifetime = lifetime;
  op.numberOfConsumers = consumers;
  return op;
}

/// Appends a CONSTANT_COPY operand holding `bytes` to `graph` and returns its index.
inline uint32_t constantOperand(Model& model, Subgraph& graph, Operand op, const void* bytes,
                                uint32_t length) {
  const auto offset = static_cast<uint32_t>(model.operandValues.size());
  model.operandValues.resize(offset + length);
  std::memcpy(model.operandValues.data() + offset, bytes, length);
  op.lifetime = OperandLifeTime::CONSTANT_COPY;
  op.location = {0, offset, length};
  graph.operands.push_back(std::move(op));
  return static_cast<uint32_t>(graph.operands.size() - 1);
}

inline uint32_t int32Scalar(Model& model, Subgraph& graph, int32_t value, uint32_t consumers = 1) {
  return constantOperand(
      model, graph,
      hostileOperand(OperandType::INT32, {}, OperandLifeTime::CONSTANT_COPY, consumers), &value, 4);
}

/// IF nested `depth` levels: main and every referenced subgraph k < depth - 1 compute
/// y = IF(c, referenced[k + 1], referenced[k + 1], c, x); the innermost y = RELU(x).
/// Inputs c TENSOR_BOOL8 [1] and x TENSOR_FLOAT32 [2]; output y TENSOR_FLOAT32 [2].
inline Model nestedIfModel(uint32_t depth) {
  Model model;
  model.referenced.resize(depth);
  auto level = [&](Subgraph& g, int64_t callee) {
    const bool calls = callee >= 0;
    g.operands.push_back(hostileOperand(OperandType::TENSOR_BOOL8, {1},
                                        OperandLifeTime::SUBGRAPH_INPUT, calls ? 2 : 0));
    g.operands.push_back(
        hostileOperand(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_INPUT, 1));
    g.operands.push_back(
        hostileOperand(OperandType::TENSOR_FLOAT32, {2}, OperandLifeTime::SUBGRAPH_OUTPUT));
    if (calls) {
      Operand ref = hostileOperand(OperandType::SUBGRAPH, {}, OperandLifeTime::SUBGRAPH, 2);
      ref.location = {0, static_cast<uint32_t>(callee), 0};
      g.operands.push_back(ref);
      g.operations.push_back({OperationType::IF, {0, 3, 3, 0, 1}, {2}});
    } else {
      g.operations.push_back({OperationType::RELU, {1}, {2}});
    }
    g.inputIndexes = {0, 1};
    g.outputIndexes = {2};
  };
  level(model.main, depth > 0 ? 0 : -1);
  for (uint32_t k = 0; k < depth; ++k) {
    level(model.referenced[k], k + 1 < depth ? static_cast<int64_t>(k) + 1 : -1);
  }
  return model;
}

/// out = ADD(a [rowsA, 1], b [1, colsB]) of float32, output dimensions `outDims`
/// (unknown by default): with 65536 x 65536 the result would be 16 GiB.
inline Model broadcastAddModel(uint32_t rowsA = 65536, uint32_t colsB = 65536,
                               std::vector<uint32_t> outDims = {0, 0}) {
  Model model;
  Subgraph& g = model.main;
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_FLOAT32, {rowsA, 1}, OperandLifeTime::SUBGRAPH_INPUT, 1));
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_FLOAT32, {1, colsB}, OperandLifeTime::SUBGRAPH_INPUT, 1));
  int32Scalar(model, g, 0);
  g.operands.push_back(hostileOperand(OperandType::TENSOR_FLOAT32, std::move(outDims),
                                      OperandLifeTime::SUBGRAPH_OUTPUT));
  g.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
  g.inputIndexes = {0, 1};
  g.outputIndexes = {3};
  return model;
}

/// WHILE (i < 1e30) { i = i + 1 } over float32 [1]: once i reaches 2^24, i + 1 == i, so the
/// loop only ends by its loop timeout. Input i, output the final i.
inline Model endlessWhileModel() {
  Model model;
  model.referenced.resize(2);
  const auto f32 = [](OperandLifeTime lifetime, uint32_t consumers) {
    return hostileOperand(OperandType::TENSOR_FLOAT32, {1}, lifetime, consumers);
  };
  {
    Subgraph& g = model.referenced[0];  // condition: i < 1e30
    g.operands.push_back(f32(OperandLifeTime::SUBGRAPH_INPUT, 1));
    const float limit = 1e30f;
    constantOperand(model, g, f32(OperandLifeTime::CONSTANT_COPY, 1), &limit, 4);
    g.operands.push_back(
        hostileOperand(OperandType::TENSOR_BOOL8, {1}, OperandLifeTime::SUBGRAPH_OUTPUT));
    g.operations.push_back({OperationType::LESS, {0, 1}, {2}});
    g.inputIndexes = {0};
    g.outputIndexes = {2};
  }
  {
    Subgraph& g = model.referenced[1];  // body: i + 1
    g.operands.push_back(f32(OperandLifeTime::SUBGRAPH_INPUT, 1));
    const float one = 1.0f;
    constantOperand(model, g, f32(OperandLifeTime::CONSTANT_COPY, 1), &one, 4);
    int32Scalar(model, g, 0);
    g.operands.push_back(f32(OperandLifeTime::SUBGRAPH_OUTPUT, 0));
    g.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
    g.inputIndexes = {0};
    g.outputIndexes = {3};
  }
  Subgraph& g = model.main;
  Operand cond = hostileOperand(OperandType::SUBGRAPH, {}, OperandLifeTime::SUBGRAPH, 1);
  cond.location = {0, 0, 0};
  Operand body = cond;
  body.location = {0, 1, 0};
  g.operands.push_back(cond);
  g.operands.push_back(body);
  g.operands.push_back(f32(OperandLifeTime::SUBGRAPH_INPUT, 1));
  g.operands.push_back(f32(OperandLifeTime::SUBGRAPH_OUTPUT, 0));
  g.operations.push_back({OperationType::WHILE, {0, 1, 2}, {3}});
  g.inputIndexes = {2};
  g.outputIndexes = {3};
  return model;
}

/// out [count] = GATHER(table float32 [16] = {100, 101, ..., 115}, axis 0, indices int32
/// [count]). The table is a constant: a result outside 100..115 is memory the client must
/// never see.
inline Model gatherModel(uint32_t count = 4) {
  Model model;
  Subgraph& g = model.main;
  float table[16];
  for (int i = 0; i < 16; ++i) table[i] = 100.0f + static_cast<float>(i);
  constantOperand(
      model, g,
      hostileOperand(OperandType::TENSOR_FLOAT32, {16}, OperandLifeTime::CONSTANT_COPY, 1), table,
      sizeof(table));
  int32Scalar(model, g, 0);
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_INT32, {count}, OperandLifeTime::SUBGRAPH_INPUT, 1));
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_FLOAT32, {count}, OperandLifeTime::SUBGRAPH_OUTPUT));
  g.operations.push_back({OperationType::GATHER, {0, 1, 2}, {3}});
  g.inputIndexes = {2};
  g.outputIndexes = {3};
  return model;
}

/// out = RELU(a + b) over float32 [rows, cols] with a temporary (the sum) of
/// rows * cols * 4 bytes; `known` false declares every shape [0, 0] (sizes come with the
/// request, and the temporary is allocated while executing).
inline Model bigTemporaryModel(uint32_t rows, uint32_t cols, bool known = true) {
  Model model;
  Subgraph& g = model.main;
  const std::vector<uint32_t> dims =
      known ? std::vector<uint32_t>{rows, cols} : std::vector<uint32_t>{0, 0};
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_FLOAT32, dims, OperandLifeTime::SUBGRAPH_INPUT, 1));
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_FLOAT32, dims, OperandLifeTime::SUBGRAPH_INPUT, 1));
  int32Scalar(model, g, 0);
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_FLOAT32, dims, OperandLifeTime::TEMPORARY_VARIABLE, 1));
  g.operands.push_back(
      hostileOperand(OperandType::TENSOR_FLOAT32, dims, OperandLifeTime::SUBGRAPH_OUTPUT));
  g.operations.push_back({OperationType::ADD, {0, 1, 2}, {3}});
  g.operations.push_back({OperationType::RELU, {3}, {4}});
  g.inputIndexes = {0, 1};
  g.outputIndexes = {4};
  return model;
}

/// The request of gatherModel(256) over `pool` (2048 bytes): indices at 0, output at 1024.
inline Request gatherRequest(const Memory& pool) {
  Request request;
  request.pools = {pool};
  request.inputs = {{false, {0, 0, 1024}, {}}};
  request.outputs = {{false, {0, 1024, 1024}, {}}};
  return request;
}

/// A thread rewriting the 256 int32 indices at the start of `pool`, as fast as it can,
/// between far out of range (1 << 28) and valid (0..15), until destroyed.
class IndexFlipper {
 public:
  explicit IndexFlipper(const Memory& pool)
      : indices_(reinterpret_cast<int32_t*>(pool.data())), thread_([this] { run(); }) {}
  ~IndexFlipper() {
    stop_ = true;
    thread_.join();
  }

 private:
  void run() {
    for (uint32_t round = 0; !stop_.load(std::memory_order_relaxed); ++round) {
      const int32_t value = round % 2 == 0 ? (1 << 28) : static_cast<int32_t>(round % 16);
      for (int i = 0; i < 256; ++i) {
        std::atomic_ref<int32_t>(indices_[i]).store(value, std::memory_order_relaxed);
      }
    }
  }
  int32_t* indices_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace nnhal::testing
