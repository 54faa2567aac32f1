// The 22 mutation families of the NN HAL 1.3 VTS ValidateModel test
// (../shared/VTS_CATALOGUE.md, "ValidateModel"): each turns a valid model into one that
// getSupportedOperations and prepareModel must refuse with INVALID_ARGUMENT. The rules
// (which values, which operands, which cases are skipped) are the VTS's; the mutations apply
// to the main subgraph, as there.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nnhal/types.h"

namespace nnhal::testing {

/// One invalid variant of a model: the model with the preference and priority to prepare it.
struct ModelMutation {
  std::string description;  ///< e.g. "mutateOperandTypeTest: operand 3 set to value 16"
  Model model;
  ExecutionPreference preference = ExecutionPreference::FAST_SINGLE_ANSWER;
  Priority priority = Priority::MEDIUM;
  /// getSupportedOperations is only asked when preference and priority are valid.
  bool checkSupported() const {
    const auto p = static_cast<int32_t>(preference);
    const auto q = static_cast<int32_t>(priority);
    return p >= 0 && p <= 2 && q >= 0 && q <= 2;
  }
};

/// The families, in the VTS's order.
enum class MutationFamily {
  kExecutionOrder,
  kOperandType,
  kOperandRank,
  kOperandScale,
  kOperandZeroPoint,
  kOperandLifeTime,
  kOperandInputOutput,
  kOperandNumberOfConsumers,
  kOperandAddWriter,
  kOperationOperandType,
  kOperationType,
  kOperationInputOperandIndex,
  kOperationOutputOperandIndex,
  kOperationRemoveWrite,
  kRemoveOperand,
  kRemoveOperation,
  kRemoveOperationInput,
  kRemoveOperationOutput,
  kAddOperationInput,
  kAddOperationOutput,
  kExecutionPreference,
  kExecutionPriority,
};

inline constexpr MutationFamily kAllMutationFamilies[] = {
    MutationFamily::kExecutionOrder,
    MutationFamily::kOperandType,
    MutationFamily::kOperandRank,
    MutationFamily::kOperandScale,
    MutationFamily::kOperandZeroPoint,
    MutationFamily::kOperandLifeTime,
    MutationFamily::kOperandInputOutput,
    MutationFamily::kOperandNumberOfConsumers,
    MutationFamily::kOperandAddWriter,
    MutationFamily::kOperationOperandType,
    MutationFamily::kOperationType,
    MutationFamily::kOperationInputOperandIndex,
    MutationFamily::kOperationOutputOperandIndex,
    MutationFamily::kOperationRemoveWrite,
    MutationFamily::kRemoveOperand,
    MutationFamily::kRemoveOperation,
    MutationFamily::kRemoveOperationInput,
    MutationFamily::kRemoveOperationOutput,
    MutationFamily::kAddOperationInput,
    MutationFamily::kAddOperationOutput,
    MutationFamily::kExecutionPreference,
    MutationFamily::kExecutionPriority,
};

/// The VTS test name of a family, e.g. "mutateOperandTypeTest".
std::string familyName(MutationFamily family);

/// Every mutation of `family` applied to `model` (a valid model). May be empty when the
/// family does not apply (e.g. no scalar operand for the rank mutation).
std::vector<ModelMutation> mutationsOf(MutationFamily family, const Model& model);

}  // namespace nnhal::testing
