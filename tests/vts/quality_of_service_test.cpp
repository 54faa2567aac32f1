// VTS QualityOfServiceTests (DeadlineTest) as a sweep over the CTS models that are valid and
// prepare, on the embedded driver and through nnhald.
//
// runPrepareModelTests: priorities LOW and HIGH without a deadline must prepare (NONE, a
// prepared model); deadlines NOW, SHORT (now + 5 ms) and UNLIMITED (time_point::max()) must
// launch with NONE, and the callback gives NONE or MISSED_DEADLINE_* for NOW/SHORT, NONE for
// UNLIMITED, with a prepared model exactly when NONE.
// runExecutionTests: execute (callback) and executeSynchronously × {NOW, SHORT, UNLIMITED},
// MeasureTiming::NO, on one prepared model: the async launch status is NONE even when the
// deadline has passed; the outcome is NONE or MISSED_DEADLINE_* (NOW/SHORT), NONE
// (UNLIMITED); timing is kNoTiming; on NONE, output shapes are empty or one per output, each
// sufficient and equal to the CTS dimensions, and the outputs pass the CTS accuracy rules; on
// a missed deadline, no output shapes come back.
//
// Every valid CTS model (validationModels(true)), as the VTS runs DeadlineTest on every
// model that is not expectFailure; a model whose plain preparation fails is skipped, as the
// VTS skips models the driver does not support. Each case prepares its model five times (one
// per priority/deadline case; the priority LOW one doubles as the support check) and runs the
// six executions on one of those prepared models. The sweep takes about 10 s embedded and
// 20 s through nnhald; should it grow, validationModels(false) (without the
// inputs_as_internal / all_tensors_as_inputs variants) keeps 3924 of the 9066 models.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tools/common/cts_model.h"
#include "tools/common/cts_runner.h"
#include "vts/vts_targets.h"

namespace nnhal::testing {
namespace {

using Clock = std::chrono::steady_clock;

struct DeadlineCase {
  Target target;
  std::shared_ptr<const tools::CtsModel> cts;
};

void PrintTo(const DeadlineCase& c, std::ostream* os) {
  *os << targetName(c.target) << " " << c.cts->name;
}

std::vector<DeadlineCase> deadlineCases(Target target) {
  std::vector<DeadlineCase> cases;
  for (const auto& cts : validationModels(true)) cases.push_back({target, cts});
  return cases;
}

std::string deadlineName(const ::testing::TestParamInfo<DeadlineCase>& info) {
  return testNameOf(info.param.cts->name);
}

/// The VTS DeadlineBoundType.
enum class Bound { kNow, kShort, kUnlimited };
constexpr Bound kBounds[] = {Bound::kNow, Bound::kShort, Bound::kUnlimited};

const char* boundName(Bound bound) {
  switch (bound) {
    case Bound::kNow:
      return "NOW";
    case Bound::kShort:
      return "SHORT";
    case Bound::kUnlimited:
      return "UNLIMITED";
  }
  return "?";
}

Clock::time_point deadlineOf(Bound bound) {
  switch (bound) {
    case Bound::kNow:
      return Clock::now();
    case Bound::kShort:
      return Clock::now() + std::chrono::milliseconds(5);
    case Bound::kUnlimited:
      return Clock::time_point::max();
  }
  return Clock::now();
}

bool missedDeadline(ErrorStatus status) {
  return status == ErrorStatus::MISSED_DEADLINE_TRANSIENT ||
         status == ErrorStatus::MISSED_DEADLINE_PERSISTENT;
}

/// Judges one preparation: launch NONE; for no deadline or UNLIMITED, the callback gives
/// NONE, otherwise NONE or MISSED_DEADLINE_*; a prepared model iff NONE. Returns the prepared
/// model, if any.
std::shared_ptr<PreparedModel> judgePreparation(const PrepareOutcome& outcome,
                                                const PrepareOptions& options,
                                                std::optional<Bound> bound) {
  SCOPED_TRACE(std::string("prepareModel priority ") + std::string(toString(options.priority)) +
               " deadline " + (bound ? boundName(*bound) : "none"));
  EXPECT_EQ(outcome.launch, ErrorStatus::NONE);
  if (outcome.result) {
    EXPECT_NE(*outcome.result, nullptr);
    return *outcome.result;
  }
  const Error& error = outcome.result.error();
  const bool mayMiss = bound && *bound != Bound::kUnlimited;
  EXPECT_TRUE(mayMiss && missedDeadline(error.status))
      << toString(error.status) << ": " << error.message;
  return nullptr;
}

/// The preparations of the VTS after the first one (`low`, priority LOW, already made):
/// priority HIGH, then deadlines NOW, SHORT and UNLIMITED. Returns a prepared model for the
/// execution tests: the UNLIMITED one, or (when that failed) another that succeeded.
std::shared_ptr<PreparedModel> runPrepareModelTests(Device& device, const tools::CtsModel& cts,
                                                    const PrepareOptions& lowOptions,
                                                    const PrepareOutcome& low) {
  std::shared_ptr<PreparedModel> kept = judgePreparation(low, lowOptions, std::nullopt);
  PrepareOptions high;
  high.priority = Priority::HIGH;
  judgePreparation(prepareAndWait(device, cts.model, high), high, std::nullopt);
  for (Bound bound : kBounds) {
    PrepareOptions options;
    options.deadline = deadlineOf(bound);
    auto prepared = judgePreparation(prepareAndWait(device, cts.model, options), options, bound);
    if (prepared != nullptr && (bound == Bound::kUnlimited || kept == nullptr)) {
      kept = std::move(prepared);
    }
  }
  return kept;
}

/// Runs `cts` once on `prepared` with a deadline of `bound`, asynchronously or not, and
/// checks the outcome.
void checkExecution(PreparedModel& prepared, const tools::CtsModel& cts, bool async, Bound bound) {
  SCOPED_TRACE(std::string(async ? "execute" : "executeSynchronously") + " deadline " +
               boundName(bound));
  // A fresh request each time: outputs left by an earlier run cannot pass for this one's.
  auto request = tools::ctsRequest(cts);
  ASSERT_TRUE(request) << request.error().message;
  ExecuteOptions options;
  options.measure = MeasureTiming::NO;
  options.deadline = deadlineOf(bound);

  Result<ExecutionResult> result;
  if (async) {
    auto promise = std::make_shared<std::promise<Result<ExecutionResult>>>();
    auto future = promise->get_future();
    const ErrorStatus launch = prepared.execute(
        *request, options,
        [promise](Result<ExecutionResult> r) { promise->set_value(std::move(r)); });
    EXPECT_EQ(launch, ErrorStatus::NONE);
    ASSERT_EQ(future.wait_for(std::chrono::minutes(1)), std::future_status::ready)
        << "no callback within a minute";
    result = future.get();
  } else {
    result = prepared.executeSynchronously(*request, options);
  }

  if (!result) {
    const Error& error = result.error();
    EXPECT_TRUE(bound != Bound::kUnlimited && missedDeadline(error.status))
        << toString(error.status) << ": " << error.message;
    EXPECT_TRUE(error.outputShapes.empty());
    return;
  }
  EXPECT_EQ(result->timing.timeOnDevice, kNoTiming);
  EXPECT_EQ(result->timing.timeInDriver, kNoTiming);
  const std::vector<OutputShape>& shapes = result->outputShapes;
  const Subgraph& main = cts.model.main;
  ASSERT_TRUE(shapes.empty() || shapes.size() == main.outputIndexes.size())
      << shapes.size() << " output shapes for " << main.outputIndexes.size() << " outputs";
  for (size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_TRUE(shapes[i].isSufficient) << "output " << i;
    EXPECT_EQ(shapes[i].dimensions, main.operands[main.outputIndexes[i]].dimensions)
        << "output " << i;
  }
  const Memory& pool = std::get<Memory>(request->pools[0]);
  std::vector<std::vector<uint8_t>> actual;
  for (const RequestArgument& output : request->outputs) {
    const uint8_t* begin = pool.data() + output.location.offset;
    actual.emplace_back(begin, begin + output.location.length);
  }
  const std::string wrong = tools::judgeOutputs(cts, actual, shapes);
  EXPECT_TRUE(wrong.empty()) << wrong;
}

void runExecutionTests(PreparedModel& prepared, const tools::CtsModel& cts) {
  for (bool async : {true, false}) {
    for (Bound bound : kBounds) checkExecution(prepared, cts, async, bound);
  }
}

class DeadlineTest : public ::testing::TestWithParam<DeadlineCase> {};

TEST_P(DeadlineTest, Test) {
  const DeadlineCase& c = GetParam();
  const std::shared_ptr<Device> device = deviceFor(c.target);
  ASSERT_NE(device, nullptr);
  // The first case (priority LOW, no deadline) doubles as the check that the driver prepares
  // the model at all; only when it fails is a plain preparation tried, to tell a model the
  // driver does not prepare (skipped, as the VTS does) from a failure of priority LOW.
  PrepareOptions lowOptions;
  lowOptions.priority = Priority::LOW;
  const PrepareOutcome low = prepareAndWait(*device, c.cts->model, lowOptions);
  if (!low.result) {
    const PrepareOutcome plain = prepareAndWait(*device, c.cts->model, PrepareOptions{});
    if (!plain.result) {
      GTEST_SKIP() << "the driver does not prepare this model: "
                   << toString(plain.result.error().status) << " " << plain.result.error().message;
    }
  }
  // One prepared model serves every execution case.
  const std::shared_ptr<PreparedModel> prepared =
      runPrepareModelTests(*device, *c.cts, lowOptions, low);
  ASSERT_NE(prepared, nullptr) << "no preparation succeeded";
  runExecutionTests(*prepared, *c.cts);
}

INSTANTIATE_TEST_SUITE_P(Embedded, DeadlineTest,
                         ::testing::ValuesIn(deadlineCases(Target::kEmbedded)), deadlineName);
INSTANTIATE_TEST_SUITE_P(Remote, DeadlineTest, ::testing::ValuesIn(deadlineCases(Target::kRemote)),
                         deadlineName);

}  // namespace
}  // namespace nnhal::testing
