// The ipc suite's main: the tests, or one child role when the suite starts itself as a child
// (child_process.h).
#include <gtest/gtest.h>

#include "child_process.h"

int main(int argc, char** argv) {
  nnhal::ipc::testing::runChildRoleIfAsked(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
