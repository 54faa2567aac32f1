// VTS ValidateModel as a sweep: every one of the 22 mutation families applied to every CTS
// model the VTS validates, on the embedded driver and through nnhald. One test case per
// model and family (Embedded/ValidateModel.Rejects/<family>__<model>), so a failure names
// both. Each mutation must get INVALID_ARGUMENT from getSupportedOperations (when the
// preference and priority are valid), as prepareModel's launch status and from its callback,
// with no prepared model.
#include <gtest/gtest.h>

#include "vts/vts_model_mutations.h"
#include "vts/vts_targets.h"

namespace nnhal::testing {
namespace {

struct SweepCase {
  Target target;
  std::shared_ptr<const tools::CtsModel> cts;
  MutationFamily family;
};

void PrintTo(const SweepCase& c, std::ostream* os) {
  *os << targetName(c.target) << " " << familyName(c.family) << " of " << c.cts->name;
}

std::vector<SweepCase> sweepCases(Target target) {
  std::vector<SweepCase> cases;
  for (const auto& cts : vtsValidationModels()) {
    for (MutationFamily family : kAllMutationFamilies) cases.push_back({target, cts, family});
  }
  return cases;
}

std::string sweepName(const ::testing::TestParamInfo<SweepCase>& info) {
  return familyName(info.param.family) + "__" + testNameOf(info.param.cts->name);
}

class ValidateModel : public ::testing::TestWithParam<SweepCase> {};

// At most this many failing mutations are reported per case; the rest only counted.
constexpr size_t kReportedFailures = 5;

TEST_P(ValidateModel, Rejects) {
  const SweepCase& c = GetParam();
  const std::shared_ptr<Device> device = deviceFor(c.target);
  ASSERT_NE(device, nullptr);
  size_t failures = 0;
  auto report = [&](const std::string& what) {
    if (++failures <= kReportedFailures) ADD_FAILURE() << what;
  };
  for (ModelMutation& m : mutationsOf(c.family, c.cts->model)) {
    if (m.checkSupported()) {
      auto supported = device->getSupportedOperations(m.model);
      if (supported) {
        report(m.description + " [getSupportedOperations]: returned NONE");
      } else if (supported.error().status != ErrorStatus::INVALID_ARGUMENT) {
        report(m.description + " [getSupportedOperations]: " +
               std::string(toString(supported.error().status)) + " " + supported.error().message);
      }
    }
    PrepareOptions options;
    options.preference = m.preference;
    options.priority = m.priority;
    PrepareOutcome outcome = prepareAndWait(*device, std::move(m.model), options);
    if (outcome.launch != ErrorStatus::INVALID_ARGUMENT) {
      report(m.description + " [prepareModel]: launch status " +
             std::string(toString(outcome.launch)));
    }
    if (outcome.result) {
      report(m.description + " [prepareModel]: the callback got a prepared model");
    } else if (outcome.result.error().status != ErrorStatus::INVALID_ARGUMENT) {
      report(m.description + " [prepareModel]: callback status " +
             std::string(toString(outcome.result.error().status)) + " " +
             outcome.result.error().message);
    }
  }
  EXPECT_EQ(failures, 0u) << failures << " mutations were not refused";
}

INSTANTIATE_TEST_SUITE_P(Embedded, ValidateModel,
                         ::testing::ValuesIn(sweepCases(Target::kEmbedded)), sweepName);
INSTANTIATE_TEST_SUITE_P(Remote, ValidateModel, ::testing::ValuesIn(sweepCases(Target::kRemote)),
                         sweepName);

}  // namespace
}  // namespace nnhal::testing
