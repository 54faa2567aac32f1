// VTS ValidateRequest as a sweep: every valid CTS model is prepared, and each of
// its requests with one input (removeInputTest) or one output (removeOutputTest) left out
// must be refused with INVALID_ARGUMENT on the synchronous, callback, burst and fenced paths,
// on the embedded driver and through nnhald: nothing runs, no output shape comes back. After
// each burst refusal, as the VTS does, a valid freeMemory, a free of an unknown memory and a
// double free must break nothing.
#include <gtest/gtest.h>

#include <future>

#include "nnhal/burst.h"
#include "tools/common/cts_model.h"
#include "vts/vts_targets.h"

namespace nnhal::testing {
namespace {

struct RequestCase {
  Target target;
  std::shared_ptr<const tools::CtsModel> cts;
};

void PrintTo(const RequestCase& c, std::ostream* os) {
  *os << targetName(c.target) << " " << c.cts->name;
}

std::vector<RequestCase> requestCases(Target target) {
  std::vector<RequestCase> cases;
  for (const auto& cts : validationModels(true)) cases.push_back({target, cts});
  return cases;
}

std::string requestName(const ::testing::TestParamInfo<RequestCase>& info) {
  return testNameOf(info.param.cts->name);
}

/// Runs `request` on the four paths; returns what went wrong on each ("" when all four
/// refused it with INVALID_ARGUMENT and nothing else).
std::string refusedEverywhere(PreparedModel& prepared, Burst& burst, const Request& request,
                              MeasureTiming measure) {
  std::string problems;
  ExecuteOptions options;
  options.measure = measure;
  auto sync = prepared.executeSynchronously(request, options);
  if (sync) {
    problems += " [executeSynchronously]: returned NONE;";
  } else if (sync.error().status != ErrorStatus::INVALID_ARGUMENT ||
             !sync.error().outputShapes.empty()) {
    problems += " [executeSynchronously]: " + std::string(toString(sync.error().status)) + " " +
                sync.error().message + ";";
  }

  auto promise = std::make_shared<std::promise<Result<ExecutionResult>>>();
  auto future = promise->get_future();
  const ErrorStatus launch = prepared.execute(
      request, options, [promise](Result<ExecutionResult> r) { promise->set_value(std::move(r)); });
  if (launch != ErrorStatus::INVALID_ARGUMENT) {
    problems += " [execute]: launch status " + std::string(toString(launch)) + ";";
  }
  if (future.wait_for(std::chrono::minutes(1)) != std::future_status::ready) {
    problems += " [execute]: no callback within a minute;";
  } else {
    auto result = future.get();
    if (result || result.error().status != ErrorStatus::INVALID_ARGUMENT) {
      problems += " [execute]: callback status " +
                  std::string(result ? "NONE" : toString(result.error().status)) + ";";
    }
  }

  auto viaBurst = burst.execute(request, measure);
  if (viaBurst) {
    problems += " [burst]: returned NONE;";
  } else if (viaBurst.error().status != ErrorStatus::INVALID_ARGUMENT ||
             !viaBurst.error().outputShapes.empty()) {
    problems += " [burst]: " + std::string(toString(viaBurst.error().status)) + " " +
                viaBurst.error().message + ";";
  }
  for (const RequestMemoryPool& pool : request.pools) {
    if (const auto* memory = std::get_if<Memory>(&pool)) {
      burst.freeMemory(*memory);
      burst.freeMemory(*memory);
    }
  }
  burst.freeMemory(*Memory::create(16));

  auto fenced = prepared.executeFenced(request, {}, options);
  if (fenced) {
    problems += " [executeFenced]: launched;";
  } else if (fenced.error().status != ErrorStatus::INVALID_ARGUMENT) {
    problems += " [executeFenced]: " + std::string(toString(fenced.error().status)) + " " +
                fenced.error().message + ";";
  }
  return problems;
}

class ValidateRequest : public ::testing::TestWithParam<RequestCase> {};

TEST_P(ValidateRequest, RemovedArgumentsAreRefused) {
  const RequestCase& c = GetParam();
  const std::shared_ptr<Device> device = deviceFor(c.target);
  ASSERT_NE(device, nullptr);
  PrepareOutcome prepared = prepareAndWait(*device, c.cts->model, PrepareOptions{});
  ASSERT_TRUE(prepared.result) << prepared.result.error().message;
  auto request = tools::ctsRequest(*c.cts);
  ASSERT_TRUE(request) << request.error().message;
  auto burst = (*prepared.result)->configureExecutionBurst();
  ASSERT_TRUE(burst) << burst.error().message;
  // The VTS picks MeasureTiming from a hash of the test; alternate between the two.
  size_t variant = 0;
  for (size_t i = 0; i < request->inputs.size(); ++i) {
    Request mutated = *request;
    mutated.inputs.erase(mutated.inputs.begin() + static_cast<ptrdiff_t>(i));
    const MeasureTiming measure = variant++ % 2 == 0 ? MeasureTiming::NO : MeasureTiming::YES;
    const std::string problems = refusedEverywhere(**prepared.result, **burst, mutated, measure);
    EXPECT_TRUE(problems.empty()) << "removeInputTest: removed input " << i << problems;
  }
  for (size_t i = 0; i < request->outputs.size(); ++i) {
    Request mutated = *request;
    mutated.outputs.erase(mutated.outputs.begin() + static_cast<ptrdiff_t>(i));
    const MeasureTiming measure = variant++ % 2 == 0 ? MeasureTiming::NO : MeasureTiming::YES;
    const std::string problems = refusedEverywhere(**prepared.result, **burst, mutated, measure);
    EXPECT_TRUE(problems.empty()) << "removeOutputTest: removed output " << i << problems;
  }
}

INSTANTIATE_TEST_SUITE_P(Embedded, ValidateRequest,
                         ::testing::ValuesIn(requestCases(Target::kEmbedded)), requestName);
INSTANTIATE_TEST_SUITE_P(Remote, ValidateRequest,
                         ::testing::ValuesIn(requestCases(Target::kRemote)), requestName);

}  // namespace
}  // namespace nnhal::testing
