#include "common/calibration.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <system_error>

namespace nnhal::common {
namespace {

using nlohmann::json;

/// Format 1 was measured against nnhal's own scalar kernels; 2 against kReferencePath.
constexpr int kFormat = 2;

bool positive(double v) { return std::isfinite(v) && v > 0; }

bool quantizedWorkloadType(OperandType type) {
  switch (type) {
    case OperandType::TENSOR_QUANT8_ASYMM:
    case OperandType::TENSOR_QUANT8_ASYMM_SIGNED:
    case OperandType::TENSOR_QUANT8_SYMM:
    case OperandType::TENSOR_QUANT8_SYMM_PER_CHANNEL:
    case OperandType::TENSOR_INT32:
    case OperandType::INT32:
    case OperandType::UINT32:
      return true;
    default:
      return false;
  }
}

PerformanceInfo worst(const PerformanceInfo& a, const PerformanceInfo& b) {
  return {std::max(a.execTime, b.execTime), std::max(a.powerUsage, b.powerUsage)};
}

json toJson(const PerformanceInfo& p) {
  return {{"execTime", p.execTime}, {"powerUsage", p.powerUsage}};
}

Result<PerformanceInfo> performanceFrom(const json& j, const char* what) {
  if (!j.is_object() || !j.contains("execTime") || !j.contains("powerUsage") ||
      !j["execTime"].is_number() || !j["powerUsage"].is_number()) {
    return invalidArgument(std::string("calibration: '") + what +
                           "' needs numbers execTime and powerUsage");
  }
  const PerformanceInfo p{j["execTime"].get<float>(), j["powerUsage"].get<float>()};
  if (!positive(p.execTime) || !positive(p.powerUsage)) {
    return invalidArgument(std::string("calibration: '") + what +
                           "' has a ratio that is not positive and finite");
  }
  return p;
}

}  // namespace

namespace {

/// The worst ratio of each kind over the workloads: {ms / referenceMs, one-thread time /
/// referenceOneThreadMs}, where the one-thread time is oneThreadMs when `oneThreadMeasured`
/// (the CPU device, which runs with one kernel thread too) and ms otherwise. A workload with
/// a needed time that is not positive and finite is refused.
struct WorstRatios {
  std::optional<PerformanceInfo> quantized, float32;
};

Result<WorstRatios> worstRatios(const Calibration& c, bool oneThreadMeasured) {
  WorstRatios r;
  for (const WorkloadTiming& w : c.workloads) {
    const double oneThreadMs = oneThreadMeasured ? w.oneThreadMs : w.ms;
    if (!positive(w.ms) || !positive(w.referenceMs) || !positive(oneThreadMs) ||
        !positive(w.referenceOneThreadMs)) {
      return invalidArgument("calibration: workload '" + w.name +
                             "' has a time that is not positive and finite");
    }
    const PerformanceInfo ratio{static_cast<float>(w.ms / w.referenceMs),
                                static_cast<float>(oneThreadMs / w.referenceOneThreadMs)};
    std::optional<PerformanceInfo>& kind = w.quantized ? r.quantized : r.float32;
    kind = kind ? worst(*kind, ratio) : ratio;
  }
  return r;
}

}  // namespace

Result<void> computePerformance(Calibration* c) {
  // The worst ratio of each kind: a device never claims more than a workload showed.
  NNHAL_ASSIGN_OR_RETURN(const WorstRatios r, worstRatios(*c, true));
  if (!r.quantized || !r.float32) {
    return invalidArgument("calibration: needs a quantized and a float workload");
  }
  c->quantized = *r.quantized;
  c->float32 = *r.float32;
  c->unmeasured = worst(worst(*r.quantized, *r.float32), PerformanceInfo{1.0f, 1.0f});
  return {};
}

Result<void> computeGpuPerformance(Calibration* c) {
  NNHAL_ASSIGN_OR_RETURN(const WorstRatios r, worstRatios(*c, false));
  if (!r.float32) return invalidArgument("calibration: needs a float workload");
  c->float32 = *r.float32;
  const float unmeasured = std::numeric_limits<float>::max();
  c->quantized = r.quantized.value_or(PerformanceInfo{unmeasured, unmeasured});
  c->unmeasured = worst(r.quantized ? worst(*r.quantized, *r.float32) : *r.float32,
                        PerformanceInfo{1.0f, 1.0f});
  return {};
}

Result<void> writeCalibration(const std::filesystem::path& file, const Calibration& c) {
  json workloads = json::array();
  for (const WorkloadTiming& w : c.workloads) {
    workloads.push_back({{"name", w.name},
                         {"quantized", w.quantized},
                         {"ms", w.ms},
                         {"referenceMs", w.referenceMs},
                         {"oneThreadMs", w.oneThreadMs},
                         {"referenceOneThreadMs", w.referenceOneThreadMs}});
  }
  const json j = {{"format", kFormat},
                  {"driverVersion", c.driverVersion},
                  {"isa", c.isa},
                  {"measuredAt", c.measuredAt},
                  {"reference", c.reference},
                  {"workloads", workloads},
                  {"quantized", toJson(c.quantized)},
                  {"float32", toJson(c.float32)},
                  {"unmeasured", toJson(c.unmeasured)}};
  const std::filesystem::path temporary = file.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << j.dump(2) << "\n";
    if (!out) return fail(ErrorStatus::GENERAL_FAILURE, "cannot write " + temporary.string());
  }
  std::error_code ec;
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    return fail(ErrorStatus::GENERAL_FAILURE,
                "cannot replace " + file.string() + ": " + ec.message());
  }
  return {};
}

Result<Calibration> readCalibration(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return fail(ErrorStatus::GENERAL_FAILURE, "cannot read " + file.string());
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return invalidArgument("calibration: " + file.string() + " is not a JSON object");
  }
  if (j.contains("format") && j["format"] == 1) {
    return invalidArgument("calibration: " + file.string() +
                           " is format 1, measured against nnhal's portable kernels by an "
                           "older nnhal: run `nnhal calibrate` again");
  }
  if (!j.contains("format") || j["format"] != kFormat) {
    return invalidArgument("calibration: " + file.string() + " is not format " +
                           std::to_string(kFormat));
  }
  for (const char* key : {"driverVersion", "isa", "measuredAt", "reference"}) {
    if (!j.contains(key) || !j[key].is_string()) {
      return invalidArgument(std::string("calibration: '") + key + "' must be a string");
    }
  }
  Calibration c;
  c.driverVersion = j["driverVersion"].get<std::string>();
  c.isa = j["isa"].get<std::string>();
  c.measuredAt = j["measuredAt"].get<std::string>();
  c.reference = j["reference"].get<std::string>();
  if (!j.contains("quantized") || !j.contains("float32") || !j.contains("unmeasured")) {
    return invalidArgument("calibration: 'quantized', 'float32' and 'unmeasured' are required");
  }
  NNHAL_ASSIGN_OR_RETURN(c.quantized, performanceFrom(j["quantized"], "quantized"));
  NNHAL_ASSIGN_OR_RETURN(c.float32, performanceFrom(j["float32"], "float32"));
  NNHAL_ASSIGN_OR_RETURN(c.unmeasured, performanceFrom(j["unmeasured"], "unmeasured"));
  if (j.contains("workloads") && j["workloads"].is_array()) {
    for (const json& w : j["workloads"]) {
      if (!w.is_object()) continue;
      WorkloadTiming t;
      t.name = w.value("name", "");
      t.quantized = w.value("quantized", false);
      t.ms = w.value("ms", 0.0);
      t.referenceMs = w.value("referenceMs", 0.0);
      t.oneThreadMs = w.value("oneThreadMs", 0.0);
      t.referenceOneThreadMs = w.value("referenceOneThreadMs", 0.0);
      c.workloads.push_back(std::move(t));
    }
  }
  return c;
}

Result<Calibration> applicableCalibration(const std::filesystem::path& stateDirectory,
                                          const std::string& driverVersion,
                                          const std::string& isa) {
  const std::filesystem::path file = stateDirectory / kCalibrationFileName;
  std::error_code ec;
  if (stateDirectory.empty() || !std::filesystem::exists(file, ec)) {
    return fail(ErrorStatus::GENERAL_FAILURE, "no calibration (run `nnhal calibrate`)");
  }
  NNHAL_ASSIGN_OR_RETURN(Calibration c, readCalibration(file));
  if (c.driverVersion != driverVersion) {
    return invalidArgument("the calibration in " + file.string() + " was measured with " +
                           c.driverVersion + ", not " + driverVersion);
  }
  if (c.isa != isa) {
    return invalidArgument("the calibration in " + file.string() +
                           " was measured at kernel level " + c.isa + ", not " + isa);
  }
  if (c.reference != kReferencePath) {
    return invalidArgument("the calibration in " + file.string() + " was measured against " +
                           c.reference + ", not the reference CPU path " + kReferencePath);
  }
  return c;
}

Capabilities capabilitiesFrom(const Calibration* c) {
  const PerformanceInfo parity{1.0f, 1.0f};
  const PerformanceInfo quantized = c != nullptr ? c->quantized : parity;
  const PerformanceInfo float32 = c != nullptr ? c->float32 : parity;
  const PerformanceInfo unmeasured = c != nullptr ? c->unmeasured : parity;
  Capabilities caps;
  caps.relaxedFloat32toFloat16PerformanceScalar = float32;
  caps.relaxedFloat32toFloat16PerformanceTensor = float32;
  caps.ifPerformance = unmeasured;
  caps.whilePerformance = unmeasured;
  for (int32_t code = 0; code <= kOperandTypeFundamentalMax; ++code) {
    const auto type = static_cast<OperandType>(code);
    if (type == OperandType::SUBGRAPH) continue;
    PerformanceInfo p = unmeasured;
    if (type == OperandType::FLOAT32 || type == OperandType::TENSOR_FLOAT32) p = float32;
    if (quantizedWorkloadType(type)) p = quantized;
    caps.operandPerformance.push_back({type, p});
  }
  return caps;
}

}  // namespace nnhal::common
