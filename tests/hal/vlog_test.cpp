// NNHAL_VLOG parsing (common/vlog.h) and where verbose lines go. Switching each tag on and off in
// a real process is tested through the nnhal binary (tests/tools/vlog_cli_test.cpp).
#include "common/vlog.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace nnhal::common {
namespace {

uint32_t bit(VlogTag tag) { return 1u << static_cast<uint32_t>(tag); }
constexpr uint32_t kAll = (1u << kVlogTagCount) - 1;

TEST(VlogParse, EmptyMeansNoTag) {
  EXPECT_EQ(parseVlogTags("").mask, 0u);
  EXPECT_EQ(parseVlogTags("  ,: ").mask, 0u);
  EXPECT_TRUE(parseVlogTags("").unknownTags.empty());
}

TEST(VlogParse, OneAndAllMeanEveryTag) {
  EXPECT_EQ(parseVlogTags("1").mask, kAll);
  EXPECT_EQ(parseVlogTags("all").mask, kAll);
  EXPECT_EQ(parseVlogTags("cache,all").mask, kAll);
  EXPECT_TRUE(parseVlogTags("all").unknownTags.empty());
}

TEST(VlogParse, EachTagByName) {
  for (uint32_t i = 0; i < kVlogTagCount; ++i) {
    const auto tag = static_cast<VlogTag>(i);
    const VlogSettings settings = parseVlogTags(vlogTagName(tag));
    EXPECT_EQ(settings.mask, bit(tag)) << vlogTagName(tag);
    EXPECT_TRUE(settings.unknownTags.empty());
  }
  EXPECT_EQ(vlogTagName(VlogTag::kCompilation), "compilation");
  EXPECT_EQ(vlogTagName(VlogTag::kCpuexe), "cpuexe");
  EXPECT_EQ(vlogTagName(VlogTag::kDriver), "driver");
  EXPECT_EQ(vlogTagName(VlogTag::kExecution), "execution");
  EXPECT_EQ(vlogTagName(VlogTag::kManager), "manager");
  EXPECT_EQ(vlogTagName(VlogTag::kModel), "model");
  EXPECT_EQ(vlogTagName(VlogTag::kIpc), "ipc");
  EXPECT_EQ(vlogTagName(VlogTag::kCache), "cache");
  EXPECT_EQ(vlogTagName(VlogTag::kBurst), "burst");
}

TEST(VlogParse, SpacesCommasAndColonsSeparateTags) {
  const uint32_t expected =
      bit(VlogTag::kExecution) | bit(VlogTag::kCache) | bit(VlogTag::kIpc) | bit(VlogTag::kModel);
  EXPECT_EQ(parseVlogTags("execution cache ipc model").mask, expected);
  EXPECT_EQ(parseVlogTags("execution,cache,ipc,model").mask, expected);
  EXPECT_EQ(parseVlogTags("execution:cache:ipc:model").mask, expected);
  EXPECT_EQ(parseVlogTags(" execution, cache::ipc ,model, ").mask, expected);
}

TEST(VlogParse, UnknownTagsAreReportedAndIgnored) {
  const VlogSettings settings = parseVlogTags("cache,bogus:EXECUTION 0 burst bogus");
  EXPECT_EQ(settings.mask, bit(VlogTag::kCache) | bit(VlogTag::kBurst));
  EXPECT_EQ(settings.unknownTags, (std::vector<std::string>{"bogus", "EXECUTION", "0"}));
}

TEST(VlogWrite, GoesToStderrWithItsTag) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  vlogWrite(VlogTag::kCache, "a line about the cache");
  const std::string out = testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out, "");
  EXPECT_NE(err.find("[cache] a line about the cache"), std::string::npos) << err;
}

TEST(VlogMacro, AnOffTagEvaluatesNothing) {
  if (vlogIsOn(VlogTag::kExecution)) GTEST_SKIP() << "NNHAL_VLOG switches execution on";
  int evaluated = 0;
  NNHAL_VLOG(Execution, "{}", ++evaluated);
  EXPECT_EQ(evaluated, 0);
}

}  // namespace
}  // namespace nnhal::common
