#include "tools/nnhal/calibrate_command.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/calibration.h"
#include "hal/operand_utils.h"
#include "nnhal/device.h"
#include "nnhal/gpu_device.h"
#include "nnhal/tflite_import.h"
#include "tools/common/calibration_workloads.h"
#include "tools/common/dequantize_model.h"
#if NNHAL_HAVE_XNNPACK
#include "tools/cpu_reference/xnnpack_baseline.h"
#endif

namespace nnhal::cli {
namespace {

using Clock = std::chrono::steady_clock;
using tools::CalibrationWorkload;

// The workloads from a folder of the published models (`--models`): the NNAPI benchmark's
// reference networks, the float one dequantized from MobileNet v2 quant.
Result<std::vector<CalibrationWorkload>> workloadsFrom(const std::string& folder) {
  auto load = [&](const char* file) -> Result<Model> {
    NNHAL_ASSIGN_OR_RETURN(ImportedModel imported,
                           importTfliteFile((std::filesystem::path(folder) / file).string()));
    return std::move(imported.model);
  };
  std::vector<CalibrationWorkload> workloads;
  NNHAL_ASSIGN_OR_RETURN(Model v1, load("mobilenet_v1_0.25_128_quant.tflite"));
  NNHAL_ASSIGN_OR_RETURN(Model v2, load("mobilenet_v2_1.0_224_quant.tflite"));
  NNHAL_ASSIGN_OR_RETURN(Model v2Float, tools::dequantizeModel(v2));
  workloads.push_back({"mobilenet_v1_0.25_128_quant", true, std::move(v1)});
  workloads.push_back({"mobilenet_v2_1.0_224_quant", true, std::move(v2)});
  workloads.push_back({"mobilenet_v2_1.0_224_float", false, std::move(v2Float)});
  return workloads;
}

// The same input bytes for both engines: values in [-1, 1] for float tensors, a byte pattern
// otherwise (the time of these networks does not depend on the values).
void fillInput(const Operand& operand, std::span<uint8_t> bytes) {
  if (operand.type == OperandType::TENSOR_FLOAT32) {
    for (size_t i = 0; i + sizeof(float) <= bytes.size(); i += sizeof(float)) {
      const float value = std::sin(static_cast<float>(i / sizeof(float)) * 0.37f);
      std::memcpy(bytes.data() + i, &value, sizeof value);
    }
    return;
  }
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 % 61);
}

size_t operandBytes(const Operand& operand) {
  return std::max<size_t>(hal::byteSize(operand.type, operand.dimensions).value_or(0), 1);
}

// The driver ready to run `model` with `threads` kernel threads (0: all), on requests over
// pools of its own.
struct DriverRun {
  std::shared_ptr<PreparedModel> prepared;
  Request request;
};

Result<DriverRun> prepareDriver(const Model& model, unsigned threads, bool gpu) {
  DeviceOptions options;
  options.kernelThreads = threads;
  NNHAL_ASSIGN_OR_RETURN(
      std::shared_ptr<Device> device,
      gpu ? createVulkanDevice(options, vulkanOptionsFromEnvironment()) : createDevice(options));
  DriverRun run;
  NNHAL_ASSIGN_OR_RETURN(run.prepared, device->prepareModel(model));
  auto addArgument = [&](uint32_t index, std::vector<RequestArgument>* arguments,
                         bool fill) -> Result<void> {
    const Operand& operand = model.main.operands[index];
    const size_t bytes = operandBytes(operand);
    NNHAL_ASSIGN_OR_RETURN(Memory pool, Memory::create(bytes));
    if (fill) fillInput(operand, {pool.data(), bytes});
    arguments->push_back(
        {false,
         {static_cast<uint32_t>(run.request.pools.size()), 0, static_cast<uint32_t>(bytes)},
         {}});
    run.request.pools.push_back(pool);
    return {};
  };
  for (uint32_t index : model.main.inputIndexes) {
    NNHAL_TRY(addArgument(index, &run.request.inputs, true));
  }
  for (uint32_t index : model.main.outputIndexes) {
    NNHAL_TRY(addArgument(index, &run.request.outputs, false));
  }
  return run;
}

double elapsedMs(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double median(std::vector<double> times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// The cores this process may run on: the reference's "all cores" (the driver's kernel threads
// default to the same set).
unsigned allowedCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

struct PairTimes {
  double driverMs = 0;
  double referenceMs = 0;
};

#if NNHAL_HAVE_XNNPACK
// Medians of `runs` executions on the driver and on the reference, taken in kRounds rounds of
// a block on each, so that both see the same machine (other load, clock changes). Each block
// starts with a pause and an untimed run: the other engine's threads spin for a while after
// its last run (oneTBB's workers, pthreadpool's), and would take a core from this one.
constexpr unsigned kRounds = 3;
constexpr auto kPauseBetweenEngines = std::chrono::milliseconds(20);

template <typename Run>
Result<void> timeBlock(unsigned runs, std::vector<double>* times, Run&& run) {
  std::this_thread::sleep_for(kPauseBetweenEngines);
  for (unsigned i = 0; i <= runs; ++i) {
    const auto start = Clock::now();
    NNHAL_TRY(run());
    if (i > 0) times->push_back(elapsedMs(start));
  }
  return {};
}

Result<PairTimes> measurePair(const Model& model, unsigned driverThreads, unsigned referenceThreads,
                              unsigned runs, bool gpu) {
  NNHAL_ASSIGN_OR_RETURN(DriverRun driver, prepareDriver(model, driverThreads, gpu));
  NNHAL_ASSIGN_OR_RETURN(std::unique_ptr<cpu_reference::XnnpackBaseline> reference,
                         cpu_reference::XnnpackBaseline::create(model, referenceThreads));
  for (size_t i = 0; i < model.main.inputIndexes.size(); ++i) {
    fillInput(model.main.operands[model.main.inputIndexes[i]], reference->input(i));
  }
  const unsigned perBlock = (runs + kRounds - 1) / kRounds;
  std::vector<double> driverTimes, referenceTimes;
  for (unsigned round = 0; round < kRounds; ++round) {
    NNHAL_TRY(timeBlock(perBlock, &driverTimes, [&]() -> Result<void> {
      NNHAL_TRY(driver.prepared->executeSynchronously(driver.request));
      return {};
    }));
    NNHAL_TRY(timeBlock(perBlock, &referenceTimes, [&] { return reference->run(); }));
  }
  return PairTimes{median(driverTimes), median(referenceTimes)};
}
#else
Result<PairTimes> measurePair(const Model&, unsigned, unsigned, unsigned, bool) {
  return fail(ErrorStatus::GENERAL_FAILURE,
              "this nnhal was built without the reference CPU path (XNNPACK): configure with "
              "-DNNHAL_XNNPACK_BASELINE=ON and libxnnpack-dev installed");
}
#endif

std::string utcNow() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

Result<void> calibrate(const CalibrateArgs& args) {
  if (args.stateDir.empty()) return invalidArgument("calibrate needs --state-dir");
  const bool gpu = args.device == "nnhal-vulkan";
  if (!gpu && !args.device.empty() && args.device != "nnhal-cpu") {
    return invalidArgument("--device: the embedded devices are 'nnhal-cpu' and 'nnhal-vulkan'");
  }
  const std::filesystem::path stateDir(args.stateDir);
  // The GPU device's calibration applies to its version string (device, driver, pipeline
  // cache) and the level "vulkan"; the CPU device's to its version and kernel level.
  const std::string level = gpu ? std::string(common::kVulkanCalibrationLevel) : kernelIsa().active;
  NNHAL_ASSIGN_OR_RETURN(
      std::shared_ptr<Device> probe,
      gpu ? createVulkanDevice({}, vulkanOptionsFromEnvironment()) : createDevice({}));
  const std::string version = probe->getVersionString();
  probe.reset();
  if (args.ifStale) {
    auto current = common::applicableCalibration(stateDir, version, level);
    if (current) {
      std::fprintf(stderr, "nnhal calibrate: %s is current (measured at %s); nothing to do\n",
                   (stateDir / common::kCalibrationFileName).c_str(), current->measuredAt.c_str());
      return {};
    }
    std::fprintf(stderr, "nnhal calibrate: measuring, because %s\n",
                 current.error().message.c_str());
  }

  NNHAL_ASSIGN_OR_RETURN(
      std::vector<CalibrationWorkload> workloads,
      args.models.empty() ? tools::builtInCalibrationWorkloads() : workloadsFrom(args.models));
  const unsigned cores = allowedCores();
  std::fprintf(stderr,
               "nnhal calibrate: %zu workloads (%s), median of %u runs each, kernels at %s, "
               "against the reference CPU path (%s) on %u cores and on 1\n",
               workloads.size(), args.models.empty() ? "built in" : args.models.c_str(), args.runs,
               level.c_str(), common::kReferencePath, cores);

  common::Calibration c;
  c.driverVersion = version;
  c.isa = level;
  c.measuredAt = utcNow();
  for (const CalibrationWorkload& w : workloads) {
    NNHAL_ASSIGN_OR_RETURN(const PairTimes all, measurePair(w.model, 0, cores, args.runs, gpu));
    NNHAL_ASSIGN_OR_RETURN(const PairTimes one, measurePair(w.model, 1, 1, args.runs, gpu));
    std::fprintf(stderr,
                 "  %-28s all cores: nnhal %8.2f ms, %s %8.2f ms | 1 thread: nnhal %8.2f ms, "
                 "%s %8.2f ms\n",
                 w.name.c_str(), all.driverMs, common::kReferencePath, all.referenceMs,
                 one.driverMs, common::kReferencePath, one.referenceMs);
    c.workloads.push_back(
        {w.name, w.quantized, all.driverMs, all.referenceMs, one.driverMs, one.referenceMs});
  }
  if (gpu) {
    NNHAL_TRY(common::computeGpuPerformance(&c));
  } else {
    NNHAL_TRY(common::computePerformance(&c));
  }
  std::error_code ec;
  std::filesystem::create_directories(stateDir, ec);
  const std::filesystem::path file = stateDir / common::kCalibrationFileName;
  NNHAL_TRY(common::writeCalibration(file, c));
  std::printf("quantized:  execTime %.4f powerUsage %.4f\n", c.quantized.execTime,
              c.quantized.powerUsage);
  std::printf("float32:    execTime %.4f powerUsage %.4f\n", c.float32.execTime,
              c.float32.powerUsage);
  std::printf("unmeasured: execTime %.4f powerUsage %.4f\n", c.unmeasured.execTime,
              c.unmeasured.powerUsage);
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
