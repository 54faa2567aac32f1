// VTS ValidateModel as a sweep: every one of the 22 mutation families applied to every valid
// CTS model on the embedded driver, and to every model the VTS validates through nnhald. One test
// case per model and family (Embedded/ValidateModel.Rejects/<family>__<model>), so a failure names
// both. Each mutation must get INVALID_ARGUMENT from getSupportedOperations (when the
// preference and priority are valid), as prepareModel's launch status and from its callback,
// with no prepared model.
#include <gtest/gtest.h>

#include <iostream>

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

/// Embedded: every valid CTS model (9,066). Through nnhald, where each mutation costs two
/// round trips: the models the VTS itself validates (3,924).
std::vector<SweepCase> sweepCases(Target target) {
  std::vector<SweepCase> cases;
  for (const auto& cts : validationModels(target == Target::kEmbedded)) {
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

// The sweep cannot pass by generating nothing: every family mutates some CTS model, and the
// counts of a small model are the VTS's (4 invalid types per operand, 2 zero points per
// TENSOR_QUANT8_ASYMM operand, ...). Prints the number of mutations per family.
TEST(ValidateModelFamilies, EveryFamilyMutates) {
  size_t total = 0;
  for (MutationFamily family : kAllMutationFamilies) {
    size_t count = 0;
    for (const auto& cts : validationModels(false)) count += mutationsOf(family, cts->model).size();
    EXPECT_GT(count, 0u) << familyName(family);
    std::cout << "[ mutations ] " << familyName(family) << ": " << count << "\n";
    total += count;
  }
  std::cout << "[ mutations ] total: " << total << "\n";
  RecordProperty("mutations", static_cast<int>(total));
}

TEST(ValidateModelFamilies, CountsFollowTheVts) {
  // ADD(a, b, activation) -> out: 3 tensors and 1 INT32 scalar, one operation.
  Model model;
  for (int i = 0; i < 4; ++i) {
    Operand operand;
    operand.type = i == 2 ? OperandType::INT32 : OperandType::TENSOR_QUANT8_ASYMM;
    operand.dimensions = i == 2 ? std::vector<uint32_t>{} : std::vector<uint32_t>{2};
    operand.scale = i == 2 ? 0.0f : 0.5f;
    operand.numberOfConsumers = i == 3 ? 0 : 1;
    operand.lifetime = i == 3 ? OperandLifeTime::SUBGRAPH_OUTPUT : OperandLifeTime::SUBGRAPH_INPUT;
    model.main.operands.push_back(operand);
  }
  model.main.operations = {{OperationType::ADD, {0, 1, 2}, {3}}};
  model.main.inputIndexes = {0, 1, 2};
  model.main.outputIndexes = {3};
  auto count = [&](MutationFamily family) { return mutationsOf(family, model).size(); };
  EXPECT_EQ(count(MutationFamily::kOperandType), 16u);              // 4 operands x 4 values
  EXPECT_EQ(count(MutationFamily::kOperandRank), 1u);               // the INT32 scalar
  EXPECT_EQ(count(MutationFamily::kOperandScale), 4u);              // one per operand
  EXPECT_EQ(count(MutationFamily::kOperandZeroPoint), 7u);          // 3 x {-1, 256} + INT32 {1}
  EXPECT_EQ(count(MutationFamily::kOperandNumberOfConsumers), 7u);  // 3 x {n-1, n+1} + {1}
  EXPECT_EQ(count(MutationFamily::kOperationType), 3u);
  EXPECT_EQ(count(MutationFamily::kOperationInputOperandIndex), 3u);
  EXPECT_EQ(count(MutationFamily::kRemoveOperand), 3u);  // not the unread output
  EXPECT_EQ(count(MutationFamily::kExecutionPreference), 2u);
  EXPECT_EQ(count(MutationFamily::kExecutionPriority), 2u);
  const auto removed = mutationsOf(MutationFamily::kRemoveOperand, model);
  // As in the VTS: operand 0 removed, the larger indexes keep their values.
  EXPECT_EQ(removed[0].model.main.operations[0].inputs, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(removed[0].model.main.operands.size(), 3u);
}

INSTANTIATE_TEST_SUITE_P(Embedded, ValidateModel,
                         ::testing::ValuesIn(sweepCases(Target::kEmbedded)), sweepName);
INSTANTIATE_TEST_SUITE_P(Remote, ValidateModel, ::testing::ValuesIn(sweepCases(Target::kRemote)),
                         sweepName);

}  // namespace
}  // namespace nnhal::testing
