// Tests of nnhal/trace.h: the recorder's bound and the Chrome trace JSON it produces.
#include "nnhal/trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

namespace nnhal {
namespace {

TEST(TraceRecorder, KeepsSpansUpToItsCapacity) {
  TraceRecorder recorder(3);
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) recorder.record("execution", "op" + std::to_string(i), start);
  EXPECT_EQ(recorder.spans().size(), 3u);
  EXPECT_EQ(recorder.spans()[2].name, "op2");
  EXPECT_EQ(recorder.dropped(), 2u);
}

TEST(TraceRecorder, ScopedSpanRecordsOnlyWithARecorder) {
  TraceRecorder recorder;
  {
    const ScopedTraceSpan span(&recorder, "cache", "saveToCache");
    const ScopedTraceSpan none(nullptr, "cache", "ignored");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  const auto spans = recorder.spans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].category, "cache");
  EXPECT_GE(spans[0].duration, std::chrono::milliseconds(2));
  EXPECT_NE(spans[0].thread, 0u);
}

TEST(TraceRecorder, ChromeTraceJsonHasCompleteEventsFromTheFirstSpan) {
  TraceRecorder recorder;
  const auto t0 = std::chrono::steady_clock::now();
  recorder.record("preparation", "prepareModel", t0 + std::chrono::microseconds(10),
                  std::chrono::microseconds(5));
  recorder.record("compilation", "compile", t0, std::chrono::microseconds(40));
  const nlohmann::json trace = nlohmann::json::parse(chromeTraceJson(recorder.spans(), "test"));
  const auto& events = trace.at("traceEvents");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["ph"], "M");
  EXPECT_EQ(events[0]["args"]["name"], "test");
  EXPECT_EQ(events[1]["name"], "prepareModel");
  EXPECT_EQ(events[1]["cat"], "preparation");
  EXPECT_EQ(events[1]["ph"], "X");
  EXPECT_DOUBLE_EQ(events[1]["ts"].get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(events[1]["dur"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(events[2]["ts"].get<double>(), 0.0);
}

}  // namespace
}  // namespace nnhal
