// tests/common/fully_connected_chain.h — a model whose preparation and execution take as
// long as a test needs: `layers` FULLY_CONNECTED layers [batch, n] x [n, n]^T, float32, all
// sharing one weight matrix and bias in a model pool (n * n + n floats of 0.001, so the
// values stay small). Each layer packs the weights again when prepared.
#pragma once

#include <cstdint>
#include <vector>

#include "nnhal/memory.h"
#include "nnhal/types.h"

namespace nnhal::testing {

inline Model fullyConnectedChain(uint32_t layers, uint32_t batch, uint32_t n) {
  auto tensor = [](std::vector<uint32_t> dims, OperandLifeTime lifetime, uint32_t consumers) {
    Operand op;
    op.type = OperandType::TENSOR_FLOAT32;
    op.dimensions = std::move(dims);
    op.lifetime = lifetime;
    op.numberOfConsumers = consumers;
    return op;
  };
  Model model;
  Memory weights = *Memory::create(size_t{n} * n * 4 + size_t{n} * 4);
  auto* w = reinterpret_cast<float*>(weights.data());
  for (size_t i = 0; i < size_t{n} * n + n; ++i) w[i] = 0.001f;
  model.pools.push_back(weights);
  auto& ops = model.main.operands;
  ops.push_back(tensor({batch, n}, OperandLifeTime::SUBGRAPH_INPUT, 1));  // 0
  Operand weight = tensor({n, n}, OperandLifeTime::CONSTANT_REFERENCE, layers);
  weight.location = {0, 0, n * n * 4};
  ops.push_back(weight);  // 1
  Operand bias = tensor({n}, OperandLifeTime::CONSTANT_REFERENCE, layers);
  bias.location = {0, n * n * 4, n * 4};
  ops.push_back(bias);  // 2
  Operand activation;
  activation.type = OperandType::INT32;
  activation.lifetime = OperandLifeTime::CONSTANT_COPY;
  activation.location = {0, 0, 4};
  activation.numberOfConsumers = layers;
  ops.push_back(activation);  // 3: NONE
  model.operandValues.resize(4, 0);
  uint32_t previous = 0;
  for (uint32_t layer = 0; layer < layers; ++layer) {
    const bool last = layer + 1 == layers;
    ops.push_back(tensor(
        {batch, n}, last ? OperandLifeTime::SUBGRAPH_OUTPUT : OperandLifeTime::TEMPORARY_VARIABLE,
        last ? 0 : 1));
    const auto output = static_cast<uint32_t>(ops.size() - 1);
    model.main.operations.push_back(
        {OperationType::FULLY_CONNECTED, {previous, 1, 2, 3}, {output}});
    previous = output;
  }
  model.main.inputIndexes = {0};
  model.main.outputIndexes = {previous};
  return model;
}

}  // namespace nnhal::testing
