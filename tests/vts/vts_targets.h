// The devices the VTS-style suites run against: the embedded driver, a real nnhald over
// its socket, and (where the machine has a Vulkan device) the embedded GPU device. Each is created
// once per test binary, on first use; the CTS models are loaded once too.
#pragma once

#include <gtest/gtest.h>

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "ipc/ipc_test_util.h"
#include "nnhal/client.h"
#include "nnhal/device.h"
#include "nnhal/gpu_device.h"
#include "tools/common/cts_model.h"

namespace nnhal::testing {

enum class Target { kEmbedded, kRemote, kGpu };

inline const char* targetName(Target target) {
  return target == Target::kEmbedded ? "Embedded" : target == Target::kRemote ? "Remote" : "Gpu";
}

/// The embedded GPU device nnhal-vulkan (validation layer on), or null without a Vulkan
/// device, and in the sanitizer builds (the Vulkan driver's code and threads are not
/// instrumented): the tests then skip.
inline std::shared_ptr<Device> gpuDevice() {
  static const std::shared_ptr<Device> gpu = []() -> std::shared_ptr<Device> {
    if (ipc::testing::kUnderSanitizer) return nullptr;
    VulkanDeviceOptions options;
    options.validation = true;
    auto device = createVulkanDevice({}, options);
    return device ? *device : nullptr;
  }();
  return gpu;
}

/// The Device of `target`; fails the current test when it cannot be created.
inline std::shared_ptr<Device> deviceFor(Target target) {
  if (target == Target::kGpu) return gpuDevice();
  if (target == Target::kEmbedded) {
    static const std::shared_ptr<Device> embedded = [] {
      auto device = createDevice();
      return device ? *device : nullptr;
    }();
    EXPECT_NE(embedded, nullptr) << "createDevice failed";
    return embedded;
  }
  // One daemon for the whole binary.
  static ipc::testing::Daemon daemon;
  static const std::shared_ptr<Device> remote = [] {
    if (!daemon.running()) return std::shared_ptr<Device>();
    auto device = connect(daemon.socket());
    return device ? *device : nullptr;
  }();
  EXPECT_TRUE(daemon.running()) << "nnhald did not start";
  EXPECT_NE(remote, nullptr) << "connect to nnhald failed";
  return remote;
}

/// Every CTS model of ../shared/cts (loaded once).
inline const std::vector<std::shared_ptr<const tools::CtsModel>>& allCtsModels() {
  static const auto models = [] {
    std::vector<std::shared_ptr<const tools::CtsModel>> all;
    for (const auto& file : tools::ctsFiles(std::filesystem::path(NNHAL_SHARED_DIR) / "cts")) {
      auto loaded = tools::loadCtsFile(file);
      if (!loaded) continue;  // the CTS suite reports unreadable files
      for (tools::CtsModel& model : *loaded) {
        all.push_back(std::make_shared<const tools::CtsModel>(std::move(model)));
      }
    }
    return all;
  }();
  return models;
}

/// The models to validate. The VTS ValidationTest takes the valid ones without the variants
/// that move operands in or out of the graph's inputs (`inputs_as_internal`,
/// `all_tensors_as_inputs`); with `everyValid`, every valid model (all of them pass too).
inline std::vector<std::shared_ptr<const tools::CtsModel>> validationModels(bool everyValid) {
  std::vector<std::shared_ptr<const tools::CtsModel>> chosen;
  for (const auto& cts : allCtsModels()) {
    if (cts->expectFailure) continue;
    if (!everyValid && (cts->name.find("inputs_as_internal") != std::string::npos ||
                        cts->name.find("all_tensors_as_inputs") != std::string::npos)) {
      continue;
    }
    chosen.push_back(cts);
  }
  return chosen;
}

/// A GoogleTest-safe name.
inline std::string testNameOf(std::string name) {
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

/// What a prepareModel call produced: the launch status and the callback's result (a
/// callback that does not come within a minute counts as DEVICE_UNAVAILABLE, "hung").
struct PrepareOutcome {
  ErrorStatus launch = ErrorStatus::NONE;
  Result<std::shared_ptr<PreparedModel>> result;
};

inline PrepareOutcome prepareAndWait(Device& device, Model model, const PrepareOptions& options) {
  auto promise = std::make_shared<std::promise<Result<std::shared_ptr<PreparedModel>>>>();
  auto future = promise->get_future();
  PrepareOutcome outcome;
  outcome.launch = device.prepareModel(std::move(model), options,
                                       [promise](Result<std::shared_ptr<PreparedModel>> result) {
                                         promise->set_value(std::move(result));
                                       });
  if (future.wait_for(std::chrono::minutes(1)) != std::future_status::ready) {
    outcome.result = fail(ErrorStatus::DEVICE_UNAVAILABLE, "hung: no callback within a minute");
  } else {
    outcome.result = future.get();
  }
  return outcome;
}

}  // namespace nnhal::testing
