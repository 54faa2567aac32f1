// Which request arguments the embedded driver uses where they lie (engine/request_staging.h,
// InPlaceArguments): the registry's plain-value slots, and the plan's per-argument answer.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "engine/compiler.h"
#include "engine/operation_registry.h"

namespace nnhal::engine {
namespace {

TEST(InPlaceArguments, OnlyPlainValueSlotsAreListed) {
  EXPECT_EQ(plainDataInputs(OperationType::CONV_2D), 0b1u);  // not the filter or bias
  EXPECT_EQ(plainDataInputs(OperationType::ADD), 0b11u);     // not the activation
  EXPECT_EQ(plainDataInputs(OperationType::MAX_POOL_2D), 0b1u);
  // Indices, shapes, coordinates, a table indexed by max - x, and byte copies (a memcpy over
  // an output that overlaps its input would be undefined).
  for (OperationType type :
       {OperationType::GATHER, OperationType::EMBEDDING_LOOKUP, OperationType::ROI_ALIGN,
        OperationType::SOFTMAX, OperationType::DIV, OperationType::DETECTION_POSTPROCESSING,
        OperationType::TOPK_V2, OperationType::IF, OperationType::WHILE, OperationType::RESHAPE,
        OperationType::CONCATENATION, OperationType::RESIZE_NEAREST_NEIGHBOR,
        OperationType::TRANSPOSE}) {
    EXPECT_EQ(plainDataInputs(type), 0u) << toString(type);
  }
  EXPECT_EQ(plainDataInputs(static_cast<OperationType>(1 << 16)), 0u);  // an extension
}

// in0 feeds an ADD only: used in place. in1 also feeds GATHER's data: staged. in2 holds
// GATHER's indices: staged. out0 (the ADD's) is read by the RELU: staged; out1 (the RELU's)
// is read by nothing: written in place; out2 is GATHER's: staged.
TEST(InPlaceArguments, ThePlanListsArgumentsEveryKernelUsesAsPlainValues) {
  Model model;
  Subgraph& g = model.main;
  auto tensor = [&](OperandType type, uint32_t length, OperandLifeTime lifetime) {
    Operand& operand = g.operands.emplace_back();
    operand.type = type;
    operand.dimensions = {length};
    operand.lifetime = lifetime;
    return static_cast<uint32_t>(g.operands.size() - 1);
  };
  auto zeroScalar = [&]() {
    const auto offset = static_cast<uint32_t>(model.operandValues.size());
    model.operandValues.resize(offset + 4, 0);
    Operand& operand = g.operands.emplace_back();
    operand.type = OperandType::INT32;
    operand.lifetime = OperandLifeTime::CONSTANT_COPY;
    operand.location = {0, offset, 4};
    return static_cast<uint32_t>(g.operands.size() - 1);
  };
  constexpr auto kIn = OperandLifeTime::SUBGRAPH_INPUT;
  constexpr auto kOut = OperandLifeTime::SUBGRAPH_OUTPUT;
  const uint32_t in0 = tensor(OperandType::TENSOR_FLOAT32, 4, kIn);
  const uint32_t in1 = tensor(OperandType::TENSOR_FLOAT32, 4, kIn);
  const uint32_t in2 = tensor(OperandType::TENSOR_INT32, 2, kIn);
  const uint32_t out0 = tensor(OperandType::TENSOR_FLOAT32, 4, kOut);
  const uint32_t out1 = tensor(OperandType::TENSOR_FLOAT32, 4, kOut);
  const uint32_t out2 = tensor(OperandType::TENSOR_FLOAT32, 2, kOut);
  g.operations.push_back({OperationType::ADD, {in0, in1, zeroScalar()}, {out0}});
  g.operations.push_back({OperationType::RELU, {out0}, {out1}});
  g.operations.push_back({OperationType::GATHER, {in1, zeroScalar(), in2}, {out2}});
  for (const Operation& op : g.operations) {
    for (uint32_t i : op.inputs) ++g.operands[i].numberOfConsumers;
  }
  g.inputIndexes = {in0, in1, in2};
  g.outputIndexes = {out0, out1, out2};
  auto plan = compile(model);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ((*plan)->main().inPlace.inputs, (std::vector<bool>{true, false, false}));
  EXPECT_EQ((*plan)->main().inPlace.outputs, (std::vector<bool>{false, true, false}));
}

}  // namespace
}  // namespace nnhal::engine
