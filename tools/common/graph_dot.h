// tools/common/graph_dot.h — a Model as a Graphviz graph (`nnhal dump-graph`).
//
// Layout of the .dot text modelToDot writes:
// - each subgraph is a `subgraph cluster_N` (N = 0 for main, i + 1 for Model::referenced[i],
//   the numbering of the driver's messages: "subgraph 2" is referenced[1]);
// - one node per operand, `sN_oK` (operand K of subgraph N), labelled with its index, its name
//   when known, its type, shape (`[1,224,224,3]`, `?` = unknown dimension, `scalar`), its
//   quantization (scale and zeroPoint of quantized types and of TENSOR_INT32 biases) and its
//   lifetime; constants (CONSTANT_COPY/REFERENCE) are grey boxes (small
//   constant scalars show their value), subgraph inputs green, subgraph outputs orange,
//   NO_VALUE dotted, SUBGRAPH operands folders with a dashed edge to the cluster they name;
// - one node per operation, `sN_opK`, labelled with its index and type;
// - edges operand -> operation for each input, operation -> operand for each output.
// Operands an operation names but the subgraph lacks appear as red "missing" nodes, so a
// model that failed validation can still be looked at.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "nnhal/types.h"

namespace nnhal::tools {

struct DotOptions {
  /// Graph label, e.g. the model file's name; none when empty.
  std::string title;
  /// Names of main's operands by index (e.g. TFLite tensor names); an empty or missing
  /// entry shows the index only.
  std::vector<std::string> mainOperandNames;
};

/// The model as a Graphviz `digraph` (see the top of this file). Never fails: indexes out of
/// range are drawn as missing nodes, constants whose bytes lie outside the model show no value.
std::string modelToDot(const Model& model, const DotOptions& options = {});

/// `text` as the inside of a double-quoted DOT string: `"` and `\` escaped, newlines as `\n`,
/// other control characters and bytes outside ASCII as `?` (dot needs valid UTF-8).
std::string dotEscape(std::string_view text);

}  // namespace nnhal::tools
