#include "tools/nnhal/cts_command.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "nnhal/client.h"
#include "nnhal/device.h"
#include "tools/common/cts_model.h"
#include "tools/common/cts_runner.h"
#include "tools/common/junit_report.h"
#include "tools/nnhal/run_command.h"

namespace nnhal::cli {
namespace {

using Clock = std::chrono::steady_clock;

struct Tally {
  size_t passed = 0;
  size_t failed = 0;
};

enum class Verdict { kPassed, kFailed, kSkipped };

std::string_view toString(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPassed:
      return "passed";
    case Verdict::kFailed:
      return "failed";
    case Verdict::kSkipped:
      return "skipped";
  }
  return "?";
}

Verdict verdictOf(const tools::CtsOutcome& outcome) {
  if (outcome.passed) return Verdict::kPassed;
  return outcome.skipped ? Verdict::kSkipped : Verdict::kFailed;
}

struct ModeResult {
  tools::CtsMode mode;
  tools::CtsOutcome outcome;
};

/// One test model run in every mode asked for.
struct ModelResult {
  std::string name, spec, version;
  std::vector<ModeResult> modes;
  double seconds = 0.0;
  /// failed if a mode failed, else skipped if a mode was skipped, else passed
  Verdict verdict = Verdict::kPassed;
  std::string message;  ///< "[mode] why" of the first failed (else skipped) mode
};

struct LoadError {
  std::string file, message;
};

void printTable(const char* title, const std::map<std::string, Tally>& table) {
  std::printf("\n%-32s %8s %8s\n", title, "passed", "failed");
  for (const auto& [name, tally] : table) {
    std::printf("%-32s %8zu %8zu\n", name.c_str(), tally.passed, tally.failed);
  }
}

std::vector<tools::CtsMode> modesFor(const std::string& mode) {
  if (mode == "sync") return {tools::CtsMode::kSynchronous};
  if (mode == "async") return {tools::CtsMode::kAsync};
  if (mode == "dynamic") return {tools::CtsMode::kDynamicOutputShape};
  if (mode == "burst") return {tools::CtsMode::kBurst};
  if (mode == "device-buffers") return {tools::CtsMode::kDeviceBuffers};
  if (mode == "fenced") return {tools::CtsMode::kFenced};
  return {tools::CtsMode::kSynchronous,        tools::CtsMode::kAsync,
          tools::CtsMode::kDynamicOutputShape, tools::CtsMode::kBurst,
          tools::CtsMode::kDeviceBuffers,      tools::CtsMode::kFenced};
}

/// Runs `cts` in every mode; prints a line per mode unless `silent` (a pass only if !quiet).
ModelResult runModel(Device& device, const tools::CtsModel& cts,
                     const std::vector<tools::CtsMode>& modes, const tools::CtsRunOptions& run,
                     bool silent, bool quiet) {
  ModelResult result{cts.name, cts.spec, cts.version, {}, 0.0, Verdict::kPassed, ""};
  const auto start = Clock::now();
  for (tools::CtsMode mode : modes) {
    tools::CtsOutcome outcome = tools::runCtsModel(device, cts, mode, run);
    if (!silent && (!outcome.passed || !quiet)) {
      const char* word = outcome.passed ? "PASS" : outcome.skipped ? "SKIP" : "FAIL";
      std::printf("%s %s/%s [%s]%s%s\n", word, cts.version.c_str(), cts.name.c_str(),
                  std::string(tools::toString(mode)).c_str(), outcome.passed ? "" : ": ",
                  outcome.message.c_str());
    }
    const Verdict verdict = verdictOf(outcome);
    const bool worse = verdict == Verdict::kFailed
                           ? result.verdict != Verdict::kFailed
                           : verdict == Verdict::kSkipped && result.verdict == Verdict::kPassed;
    if (worse) {
      result.verdict = verdict;
      result.message = "[" + std::string(tools::toString(mode)) + "] " + outcome.message;
    }
    result.modes.push_back({mode, std::move(outcome)});
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

nlohmann::json reportJson(const std::string& deviceName, const std::vector<tools::CtsMode>& modes,
                          const std::vector<ModelResult>& results,
                          const std::vector<LoadError>& loadErrors, double seconds) {
  size_t counts[3] = {0, 0, 0};
  nlohmann::json models = nlohmann::json::array();
  for (const ModelResult& result : results) {
    ++counts[static_cast<int>(result.verdict)];
    nlohmann::json perMode = nlohmann::json::array();
    for (const ModeResult& m : result.modes) {
      nlohmann::json entry = {{"mode", tools::toString(m.mode)},
                              {"outcome", toString(verdictOf(m.outcome))}};
      if (!m.outcome.passed) entry["message"] = m.outcome.message;
      perMode.push_back(std::move(entry));
    }
    nlohmann::json model = {{"name", result.name},
                            {"spec", result.spec},
                            {"version", result.version},
                            {"outcome", toString(result.verdict)},
                            {"timeMs", result.seconds * 1e3},
                            {"modes", std::move(perMode)}};
    if (result.verdict != Verdict::kPassed) model["message"] = result.message;
    models.push_back(std::move(model));
  }
  nlohmann::json modeNames = nlohmann::json::array();
  for (tools::CtsMode mode : modes) modeNames.push_back(tools::toString(mode));
  nlohmann::json errors = nlohmann::json::array();
  for (const LoadError& error : loadErrors) {
    errors.push_back({{"file", error.file}, {"message", error.message}});
  }
  return {{"device", deviceName},
          {"modes", std::move(modeNames)},
          {"totals",
           {{"models", results.size()},
            {"passed", counts[static_cast<int>(Verdict::kPassed)]},
            {"failed", counts[static_cast<int>(Verdict::kFailed)]},
            {"skipped", counts[static_cast<int>(Verdict::kSkipped)]},
            {"loadErrors", loadErrors.size()},
            {"durationMs", seconds * 1e3}}},
          {"models", std::move(models)},
          {"loadErrors", std::move(errors)}};
}

/// A suite per HAL version folder, a case per model (classname VERSION.SPEC); files that
/// did not load are error cases of a suite "load".
std::string reportJunit(const std::vector<ModelResult>& results,
                        const std::vector<LoadError>& loadErrors) {
  std::map<std::string, tools::JunitSuite> byVersion;
  for (const ModelResult& result : results) {
    tools::JunitSuite& suite = byVersion[result.version];
    suite.name = result.version;
    tools::JunitCase c;
    c.classname = result.version + "." + result.spec;
    c.name = result.name;
    c.seconds = result.seconds;
    c.outcome = result.verdict == Verdict::kPassed   ? tools::JunitCase::Outcome::kPassed
                : result.verdict == Verdict::kFailed ? tools::JunitCase::Outcome::kFailed
                                                     : tools::JunitCase::Outcome::kSkipped;
    c.message = result.message;
    for (const ModeResult& m : result.modes) {
      c.details += std::string(tools::toString(m.mode)) + ": " +
                   std::string(toString(verdictOf(m.outcome))) +
                   (m.outcome.passed ? "" : " - " + m.outcome.message) + "\n";
    }
    suite.cases.push_back(std::move(c));
  }
  std::vector<tools::JunitSuite> suites;
  for (auto& [version, suite] : byVersion) suites.push_back(std::move(suite));
  if (!loadErrors.empty()) {
    tools::JunitSuite load{"load", {}};
    for (const LoadError& error : loadErrors) {
      load.cases.push_back(
          {"load", error.file, 0.0, tools::JunitCase::Outcome::kError, error.message, ""});
    }
    suites.push_back(std::move(load));
  }
  return tools::junitXml("nnhal cts", suites);
}

}  // namespace

int runCts(const CtsArgs& args) {
  // The report file is opened first: a path that cannot be written is a usage error, found
  // before minutes of test models.
  std::ofstream junit;
  if (!args.junit.empty()) {
    junit.open(args.junit, std::ios::binary | std::ios::trunc);
    if (!junit) {
      std::fprintf(stderr, "nnhal: error: cannot write the JUnit report %s: %s\n",
                   args.junit.c_str(), std::strerror(errno));
      return 2;
    }
  }
  DeviceOptions options;
  options.kernelThreads = args.threads;
  auto device = openDevice(args.connect, options, args.device);
  if (!device) {
    std::fprintf(stderr, "nnhal: error: %s\n", device.error().message.c_str());
    return 1;
  }
  const auto modes = modesFor(args.mode);
  std::map<std::string, Tally> byOperation;
  std::map<std::string, Tally> byVersion;
  Tally total;
  size_t skipped = 0;
  std::vector<ModelResult> results;
  std::vector<LoadError> loadErrors;
  tools::CtsRunOptions run;
  run.poolKind = args.pool == "mmap_fd"                ? MemoryKind::MMAP_FD
                 : args.pool == "hardware_buffer_blob" ? MemoryKind::HARDWARE_BUFFER_BLOB
                                                       : MemoryKind::ASHMEM;
  const auto start = Clock::now();
  for (const std::string& path : args.paths) {
    for (const auto& file : tools::ctsFiles(path)) {
      auto models = tools::loadCtsFile(file);
      if (!models) {
        if (!args.json) {
          std::printf("ERROR %s: %s\n", file.c_str(), models.error().message.c_str());
        }
        loadErrors.push_back({file.string(), models.error().message});
        continue;
      }
      for (const tools::CtsModel& cts : *models) {
        if (!args.filter.empty() && cts.name.find(args.filter) == std::string::npos) continue;
        results.push_back(runModel(**device, cts, modes, run, args.json, args.quiet));
        const Verdict verdict = results.back().verdict;
        if (verdict == Verdict::kSkipped) {
          ++skipped;
          continue;
        }
        const bool passed = verdict == Verdict::kPassed;
        Tally& version = byVersion[cts.version];
        (passed ? version.passed : version.failed)++;
        (passed ? total.passed : total.failed)++;
        std::set<std::string> types;
        for (const Operation& operation : cts.model.main.operations) {
          types.insert(std::string(toString(operation.type)));
        }
        for (const std::string& type : types) {
          (passed ? byOperation[type].passed : byOperation[type].failed)++;
        }
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (args.json) {
    std::printf(
        "%s\n",
        reportJson((*device)->getName(), modes, results, loadErrors, seconds).dump(2).c_str());
  } else {
    printTable("operation type", byOperation);
    printTable("HAL version", byVersion);
    std::printf("\n%zu passed, %zu failed", total.passed, total.failed);
    if (skipped > 0) std::printf(", %zu skipped (unsupported)", skipped);
    std::printf(" (%zu test models x %zu modes, %.1f s)\n", results.size(), modes.size(), seconds);
    if (!loadErrors.empty()) std::printf("%zu files could not be loaded\n", loadErrors.size());
  }
  if (junit.is_open()) {
    junit << reportJunit(results, loadErrors);
    junit.close();
    if (!junit) {
      std::fprintf(stderr, "nnhal: error: writing the JUnit report %s failed\n",
                   args.junit.c_str());
      return 1;
    }
  }
  return total.failed == 0 && loadErrors.empty() && total.passed > 0 ? 0 : 1;
}

}  // namespace nnhal::cli
