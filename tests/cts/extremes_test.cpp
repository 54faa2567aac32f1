// The CTS models at the extremes, where integer overflow and out-of-range conversions hide
// (undefined behaviour that only UndefinedBehaviorSanitizer sees: scripts/asan.sh runs these
// suites for all four folders, at the machine's kernel level and at the scalar one). Neither
// compares results with the CTS's.
//
// QuantExtremes: every quantized model again with the outputs of its operations rescaled by
// 2^-30 (requantization multipliers near 2^30, which saturate) and by 2^30 (multipliers that
// round to zero), and with the zero points of every asymmetric operand at the ends of their
// range. The models stay valid or are refused at preparation; the driver must answer with a
// status and compute the same bytes twice, and answer again with its inputs at their extremes.
// fuzz_model found an overflow of PRELU's output offset only after 10^5 executions; this sweep
// finds it, and TRANSPOSE_CONV_2D's, at once.
//
// ExtremeInputs: every model with its inputs at the extremes of their types
// (tests/common/extreme_values.h), with its output shapes given and unknown.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/extreme_values.h"
#include "cts/cts_folder.h"
#include "hal/operand_utils.h"
#include "nnhal/device.h"
#include "tools/common/cts_model.h"

namespace nnhal::tools {
namespace {

/// The models of `folder` with a quantized operand.
std::vector<CtsEntry> quantizedModels(const std::string& folder) {
  std::vector<CtsEntry> entries = loadCtsFolder(folder);
  std::erase_if(entries, [](const CtsEntry& entry) {
    return std::ranges::none_of(entry.model->model.main.operands,
                                [](const Operand& o) { return hal::isQuantizedType(o.type); });
  });
  return entries;
}

class QuantExtremes : public CtsDeviceTest<> {};

TEST_P(QuantExtremes, AnswerAndRepeat) {
  const CtsModel& cts = *GetParam().model;
  for (testing::Extreme extreme : testing::kEveryExtreme) {
    SCOPED_TRACE(testing::toString(extreme));
    CtsModel changed = cts;
    if (testing::applyExtreme(extreme, changed.model) == 0) continue;
    auto request = ctsRequest(changed);
    ASSERT_TRUE(request) << request.error().message;
    auto prepared = device().prepareModel(changed.model);
    if (!prepared) {
      EXPECT_FALSE(prepared.error().message.empty());  // refused, with a reason
      continue;
    }
    const Memory& pool = std::get<Memory>(request->pools.at(0));
    auto first = (*prepared)->executeSynchronously(*request);
    const std::vector<uint8_t> firstBytes(pool.bytes().begin(), pool.bytes().end());
    auto second = (*prepared)->executeSynchronously(*request);
    ASSERT_EQ(first.has_value(), second.has_value());
    if (!first) {
      EXPECT_EQ(first.error().status, second.error().status) << first.error().message;
      EXPECT_FALSE(first.error().message.empty());
      continue;
    }
    const std::vector<uint8_t> secondBytes(pool.bytes().begin(), pool.bytes().end());
    EXPECT_EQ(firstBytes, secondBytes) << "two executions of one request differ";
    // And with every input at its type's extremes (8-bit values 0, 255, 128, 127).
    testing::fillInputsWithExtremes(changed.model, changed.inputs);
    auto extremeRequest = ctsRequest(changed);
    ASSERT_TRUE(extremeRequest) << extremeRequest.error().message;
    auto atLimits = (*prepared)->executeSynchronously(*extremeRequest);
    if (!atLimits) {
      EXPECT_FALSE(atLimits.error().message.empty());
    }
  }
}

class ExtremeInputs : public CtsDeviceTest<uint64_t{64} << 20> {};

// Every CTS model with its inputs at the extremes of their types: infinities, NaN and the
// largest floats reach every float-to-integer conversion (undefined behaviour out of range),
// the integer limits every index, size and axis argument given at execution. The answer is
// any status; an error has a message. Shapes, values and loops that would run long or
// allocate much are bounded by maxExecutionBytes and a short loop timeout.
TEST_P(ExtremeInputs, Answer) {
  CtsModel cts = *GetParam().model;
  testing::fillInputsWithExtremes(cts.model, cts.inputs);
  auto request = ctsRequest(cts);
  ASSERT_TRUE(request) << request.error().message;
  // As the CTS gives it, then with its output shapes unknown (the shapes then follow from
  // the inputs: sizes, multiples and paddings at the integer limits).
  for (bool unknownOutputShapes : {false, true}) {
    SCOPED_TRACE(unknownOutputShapes ? "output shapes unknown" : "output shapes given");
    Model model = cts.model;
    for (uint32_t index : model.main.outputIndexes) {
      for (uint32_t& d : model.main.operands[index].dimensions) d = unknownOutputShapes ? 0 : d;
    }
    auto prepared = device().prepareModel(std::move(model));
    if (!prepared) {  // only the models the CTS expects to fail are refused
      EXPECT_TRUE(cts.expectFailure) << prepared.error().message;
      return;
    }
    ExecuteOptions options;
    options.loopTimeout = std::chrono::milliseconds(20);
    auto result = (*prepared)->executeSynchronously(*request, options);
    if (!result) {
      EXPECT_FALSE(result.error().message.empty());
    }
  }
}

// Named as the Cts suite's folders (scripts/asan.sh runs all four under the sanitizers).
INSTANTIATE_TEST_SUITE_P(V1_0, QuantExtremes, ::testing::ValuesIn(quantizedModels("V1_0")),
                         ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_1, QuantExtremes, ::testing::ValuesIn(quantizedModels("V1_1")),
                         ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_2, QuantExtremes, ::testing::ValuesIn(quantizedModels("V1_2")),
                         ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_3, QuantExtremes, ::testing::ValuesIn(quantizedModels("V1_3")),
                         ctsTestName);

INSTANTIATE_TEST_SUITE_P(V1_0, ExtremeInputs, ::testing::ValuesIn(loadCtsFolder("V1_0")),
                         ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_1, ExtremeInputs, ::testing::ValuesIn(loadCtsFolder("V1_1")),
                         ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_2, ExtremeInputs, ::testing::ValuesIn(loadCtsFolder("V1_2")),
                         ctsTestName);
INSTANTIATE_TEST_SUITE_P(V1_3, ExtremeInputs, ::testing::ValuesIn(loadCtsFolder("V1_3")),
                         ctsTestName);

}  // namespace
}  // namespace nnhal::tools
