#include "common/calibration.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

namespace nnhal::common {
namespace {

namespace fs = std::filesystem;

class CalibrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnhal-calibration-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path file() const { return dir_ / kCalibrationFileName; }
  void writeText(const std::string& text) const { std::ofstream(file()) << text; }

  static Calibration sample() {
    Calibration c;
    c.driverVersion = "nnhal-test";
    c.isa = "avx2";
    c.measuredAt = "2026-11-26T00:00:00Z";
    c.workloads = {{"q1", true, 1.0, 4.0, 2.0, 4.0},
                   {"q2", true, 1.0, 16.0, 1.0, 16.0},
                   {"f", false, 3.0, 10.0, 5.0, 10.0}};
    return c;
  }

  fs::path dir_;
};

TEST_F(CalibrationTest, RatiosAreTimesOverTheReferenceAndQuantizedIsTheGeometricMean) {
  Calibration c = sample();
  ASSERT_TRUE(computePerformance(&c));
  EXPECT_FLOAT_EQ(c.quantized.execTime, 0.125f);  // sqrt(1/4 * 1/16)
  EXPECT_FLOAT_EQ(c.quantized.powerUsage, static_cast<float>(std::sqrt(0.5 / 16)));
  EXPECT_FLOAT_EQ(c.float32.execTime, 0.3f);
  EXPECT_FLOAT_EQ(c.float32.powerUsage, 0.5f);
}

TEST_F(CalibrationTest, WorkloadsWithoutAKindOrWithBadTimesAreRefused) {
  Calibration c = sample();
  c.workloads.pop_back();  // no float workload
  EXPECT_EQ(computePerformance(&c).error().status, ErrorStatus::INVALID_ARGUMENT);
  c = sample();
  c.workloads[0].referenceMs = 0;
  EXPECT_EQ(computePerformance(&c).error().status, ErrorStatus::INVALID_ARGUMENT);
  c = sample();
  c.workloads[2].ms = std::nan("");
  EXPECT_FALSE(computePerformance(&c));
}

// What is written reads back bit for bit: a restarted driver reports the same numbers.
TEST_F(CalibrationTest, RoundTripsExactly) {
  Calibration c = sample();
  ASSERT_TRUE(computePerformance(&c));
  ASSERT_TRUE(writeCalibration(file(), c));
  auto read = readCalibration(file());
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->driverVersion, c.driverVersion);
  EXPECT_EQ(read->isa, c.isa);
  EXPECT_EQ(read->measuredAt, c.measuredAt);
  EXPECT_EQ(read->quantized.execTime, c.quantized.execTime);
  EXPECT_EQ(read->quantized.powerUsage, c.quantized.powerUsage);
  EXPECT_EQ(read->float32.execTime, c.float32.execTime);
  EXPECT_EQ(read->float32.powerUsage, c.float32.powerUsage);
  ASSERT_EQ(read->workloads.size(), 3u);
  EXPECT_EQ(read->workloads[2].referenceOneThreadMs, 10.0);
}

TEST_F(CalibrationTest, MalformedFilesAreRefusedWithAReason) {
  for (const char* text :
       {"", "not json", "[]", R"({"format": 2})",
        R"({"format": 1, "driverVersion": "v", "isa": "vnni", "measuredAt": "t"})",
        R"({"format": 1, "driverVersion": "v", "isa": "vnni", "measuredAt": "t",
            "quantized": {"execTime": -1, "powerUsage": 1},
            "float32": {"execTime": 1, "powerUsage": 1}})",
        R"({"format": 1, "driverVersion": "v", "isa": "vnni", "measuredAt": "t",
            "quantized": {"execTime": 1, "powerUsage": 1}, "float32": {"execTime": "x"}})",
        R"({"format": 1, "driverVersion": 7, "isa": "vnni", "measuredAt": "t"})"}) {
    writeText(text);
    auto read = readCalibration(file());
    ASSERT_FALSE(read) << text;
    EXPECT_EQ(read.error().status, ErrorStatus::INVALID_ARGUMENT) << text;
    EXPECT_FALSE(read.error().message.empty());
  }
}

TEST_F(CalibrationTest, AppliesOnlyToItsDriverVersionAndLevel) {
  Calibration c = sample();
  ASSERT_TRUE(computePerformance(&c));
  EXPECT_EQ(applicableCalibration(dir_, "nnhal-test", "avx2").error().status,
            ErrorStatus::GENERAL_FAILURE);  // no file yet
  ASSERT_TRUE(writeCalibration(file(), c));
  EXPECT_TRUE(applicableCalibration(dir_, "nnhal-test", "avx2"));
  auto otherLevel = applicableCalibration(dir_, "nnhal-test", "vnni");
  ASSERT_FALSE(otherLevel);
  EXPECT_NE(otherLevel.error().message.find("kernel level avx2"), std::string::npos);
  EXPECT_FALSE(applicableCalibration(dir_, "nnhal-other", "avx2"));
  EXPECT_FALSE(applicableCalibration({}, "nnhal-test", "avx2"));
}

TEST_F(CalibrationTest, CapabilitiesTakeTheMeasuredRatiosAndStayPositive) {
  Calibration c = sample();
  ASSERT_TRUE(computePerformance(&c));
  const Calibration* measured = &c;
  for (const Calibration* source : {static_cast<const Calibration*>(nullptr), measured}) {
    const Capabilities caps = capabilitiesFrom(source);
    EXPECT_FALSE(caps.operandPerformance.empty());
    for (const OperandPerformance& p : caps.operandPerformance) {
      EXPECT_GT(p.info.execTime, 0.0f);
      EXPECT_GT(p.info.powerUsage, 0.0f);
      const float expected = source == nullptr                            ? 1.0f
                             : p.type == OperandType::TENSOR_FLOAT32      ? 0.3f
                             : p.type == OperandType::TENSOR_QUANT8_ASYMM ? 0.125f
                             : p.type == OperandType::TENSOR_FLOAT16      ? 1.0f
                                                                          : p.info.execTime;
      EXPECT_FLOAT_EQ(p.info.execTime, expected) << toString(p.type);
    }
    EXPECT_GT(caps.ifPerformance.execTime, 0.0f);
    EXPECT_GT(caps.relaxedFloat32toFloat16PerformanceTensor.execTime, 0.0f);
  }
}

}  // namespace
}  // namespace nnhal::common
