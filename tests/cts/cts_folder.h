// tests/cts/cts_folder.h — the CTS test models of one folder of shared/cts as GoogleTest
// parameters, and the fixture that gives their suites a device, shared by the suites of
// tests/cts/. Each folder is loaded once per process.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nnhal/device.h"
#include "tools/common/cts_model.h"

namespace nnhal::tools {

struct CtsEntry {
  std::shared_ptr<const CtsModel> model;
};

/// Every model of shared/cts/`folder` (V1_0 ...), in file order.
inline std::vector<CtsEntry> loadCtsFolder(const std::string& folder) {
  static std::map<std::string, std::vector<CtsEntry>> loaded;
  if (auto known = loaded.find(folder); known != loaded.end()) return known->second;
  std::vector<CtsEntry> entries;
  for (const std::filesystem::path& file :
       ctsFiles(std::filesystem::path(NNHAL_SHARED_DIR) / "cts" / folder)) {
    auto models = loadCtsFile(file);
    if (!models) {
      ADD_FAILURE() << models.error().message;
      continue;
    }
    for (CtsModel& model : *models) {
      entries.push_back({std::make_shared<const CtsModel>(std::move(model))});
    }
  }
  return loaded[folder] = entries;
}

/// The test's name: the model's, with every character other than a letter or digit as '_'.
inline std::string ctsTestName(const ::testing::TestParamInfo<CtsEntry>& info) {
  std::string name = info.param.model->name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

/// A suite of CTS models on one embedded CPU device, made before the suite's first test
/// and destroyed after its last, with `MaxExecutionBytes` as DeviceOptions::maxExecutionBytes.
template <uint64_t MaxExecutionBytes = 0>
class CtsDeviceTest : public ::testing::TestWithParam<CtsEntry> {
 protected:
  static void SetUpTestSuite() {
    DeviceOptions options;
    options.maxExecutionBytes = MaxExecutionBytes;
    auto device = createDevice(options);
    ASSERT_TRUE(device) << device.error().message;
    device_ = std::move(*device);
  }
  static void TearDownTestSuite() { device_.reset(); }
  static Device& device() { return *device_; }

 private:
  static inline std::shared_ptr<Device> device_;
};

}  // namespace nnhal::tools
