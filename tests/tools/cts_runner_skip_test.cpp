// tools/common/cts_runner.h: a CTS model whose preparation fails is skipped, not failed, only
// when the device reports an operation of it as unsupported (the VTS rule); a device that
// claims full support and then fails to prepare fails the model.
#include <gtest/gtest.h>

#include <memory>

#include "nnhal/device.h"
#include "tools/common/cts_model.h"
#include "tools/common/cts_runner.h"

namespace nnhal::tools {
namespace {

/// The embedded driver, except that every preparation fails and getSupportedOperations
/// reports every operation as `supported`.
class RefusingDevice final : public Device {
 public:
  RefusingDevice(std::shared_ptr<Device> real, bool supported)
      : real_(std::move(real)), supported_(supported) {}

  std::string getName() const override { return real_->getName(); }
  std::string getVersionString() const override { return real_->getVersionString(); }
  DeviceType getType() const override { return real_->getType(); }
  Capabilities getCapabilities() const override { return real_->getCapabilities(); }
  std::vector<Extension> getSupportedExtensions() const override {
    return real_->getSupportedExtensions();
  }
  NumberOfCacheFiles getNumberOfCacheFilesNeeded() const override {
    return real_->getNumberOfCacheFilesNeeded();
  }
  Result<std::vector<bool>> getSupportedOperations(const Model& model) const override {
    return std::vector<bool>(model.main.operations.size(), supported_);
  }
  Result<std::vector<std::string>> explainSupportedOperations(const Model& model) const override {
    return real_->explainSupportedOperations(model);
  }
  ErrorStatus prepareModel(Model, const PrepareOptions&, PrepareCallback callback) override {
    callback(fail(ErrorStatus::GENERAL_FAILURE, "refused by the test device"));
    return ErrorStatus::NONE;
  }
  ErrorStatus prepareModelFromCache(const CacheFiles& cache, OptionalTimePoint deadline,
                                    PrepareCallback callback) override {
    return real_->prepareModelFromCache(cache, deadline, std::move(callback));
  }
  Result<AllocatedBuffer> allocate(const BufferDesc& desc,
                                   const std::vector<std::shared_ptr<PreparedModel>>& prepared,
                                   const std::vector<BufferRole>& inputRoles,
                                   const std::vector<BufferRole>& outputRoles) override {
    return real_->allocate(desc, prepared, inputRoles, outputRoles);
  }
  using Device::prepareModel;
  using Device::prepareModelFromCache;

 private:
  std::shared_ptr<Device> real_;
  bool supported_;
};

CtsModel relu6Model() {
  auto models = loadCtsFile(std::string(NNHAL_SHARED_DIR) + "/cts/V1_0/relu6_float_1.json");
  EXPECT_TRUE(models);
  return models->front();
}

TEST(CtsRunnerSkipTest, AnUnsupportedModelThatFailsToPrepareIsSkipped) {
  auto real = createDevice();
  ASSERT_TRUE(real);
  RefusingDevice device(*real, /*supported=*/false);
  const CtsOutcome outcome = runCtsModel(device, relu6Model(), CtsMode::kSynchronous);
  EXPECT_FALSE(outcome.passed);
  EXPECT_TRUE(outcome.skipped);
  EXPECT_NE(outcome.message.find("unsupported operation"), std::string::npos) << outcome.message;
  EXPECT_NE(outcome.message.find("refused by the test device"), std::string::npos);
}

TEST(CtsRunnerSkipTest, ASupportedModelThatFailsToPrepareFails) {
  auto real = createDevice();
  ASSERT_TRUE(real);
  RefusingDevice device(*real, /*supported=*/true);
  const CtsOutcome outcome = runCtsModel(device, relu6Model(), CtsMode::kSynchronous);
  EXPECT_FALSE(outcome.passed);
  EXPECT_FALSE(outcome.skipped);
  EXPECT_NE(outcome.message.find("preparation failed"), std::string::npos) << outcome.message;
}

TEST(CtsRunnerSkipTest, TheEmbeddedDriverPassesTheModel) {
  auto real = createDevice();
  ASSERT_TRUE(real);
  const CtsOutcome outcome = runCtsModel(**real, relu6Model(), CtsMode::kSynchronous);
  EXPECT_TRUE(outcome.passed) << outcome.message;
  EXPECT_FALSE(outcome.skipped);
}

}  // namespace
}  // namespace nnhal::tools
