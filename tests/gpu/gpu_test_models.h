// Small float models for the GPU device's tests.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "cache/cache_test_util.h"

namespace nnhal::gputest {

/// CONV_2D in the NCHW layout: input [1, 2, 4, 4], filter [3, 3, 3, 2], SAME padding,
/// stride 1, no activation, output [1, 3, 4, 4]; weights and bias fixed, not random.
inline Model nchwConvModel() {
  cachetest::ModelBuilder b;
  const OperandType f = OperandType::TENSOR_FLOAT32;
  const uint32_t x = b.tensor(f, {1, 2, 4, 4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_INPUT);
  std::vector<float> w(3 * 3 * 3 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  const uint32_t filter =
      b.constant(f, {3, 3, 3, 2}, 0.0f, 0, w.data(), static_cast<uint32_t>(w.size() * 4));
  const float biasValues[3] = {0.5f, -0.25f, 1.0f};
  const uint32_t bias = b.constant(f, {3}, 0.0f, 0, biasValues, sizeof biasValues);
  Operand layout;
  layout.type = OperandType::BOOL;
  const uint32_t nchw = b.add(layout);
  b.model.main.operands[nchw].lifetime = OperandLifeTime::CONSTANT_COPY;
  b.model.main.operands[nchw].location = {0, static_cast<uint32_t>(b.model.operandValues.size()),
                                          1};
  b.model.operandValues.push_back(1);
  const uint32_t y = b.tensor(f, {1, 3, 4, 4}, 0.0f, 0, OperandLifeTime::SUBGRAPH_OUTPUT);
  b.operation(OperationType::CONV_2D,
              {x, filter, bias, b.scalar(1), b.scalar(1), b.scalar(1), b.scalar(0), nchw}, {y});
  b.model.main.inputIndexes = {x};
  b.model.main.outputIndexes = {y};
  return b.finish();
}

}  // namespace nnhal::gputest
