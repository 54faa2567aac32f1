#include "common/calibration.h"

#include <gtest/gtest.h>

#include <unistd.h>
#include <limits>

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

// Each kind claims no more than its slowest workload showed; types without a workload claim
// the slowest ratio of all, and never better than parity with the reference CPU path.
TEST_F(CalibrationTest, RatiosAreTimesOverTheReferenceAndEachKindTakesItsWorstWorkload) {
  Calibration c = sample();
  ASSERT_TRUE(computePerformance(&c));
  EXPECT_FLOAT_EQ(c.quantized.execTime, 0.25f);   // max(1/4, 1/16)
  EXPECT_FLOAT_EQ(c.quantized.powerUsage, 0.5f);  // max(2/4, 1/16)
  EXPECT_FLOAT_EQ(c.float32.execTime, 0.3f);
  EXPECT_FLOAT_EQ(c.float32.powerUsage, 0.5f);
  EXPECT_FLOAT_EQ(c.unmeasured.execTime, 1.0f);
  EXPECT_FLOAT_EQ(c.unmeasured.powerUsage, 1.0f);

  c.workloads[1].ms = 24.0;           // q2 now 1.5x slower than the reference
  c.workloads[2].oneThreadMs = 20.0;  // and the float workload 2x on one thread
  ASSERT_TRUE(computePerformance(&c));
  EXPECT_FLOAT_EQ(c.quantized.execTime, 1.5f);
  EXPECT_FLOAT_EQ(c.float32.powerUsage, 2.0f);
  EXPECT_FLOAT_EQ(c.unmeasured.execTime, 1.5f);
  EXPECT_FLOAT_EQ(c.unmeasured.powerUsage, 2.0f);
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

// A GPU device: float32 and quantized from their workloads (powerUsage against the
// one-thread reference); without a quantized workload the quantized types are not measured
// (FLT_MAX); the rest never better than parity; without a float workload, nothing to compute.
TEST_F(CalibrationTest, AGpuCalibrationTakesEachKindFromItsWorkloads) {
  Calibration c = sample();
  c.isa = kVulkanCalibrationLevel;
  ASSERT_TRUE(c.workloads[0].quantized && c.workloads[1].quantized && !c.workloads[2].quantized);
  c.workloads[0] = {"q1", true, 30.0, 10.0, 99.0, 60.0};
  c.workloads[1] = {"q2", true, 20.0, 10.0, 99.0, 40.0};
  c.workloads[2] = {"f", false, 20.0, 10.0, 20.0, 40.0};
  ASSERT_TRUE(computeGpuPerformance(&c));
  EXPECT_FLOAT_EQ(c.float32.execTime, 2.0f);
  EXPECT_FLOAT_EQ(c.float32.powerUsage, 0.5f);
  EXPECT_FLOAT_EQ(c.quantized.execTime, 3.0f);    // the worse of the two quantized
  EXPECT_FLOAT_EQ(c.quantized.powerUsage, 0.5f);  // 30 / 60 and 20 / 40
  EXPECT_FLOAT_EQ(c.unmeasured.execTime, 3.0f);
  EXPECT_FLOAT_EQ(c.unmeasured.powerUsage, 1.0f);
  // What is written reads back, and applies to level "vulkan" only.
  ASSERT_TRUE(writeCalibration(file(), c));
  EXPECT_TRUE(applicableCalibration(dir_, c.driverVersion, kVulkanCalibrationLevel));
  EXPECT_FALSE(applicableCalibration(dir_, c.driverVersion, "avx2"));
  // The float workload alone: the quantized types are not measured.
  c.workloads.erase(c.workloads.begin(), c.workloads.begin() + 2);
  ASSERT_TRUE(computeGpuPerformance(&c));
  EXPECT_EQ(c.quantized.execTime, std::numeric_limits<float>::max());
  EXPECT_FLOAT_EQ(c.unmeasured.execTime, 2.0f);
  c.workloads.pop_back();
  EXPECT_EQ(computeGpuPerformance(&c).error().status, ErrorStatus::INVALID_ARGUMENT);
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
  EXPECT_EQ(read->unmeasured.execTime, c.unmeasured.execTime);
  EXPECT_EQ(read->reference, kReferencePath);
  ASSERT_EQ(read->workloads.size(), 3u);
  EXPECT_EQ(read->workloads[2].referenceOneThreadMs, 10.0);
}

TEST_F(CalibrationTest, MalformedFilesAreRefusedWithAReason) {
  for (const char* text :
       {"", "not json", "[]", R"({"format": 3})", R"({"format": 2})",
        R"({"format": 2, "driverVersion": "v", "isa": "vnni", "measuredAt": "t",
            "reference": "xnnpack"})",
        R"({"format": 2, "driverVersion": "v", "isa": "vnni", "measuredAt": "t",
            "reference": "xnnpack", "quantized": {"execTime": -1, "powerUsage": 1},
            "float32": {"execTime": 1, "powerUsage": 1},
            "unmeasured": {"execTime": 1, "powerUsage": 1}})",
        R"({"format": 2, "driverVersion": "v", "isa": "vnni", "measuredAt": "t",
            "reference": "xnnpack", "quantized": {"execTime": 1, "powerUsage": 1},
            "float32": {"execTime": "x"}, "unmeasured": {"execTime": 1, "powerUsage": 1}})",
        R"({"format": 2, "driverVersion": "v", "isa": "vnni", "measuredAt": "t",
            "quantized": {"execTime": 1, "powerUsage": 1},
            "float32": {"execTime": 1, "powerUsage": 1},
            "unmeasured": {"execTime": 1, "powerUsage": 1}})",
        R"({"format": 2, "driverVersion": 7, "isa": "vnni", "measuredAt": "t"})"}) {
    writeText(text);
    auto read = readCalibration(file());
    ASSERT_FALSE(read) << text;
    EXPECT_EQ(read.error().status, ErrorStatus::INVALID_ARGUMENT) << text;
    EXPECT_FALSE(read.error().message.empty());
  }
  // A file of the old format (measured against nnhal's own scalar kernels) asks for a new
  // calibration.
  writeText(R"({"format": 1, "driverVersion": "v", "isa": "vnni", "measuredAt": "t",
                "quantized": {"execTime": 0.1, "powerUsage": 0.1},
                "float32": {"execTime": 0.1, "powerUsage": 0.1}})");
  auto old = readCalibration(file());
  ASSERT_FALSE(old);
  EXPECT_NE(old.error().message.find("run `nnhal calibrate` again"), std::string::npos)
      << old.error().message;
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
  c.reference = "scalar";
  ASSERT_TRUE(writeCalibration(file(), c));
  auto otherReference = applicableCalibration(dir_, "nnhal-test", "avx2");
  ASSERT_FALSE(otherReference);
  EXPECT_NE(otherReference.error().message.find("against scalar"), std::string::npos)
      << otherReference.error().message;
}

TEST_F(CalibrationTest, CapabilitiesTakeTheMeasuredRatiosAndStayPositive) {
  Calibration c = sample();
  ASSERT_TRUE(computePerformance(&c));
  Calibration slower = sample();
  slower.workloads[0].ms = 8.0;  // q1 2x slower than the reference
  ASSERT_TRUE(computePerformance(&slower));
  for (const Calibration* source :
       {static_cast<const Calibration*>(nullptr), static_cast<const Calibration*>(&c),
        static_cast<const Calibration*>(&slower)}) {
    const Capabilities caps = capabilitiesFrom(source);
    EXPECT_FALSE(caps.operandPerformance.empty());
    for (const OperandPerformance& p : caps.operandPerformance) {
      EXPECT_GT(p.info.execTime, 0.0f);
      EXPECT_GT(p.info.powerUsage, 0.0f);
      const float unmeasured = source == &slower ? 2.0f : 1.0f;
      const float expected = source == nullptr                       ? 1.0f
                             : p.type == OperandType::TENSOR_FLOAT32 ? 0.3f
                             : p.type == OperandType::TENSOR_QUANT8_ASYMM
                                 ? (source == &slower ? 2.0f : 0.25f)
                             : p.type == OperandType::TENSOR_FLOAT16 ? unmeasured
                             : p.type == OperandType::BOOL           ? unmeasured
                                                                     : p.info.execTime;
      EXPECT_FLOAT_EQ(p.info.execTime, expected) << toString(p.type);
    }
    EXPECT_FLOAT_EQ(caps.ifPerformance.execTime, source == &slower ? 2.0f : 1.0f);
    EXPECT_GT(caps.relaxedFloat32toFloat16PerformanceTensor.execTime, 0.0f);
  }
}

}  // namespace
}  // namespace nnhal::common
