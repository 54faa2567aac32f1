// nnhald serving two devices (the device seam, backend/backend.h): the CPU device and the
// fault-injecting test device (--test-device). A client picks one by name at the handshake,
// lists them all, and gets each device's own identity, supported operations and faults; an
// unknown name is refused with the names served; `nnhal info --connect` lists every device.
// And the GPU device (--gpu on).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "child_process.h"
#include "ipc_test_util.h"
#include "nnhal/client.h"
#include "nnhal/gpu_device.h"

namespace nnhal::ipc {
namespace {

using namespace testing;

std::vector<std::string> testDeviceArgs(const TempDir& cache) {
  return {"--cache-dir",
          (cache.path() / "state").string(),
          "--test-device",
          "nnhal-test",
          "--test-device-refuse",
          "CONV_2D",
          "--test-device-fail-execute-every",
          "2"};
}

std::shared_ptr<Device> connectTo(const Daemon& daemon, const std::string& device) {
  ClientOptions options;
  options.device = device;
  auto connected = connect(daemon.socket(), options);
  EXPECT_TRUE(connected) << connected.error().message;
  return connected ? *connected : nullptr;
}

TEST(MultiDevice, ClientsPickADeviceByNameAndListThemAll) {
  TempDir cache;
  Daemon daemon(testDeviceArgs(cache));
  ASSERT_TRUE(daemon.running());
  auto cpu = connectTo(daemon, "");
  auto test = connectTo(daemon, "nnhal-test");
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(test, nullptr);
  EXPECT_EQ(cpu->getName(), "nnhal-cpu");
  EXPECT_EQ(test->getName(), "nnhal-test");
  EXPECT_EQ(test->getVersionString(), cpu->getVersionString() + "+faults");
  const std::vector<std::string> expected{"nnhal-cpu", "nnhal-test"};
  EXPECT_EQ(daemonDevices(*cpu).value(), expected);
  EXPECT_EQ(daemonDevices(*test).value(), expected);
  // Each device has its own cache state under the daemon's.
  EXPECT_EQ(test->getNumberOfCacheFilesNeeded().modelCache, 1u);

  ClientOptions unknown;
  unknown.device = "nnhal-gpu";
  auto refused = connect(daemon.socket(), unknown);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::DEVICE_UNAVAILABLE);
  EXPECT_NE(refused.error().message.find("no device 'nnhal-gpu'"), std::string::npos);
  EXPECT_NE(refused.error().message.find("nnhal-cpu, nnhal-test"), std::string::npos);
}

TEST(MultiDevice, EachDeviceAnswersWithItsOwnBackend) {
  TempDir cache;
  Daemon daemon(testDeviceArgs(cache));
  ASSERT_TRUE(daemon.running());
  auto cpu = connectTo(daemon, "nnhal-cpu");
  auto test = connectTo(daemon, "nnhal-test");
  ASSERT_NE(test, nullptr);

  // The test device refuses CONV_2D; the CPU device beside it runs it.
  auto supported = test->getSupportedOperations(convModel());
  ASSERT_TRUE(supported) << supported.error().message;
  EXPECT_EQ(*supported, std::vector<bool>{false});
  auto refused = test->prepareModel(convModel());
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().status, ErrorStatus::INVALID_ARGUMENT);
  EXPECT_NE(refused.error().message.find("fault plan"), std::string::npos);
  EXPECT_EQ(cpu->getSupportedOperations(convModel()).value(), std::vector<bool>{true});
  ASSERT_TRUE(cpu->prepareModel(convModel()));

  // Every second execution on the test device fails; the others compute the sum, and the
  // CPU device's executions in between never fail.
  auto onTest = test->prepareModel(addModel());
  auto onCpu = cpu->prepareModel(addModel());
  ASSERT_TRUE(onTest) << onTest.error().message;
  ASSERT_TRUE(onCpu) << onCpu.error().message;
  for (int i = 1; i <= 6; ++i) {
    AddRequest r = addRequest();
    auto result = (*onTest)->executeSynchronously(r.request);
    if (i % 2 == 0) {
      ASSERT_FALSE(result) << i;
      EXPECT_EQ(result.error().status, ErrorStatus::GENERAL_FAILURE);
    } else {
      ASSERT_TRUE(result) << i << ": " << result.error().message;
      for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(r.out()[k], r.a()[k] + r.b()[k]);
    }
    AddRequest c = addRequest();
    EXPECT_TRUE((*onCpu)->executeSynchronously(c.request)) << i;
  }
}

TEST(MultiDevice, ADaemonWithOneDeviceListsOne) {
  Daemon daemon;
  ASSERT_TRUE(daemon.running());
  auto device = connectTo(daemon, "");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(daemonDevices(*device).value(), std::vector<std::string>{"nnhal-cpu"});
  auto embedded = createDevice({});
  ASSERT_TRUE(embedded);
  auto notRemote = daemonDevices(**embedded);
  ASSERT_FALSE(notRemote);
  EXPECT_EQ(notRemote.error().status, ErrorStatus::INVALID_ARGUMENT);
}

/// Child role "leave-a-hung-execution" (args: socket): executes the add model once, launches
/// a second execution, and exits (0) once that has had no answer for 300 ms; with
/// --test-hang-after-executions 1 it hangs. Exit codes: 2 no connection, 3 not prepared, 4
/// the first execution failed, 5 the second was answered.
int leaveAHungExecution(const std::vector<std::string>& args) {
  auto device = connect(args.at(0));
  if (!device) return 2;
  auto prepared = (*device)->prepareModel(addModel());
  if (!prepared) return 3;
  AddRequest first = addRequest();
  if (!(*prepared)->executeSynchronously(first.request)) return 4;
  AddRequest second = addRequest();
  std::promise<bool> answered;
  (void)(*prepared)->execute(second.request, {},
                             [&](Result<ExecutionResult>) { answered.set_value(true); });
  const bool hung =
      answered.get_future().wait_for(std::chrono::milliseconds(300)) == std::future_status::timeout;
  ::_exit(hung ? 0 : 5);  // the execution still pending
}
[[maybe_unused]] const bool kLeaveAHungExecutionRole =
    registerChildRole("leave-a-hung-execution", &leaveAHungExecution);

TEST(MultiDevice, AHangingDeviceHoldsItsExecutionsUntilTheirClientLeaves) {
  Daemon daemon({"--test-hang-after-executions", "1"});
  ASSERT_TRUE(daemon.running());
  // A client process whose second execution hangs; it exits with that execution pending.
  ChildProcess client("leave-a-hung-execution", {daemon.socket().string()});
  EXPECT_EQ(client.wait(), 0) << "2: no connection, 3-4: a call failed, 5: not hung";
  // Its hanging execution was cancelled when it left: another client prepares (the device
  // is free again), and the daemon stops gracefully.
  auto other = connectTo(daemon, "");
  ASSERT_NE(other, nullptr);
  EXPECT_TRUE(other->prepareModel(addModel()));
  EXPECT_EQ(daemon.stop(SIGTERM), 0);
}

TEST(MultiDevice, ABadTestDeviceIsRefusedAtStart) {
  // An operation name nnhald does not know, and the CPU device's own name: nnhald exits
  // instead of serving.
  Daemon unknownOperation({"--test-device", "nnhal-test", "--test-device-refuse", "NOT_AN_OP"});
  EXPECT_FALSE(unknownOperation.running());
  Daemon takenName({"--test-device", "nnhal-cpu"});
  EXPECT_FALSE(takenName.running());
  Daemon valid({"--test-device", "nnhal-test", "--test-device-refuse", "CONV_2D"});
  EXPECT_TRUE(valid.running());
}

TEST(MultiDevice, NnhalInfoListsEveryDevice) {
  TempDir cache;
  Daemon daemon(testDeviceArgs(cache));
  ASSERT_TRUE(daemon.running());
  const std::string command =
      std::string(NNHAL_CLI_PATH) + " info --connect " + daemon.socket().string() + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[4096];
  while (std::fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  ASSERT_EQ(::pclose(pipe), 0) << output;
  EXPECT_NE(output.find("nnhald serves 2 devices: nnhal-cpu, nnhal-test"), std::string::npos)
      << output;
  EXPECT_NE(output.find("name: nnhal-cpu"), std::string::npos) << output;
  EXPECT_NE(output.find("name: nnhal-test"), std::string::npos) << output;
  EXPECT_NE(output.find("+faults"), std::string::npos) << output;
}

}  // namespace
}  // namespace nnhal::ipc

namespace nnhal::ipc {
namespace {

// --gpu on: the GPU device (docs/GPU.md) served beside the CPU device on any Vulkan device,
// lavapipe included; --gpu off: never. Skipped where no Vulkan device exists.
TEST(MultiDevice, ServesTheGpuDeviceWhenAsked) {
  if (kUnderSanitizer) {
    GTEST_SKIP() << "the Vulkan driver's own threads and compiled shaders are not instrumented";
  }
  const VulkanDeviceStatus status = vulkanDeviceStatus();
  if (!status.available) GTEST_SKIP() << "no Vulkan device: " << status.reason;
  TempDir cache;
  Daemon daemon({"--cache-dir", (cache.path() / "state").string(), "--gpu", "on"});
  ASSERT_TRUE(daemon.running());
  auto gpu = connectTo(daemon, "nnhal-vulkan");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->getType(), DeviceType::GPU);
  EXPECT_EQ(daemonDevices(*gpu).value(), (std::vector<std::string>{"nnhal-cpu", "nnhal-vulkan"}));
  auto prepared = gpu->prepareModel(testing::addModel());
  ASSERT_TRUE(prepared) << prepared.error().message;
  AddRequest r = testing::addRequest();
  ASSERT_TRUE((*prepared)->executeSynchronously(r.request));
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(r.out()[i], r.a()[i] + r.b()[i]);

  Daemon off({"--gpu", "off"});
  ASSERT_TRUE(off.running());
  auto cpu = connectTo(off, "");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(daemonDevices(*cpu).value(), (std::vector<std::string>{"nnhal-cpu"}));
}

}  // namespace
}  // namespace nnhal::ipc
