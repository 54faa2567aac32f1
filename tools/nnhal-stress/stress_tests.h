// nnhal-stress/stress_tests.h — the tests (one function each) and what they share.
#pragma once

#include <memory>
#include <string>

#include "nnhal-stress/stress_test.h"
#include "nnhal-stress/workload.h"
#include "nnhal/device.h"

namespace nnhal::stress {

/// A connection to the daemon under test, named for its logs.
Result<std::shared_ptr<Device>> connectClient(const TestContext& context, const std::string& name);

Outcome parallelInference(TestContext& context);
Outcome memoryMappedModelLoad(TestContext& context);
Outcome performanceDegradation(TestContext& context);
Outcome clientEarlyTermination(TestContext& context);
Outcome multiProcessInference(TestContext& context);
Outcome multiProcessModelLoad(TestContext& context);
Outcome randomGraphs(TestContext& context);

}  // namespace nnhal::stress
