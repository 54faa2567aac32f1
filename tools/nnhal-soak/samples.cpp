#include "nnhal-soak/samples.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nnhal::soak {

std::optional<ProcessResources> readProcess(pid_t pid) {
  const std::filesystem::path proc = "/proc/" + std::to_string(pid);
  ProcessResources r;
  std::ifstream status(proc / "status");
  if (!status) return std::nullopt;
  for (std::string line; std::getline(status, line);) {
    std::istringstream fields(line);
    std::string key;
    fields >> key;
    if (key == "VmRSS:") {
      double kib = 0;
      fields >> kib;
      r.rssMiB = kib / 1024;
    } else if (key == "Threads:") {
      fields >> r.threads;
    }
  }
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(proc / "fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++r.fds;
  }
  if (ec) return std::nullopt;
  std::ifstream maps(proc / "maps");
  if (!maps) return std::nullopt;
  for (std::string line; std::getline(maps, line);) ++r.maps;
  if (r.threads == 0) return std::nullopt;  // a zombie: the process has gone
  return r;
}

nlohmann::json toJson(const Sample& s) {
  nlohmann::json latency = nlohmann::json::object();
  for (const auto& [series, l] : s.latency) {
    latency[series] = {{"count", l.count},
                       {"p50_ms", l.p50},
                       {"p90_ms", l.p90},
                       {"p99_ms", l.p99},
                       {"max_ms", l.max}};
  }
  return {
      {"seconds", s.seconds},           {"rss_mib", s.daemon.rssMiB},  {"fds", s.daemon.fds},
      {"maps", s.daemon.maps},          {"threads", s.daemon.threads}, {"executions", s.executions},
      {"compilations", s.compilations}, {"errors", s.errors},          {"latency", latency}};
}

const std::vector<double>& histogramEdges() {
  static const std::vector<double> edges = [] {
    std::vector<double> e;
    for (int i = 0; i <= 120; ++i) e.push_back(0.01 * std::pow(10.0, i * 6.0 / 120));
    return e;
  }();
  return edges;
}

void Recorder::success(const std::string& series, double ms, bool compilation) {
  const std::vector<double>& edges = histogramEdges();
  const auto bucket = static_cast<size_t>(
      std::clamp<ptrdiff_t>(std::upper_bound(edges.begin(), edges.end(), ms) - edges.begin() - 1, 0,
                            static_cast<ptrdiff_t>(edges.size()) - 2));
  std::lock_guard lock(mutex_);
  interval_[series].push_back(ms);
  auto& histogram = histograms_[series];
  histogram.resize(edges.size() - 1);
  ++histogram[bucket];
  if (compilation) {
    ++compilations_;
    ++totalCompilations_;
  } else {
    ++executions_;
    ++totalExecutions_;
  }
}

void Recorder::failure(const std::string& what, const std::string& detail) {
  std::lock_guard lock(mutex_);
  ++errors_;
  ++errorsByKind_[what];
  if (firstErrors_.size() < 20) firstErrors_.push_back(what + ": " + detail);
}

Sample Recorder::take(double seconds) {
  std::map<std::string, std::vector<double>> interval;
  Sample s;
  s.seconds = seconds;
  {
    std::lock_guard lock(mutex_);
    interval.swap(interval_);
    s.executions = std::exchange(executions_, 0);
    s.compilations = std::exchange(compilations_, 0);
    s.errors = std::exchange(errors_, 0);
  }
  for (auto& [series, v] : interval) {
    std::sort(v.begin(), v.end());
    auto at = [&](double q) {
      return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
    };
    s.latency[series] = {v.size(), at(0.5), at(0.9), at(0.99), v.back()};
  }
  return s;
}

std::map<std::string, uint64_t> Recorder::errorsByKind() const {
  std::lock_guard lock(mutex_);
  return errorsByKind_;
}

std::map<std::string, std::vector<uint64_t>> Recorder::histograms() const {
  std::lock_guard lock(mutex_);
  return histograms_;
}

std::vector<std::string> Recorder::firstErrors() const {
  std::lock_guard lock(mutex_);
  return firstErrors_;
}

uint64_t Recorder::totalExecutions() const {
  std::lock_guard lock(mutex_);
  return totalExecutions_;
}

uint64_t Recorder::totalCompilations() const {
  std::lock_guard lock(mutex_);
  return totalCompilations_;
}

}  // namespace nnhal::soak
