#include "tools/common/random_graph.h"

#include <string>

#include "tools/common/random_graph_generator.h"

namespace nnhal::tools {

using random_graph_internal::Generator;

Result<CtsModel> generateRandomGraph(uint64_t seed, const RandomGraphOptions& options) {
  return Generator(seed, options).build(seed);
}

std::string describeRandomGraph(const CtsModel& graph) {
  const Subgraph& main = graph.model.main;
  std::string text = main.inputIndexes.empty()
                         ? std::string("?")
                         : std::string(toString(main.operands[main.inputIndexes[0]].type));
  text += ":";
  for (const Operation& op : main.operations) {
    text += " ";
    text += toString(op.type);
  }
  return text;
}

}  // namespace nnhal::tools
