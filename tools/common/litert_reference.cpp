#include "tools/common/litert_reference.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <system_error>

#include "tools/common/tensor_io.h"

extern char** environ;

namespace nnhal::tools {
namespace {

namespace fs = std::filesystem;

Error failure(const std::string& message) { return {ErrorStatus::GENERAL_FAILURE, message, {}}; }

/// A private temporary folder, removed with everything in it.
class TempFolder {
 public:
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "nnhal-litert-XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path_.empty()) fs::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

bool nodeOnPath() {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string_view rest(path);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const fs::path dir(std::string(rest.substr(0, colon)));
    if (::access((dir / "node").c_str(), X_OK) == 0) return true;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  return false;
}

Result<std::string> dtypeOf(const TensorDescription& desc) {
  switch (desc.type) {
    case OperandType::TENSOR_FLOAT32:
      return std::string("float32");
    case OperandType::TENSOR_INT32:
      return std::string(desc.int64 ? "int64" : "int32");
    case OperandType::TENSOR_QUANT8_ASYMM:
      return std::string("uint8");
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      return std::string("int8");
    case OperandType::TENSOR_QUANT16_SYMM:
      return std::string("int16");
    case OperandType::TENSOR_BOOL8:
      return std::string("bool");
    default:
      return std::unexpected(failure("input '" + desc.name + "': type " +
                                     std::string(toString(desc.type)) +
                                     " is not compared with LiteRT"));
  }
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Runs `node script request` with stdout and stderr in files; its exit status.
Result<int> runNode(const fs::path& script, const fs::path& request, const fs::path& out,
                    const fs::path& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::string node = "node", scriptArg = script.string(), requestArg = request.string();
  char* argv[] = {node.data(), scriptArg.data(), requestArg.data(), nullptr};
  pid_t pid = 0;
  const int spawned = ::posix_spawnp(&pid, "node", &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return std::unexpected(failure(std::string("cannot start node: ") + std::strerror(spawned)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return std::unexpected(failure("waiting for node failed"));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Raw integer values of `bytes` of the tensor's type (quantized and integer types).
std::vector<int64_t> integers(OperandType type, const std::vector<uint8_t>& bytes) {
  std::vector<int64_t> values;
  auto decode = [&]<typename T>(T) {
    values.resize(bytes.size() / sizeof(T));
    for (size_t i = 0; i < values.size(); ++i) {
      T v;
      std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
      values[i] = v;
    }
  };
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_BOOL8:
      decode(uint8_t{});
      break;
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
      decode(int8_t{});
      break;
    case OperandType::TENSOR_QUANT16_SYMM:
      decode(int16_t{});
      break;
    case OperandType::TENSOR_INT32:
      decode(int32_t{});
      break;
    default:
      break;
  }
  return values;
}

int64_t argmax(const std::vector<float>& values) {
  if (values.size() < 2) return -1;
  return std::distance(values.begin(), std::max_element(values.begin(), values.end()));
}

}  // namespace

Result<fs::path> findLitert() {
  fs::path dir = NNHAL_LITERT_DIR;
  if (const char* env = std::getenv("NNHAL_LITERT_DIR"); env != nullptr && *env != '\0') {
    dir = env;
  }
  if (!nodeOnPath()) {
    return std::unexpected(
        failure("Node.js (node) is not on the PATH: run scripts/setup.sh to install it"));
  }
  if (!fs::exists(dir / "run_litert.mjs") ||
      !fs::exists(dir / "node_modules" / "@litertjs" / "core" / "package.json")) {
    return std::unexpected(failure("LiteRT is not installed in " + dir.string() +
                                   ": run scripts/setup.sh, or npm ci --prefix " + dir.string()));
  }
  return dir;
}

Result<std::vector<ReferenceTensor>> runLitert(const fs::path& model,
                                               const std::vector<TensorDescription>& inputs,
                                               const std::vector<std::vector<uint8_t>>& bytes) {
  NNHAL_ASSIGN_OR_RETURN(const fs::path dir, findLitert());
  TempFolder temp;
  if (temp.path().empty()) return std::unexpected(failure("cannot create a temporary folder"));
  nlohmann::json request;
  request["model"] = fs::absolute(model).string();
  request["outputDir"] = temp.path().string();
  request["inputs"] = nlohmann::json::array();
  for (size_t i = 0; i < inputs.size() && i < bytes.size(); ++i) {
    NNHAL_ASSIGN_OR_RETURN(const std::string dtype, dtypeOf(inputs[i]));
    const fs::path file = temp.path() / ("input_" + std::to_string(i) + ".bin");
    NNHAL_TRY(writeFile(file.string(), inputs[i].int64 ? widenInt32ToInt64(bytes[i]) : bytes[i]));
    request["inputs"].push_back({{"name", inputs[i].name},
                                 {"dtype", dtype},
                                 {"shape", inputs[i].dimensions},
                                 {"file", file.string()}});
  }
  const fs::path requestFile = temp.path() / "request.json";
  std::ofstream(requestFile) << request.dump();
  const fs::path out = temp.path() / "stdout.json", err = temp.path() / "stderr.txt";
  NNHAL_ASSIGN_OR_RETURN(const int status, runNode(dir / "run_litert.mjs", requestFile, out, err));
  if (status != 0) {
    std::string reason = readText(err);
    const size_t at = reason.find("run_litert: ");
    if (at != std::string::npos) reason = reason.substr(at + 12);
    while (!reason.empty() && std::isspace(static_cast<unsigned char>(reason.back()))) {
      reason.pop_back();
    }
    return std::unexpected(failure("LiteRT could not run the model: " + reason));
  }
  const auto reply = nlohmann::json::parse(readText(out), nullptr, false);
  if (reply.is_discarded() || !reply.contains("outputs")) {
    return std::unexpected(failure("LiteRT's runner printed no result"));
  }
  std::vector<ReferenceTensor> outputs;
  for (const auto& o : reply["outputs"]) {
    ReferenceTensor t;
    t.name = o.value("name", "");
    t.dtype = o.value("dtype", "");
    for (const auto& d : o["shape"]) t.shape.push_back(d.get<uint32_t>());
    NNHAL_ASSIGN_OR_RETURN(t.bytes, readFile(o["file"].get<std::string>()));
    outputs.push_back(std::move(t));
  }
  return outputs;
}

Result<OutputDifference> compareOutput(const OutputTensor& nnhal, const ReferenceTensor& tflite) {
  OutputDifference d;
  d.name = nnhal.desc.name;
  std::vector<uint8_t> reference = tflite.bytes;
  if (nnhal.desc.int64) {
    if (tflite.dtype != "int64") {
      return invalidArgument("output '" + d.name + "': LiteRT gave " + tflite.dtype +
                             ", not int64");
    }
    NNHAL_ASSIGN_OR_RETURN(reference, narrowInt64ToInt32(reference));
  }
  if (reference.size() != nnhal.bytes.size()) {
    return invalidArgument("output '" + d.name + "': " + std::to_string(nnhal.bytes.size()) +
                           " bytes from nnhal, " + std::to_string(reference.size()) +
                           " from LiteRT's '" + tflite.name + "' (" + tflite.dtype + ")");
  }
  NNHAL_ASSIGN_OR_RETURN(const std::vector<float> mine, realValues(nnhal.desc, nnhal.bytes));
  NNHAL_ASSIGN_OR_RETURN(const std::vector<float> theirs, realValues(nnhal.desc, reference));
  d.elements = mine.size();
  double largest = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(mine[i]) - theirs[i]);
    d.maxAbs = std::max(d.maxAbs, std::isnan(diff) ? INFINITY : diff);
    largest = std::max(largest, std::fabs(static_cast<double>(theirs[i])));
  }
  d.maxRelative = largest > 0 ? d.maxAbs / largest : 0;
  const std::vector<int64_t> a = integers(nnhal.desc.type, nnhal.bytes);
  const std::vector<int64_t> b = integers(nnhal.desc.type, reference);
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d.maxSteps = std::max<int64_t>(d.maxSteps, a[i] > b[i] ? a[i] - b[i] : b[i] - a[i]);
  }
  const size_t elementBytes = d.elements == 0 ? 1 : nnhal.bytes.size() / d.elements;
  for (size_t i = 0; i < d.elements; ++i) {
    d.differing += std::memcmp(nnhal.bytes.data() + i * elementBytes,
                               reference.data() + i * elementBytes, elementBytes) != 0;
  }
  d.argmaxNnhal = argmax(mine);
  d.argmaxTflite = argmax(theirs);
  return d;
}

}  // namespace nnhal::tools
