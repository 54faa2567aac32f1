#include "tools/common/profile_report.h"

#include <gtest/gtest.h>

#include "nnhal/tflite_compat_extension.h"

namespace nnhal::tools {
namespace {

ExecutionProfile run(std::vector<uint64_t> durationsNs) {
  const OperationType types[] = {OperationType::CONV_2D, OperationType::ADD,
                                 OperationType::CONV_2D};
  ExecutionProfile p;
  uint64_t at = 0;
  for (size_t i = 0; i < durationsNs.size(); ++i) {
    p.operations.push_back({static_cast<uint32_t>(i), types[i % 3], at, durationsNs[i]});
    at += durationsNs[i];
  }
  return p;
}

TEST(ProfileReportTest, MediansSharesAndTypesSlowestFirst) {
  const ProfileSummary s =
      summarizeProfiles({run({1000, 500, 3000}), run({3000, 700, 1000}), run({2000, 600, 2000})});
  EXPECT_EQ(s.runs, 3u);
  ASSERT_EQ(s.operations.size(), 3u);
  EXPECT_DOUBLE_EQ(s.operations[0].medianUs, 2.0);
  EXPECT_DOUBLE_EQ(s.operations[1].medianUs, 0.6);
  EXPECT_DOUBLE_EQ(s.operations[2].medianUs, 2.0);
  EXPECT_DOUBLE_EQ(s.totalUs, 4.6);
  EXPECT_NEAR(s.operations[1].share, 0.6 / 4.6, 1e-12);
  ASSERT_EQ(s.types.size(), 2u);
  EXPECT_EQ(s.types[0].type, OperationType::CONV_2D);
  EXPECT_EQ(s.types[0].count, 2u);
  EXPECT_DOUBLE_EQ(s.types[0].totalUs, 4.0);
  EXPECT_EQ(s.types[1].type, OperationType::ADD);
  const std::string table = formatProfile(s);
  EXPECT_NE(table.find("CONV_2D"), std::string::npos) << table;
  EXPECT_NE(table.find("87.0%"), std::string::npos) << table;  // 4.0 of 4.6
}

TEST(ProfileReportTest, ExtensionOperationsAreNamedByTheirExtension) {
  const std::vector<ExtensionNameAndPrefix> extensions = {
      {std::string(tflite_compat::kExtensionName), 3}, {"com.example.ext", 9}};
  EXPECT_EQ(operationLabel(OperationType::CONV_2D, extensions), "CONV_2D");
  EXPECT_EQ(operationLabel(tflite_compat::operationType(3, tflite_compat::Operation::GATHER_ND),
                           extensions),
            "org.nnhal.tflite_compat:GATHER_ND");
  EXPECT_EQ(operationLabel(static_cast<OperationType>((9u << 16) | 7u), extensions),
            "com.example.ext:7");
  EXPECT_EQ(operationLabel(static_cast<OperationType>((5u << 16) | 7u), extensions),
            "extension 0x50007:7");
  ProfileSummary s = summarizeProfiles({run({1000})});
  s.operations[0].type = tflite_compat::operationType(3, tflite_compat::Operation::FLOOR_DIV);
  s.types[0].type = s.operations[0].type;
  const std::string table = formatProfile(s, extensions);
  EXPECT_NE(table.find("org.nnhal.tflite_compat:FLOOR_DIV"), std::string::npos) << table;
}

TEST(ProfileReportTest, RunsWithAnotherOperationCountAreNotCounted) {
  const ProfileSummary s = summarizeProfiles({run({1000, 2000}), run({5000})});
  EXPECT_EQ(s.runs, 1u);
  EXPECT_TRUE(summarizeProfiles({}).operations.empty());
}

TEST(ProfileReportTest, ChromeTraceHasOneCompleteEventPerOperationPlacedByRun) {
  const nlohmann::json trace =
      chromeTrace({run({1000, 2000}), run({1500, 500})}, {0.0, 10.0}, "m.tflite");
  const nlohmann::json& events = trace.at("traceEvents");
  ASSERT_EQ(events.size(), 5u);  // metadata + 4 operations
  EXPECT_EQ(events[0].at("ph"), "M");
  EXPECT_EQ(events[2].at("name"), "ADD");
  EXPECT_EQ(events[2].at("ph"), "X");
  EXPECT_DOUBLE_EQ(events[2].at("ts").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(events[2].at("dur").get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(events[3].at("ts").get<double>(), 10.0);  // run 1 starts at 10 us
  EXPECT_EQ(events[4].at("args").at("run"), 1);
  // Round trip through text, as a trace viewer reads it.
  EXPECT_EQ(nlohmann::json::parse(trace.dump()), trace);
}

}  // namespace
}  // namespace nnhal::tools
