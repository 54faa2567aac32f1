// nnhald's cache for clients that pass no cache files (--cache-dir, ipc/daemon/client_cache.h):
// the second preparation of a model is loaded, not compiled; each application has its own
// folder and its own limit; a client that passes its own files is left to them; a damaged
// entry is compiled and saved again; without --cache-dir nothing is written.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "hal/model_token.h"
#include "ipc_test_util.h"

namespace nnhal::ipc::testing {
namespace {

/// How many spans of each (category, name) the daemon's trace holds.
std::map<std::pair<std::string, std::string>, int> spanCounts(const fs::path& path) {
  std::stringstream text;
  text << std::ifstream(path).rdbuf();
  const nlohmann::json trace = nlohmann::json::parse(text.str(), nullptr, false);
  std::map<std::pair<std::string, std::string>, int> counts;
  if (trace.is_discarded()) return counts;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] == "X") {
      ++counts[{event["cat"].get<std::string>(), event["name"].get<std::string>()}];
    }
  }
  return counts;
}

/// The models cached for this process's application (its uid).
std::vector<fs::path> cachedModels(const fs::path& cacheDir) {
  std::vector<fs::path> models;
  const fs::path folder = cacheDir / "clients" / std::to_string(::getuid());
  std::error_code error;
  for (const auto& file : fs::directory_iterator(folder, error)) {
    if (file.path().extension() == ".model") models.push_back(file.path());
  }
  return models;
}

/// addModel with its activation as `activation` (another model for the token).
Model addModelWith(int32_t activation) {
  Model model = addModel();
  std::memcpy(model.operandValues.data() + model.main.operands[2].location.offset, &activation, 4);
  return model;
}

TEST(ClientCache, TheSecondPreparationIsLoadedNotCompiled) {
  TempDir dir;
  const fs::path cacheDir = dir.path() / "cache";
  const fs::path trace = dir.path() / "trace.json";
  Daemon daemon({"--cache-dir", cacheDir.string(), "--trace", trace.string()});
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  const Model conv = convModel();
  auto first = (*device)->prepareModel(conv, {});
  ASSERT_TRUE(first) << first.error().message;
  const auto models = cachedModels(cacheDir);
  ASSERT_EQ(models.size(), 1u);
  EXPECT_GT(fs::file_size(models[0]), 0u);
  EXPECT_EQ(fs::status(models[0].parent_path()).permissions() & fs::perms::all,
            fs::perms::owner_all);
  auto second = (*device)->prepareModel(conv, {});
  ASSERT_TRUE(second) << second.error().message;
  // Both compute the model: [1,3,3,1] ones through a 2x2 filter of ones, bias 0.5.
  for (auto* prepared : {&*first, &*second}) {
    Memory pool = *Memory::create(13 * 4);
    auto* values = reinterpret_cast<float*>(pool.data());
    for (int i = 0; i < 9; ++i) values[i] = 1.0f;
    Request request;
    request.pools = {pool};
    request.inputs = {{false, {0, 0, 36}, {}}};
    request.outputs = {{false, {0, 36, 16}, {}}};
    ASSERT_TRUE((*prepared)->executeSynchronously(request));
    for (int i = 9; i < 13; ++i) EXPECT_EQ(values[i], 4.5f);
  }
  EXPECT_EQ(daemon.stop(), 0);
  auto spans = spanCounts(trace);
  // (A model loaded from the cache compiles its plan from the saved model too: "compile"
  // spans come from both; "prepareModel" only from the first.)
  EXPECT_EQ((spans[{"preparation", "prepareModel"}]), 1);
  EXPECT_EQ((spans[{"preparation", "prepareModelFromCache"}]), 1);
}

TEST(ClientCache, EachApplicationKeepsAtMostItsLimitAndItsOwnFilesAreItsOwn) {
  TempDir dir;
  const fs::path cacheDir = dir.path() / "cache";
  Daemon daemon({"--cache-dir", cacheDir.string(), "--client-cache-entries", "2"});
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  for (int32_t activation = 0; activation < 4; ++activation) {
    ASSERT_TRUE((*device)->prepareModel(addModelWith(activation), {}));
  }
  EXPECT_EQ(cachedModels(cacheDir).size(), 2u);
  // Only this application's folder exists.
  size_t folders = 0;
  for (const auto& entry : fs::directory_iterator(cacheDir / "clients")) {
    EXPECT_EQ(entry.path().filename(), std::to_string(::getuid()));
    ++folders;
  }
  EXPECT_EQ(folders, 1u);
  // A client that passes its own cache files is left to them: nothing more in its folder.
  const fs::path own = dir.path() / "own";
  fs::create_directories(own);
  std::vector<UniqueFd> fds;
  CacheFiles files;
  for (const char* name : {"m", "d"}) {
    fds.emplace_back(::open((own / name).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    ASSERT_TRUE(fds.back().valid());
  }
  files.modelCache = {{fds[0].get()}};
  files.dataCache = {{fds[1].get()}};
  PrepareOptions options;
  options.cache = files;
  const auto before = cachedModels(cacheDir);
  auto prepared = (*device)->prepareModel(convModel(), options);
  ASSERT_TRUE(prepared) << prepared.error().message;
  EXPECT_EQ(cachedModels(cacheDir), before);
  EXPECT_GT(fs::file_size(own / "m"), 0u);
}

TEST(ClientCache, ADamagedEntryIsCompiledAndSavedAgain) {
  TempDir dir;
  const fs::path cacheDir = dir.path() / "cache";
  const fs::path trace = dir.path() / "trace.json";
  Daemon daemon({"--cache-dir", cacheDir.string(), "--trace", trace.string()});
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  ASSERT_TRUE((*device)->prepareModel(convModel(), {}));
  const auto models = cachedModels(cacheDir);
  ASSERT_EQ(models.size(), 1u);
  {
    std::fstream file(models[0], std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(models[0]) / 2));
    file.put('\x5a');
  }
  ASSERT_TRUE((*device)->prepareModel(convModel(), {}));  // not loaded: compiled again
  ASSERT_TRUE((*device)->prepareModel(convModel(), {}));  // loaded
  EXPECT_EQ(daemon.stop(), 0);
  auto spans = spanCounts(trace);
  EXPECT_EQ((spans[{"preparation", "prepareModel"}]), 2);
  EXPECT_EQ((spans[{"preparation", "prepareModelFromCache"}]), 2);
}

TEST(ClientCache, NothingIsWrittenWithoutACacheDirectoryOrWithTheLimitAtZero) {
  TempDir dir;
  const fs::path cacheDir = dir.path() / "cache";
  Daemon daemon({"--cache-dir", cacheDir.string(), "--client-cache-entries", "0"});
  ASSERT_TRUE(daemon.running());
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  ASSERT_TRUE((*device)->prepareModel(convModel(), {}));
  EXPECT_FALSE(fs::exists(cacheDir / "clients"));
}

// Another application (uid 65534, its own processes, through the CLI) has its own folder and
// its own limit: with room for one model each, its preparations neither load nor evict ours.
TEST(ClientCache, AnotherApplicationNeitherLoadsNorEvictsOurs) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run a client as another user";
  const std::string asNobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  if (std::system((asNobody + "test -x " + std::string(NNHAL_CLI_PATH)).c_str()) != 0) {
    GTEST_SKIP() << "setpriv missing, or nnhal not reachable by another user from here";
  }
  TempDir dir;
  const fs::path cacheDir = dir.path() / "cache";
  Daemon daemon(
      {"--cache-dir", cacheDir.string(), "--client-cache-entries", "1", "--socket-mode", "0666"});
  ASSERT_TRUE(daemon.running());
  ASSERT_EQ(::chmod(daemon.socket().parent_path().c_str(), 0755), 0);
  auto device = connect(daemon.socket());
  ASSERT_TRUE(device) << device.error().message;
  ASSERT_TRUE((*device)->prepareModel(convModel(), {}));
  const auto ours = cachedModels(cacheDir);
  ASSERT_EQ(ours.size(), 1u);
  const std::string models = std::string(NNHAL_SHARED_DIR) + "/models/";
  for (const char* model :
       {"mobilenet_v1_0.25_128_quant.tflite", "mlperftiny_kws_ref_model.tflite"}) {
    const std::string command = asNobody + NNHAL_CLI_PATH + " run --num_runs 1 --warmup_runs 0 " +
                                "--connect " + daemon.socket().string() + " --model " + models +
                                model + " >/dev/null 2>&1";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  // Its own folder, holding one model (its limit); ours is untouched and still loads.
  size_t theirs = 0;
  for (const auto& file : fs::directory_iterator(cacheDir / "clients" / "65534")) {
    theirs += file.path().extension() == ".model";
  }
  EXPECT_EQ(theirs, 1u);
  EXPECT_EQ(cachedModels(cacheDir), ours);
  ASSERT_TRUE((*device)->prepareModel(convModel(), {}));
  EXPECT_EQ(cachedModels(cacheDir), ours);
}

// The token is the model's content and options, not where its constants lie.
TEST(ClientCache, TheModelTokenFollowsContentNotLayout) {
  const PrepareOptions options;
  const Model a = convModel();
  EXPECT_EQ(hal::modelToken(a, options), hal::modelToken(convModel(), options));
  Model moved = convModel();  // the same filter, at another offset of a bigger pool
  Memory bigger = *Memory::create(128);
  std::memcpy(bigger.data() + 64, a.pools[0].data(), 16);
  moved.pools = {bigger};
  moved.main.operands[1].location = {0, 64, 16};
  EXPECT_EQ(hal::modelToken(moved, options), hal::modelToken(a, options));
  Model otherWeights = convModel();
  reinterpret_cast<float*>(otherWeights.pools[0].data())[3] = 2.0f;
  EXPECT_NE(hal::modelToken(otherWeights, options), hal::modelToken(a, options));
  PrepareOptions high;
  high.priority = Priority::HIGH;
  EXPECT_NE(hal::modelToken(a, high), hal::modelToken(a, options));
  EXPECT_NE(hal::modelToken(addModelWith(1), options), hal::modelToken(addModelWith(0), options));
}

}  // namespace
}  // namespace nnhal::ipc::testing
