#include "nnhald/model_dumper.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <system_error>

#include "tools/common/cts_model.h"
#include "tools/common/graph_dot.h"

namespace nnhal::daemon {

Result<std::unique_ptr<ModelDumper>> ModelDumper::open(const std::filesystem::path& folder,
                                                       uint32_t limit) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error || !std::filesystem::is_directory(folder, error)) {
    return invalidArgument("--dump-models '" + folder.string() + "': cannot create the folder" +
                           (error ? ": " + error.message() : std::string()));
  }
  ::chmod(folder.c_str(), 0700);
  return std::unique_ptr<ModelDumper>(new ModelDumper(folder, limit));
}

void ModelDumper::write(const Model& model, uint64_t application, uint64_t connection) {
  const uint32_t number = ++next_;
  if (number > limit_) {
    if (number == limit_ + 1) {
      spdlog::warn("--dump-models: {} models written to {}; no more will be (--dump-models-limit)",
                   limit_, folder_.string());
    }
    return;
  }
  const std::string stem = fmt::format("model-{}-uid{}-conn{}", number, application, connection);
  tools::DotOptions dot;
  dot.title = stem;
  std::ofstream graph(folder_ / (stem + ".dot"), std::ios::binary | std::ios::trunc);
  graph << tools::modelToDot(model, dot);
  graph.close();
  if (!graph) spdlog::warn("--dump-models: cannot write {}.dot in {}", stem, folder_.string());

  tools::CtsModel cts;
  cts.name = stem;
  cts.model = model;  // shares the pools: nothing is copied
  cts.isRelaxed = model.relaxComputationFloat32toFloat16;
  cts.inputs.resize(model.main.inputIndexes.size());
  cts.outputs.resize(model.main.outputIndexes.size());
  cts.outputIgnored.resize(model.main.outputIndexes.size(), false);
  auto json = tools::ctsModelToJson(cts);
  if (!json) {
    spdlog::info("--dump-models: {} only as a graph: {}", stem, json.error().message);
    return;
  }
  if (auto written = tools::writeCtsFile(folder_ / (stem + ".json"), "nnhald", "nnhald", {*json});
      !written) {
    spdlog::warn("--dump-models: {}", written.error().message);
  }
}

}  // namespace nnhal::daemon
