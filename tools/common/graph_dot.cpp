#include "tools/common/graph_dot.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>

#include "tools/common/profile_report.h"

namespace nnhal::tools {
namespace {

std::string operandNode(size_t subgraph, size_t operand) {
  return fmt::format("s{}_o{}", subgraph, operand);
}

std::string operationNode(size_t subgraph, size_t operation) {
  return fmt::format("s{}_op{}", subgraph, operation);
}

std::string anchorNode(size_t subgraph) { return fmt::format("s{}_anchor", subgraph); }

std::string subgraphTitle(size_t index) {
  return index == 0 ? std::string("main (subgraph 0)")
                    : fmt::format("referenced[{}] (subgraph {})", index - 1, index);
}

std::string shapeText(const Operand& operand) {
  const bool scalar = operand.type == OperandType::FLOAT32 || operand.type == OperandType::INT32 ||
                      operand.type == OperandType::UINT32 || operand.type == OperandType::BOOL ||
                      operand.type == OperandType::FLOAT16 || operand.type == OperandType::SUBGRAPH;
  if (operand.dimensions.empty()) return scalar ? "scalar" : "[?]";
  std::string text = "[";
  for (size_t i = 0; i < operand.dimensions.size(); ++i) {
    if (i > 0) text += ",";
    text += operand.dimensions[i] == 0 ? "?" : std::to_string(operand.dimensions[i]);
  }
  return text + "]";
}

/// The value of a small constant scalar held in operandValues, if its bytes are there.
std::optional<std::string> scalarValue(const Model& model, const Operand& operand) {
  if (operand.lifetime != OperandLifeTime::CONSTANT_COPY || !operand.dimensions.empty()) {
    return std::nullopt;
  }
  const DataLocation& at = operand.location;
  const auto bytes = [&](size_t size) -> const uint8_t* {
    if (at.length != size || size_t{at.offset} + size > model.operandValues.size()) return nullptr;
    return model.operandValues.data() + at.offset;
  };
  switch (operand.type) {
    case OperandType::INT32:
      if (const uint8_t* p = bytes(4)) {
        int32_t v;
        std::memcpy(&v, p, 4);
        return std::to_string(v);
      }
      break;
    case OperandType::UINT32:
      if (const uint8_t* p = bytes(4)) {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return std::to_string(v);
      }
      break;
    case OperandType::FLOAT32:
      if (const uint8_t* p = bytes(4)) {
        float v;
        std::memcpy(&v, p, 4);
        return fmt::format("{:g}", v);
      }
      break;
    case OperandType::BOOL:
      if (const uint8_t* p = bytes(1)) return *p != 0 ? "true" : "false";
      break;
    default:
      break;
  }
  return std::nullopt;
}

bool isQuantized(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT16_ASYMM:
    case OperandType::TENSOR_QUANT16_SYMM:
      return true;
    default:
      return false;
  }
}

bool contains(const std::vector<uint32_t>& list, size_t value) {
  for (uint32_t v : list) {
    if (v == value) return true;
  }
  return false;
}

class DotWriter {
 public:
  DotWriter(const Model& model, const DotOptions& options) : model_(model), options_(options) {}

  std::string write() {
    out_ += "digraph model {\n";
    out_ += "  compound=true;\n  rankdir=TB;\n";
    out_ += "  node [fontname=\"Helvetica\", fontsize=10];\n";
    out_ += "  edge [fontname=\"Helvetica\", fontsize=9];\n";
    if (!options_.title.empty()) {
      out_ += fmt::format("  label=\"{}\";\n  labelloc=t;\n", dotEscape(options_.title));
    }
    const size_t count = model_.referenced.size() + 1;
    for (size_t s = 0; s < count; ++s) writeSubgraph(s);
    out_ += crossEdges_;
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  const Subgraph& subgraphAt(size_t index) const {
    return index == 0 ? model_.main : model_.referenced[index - 1];
  }

  void writeSubgraph(size_t s) {
    const Subgraph& subgraph = subgraphAt(s);
    out_ += fmt::format("  subgraph cluster_{} {{\n", s);
    out_ += fmt::format("    label=\"{}\";\n    style=rounded;\n    color=gray50;\n",
                        dotEscape(subgraphTitle(s)));
    out_ += fmt::format("    {} [shape=point, style=invis];\n", anchorNode(s));
    for (size_t k = 0; k < subgraph.operands.size(); ++k) writeOperand(s, subgraph, k);
    for (size_t k = 0; k < subgraph.operations.size(); ++k) {
      const Operation& operation = subgraph.operations[k];
      out_ += fmt::format(
          "    {} [shape=box, style=\"rounded,filled\", fillcolor=lightblue, label=\"{}\"];\n",
          operationNode(s, k),
          dotEscape(fmt::format("{}: {}", k,
                                operationLabel(operation.type, model_.extensionNameToPrefix))));
      for (size_t i = 0; i < operation.inputs.size(); ++i) {
        out_ += fmt::format("    {} -> {};\n", operandRef(s, subgraph, operation.inputs[i]),
                            operationNode(s, k));
      }
      for (size_t i = 0; i < operation.outputs.size(); ++i) {
        out_ += fmt::format("    {} -> {};\n", operationNode(s, k),
                            operandRef(s, subgraph, operation.outputs[i]));
      }
    }
    out_ += "  }\n";
  }

  void writeOperand(size_t s, const Subgraph& subgraph, size_t k) {
    const Operand& operand = subgraph.operands[k];
    std::string label = fmt::format("#{}", k);
    if (s == 0 && k < options_.mainOperandNames.size() && !options_.mainOperandNames[k].empty()) {
      label += " " + options_.mainOperandNames[k];
    }
    label += fmt::format("\n{} {}", toString(operand.type), shapeText(operand));
    if (isQuantized(operand.type) ||
        (operand.type == OperandType::TENSOR_INT32 && operand.scale != 0)) {
      label += fmt::format("\nscale={:g} zeroPoint={}", operand.scale, operand.zeroPoint);
    }
    if (const auto* perChannel = std::get_if<SymmPerChannelQuantParams>(&operand.extraParams)) {
      label += fmt::format("\nper-channel scales ({}) on dim {}", perChannel->scales.size(),
                           perChannel->channelDim);
    }
    label += fmt::format("\n{}", toString(operand.lifetime));
    if (auto value = scalarValue(model_, operand)) label += " = " + *value;

    const bool input = contains(subgraph.inputIndexes, k);
    const bool output = contains(subgraph.outputIndexes, k);
    std::string style;
    switch (operand.lifetime) {
      case OperandLifeTime::CONSTANT_COPY:
      case OperandLifeTime::CONSTANT_REFERENCE:
        style = "shape=box, style=filled, fillcolor=gray90, color=gray60";
        break;
      case OperandLifeTime::NO_VALUE:
        style = "shape=ellipse, style=dotted";
        break;
      case OperandLifeTime::SUBGRAPH:
        style = "shape=folder, style=filled, fillcolor=lightyellow";
        break;
      default:
        style = "shape=ellipse";
        break;
    }
    if (input || output) {
      style = fmt::format("shape=ellipse, style=\"filled,bold\", fillcolor={}",
                          input ? "palegreen" : "orange");
      label += input ? "\nsubgraph input" : "\nsubgraph output";
    }
    out_ += fmt::format("    {} [{}, label=\"{}\"];\n", operandNode(s, k), style, dotEscape(label));

    if (operand.lifetime == OperandLifeTime::SUBGRAPH) {
      // The subgraph this operand names: its index is the operand's value (uint32).
      const DataLocation& at = operand.location;
      uint32_t target = 0;
      if (at.length == 4 && size_t{at.offset} + 4 <= model_.operandValues.size()) {
        std::memcpy(&target, model_.operandValues.data() + at.offset, 4);
        if (target < model_.referenced.size()) {
          crossEdges_ +=
              fmt::format("  {} -> {} [lhead=cluster_{}, style=dashed, label=\"calls\"];\n",
                          operandNode(s, k), anchorNode(target + 1), target + 1);
        }
      }
    }
  }

  /// The node of operand `index` of subgraph `s`, or a red placeholder if it does not exist.
  std::string operandRef(size_t s, const Subgraph& subgraph, uint32_t index) {
    if (index < subgraph.operands.size()) return operandNode(s, index);
    const std::string node = fmt::format("s{}_missing{}", s, index);
    out_ += fmt::format("    {} [shape=none, fontcolor=red, label=\"operand {} (missing)\"];\n",
                        node, index);
    return node;
  }

  const Model& model_;
  const DotOptions& options_;
  std::string out_;
  std::string crossEdges_;
};

}  // namespace

std::string dotEscape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      escaped += '\\';
      escaped += c;
    } else if (c == '\n') {
      escaped += "\\n";
    } else if (byte < 0x20 || byte >= 0x7f) {
      escaped += '?';
    } else {
      escaped += c;
    }
  }
  return escaped;
}

std::string modelToDot(const Model& model, const DotOptions& options) {
  return DotWriter(model, options).write();
}

}  // namespace nnhal::tools
