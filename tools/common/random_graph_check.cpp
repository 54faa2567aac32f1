#include "tools/common/random_graph_check.h"

#include <nlohmann/json.hpp>

namespace nnhal::tools {

RandomGraphCheck checkRandomGraph(Device& underTest, Device& reference, uint64_t seed, CtsMode mode,
                                  const RandomGraphOptions& options) {
  RandomGraphCheck check;
  auto graph = generateRandomGraph(seed, options);
  if (!graph) {
    check.verdict = RandomGraphCheck::Verdict::kReferenceFailed;
    check.message = "the graph could not be made: " + graph.error().message;
    return check;
  }
  check.graph = std::move(*graph);
  auto expected = computeOutputs(reference, check.graph);
  if (!expected) {
    check.verdict = RandomGraphCheck::Verdict::kReferenceFailed;
    check.message = "the reference failed: " + expected.error().message + " (" +
                    std::string(toString(expected.error().status)) + ")";
    return check;
  }
  check.graph.outputs = std::move(*expected);
  const CtsOutcome outcome = runCtsModel(underTest, check.graph, mode);
  if (!outcome.passed) {
    check.verdict = RandomGraphCheck::Verdict::kWrongResult;
    check.message = std::string(toString(mode)) + ": " + outcome.message;
  }
  return check;
}

Result<std::filesystem::path> writeFailedGraph(const std::filesystem::path& folder,
                                               const RandomGraphCheck& check) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return invalidArgument("cannot create " + folder.string() + ": " + error.message());
  NNHAL_ASSIGN_OR_RETURN(nlohmann::json test, ctsModelToJson(check.graph));
  const std::filesystem::path path = folder / (check.graph.name + ".json");
  NNHAL_TRY(writeCtsFile(path, check.graph.spec, check.graph.version, {std::move(test)}));
  return path;
}

}  // namespace nnhal::tools
