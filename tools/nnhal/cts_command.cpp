#include "tools/nnhal/cts_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "nnhal/client.h"
#include "nnhal/device.h"
#include "tools/common/cts_model.h"
#include "tools/common/cts_runner.h"

namespace nnhal::cli {
namespace {

struct Tally {
  size_t passed = 0;
  size_t failed = 0;
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
  return {tools::CtsMode::kSynchronous, tools::CtsMode::kAsync, tools::CtsMode::kDynamicOutputShape,
          tools::CtsMode::kBurst, tools::CtsMode::kDeviceBuffers};
}

}  // namespace

int runCts(const CtsArgs& args) {
  DeviceOptions options;
  options.kernelThreads = args.threads;
  auto device = args.connect.empty() ? createDevice(options) : connect(args.connect);
  if (!device) {
    std::fprintf(stderr, "nnhal: error: %s\n", device.error().message.c_str());
    return 1;
  }
  const auto modes = modesFor(args.mode);
  std::map<std::string, Tally> byOperation;
  std::map<std::string, Tally> byVersion;
  Tally total;
  size_t loadErrors = 0;
  const auto start = std::chrono::steady_clock::now();
  for (const std::string& path : args.paths) {
    for (const auto& file : tools::ctsFiles(path)) {
      auto models = tools::loadCtsFile(file);
      if (!models) {
        std::printf("ERROR %s: %s\n", file.c_str(), models.error().message.c_str());
        ++loadErrors;
        continue;
      }
      for (const tools::CtsModel& cts : *models) {
        if (!args.filter.empty() && cts.name.find(args.filter) == std::string::npos) continue;
        bool passed = true;
        for (tools::CtsMode mode : modes) {
          const tools::CtsOutcome outcome = tools::runCtsModel(**device, cts, mode);
          if (!outcome.passed || !args.quiet) {
            std::printf("%s %s/%s [%s]%s%s\n", outcome.passed ? "PASS" : "FAIL",
                        cts.version.c_str(), cts.name.c_str(),
                        std::string(tools::toString(mode)).c_str(), outcome.passed ? "" : ": ",
                        outcome.message.c_str());
          }
          passed &= outcome.passed;
        }
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
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  printTable("operation type", byOperation);
  printTable("HAL version", byVersion);
  std::printf("\n%zu passed, %zu failed (%zu test models x %zu modes, %.1f s)\n", total.passed,
              total.failed, total.passed + total.failed, modes.size(), seconds);
  if (loadErrors > 0) std::printf("%zu files could not be loaded\n", loadErrors);
  return total.failed == 0 && loadErrors == 0 && total.passed > 0 ? 0 : 1;
}

}  // namespace nnhal::cli
