// tools/common/random_graph_check.h — one random graph run on a device under test and judged
// against a reference device's outputs (nnhal at the scalar kernel level: `nnhal-stress
// --test random-graphs` runs it in an nnhald of its own with NNHAL_ISA=scalar). A graph that
// fails becomes a CTS JSON file with the reference's outputs as the expected ones, which
// `nnhal cts FILE` replays on any device.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "nnhal/device.h"
#include "tools/common/cts_runner.h"
#include "tools/common/random_graph.h"

namespace nnhal::tools {

struct RandomGraphCheck {
  enum class Verdict {
    kPassed,
    /// the device under test's outputs are not the reference's (within the graph's
    /// tolerances), or it failed to run a graph the reference ran
    kWrongResult,
    /// the reference refused or failed the graph: the generator made a graph the driver
    /// thinks invalid, or the driver is wrong; either way a failure of the check (also when
    /// the graph's constants could not be given a pool)
    kReferenceFailed,
  };
  Verdict verdict = Verdict::kPassed;
  std::string message;  ///< why, for the two failures
  /// The graph, with the reference's outputs as the expected ones (when it gave them).
  CtsModel graph;
};

/// Generates the graph of `seed`, computes its outputs on `reference` (computeOutputs) and
/// runs it on `underTest` in `mode` (runCtsModel, judged by the graph's own tolerances).
RandomGraphCheck checkRandomGraph(Device& underTest, Device& reference, uint64_t seed, CtsMode mode,
                                  const RandomGraphOptions& options = {});

/// Writes `check.graph` as `<folder>/<graph name>.json` (a CTS file of one test, spec
/// "random_graph"), creating the folder. Returns the file's path. Errors: INVALID_ARGUMENT
/// when the folder or the file cannot be written.
Result<std::filesystem::path> writeFailedGraph(const std::filesystem::path& folder,
                                               const RandomGraphCheck& check);

}  // namespace nnhal::tools
