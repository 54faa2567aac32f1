#include "tools/nnhal/dump_graph_command.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "nnhal/tflite_import.h"
#include "tools/common/graph_dot.h"
#include "tools/nnhal/run_command.h"

namespace nnhal::cli {

Result<void> runDumpGraph(const DumpGraphArgs& args) {
  // The device's extensions, as `nnhal run` imports with them (nothing is prepared).
  DeviceOptions deviceOptions;
  deviceOptions.kernelThreads = 1;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, openDevice(args.connect, deviceOptions));
  NNHAL_ASSIGN_OR_RETURN(
      ImportedModel imported,
      importTfliteFile(args.model, {.extensions = device->getSupportedExtensions()}));
  tools::DotOptions options;
  options.title = std::filesystem::path(args.model).filename().string();
  options.mainOperandNames.resize(imported.model.main.operands.size());
  const auto name = [&](const std::vector<uint32_t>& indexes,
                        const std::vector<TensorDescription>& tensors) {
    for (size_t i = 0; i < indexes.size() && i < tensors.size(); ++i) {
      if (indexes[i] < options.mainOperandNames.size()) {
        options.mainOperandNames[indexes[i]] = tensors[i].name;
      }
    }
  };
  name(imported.model.main.inputIndexes, imported.inputs);
  name(imported.model.main.outputIndexes, imported.outputs);
  const std::string dot = tools::modelToDot(imported.model, options);
  if (args.output.empty()) {
    std::fwrite(dot.data(), 1, dot.size(), stdout);
    return {};
  }
  std::ofstream file(args.output, std::ios::binary | std::ios::trunc);
  file << dot;
  file.close();
  if (!file) return invalidArgument("cannot write the graph to '" + args.output + "'");
  return {};
}

}  // namespace nnhal::cli
