// nnhald --dump-models: each model a client asks to prepare is written, as CTS JSON that
// loads back to the same model and constants, and as a Graphviz graph; models the driver
// refuses are written too; --dump-models-limit bounds the count; --check-config checks the
// folder.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "ipc_test_util.h"
#include "tools/common/cts_model.h"

namespace nnhal::ipc::testing {
namespace {

std::string readText(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  return text.str();
}

fs::path dumped(const fs::path& folder, int number, const char* extension) {
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    const std::string prefix =
        "model-" + std::to_string(number) + "-uid" + std::to_string(::getuid()) + "-conn";
    if (name.starts_with(prefix) && entry.path().extension() == extension) return entry.path();
  }
  return {};
}

TEST(DumpModels, WritesEachReceivedModelAsCtsJsonAndAGraph) {
  TempDir dir;
  const fs::path folder = dir.path() / "dumps";
  Daemon daemon({"--dump-models", folder.string(), "--dump-models-limit", "2"});
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all);

  // 1: prepared. Its constants (a CONSTANT_REFERENCE filter in a client pool, a
  // CONSTANT_COPY bias) are in the file.
  const Model conv = convModel();
  ASSERT_TRUE((*device)->prepareModel(conv, {}));
  const fs::path json = dumped(folder, 1, ".json");
  ASSERT_FALSE(json.empty()) << "no model-1 .json in " << folder;
  auto loaded = tools::loadCtsFile(json);
  ASSERT_TRUE(loaded) << loaded.error().message;
  ASSERT_EQ(loaded->size(), 1u);
  const Model& back = (*loaded)[0].model;
  ASSERT_EQ(back.main.operations.size(), 1u);
  EXPECT_EQ(back.main.operations[0].type, OperationType::CONV_2D);
  EXPECT_EQ(back.main.operations[0].inputs, conv.main.operations[0].inputs);
  ASSERT_EQ(back.main.operands.size(), conv.main.operands.size());
  for (size_t i = 0; i < conv.main.operands.size(); ++i) {
    EXPECT_EQ(back.main.operands[i].type, conv.main.operands[i].type) << i;
    EXPECT_EQ(back.main.operands[i].dimensions, conv.main.operands[i].dimensions) << i;
    EXPECT_EQ(back.main.operands[i].lifetime, conv.main.operands[i].lifetime) << i;
  }
  const DataLocation filter = back.main.operands[1].location;
  ASSERT_EQ(filter.length, 16u);
  float weights[4] = {};
  std::memcpy(weights, back.pools[filter.poolIndex].data() + filter.offset, 16);
  for (float w : weights) EXPECT_EQ(w, 1.0f);
  const DataLocation bias = back.main.operands[2].location;
  float half = 0;
  std::memcpy(&half, back.operandValues.data() + bias.offset, 4);
  EXPECT_EQ(half, 0.5f);
  const std::string dot = readText(dumped(folder, 1, ".dot"));
  EXPECT_NE(dot.find("0: CONV_2D"), std::string::npos) << dot;

  // 2: valid in structure but refused by the driver (shapes that do not broadcast): written
  // too, since that is the model a bug report needs.
  Model refused = addModel();
  refused.main.operands[1].dimensions = {3};
  auto prepared = (*device)->prepareModel(refused, {});
  ASSERT_FALSE(prepared);
  EXPECT_FALSE(dumped(folder, 2, ".json").empty());
  EXPECT_FALSE(dumped(folder, 2, ".dot").empty());

  // 3: past --dump-models-limit, nothing more is written; the preparation is unaffected.
  ASSERT_TRUE((*device)->prepareModel(addModel(), {}));
  EXPECT_TRUE(dumped(folder, 3, ".json").empty());
  EXPECT_TRUE(dumped(folder, 3, ".dot").empty());
}

TEST(DumpModels, CheckConfigRefusesAFolderItCannotWrite) {
  TempDir dir;
  const fs::path file = dir.path() / "a-file";
  std::ofstream(file) << "x";
  const std::string command = std::string(NNHALD_PATH) + " --check-config --socket " +
                              (dir.path() / "s.sock").string() + " --dump-models " +
                              (file / "dumps").string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
  const int status = ::pclose(pipe);
  EXPECT_EQ(WEXITSTATUS(status), 1) << output;
  EXPECT_NE(output.find("--dump-models '"), std::string::npos) << output;
  EXPECT_NE(output.find("is not a folder"), std::string::npos) << output;
}

}  // namespace
}  // namespace nnhal::ipc::testing
