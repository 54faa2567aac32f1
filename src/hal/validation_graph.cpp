// Graph-level ValidateHal rules: subgraph inputs and outputs, operations (signatures,
// execution order, single writer), numberOfConsumers, IF/WHILE branch signatures, and the
// reference structure of Model::referenced.
#include <algorithm>
#include <deque>
#include <vector>

#include <fmt/format.h>

#include "hal/internal/validation_detail.h"
#include "hal/operand_utils.h"
#include "hal/operation_signatures.h"

namespace nnhal::hal::detail {
namespace {

// Checks one of inputIndexes / outputIndexes: in range, distinct, of lifetime `lifetime`,
// and listing every operand of that lifetime.
Result<void> validateIndexList(const Subgraph& graph, const std::vector<uint32_t>& indexes,
                               OperandLifeTime lifetime, const std::string& field) {
  std::vector<bool> listed(graph.operands.size(), false);
  for (size_t i = 0; i < indexes.size(); ++i) {
    const uint32_t index = indexes[i];
    if (index >= graph.operands.size()) {
      return invalidArgument(fmt::format("{}[{}]: operand {} is out of range ({} operands)", field,
                                         i, index, graph.operands.size()));
    }
    if (listed[index]) {
      return invalidArgument(fmt::format("{}[{}]: operand {} is listed twice", field, i, index));
    }
    listed[index] = true;
    const OperandLifeTime actual = graph.operands[index].lifetime;
    if (actual != lifetime) {
      return invalidArgument(fmt::format("{}[{}]: operand {} has lifetime {}, expected {}", field,
                                         i, index, toString(actual), toString(lifetime)));
    }
  }
  for (size_t i = 0; i < graph.operands.size(); ++i) {
    if (graph.operands[i].lifetime == lifetime && !listed[i]) {
      return invalidArgument(fmt::format("{}: operand {} has lifetime {} but is not listed", field,
                                         i, toString(lifetime)));
    }
  }
  return {};
}

// Operands of an operation and of the branch subgraph it calls must agree in type and
// quantization (types.hal IF/WHILE: "the same types as the corresponding ... operands").
// `position` indexes the callee's inputIndexes (`input`) or outputIndexes.
Result<void> checkCompatible(const Operand& caller, uint32_t callerIndex, const Subgraph& callee,
                             const std::string& calleeName, bool input, size_t position) {
  const auto& list = input ? callee.inputIndexes : callee.outputIndexes;
  const Operand& target = callee.operands[list[position]];
  if (caller.type != target.type || caller.scale != target.scale ||
      caller.zeroPoint != target.zeroPoint) {
    return invalidArgument(fmt::format(
        "operand {} ({}, scale {}, zeroPoint {}) does not match {}.{}[{}] ({}, scale {}, "
        "zeroPoint {})",
        callerIndex, operandTypeName(caller.type), caller.scale, caller.zeroPoint, calleeName,
        input ? "inputIndexes" : "outputIndexes", position, operandTypeName(target.type),
        target.scale, target.zeroPoint));
  }
  return {};
}

// The referenced subgraph a SUBGRAPH operand names, with its subgraphName number.
struct Branch {
  const Subgraph* graph;
  std::string name;
};

Result<Branch> branchOf(const Model& model, const Subgraph& graph, uint32_t operandIndex) {
  const Operand& operand = graph.operands[operandIndex];
  if (operand.lifetime != OperandLifeTime::SUBGRAPH ||
      operand.location.offset >= model.referenced.size()) {
    return invalidArgument(fmt::format(
        "operand {} is not a SUBGRAPH operand naming a referenced subgraph", operandIndex));
  }
  const size_t number = size_t{operand.location.offset} + 1;
  return Branch{&model.referenced[operand.location.offset], subgraphName(number)};
}

// A TENSOR_BOOL8 condition: shape [1] when the shape is known.
bool isScalarBoolShape(const Operand& operand) {
  if (operand.type != OperandType::TENSOR_BOOL8) return false;
  if (operand.dimensions.empty()) return true;
  return operand.dimensions.size() == 1 && operand.dimensions[0] <= 1;
}

Result<void> validateIf(const Model& model, const Subgraph& graph, const Operation& operation) {
  if (graph.operands[operation.inputs[0]].lifetime == OperandLifeTime::NO_VALUE) {
    return invalidArgument("the condition (input 0) is required but has lifetime NO_VALUE");
  }
  if (!isScalarBoolShape(graph.operands[operation.inputs[0]])) {
    return invalidArgument("the condition (input 0) must be a TENSOR_BOOL8 of shape [1]");
  }
  const size_t branchInputs = operation.inputs.size() - 3;
  for (size_t b = 1; b <= 2; ++b) {
    NNHAL_ASSIGN_OR_RETURN(const Branch branch, branchOf(model, graph, operation.inputs[b]));
    if (branch.graph->inputIndexes.size() != branchInputs ||
        branch.graph->outputIndexes.size() != operation.outputs.size()) {
      return invalidArgument(fmt::format(
          "{} branch {} has {} inputs and {} outputs, the operation passes {} and expects {}",
          b == 1 ? "then" : "else", branch.name, branch.graph->inputIndexes.size(),
          branch.graph->outputIndexes.size(), branchInputs, operation.outputs.size()));
    }
    for (size_t i = 0; i < branchInputs; ++i) {
      const uint32_t index = operation.inputs[3 + i];
      NNHAL_TRY(checkCompatible(graph.operands[index], index, *branch.graph, branch.name, true, i));
    }
    for (size_t i = 0; i < operation.outputs.size(); ++i) {
      const uint32_t index = operation.outputs[i];
      NNHAL_TRY(
          checkCompatible(graph.operands[index], index, *branch.graph, branch.name, false, i));
    }
  }
  return {};
}

Result<void> validateWhile(const Model& model, const Subgraph& graph, const Operation& operation) {
  const size_t loopInputs = operation.inputs.size() - 2;  // m + k + n
  const size_t loopOutputs = operation.outputs.size();    // m
  NNHAL_ASSIGN_OR_RETURN(const Branch cond, branchOf(model, graph, operation.inputs[0]));
  NNHAL_ASSIGN_OR_RETURN(const Branch body, branchOf(model, graph, operation.inputs[1]));
  if (cond.graph->inputIndexes.size() != loopInputs || cond.graph->outputIndexes.size() != 1) {
    return invalidArgument(fmt::format(
        "condition {} has {} inputs and {} outputs, expected {} inputs and 1 output", cond.name,
        cond.graph->inputIndexes.size(), cond.graph->outputIndexes.size(), loopInputs));
  }
  if (!isScalarBoolShape(cond.graph->operands[cond.graph->outputIndexes[0]])) {
    return invalidArgument(
        fmt::format("condition {} must output a TENSOR_BOOL8 of shape [1]", cond.name));
  }
  const size_t bodyOutputs = body.graph->outputIndexes.size();  // m + k
  if (body.graph->inputIndexes.size() != loopInputs || bodyOutputs < loopOutputs ||
      bodyOutputs > loopInputs) {
    return invalidArgument(fmt::format(
        "body {} has {} inputs and {} outputs; expected {} inputs and between {} and {} outputs",
        body.name, body.graph->inputIndexes.size(), bodyOutputs, loopInputs, loopOutputs,
        loopInputs));
  }
  for (size_t i = 0; i < loopInputs; ++i) {
    const uint32_t index = operation.inputs[2 + i];
    const Operand& operand = graph.operands[index];
    NNHAL_TRY(checkCompatible(operand, index, *cond.graph, cond.name, true, i));
    NNHAL_TRY(checkCompatible(operand, index, *body.graph, body.name, true, i));
    // Input-output and state operands are fed back from the body outputs.
    if (i < bodyOutputs) {
      NNHAL_TRY(checkCompatible(operand, index, *body.graph, body.name, false, i));
    }
  }
  for (size_t i = 0; i < loopOutputs; ++i) {
    const uint32_t index = operation.outputs[i];
    NNHAL_TRY(checkCompatible(graph.operands[index], index, *body.graph, body.name, false, i));
  }
  return {};
}

bool isWritable(OperandLifeTime lifetime) {
  return lifetime == OperandLifeTime::TEMPORARY_VARIABLE ||
         lifetime == OperandLifeTime::SUBGRAPH_OUTPUT;
}

}  // namespace

Result<void> validateInputsOutputs(const Model& model, size_t subgraph) {
  const Subgraph& graph = subgraphAt(model, subgraph);
  const std::string name = subgraphName(subgraph);
  NNHAL_TRY(validateIndexList(graph, graph.inputIndexes, OperandLifeTime::SUBGRAPH_INPUT,
                              name + ".inputIndexes"));
  NNHAL_TRY(validateIndexList(graph, graph.outputIndexes, OperandLifeTime::SUBGRAPH_OUTPUT,
                              name + ".outputIndexes"));
  return {};
}

Result<void> validateOperations(const Model& model, size_t subgraph) {
  const Subgraph& graph = subgraphAt(model, subgraph);
  const std::string name = subgraphName(subgraph);
  const size_t operandCount = graph.operands.size();
  // writer[i]: index + 1 of the operation that writes operand i, 0 if none yet.
  std::vector<size_t> writer(operandCount, 0);
  std::vector<uint64_t> consumers(operandCount, 0);
  for (size_t o = 0; o < graph.operations.size(); ++o) {
    const Operation& operation = graph.operations[o];
    // Built only when a message needs it: validation runs on every preparation.
    const auto field = [&] {
      return fmt::format("{}.operations[{}] ({})", name, o, operationTypeName(operation.type));
    };
    const auto code = static_cast<uint32_t>(operation.type);
    const bool fundamental = code <= static_cast<uint32_t>(kOperationTypeFundamentalMax);
    if (!fundamental && !isKnownExtension(code, model)) {
      if (operation.type == OperationType::OEM_OPERATION) {
        return invalidArgument(field() + ": OEM_OPERATION is deprecated and not supported");
      }
      return invalidArgument(
          fmt::format("{}: type {:#x} is neither a fundamental operation nor "
                      "an operation of an extension in extensionNameToPrefix",
                      field(), code));
    }
    if (auto valid = validateOperationSignature(operation, graph); !valid) {
      return invalidArgument(field() + ": " + valid.error().message);
    }
    if (operation.type == OperationType::IF) {
      if (auto valid = validateIf(model, graph, operation); !valid) {
        return invalidArgument(field() + ": " + valid.error().message);
      }
    } else if (operation.type == OperationType::WHILE) {
      if (auto valid = validateWhile(model, graph, operation); !valid) {
        return invalidArgument(field() + ": " + valid.error().message);
      }
    }
    for (size_t i = 0; i < operation.inputs.size(); ++i) {
      const uint32_t index = operation.inputs[i];
      ++consumers[index];
      if (isWritable(graph.operands[index].lifetime) && writer[index] == 0) {
        return invalidArgument(fmt::format(
            "{}: input {} (operand {}, {}) is read before any operation writes it; operations "
            "must be in execution order",
            field(), i, index, toString(graph.operands[index].lifetime)));
      }
    }
    for (size_t i = 0; i < operation.outputs.size(); ++i) {
      const uint32_t index = operation.outputs[i];
      const OperandLifeTime lifetime = graph.operands[index].lifetime;
      if (!isWritable(lifetime)) {
        return invalidArgument(
            fmt::format("{}: output {} (operand {}) has lifetime {}; only "
                        "TEMPORARY_VARIABLE and SUBGRAPH_OUTPUT operands can "
                        "be written",
                        field(), i, index, toString(lifetime)));
      }
      if (writer[index] != 0) {
        return invalidArgument(
            fmt::format("{}: output {} (operand {}) is already written by "
                        "{}.operations[{}]",
                        field(), i, index, name, writer[index] - 1));
      }
      writer[index] = o + 1;
    }
  }
  for (size_t i = 0; i < operandCount; ++i) {
    const Operand& operand = graph.operands[i];
    if (isWritable(operand.lifetime) && writer[i] == 0) {
      return invalidArgument(
          fmt::format("{}.operands[{}]: {} operand is never written by any "
                      "operation",
                      name, i, toString(operand.lifetime)));
    }
    if (operand.numberOfConsumers != consumers[i]) {
      return invalidArgument(
          fmt::format("{}.operands[{}].numberOfConsumers: {}, but operation "
                      "inputs read the operand {} times",
                      name, i, operand.numberOfConsumers, consumers[i]));
    }
  }
  return {};
}

Result<void> validateSubgraphReferences(const Model& model) {
  // Nodes: 0 = main, i = referenced[i - 1]. Edge s -> t for each SUBGRAPH operand of s.
  const size_t nodes = model.referenced.size() + 1;
  std::vector<std::vector<size_t>> edges(nodes);
  std::vector<size_t> indegree(nodes, 0);
  for (size_t s = 0; s < nodes; ++s) {
    for (const Operand& operand : subgraphAt(model, s).operands) {
      if (operand.lifetime != OperandLifeTime::SUBGRAPH) continue;
      const size_t target = size_t{operand.location.offset} + 1;
      if (target >= nodes) continue;  // reported by validateOperands
      edges[s].push_back(target);
      ++indegree[target];
    }
  }
  for (size_t t = 1; t < nodes; ++t) {
    if (indegree[t] == 0) {
      return invalidArgument(fmt::format(
          "{}: not referenced by any SUBGRAPH operand; unused subgraphs are not allowed",
          subgraphName(t)));
    }
  }
  // Kahn's algorithm: every node is removed iff the reference graph has no cycle.
  // Nodes leave in topological order, so depth[s] (the longest chain of calls from main)
  // is final when s leaves.
  std::deque<size_t> ready;
  for (size_t s = 0; s < nodes; ++s) {
    if (indegree[s] == 0) ready.push_back(s);
  }
  std::vector<uint32_t> depth(nodes, 0);
  size_t removed = 0;
  while (!ready.empty()) {
    const size_t s = ready.front();
    ready.pop_front();
    ++removed;
    if (depth[s] > kMaxSubgraphNesting) {
      return invalidArgument(fmt::format(
          "{}: control flow nested {} deep; this driver runs at most {} levels of IF/WHILE",
          subgraphName(s), depth[s], kMaxSubgraphNesting));
    }
    for (size_t t : edges[s]) {
      depth[t] = std::max(depth[t], depth[s] + 1);
      if (--indegree[t] == 0) ready.push_back(t);
    }
  }
  if (removed != nodes) {
    for (size_t t = 1; t < nodes; ++t) {
      if (indegree[t] != 0) {
        return invalidArgument(fmt::format(
            "{}: part of a reference cycle among the referenced subgraphs", subgraphName(t)));
      }
    }
  }
  return {};
}

}  // namespace nnhal::hal::detail
