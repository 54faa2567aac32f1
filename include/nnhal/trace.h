// nnhal/trace.h — spans of driver work (layer x phase), for Chrome trace JSON.
//
// A TraceRecorder collects what the driver did and when, as Android's NNAPI tracing
// (NNTRACE) does with systrace: each span has a phase (its category) and a name. The
// phases nnhal records:
//   "preparation"  prepareModel / prepareModelFromCache, from the call to the callback;
//   "compilation"  compiling a model into an execution plan (inside a preparation);
//   "cache"        saving or loading compilation cache files;
//   "execution"    one execution ("execute"), and inside it each operation of the static
//                  path, named by its OperationType ("CONV_2D");
//   "ipc"          a client's call to nnhald until its reply (named by message), and nnhald's
//                  handling of each frame it receives.
// Give one to DeviceOptions::trace (the embedded driver) or ClientOptions::trace (a client
// of nnhald); `nnhal run --trace FILE` and `nnhald --trace FILE` write chromeTraceJson of
// it, which Perfetto and chrome://tracing open.
//
// Recording costs a clock read and a locked append per span; without a recorder the driver
// records nothing. At most `capacity` spans are kept; later ones are counted in dropped().
//
// Thread safety: every method may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace nnhal {

struct TraceSpan {
  std::string category;  ///< the phase: "preparation", "compilation", "cache", "execution", "ipc"
  std::string name;      ///< what ran: "prepareModel", "CONV_2D", "kExecute", ...
  std::chrono::steady_clock::time_point start;
  std::chrono::nanoseconds duration{0};
  uint32_t thread = 0;  ///< the recording thread's Linux thread id
};

class TraceRecorder {
 public:
  explicit TraceRecorder(size_t capacity = size_t{1} << 20) : capacity_(capacity) {}

  /// Appends a span that began at `start` and ends now, on the calling thread.
  void record(std::string category, std::string name, std::chrono::steady_clock::time_point start);
  /// Appends a span with an explicit duration.
  void record(std::string category, std::string name, std::chrono::steady_clock::time_point start,
              std::chrono::nanoseconds duration);

  /// A copy of the spans recorded so far, in recording order.
  std::vector<TraceSpan> spans() const;
  /// Spans not kept because the capacity was reached.
  size_t dropped() const;

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::vector<TraceSpan> spans_;
  size_t dropped_ = 0;
};

/// Records one span from its construction to its destruction (when `recorder` is not null).
class ScopedTraceSpan {
 public:
  ScopedTraceSpan(TraceRecorder* recorder, const char* category, std::string name)
      : recorder_(recorder),
        category_(category),
        name_(recorder != nullptr ? std::move(name) : std::string()),
        start_(recorder != nullptr ? std::chrono::steady_clock::now()
                                   : std::chrono::steady_clock::time_point{}) {}
  ~ScopedTraceSpan() {
    if (recorder_ != nullptr) recorder_->record(category_, std::move(name_), start_);
  }
  ScopedTraceSpan(const ScopedTraceSpan&) = delete;
  ScopedTraceSpan& operator=(const ScopedTraceSpan&) = delete;

 private:
  TraceRecorder* recorder_;
  const char* category_;
  std::string name_;
  std::chrono::steady_clock::time_point start_;
};

/// The spans as Chrome trace JSON (the "traceEvents" format: complete events "X" with
/// microsecond timestamps from the first span, one track per thread, the phase as "cat"),
/// with `processName` naming the process track.
std::string chromeTraceJson(const std::vector<TraceSpan>& spans, const std::string& processName);

}  // namespace nnhal
