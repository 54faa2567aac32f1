// tests/common/tflite_compat_model.h — a small model using the org.nnhal.tflite_compat
// extension: q = FLOOR_DIV(a, b) on int32 [4, 1] inputs, then out = GATHER_ND(params, q) with
// params a constant int32 [8] = {100, 101, ..., 107}: q holds 4 tuples of one index and out
// is int32 [4]. The extension is mapped to `prefix` under `name`.
// With a = {0, 3, 7, 15} and b = {2, 2, 2, 2}: q = {0, 1, 3, 7}, out = {100, 101, 103, 107}.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "nnhal/memory.h"
#include "nnhal/tflite_compat_extension.h"
#include "nnhal/types.h"

namespace nnhal::testing {

inline Model tfliteCompatModel(uint16_t prefix = 5,
                               std::string name = std::string(tflite_compat::kExtensionName)) {
  auto tensor = [](std::vector<uint32_t> dims, OperandLifeTime lifetime, uint32_t consumers) {
    Operand op;
    op.type = OperandType::TENSOR_INT32;
    op.dimensions = std::move(dims);
    op.lifetime = lifetime;
    op.numberOfConsumers = consumers;
    return op;
  };
  Model model;
  auto& ops = model.main.operands;
  ops.push_back(tensor({4, 1}, OperandLifeTime::SUBGRAPH_INPUT, 1));      // 0 a
  ops.push_back(tensor({4, 1}, OperandLifeTime::SUBGRAPH_INPUT, 1));      // 1 b
  ops.push_back(tensor({4, 1}, OperandLifeTime::TEMPORARY_VARIABLE, 1));  // 2 q
  Operand params = tensor({8}, OperandLifeTime::CONSTANT_COPY, 1);        // 3 params
  params.location = {0, 0, 32};
  ops.push_back(params);
  ops.push_back(tensor({4}, OperandLifeTime::SUBGRAPH_OUTPUT, 0));  // 4 out
  model.operandValues.resize(32);
  for (int32_t i = 0; i < 8; ++i) {
    const int32_t value = 100 + i;
    std::memcpy(model.operandValues.data() + 4 * i, &value, 4);
  }
  model.main.operations.push_back(
      {tflite_compat::operationType(prefix, tflite_compat::Operation::FLOOR_DIV), {0, 1}, {2}});
  model.main.operations.push_back(
      {tflite_compat::operationType(prefix, tflite_compat::Operation::GATHER_ND), {3, 2}, {4}});
  model.main.inputIndexes = {0, 1};
  model.main.outputIndexes = {4};
  model.extensionNameToPrefix.push_back({std::move(name), prefix});
  return model;
}

}  // namespace nnhal::testing
