#include "tools/nnhal/calibrate_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "common/calibration.h"
#include "hal/operand_utils.h"
#include "nnhal/device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/dequantize_model.h"

extern char** environ;

namespace nnhal::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The NNAPI benchmark's reference workloads that exist here.
struct Workload {
  const char* name;
  const char* file;
  bool quantized;  ///< false: the file's graph with its weights dequantized
};
constexpr Workload kWorkloads[] = {
    {"mobilenet_v1_0.25_128_quant", "mobilenet_v1_0.25_128_quant.tflite", true},
    {"mobilenet_v2_1.0_224_quant", "mobilenet_v2_1.0_224_quant.tflite", true},
    {"mobilenet_v2_1.0_224_float", "mobilenet_v2_1.0_224_quant.tflite", false},
};

size_t operandBytes(const Operand& operand) {
  return std::max<size_t>(hal::byteSize(operand.type, operand.dimensions).value_or(0), 1);
}

Result<Model> loadWorkload(const std::string& folder, const Workload& w) {
  NNHAL_ASSIGN_OR_RETURN(ImportedModel imported,
                         importTfliteFile((std::filesystem::path(folder) / w.file).string()));
  if (w.quantized) return std::move(imported.model);
  return tools::dequantizeModel(imported.model);
}

// Median ms of `runs` executions (after two warm-up runs) with `threads` kernel threads; the
// inputs hold a fixed pattern (the time does not depend on the values).
Result<double> medianMs(const Model& model, unsigned threads, unsigned runs) {
  DeviceOptions options;
  options.kernelThreads = threads;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, createDevice(options));
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<PreparedModel> prepared, device->prepareModel(model));
  Request request;
  for (uint32_t index : model.main.inputIndexes) {
    const size_t bytes = operandBytes(model.main.operands[index]);
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(bytes));
    for (size_t i = 0; i < bytes; ++i) pool.data()[i] = static_cast<uint8_t>(i * 7 % 61);
    request.inputs.push_back(
        {false,
         {static_cast<uint32_t>(request.pools.size()), 0, static_cast<uint32_t>(bytes)},
         {}});
    request.pools.push_back(pool);
  }
  for (uint32_t index : model.main.outputIndexes) {
    const size_t bytes = operandBytes(model.main.operands[index]);
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(bytes));
    request.outputs.push_back(
        {false,
         {static_cast<uint32_t>(request.pools.size()), 0, static_cast<uint32_t>(bytes)},
         {}});
    request.pools.push_back(pool);
  }
  std::vector<double> times;
  for (unsigned i = 0; i < runs + 2; ++i) {
    const auto start = Clock::now();
    NNHAL_TRY(prepared->executeSynchronously(request));
    if (i >= 2)
      times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

struct Times {
  double all = 0;  ///< all kernel threads
  double one = 0;  ///< one kernel thread
};

Result<std::vector<Times>> measureAll(const CalibrateArgs& args, const char* label) {
  std::vector<Times> times;
  for (const Workload& w : kWorkloads) {
    NNHAL_ASSIGN_OR_RETURN(Model model, loadWorkload(args.models, w));
    Times t;
    NNHAL_ASSIGN_OR_RETURN(t.all, medianMs(model, 0, args.runs));
    NNHAL_ASSIGN_OR_RETURN(t.one, medianMs(model, 1, args.runs));
    std::fprintf(stderr, "  %-8s %-30s %9.2f ms (all threads) %9.2f ms (1 thread)\n", label, w.name,
                 t.all, t.one);
    times.push_back(t);
  }
  return times;
}

// The reference times: this program again, at the scalar kernel level (NNHAL_ISA=scalar is
// read once per process, so it takes a process of its own).
Result<std::vector<Times>> measureReference(const CalibrateArgs& args) {
  int pipeFds[2];
  if (pipe2(pipeFds, O_CLOEXEC) != 0) {
    return fail(ErrorStatus::GENERAL_FAILURE, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipeFds[1], STDOUT_FILENO);
  std::vector<std::string> argStrings = {
      "nnhal",     "calibrate", "--reference-only",       "--models",
      args.models, "--runs",    std::to_string(args.runs)};
  std::vector<char*> argv;
  for (std::string& a : argStrings) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> envStrings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "NNHAL_ISA=", 10) != 0) envStrings.emplace_back(*e);
  }
  envStrings.emplace_back("NNHAL_ISA=scalar");
  std::vector<char*> envp;
  for (std::string& e : envStrings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipeFds[1]);
  if (spawned != 0) {
    close(pipeFds[0]);
    return fail(ErrorStatus::GENERAL_FAILURE,
                std::string("cannot start the reference run: ") + std::strerror(spawned));
  }
  std::string output;
  char buffer[4096];
  for (ssize_t n; (n = read(pipeFds[0], buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buffer, static_cast<size_t>(n));
  }
  close(pipeFds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return fail(ErrorStatus::GENERAL_FAILURE, "the reference run (NNHAL_ISA=scalar) failed");
  }
  const nlohmann::json j = nlohmann::json::parse(output, nullptr, false);
  if (!j.is_array() || j.size() != std::size(kWorkloads)) {
    return fail(ErrorStatus::GENERAL_FAILURE, "the reference run printed no usable times");
  }
  std::vector<Times> times;
  for (const nlohmann::json& t : j) times.push_back({t.value("all", 0.0), t.value("one", 0.0)});
  return times;
}

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

Result<void> calibrate(const CalibrateArgs& args) {
  if (args.referenceOnly) {
    NNHAL_ASSIGN_OR_RETURN(std::vector<Times> times, measureAll(args, "scalar"));
    nlohmann::json out = nlohmann::json::array();
    for (const Times& t : times) out.push_back({{"all", t.all}, {"one", t.one}});
    std::printf("%s\n", out.dump().c_str());
    return {};
  }
  if (args.stateDir.empty()) return invalidArgument("calibrate needs --state-dir");
  const KernelIsa isa = kernelIsa();
  std::fprintf(stderr,
               "nnhal calibrate: %zu workloads, median of %u runs each, kernels at %s "
               "against the portable (scalar) reference\n",
               std::size(kWorkloads), args.runs, isa.active.c_str());
  NNHAL_ASSIGN_OR_RETURN(std::vector<Times> measured, measureAll(args, isa.active.c_str()));
  NNHAL_ASSIGN_OR_RETURN(std::vector<Times> reference, measureReference(args));

  common::Calibration c;
  NNHAL_ASSIGN_OR_RETURN(std::shared_ptr<Device> probe, createDevice({}));
  c.driverVersion = probe->getVersionString();
  c.isa = isa.active;
  c.measuredAt = utcNow();
  for (size_t i = 0; i < std::size(kWorkloads); ++i) {
    c.workloads.push_back({kWorkloads[i].name, kWorkloads[i].quantized, measured[i].all,
                           reference[i].all, measured[i].one, reference[i].one});
  }
  NNHAL_TRY(common::computePerformance(&c));
  std::error_code ec;
  std::filesystem::create_directories(args.stateDir, ec);
  const std::filesystem::path file =
      std::filesystem::path(args.stateDir) / common::kCalibrationFileName;
  NNHAL_TRY(common::writeCalibration(file, c));
  std::printf("quantized: execTime %.4f powerUsage %.4f\n", c.quantized.execTime,
              c.quantized.powerUsage);
  std::printf("float32:   execTime %.4f powerUsage %.4f\n", c.float32.execTime,
              c.float32.powerUsage);
  std::printf("written to %s\n", file.c_str());
  return {};
}

}  // namespace

int runCalibrate(const CalibrateArgs& args) {
  auto done = calibrate(args);
  if (!done) {
    std::fprintf(stderr, "nnhal: error: %s (%s)\n", done.error().message.c_str(),
                 std::string(toString(done.error().status)).c_str());
    return 1;
  }
  return 0;
}

}  // namespace nnhal::cli
