// The checks of an operation against its signature (hal/operation_signatures.h): counts, the
// primary type, and each operand rule, with messages naming the operand and what was expected.
#include "hal/operation_signatures.h"

#include <optional>
#include <string>

#include <fmt/format.h>

namespace nnhal::hal {
namespace {

// Resolves a possibly negative rule position against `count` operands; nullopt when the
// position does not exist.
std::optional<size_t> resolve(int32_t position, size_t count) {
  if (position >= 0) {
    return static_cast<size_t>(position) < count ? std::optional<size_t>(position) : std::nullopt;
  }
  const auto back = static_cast<size_t>(-static_cast<int64_t>(position));
  return back <= count ? std::optional<size_t>(count - back) : std::nullopt;
}

bool isFloatTensor(OperandType type) {
  return type == OperandType::TENSOR_FLOAT16 || type == OperandType::TENSOR_FLOAT32;
}

Result<void> checkRules(const std::vector<OperandRule>& rules, const std::vector<uint32_t>& indexes,
                        const std::vector<uint32_t>& inputs, const Subgraph& subgraph,
                        const char* kind) {
  const OperandType input0Type = subgraph.operands[inputs[0]].type;
  for (const OperandRule& rule : rules) {
    if (rule.when == RuleCondition::kInput0Float && !isFloatTensor(input0Type)) continue;
    if (rule.when == RuleCondition::kInput0NotFloat && isFloatTensor(input0Type)) continue;
    const auto first = resolve(rule.first, indexes.size());
    if (!first) continue;
    // A last position past the end means "up to the last operand".
    const auto last = resolve(rule.last, indexes.size()).value_or(indexes.size() - 1);
    std::optional<OperandType> coupled;
    if (rule.sameAs != OperandRule::kNoCoupling) {
      const auto reference = resolve(rule.sameAs, inputs.size());
      if (reference) coupled = subgraph.operands[inputs[*reference]].type;
    }
    for (size_t i = *first; i <= last; ++i) {
      const uint32_t index = indexes[i];
      const OperandType type = subgraph.operands[index].type;
      if (!rule.types.empty() && !rule.types.contains(type)) {
        return invalidArgument(fmt::format("{} {} (operand {}) has type {}, expected {}", kind, i,
                                           index, toString(type), rule.types.toString()));
      }
      if (coupled && type != *coupled) {
        return invalidArgument(
            fmt::format("{} {} (operand {}) has type {}, expected {} like input {}", kind, i, index,
                        toString(type), toString(*coupled), rule.sameAs));
      }
    }
  }
  return {};
}

/// FILL's value scalar has the element type of its output (FLOAT16 for TENSOR_FLOAT16, ...).
Result<void> checkFillValueType(const Operation& operation, const Subgraph& subgraph) {
  const OperandType value = subgraph.operands[operation.inputs[1]].type;
  const OperandType output = subgraph.operands[operation.outputs[0]].type;
  const bool paired = (value == OperandType::FLOAT16 && output == OperandType::TENSOR_FLOAT16) ||
                      (value == OperandType::FLOAT32 && output == OperandType::TENSOR_FLOAT32) ||
                      (value == OperandType::INT32 && output == OperandType::TENSOR_INT32);
  if (paired) return {};
  return invalidArgument(
      fmt::format("output 0 (operand {}) has type {}, which does not hold "
                  "input 1's {} values",
                  operation.outputs[0], toString(output), toString(value)));
}

}  // namespace

std::string OperandTypeSet::toString() const {
  std::string text = "{";
  for (int32_t code = 0; code <= kOperandTypeFundamentalMax; ++code) {
    if ((bits_ & (1u << code)) == 0) continue;
    if (text.size() > 1) text += ", ";
    text += nnhal::toString(static_cast<OperandType>(code));
  }
  return text + "}";
}

CountSet CountSet::of(std::initializer_list<uint32_t> counts) {
  CountSet set;
  for (uint32_t n : counts) {
    if (n < 64) set.exact |= uint64_t{1} << n;
  }
  return set;
}

CountSet CountSet::from(uint32_t minimum) {
  CountSet set;
  set.atLeast = minimum;
  return set;
}

bool CountSet::contains(size_t count) const {
  if (count >= atLeast) return true;
  return count < 64 && (exact & (uint64_t{1} << count)) != 0;
}

std::string CountSet::toString() const {
  std::string text;
  for (uint32_t n = 0; n < 64; ++n) {
    if ((exact & (uint64_t{1} << n)) == 0) continue;
    text += text.empty() ? "{" : ", ";
    text += std::to_string(n);
  }
  if (!text.empty()) text += "}";
  if (atLeast != kNoMinimum) {
    if (!text.empty()) text += " or ";
    text += ">= " + std::to_string(atLeast);
  }
  return text;
}

Result<void> validateOperationSignature(const Operation& operation, const Subgraph& subgraph) {
  const auto code = static_cast<uint32_t>(operation.type);
  for (size_t i = 0; i < operation.inputs.size(); ++i) {
    if (operation.inputs[i] >= subgraph.operands.size()) {
      return invalidArgument(fmt::format("input {} is operand {}, out of range ({} operands)", i,
                                         operation.inputs[i], subgraph.operands.size()));
    }
  }
  for (size_t i = 0; i < operation.outputs.size(); ++i) {
    if (operation.outputs[i] >= subgraph.operands.size()) {
      return invalidArgument(fmt::format("output {} is operand {}, out of range ({} operands)", i,
                                         operation.outputs[i], subgraph.operands.size()));
    }
  }
  // Extension operations: value above OperationTypeRange::BASE_MAX.
  if (code > 0xFFFFu) return {};
  const OperationSignature* signature = findSignature(operation.type);
  if (signature == nullptr) {
    return invalidArgument(
        fmt::format("operation type {} is not a fundamental operation", toString(operation.type)));
  }
  if (!signature->inputCounts.contains(operation.inputs.size())) {
    return invalidArgument(fmt::format("{} inputs, expected {}", operation.inputs.size(),
                                       signature->inputCounts.toString()));
  }
  if (!signature->outputCounts.contains(operation.outputs.size())) {
    return invalidArgument(fmt::format("{} outputs, expected {}", operation.outputs.size(),
                                       signature->outputCounts.toString()));
  }
  const OperandType input0Type = subgraph.operands[operation.inputs[0]].type;
  if (!signature->primaryTypes.contains(input0Type)) {
    return invalidArgument(fmt::format("input 0 (operand {}) has type {}, expected {}",
                                       operation.inputs[0], toString(input0Type),
                                       signature->primaryTypes.toString()));
  }
  if (operation.type == OperationType::FILL) NNHAL_TRY(checkFillValueType(operation, subgraph));
  NNHAL_TRY(
      checkRules(signature->inputRules, operation.inputs, operation.inputs, subgraph, "input"));
  NNHAL_TRY(
      checkRules(signature->outputRules, operation.outputs, operation.inputs, subgraph, "output"));
  return {};
}

}  // namespace nnhal::hal
