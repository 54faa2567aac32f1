// tools/nnhal/dump_graph_command.h — `nnhal dump-graph MODEL [--output FILE.dot]`: the
// imported model as Graphviz .dot (tools/common/graph_dot.h, docs/DEBUGGING.md).
#pragma once

#include <string>

#include "nnhal/status.h"

namespace nnhal::cli {

struct DumpGraphArgs {
  std::string model;    ///< TFLite model
  std::string output;   ///< .dot file to write; empty = stdout
  std::string connect;  ///< nnhald socket whose extensions the import uses; empty = embedded
};

/// Imports args.model as `nnhal run` does (with the vendor extensions the device reports, so
/// that TFLite operators such as FLOOR_DIV import as org.nnhal.tflite_compat operations) and
/// writes it as a Graphviz digraph. Errors: the device's when it cannot be opened, the
/// import's (INVALID_ARGUMENT naming the file or operator), INVALID_ARGUMENT when the output
/// file cannot be written.
Result<void> runDumpGraph(const DumpGraphArgs& args);

}  // namespace nnhal::cli
