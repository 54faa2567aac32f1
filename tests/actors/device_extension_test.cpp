// The org.nnhal.tflite_compat extension through the in-process device: getSupportedExtensions,
// getSupportedOperations, preparation, execution and every refusal (common/tflite_compat_checks.h).
#include <gtest/gtest.h>

#include "common/tflite_compat_checks.h"
#include "nnhal/device.h"

namespace nnhal {
namespace {

class DeviceExtensionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto device = createDevice({});
    ASSERT_TRUE(device) << device.error().message;
    device_ = *device;
  }
  std::shared_ptr<Device> device_;
};

TEST_F(DeviceExtensionTest, ListsTheExtension) { testing::expectListsTfliteCompat(*device_); }

TEST_F(DeviceExtensionTest, PreparesAndRunsExtensionOperationsUnderAnyPrefix) {
  testing::expectRunsTfliteCompat(*device_);
}

TEST_F(DeviceExtensionTest, RefusesModelsTheExtensionRulesForbid) {
  testing::expectRefusesBadTfliteCompatModels(*device_);
}

}  // namespace
}  // namespace nnhal
