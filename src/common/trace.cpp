#include "nnhal/trace.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

namespace nnhal {
namespace {

uint32_t threadId() { return static_cast<uint32_t>(::syscall(SYS_gettid)); }

}  // namespace

void TraceRecorder::record(std::string category, std::string name,
                           std::chrono::steady_clock::time_point start) {
  record(std::move(category), std::move(name), start, std::chrono::steady_clock::now() - start);
}

void TraceRecorder::record(std::string category, std::string name,
                           std::chrono::steady_clock::time_point start,
                           std::chrono::nanoseconds duration) {
  TraceSpan span{std::move(category), std::move(name), start, duration, threadId()};
  std::lock_guard<std::mutex> lock(mutex_);
  if (spans_.size() >= capacity_) {
    ++dropped_;
    return;
  }
  spans_.push_back(std::move(span));
}

std::vector<TraceSpan> TraceRecorder::spans() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spans_;
}

size_t TraceRecorder::dropped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return dropped_;
}

std::string chromeTraceJson(const std::vector<TraceSpan>& spans, const std::string& processName) {
  nlohmann::json events = nlohmann::json::array();
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", pid}, {"args", {{"name", processName}}}});
  if (!spans.empty()) {
    const auto origin =
        std::min_element(spans.begin(), spans.end(), [](const auto& a, const auto& b) {
          return a.start < b.start;
        })->start;
    for (const TraceSpan& span : spans) {
      const double ts = std::chrono::duration<double, std::micro>(span.start - origin).count();
      const double dur = std::chrono::duration<double, std::micro>(span.duration).count();
      events.push_back({{"name", span.name},
                        {"cat", span.category},
                        {"ph", "X"},
                        {"ts", ts},
                        {"dur", dur},
                        {"pid", pid},
                        {"tid", span.thread}});
    }
  }
  nlohmann::json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  return trace.dump();
}

}  // namespace nnhal
