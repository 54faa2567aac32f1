#include "kernels/isa.h"

#include <gtest/gtest.h>

namespace nnhal::kernels {
namespace {

TEST(IsaTest, NamesRoundTrip) {
  for (IsaLevel level : {IsaLevel::kScalar, IsaLevel::kAvx2, IsaLevel::kAvx512, IsaLevel::kVnni}) {
    EXPECT_EQ(parseIsaLevel(toString(level)), level);
  }
  EXPECT_EQ(parseIsaLevel("AVX2"), std::nullopt);
  EXPECT_EQ(parseIsaLevel(""), std::nullopt);
  EXPECT_EQ(parseIsaLevel("sse"), std::nullopt);
}

TEST(IsaTest, UnsetKeepsTheSupportedLevel) {
  const IsaSelection s = selectIsa(IsaLevel::kAvx512, "");
  EXPECT_EQ(s.active, IsaLevel::kAvx512);
  EXPECT_EQ(s.supported, IsaLevel::kAvx512);
  EXPECT_TRUE(s.note.empty());
}

TEST(IsaTest, ALowerLevelIsFollowed) {
  for (IsaLevel level : {IsaLevel::kScalar, IsaLevel::kAvx2, IsaLevel::kAvx512, IsaLevel::kVnni}) {
    const IsaSelection s = selectIsa(IsaLevel::kVnni, toString(level));
    EXPECT_EQ(s.active, level);
    EXPECT_TRUE(s.note.empty()) << s.note;
  }
}

TEST(IsaTest, AHigherLevelIsRefusedWithAReason) {
  const IsaSelection s = selectIsa(IsaLevel::kAvx2, "vnni");
  EXPECT_EQ(s.active, IsaLevel::kAvx2);
  EXPECT_NE(s.note.find("above what this CPU supports"), std::string::npos) << s.note;
}

TEST(IsaTest, AnUnknownNameIsRefusedWithAReason) {
  const IsaSelection s = selectIsa(IsaLevel::kAvx512, "avx1024");
  EXPECT_EQ(s.active, IsaLevel::kAvx512);
  EXPECT_NE(s.note.find("not a level"), std::string::npos) << s.note;
  EXPECT_NE(s.note.find("avx1024"), std::string::npos) << s.note;
}

// The process's selection follows NNHAL_ISA as the test runner set it (CI runs the kernel
// suite at each level this way) and never exceeds what the CPU supports.
TEST(IsaTest, ProcessSelectionFollowsTheEnvironment) {
  const IsaSelection& s = isaSelection();
  EXPECT_LE(s.active, detectSupportedIsa());
  const char* env = std::getenv("NNHAL_ISA");
  const IsaSelection expected = selectIsa(detectSupportedIsa(), env != nullptr ? env : "");
  EXPECT_EQ(s.active, expected.active);
  EXPECT_EQ(activeIsa(), s.active);
  const std::vector<IsaLevel> levels = supportedIsaLevels();
  ASSERT_FALSE(levels.empty());
  EXPECT_EQ(levels.front(), IsaLevel::kScalar);
  EXPECT_EQ(levels.back(), detectSupportedIsa());
}

}  // namespace
}  // namespace nnhal::kernels
