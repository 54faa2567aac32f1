#include "tools/common/profile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "nnhal/tflite_compat_extension.h"

namespace nnhal::tools {

namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

}  // namespace

std::string operationLabel(OperationType type,
                           const std::vector<ExtensionNameAndPrefix>& extensions) {
  const auto code = static_cast<uint32_t>(type);
  const uint16_t prefix = extensionPrefixOf(code);
  if (prefix == 0) return std::string(toString(type));
  const uint16_t within = extensionTypeOf(code);
  const auto named = std::ranges::find(extensions, prefix, &ExtensionNameAndPrefix::prefix);
  if (named == extensions.end()) return fmt::format("extension {:#x}:{}", code, within);
  if (named->name == tflite_compat::kExtensionName) {
    const std::string_view name = tflite_compat::operationName(within);
    if (!name.empty()) return fmt::format("{}:{}", named->name, name);
  }
  return fmt::format("{}:{}", named->name, within);
}

ProfileSummary summarizeProfiles(const std::vector<ExecutionProfile>& runs) {
  ProfileSummary summary;
  if (runs.empty()) return summary;
  const std::vector<OperationTiming>& first = runs.front().operations;
  std::vector<std::vector<double>> times(first.size());
  for (const ExecutionProfile& run : runs) {
    if (run.operations.size() != first.size()) continue;
    ++summary.runs;
    for (size_t i = 0; i < first.size(); ++i) {
      times[i].push_back(static_cast<double>(run.operations[i].durationNs) / 1000.0);
    }
  }
  std::map<OperationType, TypeSummary> byType;
  for (size_t i = 0; i < first.size(); ++i) {
    OperationSummary op{first[i].step, first[i].type, median(times[i]), 0};
    summary.totalUs += op.medianUs;
    TypeSummary& t = byType[op.type];
    t.type = op.type;
    ++t.count;
    t.totalUs += op.medianUs;
    summary.operations.push_back(op);
  }
  const double total = summary.totalUs > 0 ? summary.totalUs : 1;
  for (OperationSummary& op : summary.operations) op.share = op.medianUs / total;
  for (auto& [type, t] : byType) {
    t.share = t.totalUs / total;
    summary.types.push_back(t);
  }
  std::stable_sort(
      summary.types.begin(), summary.types.end(),
      [](const TypeSummary& a, const TypeSummary& b) { return a.totalUs > b.totalUs; });
  return summary;
}

std::string formatProfile(const ProfileSummary& summary,
                          const std::vector<ExtensionNameAndPrefix>& extensions) {
  std::string out =
      fmt::format("operation profile: {} operations, median of {} runs, {:.1f} us in operations\n",
                  summary.operations.size(), summary.runs, summary.totalUs);
  out += fmt::format("  {:>5}  {:<36} {:>10} {:>7}\n", "step", "operation", "us", "share");
  for (const OperationSummary& op : summary.operations) {
    out += fmt::format("  {:>5}  {:<36} {:>10.1f} {:>6.1f}%\n", op.step,
                       operationLabel(op.type, extensions), op.medianUs, 100 * op.share);
  }
  out += "by operation type:\n";
  out += fmt::format("  {:<36} {:>5} {:>10} {:>7}\n", "operation", "count", "us", "share");
  for (const TypeSummary& t : summary.types) {
    out += fmt::format("  {:<36} {:>5} {:>10.1f} {:>6.1f}%\n", operationLabel(t.type, extensions),
                       t.count, t.totalUs, 100 * t.share);
  }
  return out;
}

nlohmann::json chromeTrace(const std::vector<ExecutionProfile>& runs,
                           const std::vector<double>& runStartUs, const std::string& modelName,
                           const std::vector<ExtensionNameAndPrefix>& extensions) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back({{"name", "process_name"},
                    {"ph", "M"},
                    {"pid", 1},
                    {"tid", 1},
                    {"args", {{"name", "nnhal: " + modelName}}}});
  for (size_t r = 0; r < runs.size(); ++r) {
    const double base = r < runStartUs.size() ? runStartUs[r] : 0;
    for (const OperationTiming& op : runs[r].operations) {
      events.push_back({{"name", operationLabel(op.type, extensions)},
                        {"cat", "operation"},
                        {"ph", "X"},
                        {"pid", 1},
                        {"tid", 1},
                        {"ts", base + static_cast<double>(op.startNs) / 1000.0},
                        {"dur", static_cast<double>(op.durationNs) / 1000.0},
                        {"args", {{"step", op.step}, {"run", r}}}});
    }
  }
  return {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
}

}  // namespace nnhal::tools
