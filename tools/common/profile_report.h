// tools/common/profile_report.h — per-operation profiles of executions (ExecuteOptions::
// profile) as a table, like TFLite's benchmark_model op profiling, and as a Chrome trace.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "nnhal/prepared_model.h"

namespace nnhal::tools {

/// One operation's median time over the profiled runs.
struct OperationSummary {
  uint32_t step = 0;
  OperationType type = OperationType::ADD;
  double medianUs = 0;  ///< µs
  double share = 0;     ///< of the sum of the operations' medians, 0..1
};

/// The operations of one type together.
struct TypeSummary {
  OperationType type = OperationType::ADD;
  size_t count = 0;    ///< operations of this type in the model
  double totalUs = 0;  ///< sum of their medians, µs
  double share = 0;    ///< 0..1
};

struct ProfileSummary {
  size_t runs = 0;
  double totalUs = 0;                        ///< sum of the operations' medians, µs
  std::vector<OperationSummary> operations;  ///< in execution order
  std::vector<TypeSummary> types;            ///< slowest first
};

/// Summarizes runs of the same model (each profile lists the same steps in the same order;
/// a run with a different number of operations is not counted). Empty for no runs.
ProfileSummary summarizeProfiles(const std::vector<ExecutionProfile>& runs);

/// How an operation type is named in reports: "CONV_2D"; an extension operation by its
/// extension (looked up in `extensions`, the model's Model::extensionNameToPrefix) and its
/// name when the extension is nnhal's own, "org.nnhal.tflite_compat:GATHER_ND", else by
/// number, "com.example.ext:7"; "extension 0x10007:7" for a prefix the model does not name.
std::string operationLabel(OperationType type,
                           const std::vector<ExtensionNameAndPrefix>& extensions = {});

/// The summary as the text table `nnhal run --profile` prints (operations, then types);
/// `extensions` names extension operations (operationLabel).
std::string formatProfile(const ProfileSummary& summary,
                          const std::vector<ExtensionNameAndPrefix>& extensions = {});

/// Chrome trace JSON (the Trace Event Format; opens in Perfetto and chrome://tracing): one
/// complete event ("ph": "X") per operation of each run, timestamps in µs, run r placed at
/// runStartUs[r] (runStartUs has one entry per run).
nlohmann::json chromeTrace(const std::vector<ExecutionProfile>& runs,
                           const std::vector<double>& runStartUs, const std::string& modelName,
                           const std::vector<ExtensionNameAndPrefix>& extensions = {});

}  // namespace nnhal::tools
