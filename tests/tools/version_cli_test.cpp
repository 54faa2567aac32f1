// `nnhal --version` prints the version of project() in CMakeLists.txt (nnhal/version.h).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "nnhal/version.h"

namespace nnhal::tools {
namespace {

TEST(NnhalVersionTest, PrintsTheVersionAndExitsZero) {
  const std::string command = std::string(NNHAL_CLI_PATH) + " --version 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  std::array<char, 256> buffer{};
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  EXPECT_EQ(output, "nnhal " + std::string(kVersion) + "\n");
}

}  // namespace
}  // namespace nnhal::tools
