// engine/compiler.h — compile a validated Model into an ExecutionPlan.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "engine/execution_plan.h"
#include "engine/prepared_state.h"
#include "engine/yield_point.h"
#include "nnhal/status.h"
#include "nnhal/types.h"

namespace nnhal::engine {

/// Checks everything compile() checks (each operation's operand types, ranks, parameter
/// values and the shapes it infers, in every subgraph) without the heavy work (weight
/// packing, arena planning), so that prepareModel can refuse an invalid model at launch.
/// The model must already have passed hal::validateModel.
/// Errors: INVALID_ARGUMENT naming the subgraph, the operation index and type, and the rule,
/// e.g. "main operation 2 (ADD): ADD input 1: shapes [2,3] and [4] do not broadcast".
Result<void> checkModel(const Model& model);

/// For each operation of model.main, an empty string if the engine can run it, otherwise
/// why not ("no implementation of OEM_OPERATION"). The model must already have passed
/// hal::validateModel. Errors: INVALID_ARGUMENT, as checkModel, when the model is invalid
/// (the NN HAL wants getSupportedOperations to fail then, not to report "unsupported").
Result<std::vector<std::string>> explainSupport(const Model& model);

/// Options of compile().
struct CompileOptions {
  CompileOptions(PreparedStateStore* stateStore = nullptr,  // NOLINT: {&state} reads well
                 OptionalTimePoint until = {}, YieldPoint* yieldPoint = nullptr)
      : state(stateStore), deadline(until), yield(yieldPoint) {}
  /// Compilation caching: a store in save mode collects the operations' precomputed state;
  /// one in restore mode hands restored state back to them (its retained owners move into
  /// the plan). Null: neither.
  PreparedStateStore* state = nullptr;
  /// Checked before each operation is prepared: once it has passed, compilation stops with
  /// MISSED_DEADLINE_TRANSIENT instead of preparing the rest.
  OptionalTimePoint deadline;
  /// Called between operations (may be null): engine/yield_point.h.
  YieldPoint* yield = nullptr;
};

/// Compiles `model` (already validated): propagates shapes through the main subgraph,
/// prepares every operation's Kernel (all heavy work: multipliers, weight packing), copies
/// small constants to aligned storage and plans the arena of temporaries.
/// Errors: INVALID_ARGUMENT for an invalid or unsupported operation or operand (the message
/// names the operation index and type), as checkModel reports them;
/// GENERAL_FAILURE in restore mode when a required restored state was rejected (its
/// replaced constants are not in the model, so preparing without it would compute garbage);
/// MISSED_DEADLINE_TRANSIENT when options.deadline passed before the last operation.
Result<std::unique_ptr<ExecutionPlan>> compile(Model model, const CompileOptions& options = {});

}  // namespace nnhal::engine
